// Package autostart writes what keeps one node per machine running: a
// systemd user unit on Linux and a launchd agent on macOS, as Syncthing
// ships its own (etc/linux-systemd/user/syncthing.service and
// etc/macos-launchd/syncthing.plist): start at login, restart on failure,
// a bound on restarts so a node that cannot start does not spin.
package autostart

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// Names of what the service manager knows the node by.
const (
	SystemdUnit  = "remem.service"
	LaunchdLabel = "dev.remem.node"
)

// Service is one node to keep running.
type Service struct {
	Exe      string // the remem executable, absolute
	Home     string // the memory's home
	UserHome string
	// Path is the PATH the node runs with: the one of the shell that
	// installed it, so that a model CLI the config names (claude, ollama)
	// is found as it is there.
	Path string
	// ConfigHome is $XDG_CONFIG_HOME, "" for ~/.config.
	ConfigHome string
}

// File is where the service manager of goos reads the service.
func (s Service) File(goos string) (string, error) {
	switch goos {
	case "linux":
		base := s.ConfigHome
		if base == "" {
			base = filepath.Join(s.UserHome, ".config")
		}
		return filepath.Join(base, "systemd", "user", SystemdUnit), nil
	case "darwin":
		return filepath.Join(s.UserHome, "Library", "LaunchAgents", LaunchdLabel+".plist"), nil
	}
	return "", fmt.Errorf("remem writes a service for Linux (systemd) and macOS (launchd), not %s: run remem node from your system's own start-up", goos)
}

// Text is the unit or agent file for goos. A path or PATH with a control
// character is refused: a line break in a unit file is a new directive
// (ExecStartPre=… from a home path someone chose).
func (s Service) Text(goos string) (string, error) {
	for name, v := range map[string]string{"the remem executable": s.Exe, "the home": s.Home, "the user's home": s.UserHome, "PATH": s.Path} {
		if strings.ContainsFunc(v, unicode.IsControl) {
			return "", fmt.Errorf("%s %q holds a control character: a service file cannot carry it; move it to a path without one", name, v)
		}
	}
	switch goos {
	case "linux":
		return s.systemd(), nil
	case "darwin":
		return s.launchd(), nil
	}
	_, err := s.File(goos)
	return "", err
}

func (s Service) argv() []string { return []string{s.Exe, "--home", s.Home, "node"} }

// systemd is the user unit. The node exits 0 when asked to stop, so
// on-failure restarts it after a crash and never after `systemctl stop`.
func (s Service) systemd() string {
	var exec []string
	for _, a := range s.argv() {
		exec = append(exec, systemdQuote(a))
	}
	var b strings.Builder
	b.WriteString("# Written by remem service install; remem service remove takes it out.\n")
	b.WriteString("[Unit]\nDescription=remem node: lessons shared between AI agents\n")
	b.WriteString("StartLimitIntervalSec=60\nStartLimitBurst=4\n\n")
	b.WriteString("[Service]\n")
	if s.Path != "" {
		b.WriteString("Environment=" + systemdQuoted("PATH="+s.Path) + "\n")
	}
	b.WriteString("ExecStart=" + strings.Join(exec, " ") + "\n")
	b.WriteString("Restart=on-failure\nRestartSec=5\n\n")
	b.WriteString("# Hardening\nNoNewPrivileges=true\nSystemCallArchitectures=native\n\n")
	b.WriteString("[Install]\nWantedBy=default.target\n")
	return b.String()
}

// systemdQuote quotes a word of a unit file: specifiers (%) and variables
// ($) are written twice, and a word with space or quote goes in quotes.
func systemdQuote(a string) string {
	if a == "" || strings.ContainsAny(a, " \t'\"\\") {
		return systemdQuoted(a)
	}
	return strings.NewReplacer("%", "%%", "$", "$$").Replace(a)
}

// systemdQuoted is a in double quotes, whatever it holds.
func systemdQuoted(a string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, "%", "%%", "$", "$$", `"`, `\"`).Replace(a) + `"`
}

// launchd is the agent: started at login (RunAtLoad) and kept alive when
// it exits with a failure, its output in ~/Library/Logs.
func (s Service) launchd() string {
	x := func(v string) string {
		var b strings.Builder
		_ = xml.EscapeText(&b, []byte(v))
		return b.String()
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by remem service install; remem service remove takes it out. -->
<plist version="1.0">
	<dict>
		<key>Label</key>
		<string>` + LaunchdLabel + `</string>

		<key>ProgramArguments</key>
		<array>
`)
	for _, a := range s.argv() {
		b.WriteString("\t\t\t<string>" + x(a) + "</string>\n")
	}
	b.WriteString(`		</array>

		<key>EnvironmentVariables</key>
		<dict>
			<key>HOME</key>
			<string>` + x(s.UserHome) + `</string>
`)
	if s.Path != "" {
		b.WriteString("\t\t\t<key>PATH</key>\n\t\t\t<string>" + x(s.Path) + "</string>\n")
	}
	logs := filepath.Join(s.UserHome, "Library", "Logs")
	b.WriteString(`		</dict>

		<key>RunAtLoad</key>
		<true/>

		<key>KeepAlive</key>
		<dict>
			<key>SuccessfulExit</key>
			<false/>
		</dict>

		<key>ThrottleInterval</key>
		<integer>10</integer>

		<key>ProcessType</key>
		<string>Background</string>

		<key>StandardOutPath</key>
		<string>` + x(filepath.Join(logs, "remem.log")) + `</string>

		<key>StandardErrorPath</key>
		<string>` + x(filepath.Join(logs, "remem.log")) + `</string>
	</dict>
</plist>
`)
	return b.String()
}

// Commands are what the service manager runs to start the service after
// install, and to stop it before remove.
func (s Service) Commands(goos string, install bool) [][]string {
	switch goos {
	case "linux":
		if install {
			return [][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", "--now", SystemdUnit}}
		}
		return [][]string{{"systemctl", "--user", "disable", "--now", SystemdUnit}}
	case "darwin":
		file, _ := s.File(goos)
		target := fmt.Sprintf("gui/%d", os.Getuid())
		if install {
			return [][]string{{"launchctl", "bootstrap", target, file}}
		}
		return [][]string{{"launchctl", "bootout", target + "/" + LaunchdLabel}}
	}
	return nil
}

// StatusCommand asks the service manager whether the service runs.
func StatusCommand(goos string) []string {
	switch goos {
	case "linux":
		return []string{"systemctl", "--user", "is-active", SystemdUnit}
	case "darwin":
		return []string{"launchctl", "print", fmt.Sprintf("gui/%d/%s", os.Getuid(), LaunchdLabel)}
	}
	return nil
}
