package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSystemctl puts a systemctl on PATH that logs its arguments, and
// fails when fail is set.
func fakeSystemctl(t *testing.T, fail bool) (path, log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "calls")
	script := "#!/bin/sh\necho \"$*\" >> " + log + "\n"
	if fail {
		script += "echo 'Failed to connect to bus: No medium found' >&2\nexit 1\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "systemctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir + string(os.PathListSeparator) + os.Getenv("PATH"), log
}

// runWithEnv runs remem with env added to the test's environment and
// returns stdout, stderr and the exit code.
func runWithEnv(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	return runWithStdin(t, env, nil, args...)
}

// install writes the user unit where systemd reads it and enables it;
// a second install changes nothing; status reads it back; remove stops
// it and takes it out.
func TestServiceInstallStatusRemove(t *testing.T) {
	home := newHome(t)
	userHome := t.TempDir()
	path, calls := fakeSystemctl(t, false)
	env := []string{"REMEM_HOME=" + home, "HOME=" + userHome, "XDG_CONFIG_HOME=", "PATH=" + path}
	unit := filepath.Join(userHome, ".config/systemd/user/remem.service")

	out, errOut, code := runWithEnv(t, env, "service", "install", "--dry-run", "--os", "linux", "--remem", remem(t))
	if code != 0 || !strings.Contains(out, "ExecStart="+remem(t)+" --home "+home+" node") {
		t.Fatalf("dry run: %d %s %s", code, out, errOut)
	}
	if _, err := os.Stat(unit); err == nil {
		t.Fatal("a dry run wrote the unit")
	}
	if out, errOut, code = runWithEnv(t, env, "service", "install", "--os", "linux", "--remem", remem(t)); code != 0 {
		t.Fatalf("install: %d %s %s", code, out, errOut)
	}
	if data, err := os.ReadFile(unit); err != nil || !strings.Contains(string(data), "Restart=on-failure") {
		t.Fatalf("unit: %v %s", err, data)
	}
	got, _ := os.ReadFile(calls)
	if string(got) != "--user daemon-reload\n--user enable --now remem.service\n" {
		t.Errorf("systemctl calls:\n%s", got)
	}
	out, _, _ = runWithEnv(t, env, "service", "install", "--os", "linux", "--remem", remem(t), "--json")
	var rep struct{ Changed bool }
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Changed {
		t.Errorf("a second install: %s", out)
	}
	out, _, _ = runWithEnv(t, env, "service", "status", "--os", "linux", "--remem", remem(t), "--json")
	var st struct{ Installed, Active string }
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.Installed != "yes" || st.Active != "yes" {
		t.Errorf("status: %s", out)
	}
	if out, errOut, code = runWithEnv(t, env, "service", "remove", "--os", "linux", "--remem", remem(t)); code != 0 {
		t.Fatalf("remove: %d %s %s", code, out, errOut)
	}
	if _, err := os.Stat(unit); err == nil {
		t.Error("remove left the unit")
	}
	got, _ = os.ReadFile(calls)
	if !strings.HasSuffix(string(got), "--user disable --now remem.service\n") {
		t.Errorf("systemctl calls:\n%s", got)
	}
}

// Where no service manager runs (a container, a CI runner), install
// writes the unit and says how to start it, exiting 1.
func TestServiceInstallWithoutABus(t *testing.T) {
	home := newHome(t)
	userHome := t.TempDir()
	path, _ := fakeSystemctl(t, true)
	env := []string{"REMEM_HOME=" + home, "HOME=" + userHome, "XDG_CONFIG_HOME=", "PATH=" + path}
	out, errOut, code := runWithEnv(t, env, "service", "install", "--os", "linux", "--remem", remem(t))
	if code != 1 || !strings.Contains(errOut, "starting it failed") || !strings.Contains(errOut, "systemctl --user enable --now remem.service") {
		t.Fatalf("%d %q %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(userHome, ".config/systemd/user/remem.service")); err != nil {
		t.Error(err)
	}
}

// The macOS agent, written on any machine with --os darwin.
func TestServiceLaunchdDryRun(t *testing.T) {
	home := newHome(t)
	userHome := t.TempDir()
	out, errOut, code := runWithEnv(t, []string{"REMEM_HOME=" + home, "HOME=" + userHome}, "service", "install", "--dry-run", "--json", "--os", "darwin", "--remem", remem(t))
	var rep struct {
		File, Text string
		Commands   [][]string
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("%d %s %s", code, out, errOut)
	}
	if rep.File != filepath.Join(userHome, "Library/LaunchAgents/dev.remem.node.plist") || !strings.Contains(rep.Text, "<key>RunAtLoad</key>") ||
		len(rep.Commands) != 1 || rep.Commands[0][0] != "launchctl" {
		t.Errorf("%+v", rep)
	}
}
