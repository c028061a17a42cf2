package autostart

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func testService(t *testing.T) Service {
	exe, err := os.Executable() // a file that exists and runs, as systemd-analyze checks
	if err != nil {
		t.Fatal(err)
	}
	return Service{Exe: exe, Home: "/home/ana/my memory/.remem", UserHome: "/home/ana", Path: "/usr/local/bin:/usr/bin:/bin"}
}

func TestSystemdUnit(t *testing.T) {
	s := testService(t)
	text, err := s.Text("linux")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ExecStart=" + s.Exe + ` --home "/home/ana/my memory/.remem" node`, "Restart=on-failure",
		"WantedBy=default.target", `Environment="PATH=/usr/local/bin:/usr/bin:/bin"`, "StartLimitBurst=4"} {
		if !strings.Contains(text, want) {
			t.Errorf("the unit has no %q:\n%s", want, text)
		}
	}
	if f, _ := s.File("linux"); f != "/home/ana/.config/systemd/user/remem.service" {
		t.Errorf("file %s", f)
	}
	s.ConfigHome = "/xdg"
	if f, _ := s.File("linux"); f != "/xdg/systemd/user/remem.service" {
		t.Errorf("file %s with XDG_CONFIG_HOME", f)
	}
	// systemd's own reading of it, where this machine has systemd.
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: the unit is checked by the text only")
		return
	}
	file := filepath.Join(t.TempDir(), SystemdUnit)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(analyze, "verify", file).CombinedOutput(); err != nil {
		t.Errorf("systemd-analyze verify: %v\n%s\n%s", err, out, text)
	}
}

func TestSystemdQuote(t *testing.T) {
	for in, want := range map[string]string{"plain": "plain", "a b": `"a b"`, "100%": "100%%", "$HOME": "$$HOME", `q"`: `"q\""`, "": `""`} {
		if got := systemdQuote(in); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}

// The launchd agent is a well-formed property list with the node's
// arguments, run at load and kept alive on failure.
func TestLaunchdAgent(t *testing.T) {
	s := testService(t)
	s.Home = "/Users/ana/<odd> & home"
	text, err := s.Text("darwin")
	if err != nil {
		t.Fatal(err)
	}
	var plist struct {
		Dict struct {
			Keys   []string `xml:"key"`
			Array  []string `xml:"array>string"`
			String []string `xml:"string"`
		} `xml:"dict"`
	}
	if err := xml.Unmarshal([]byte(text), &plist); err != nil {
		t.Fatalf("not XML: %v\n%s", err, text)
	}
	if strings.Join(plist.Dict.Array, "|") != s.Exe+"|--home|/Users/ana/<odd> & home|node" {
		t.Errorf("arguments %q", plist.Dict.Array)
	}
	for _, k := range []string{"Label", "ProgramArguments", "RunAtLoad", "KeepAlive", "StandardErrorPath"} {
		if !strings.Contains(strings.Join(plist.Dict.Keys, " "), k) {
			t.Errorf("no %s key", k)
		}
	}
	if plist.Dict.String[0] != LaunchdLabel {
		t.Errorf("label %q", plist.Dict.String[0])
	}
	if f, _ := s.File("darwin"); f != "/home/ana/Library/LaunchAgents/dev.remem.node.plist" {
		t.Errorf("file %s", f)
	}
}

func TestOtherSystems(t *testing.T) {
	if _, err := (Service{}).Text("windows"); err == nil || !strings.Contains(err.Error(), "not windows") {
		t.Errorf("err = %v", err)
	}
}

// A line break in a path would be a new directive in the unit: refused.
// A PATH ending in a quote stays inside its quotes.
func TestServiceRefusesControlCharacters(t *testing.T) {
	s := testService(t)
	s.Home = "/tmp/x\nExecStartPre=/tmp/evil.sh\nX=y"
	for _, goos := range []string{"linux", "darwin"} {
		if _, err := s.Text(goos); err == nil || !strings.Contains(err.Error(), "control character") {
			t.Errorf("%s: err = %v", goos, err)
		}
	}
	s = testService(t)
	s.Path = `/usr/bin:/odd"`
	text, err := s.Text("linux")
	if err != nil || !strings.Contains(text, `Environment="PATH=/usr/bin:/odd\""`) {
		t.Errorf("%v\n%s", err, text)
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		return
	}
	file := filepath.Join(t.TempDir(), SystemdUnit)
	_ = os.WriteFile(file, []byte(text), 0o644)
	if out, err := exec.Command(analyze, "verify", file).CombinedOutput(); err != nil {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
