package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/commons/commonstest"
	"github.com/remem/remem/node"
)

// doctorHome is an initialised home whose node would use free loopback
// ports, the commons at url with token, and team t.
func doctorHome(t *testing.T, url, token string) string {
	t.Helper()
	home := t.TempDir()
	must(t, home, nil, "init")
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	must(t, home, nil, "config", "set", "api", fmt.Sprintf("127.0.0.1:%d", freePort(t)))
	must(t, home, nil, "config", "set", "listen", fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", freePort(t)))
	must(t, home, nil, "config", "set", "teams", "t")
	if url != "" {
		must(t, home, nil, "config", "set", "commons", url)
		must(t, home, nil, "config", "set", "commons_token_file", tokenFile)
		must(t, home, nil, "team-key", "t")
		must(t, home, nil, "config", "set", "team_keys", "t="+filepath.Join(home, "team-t.key"))
	}
	return home
}

func doctor(t *testing.T, home string) (doctorReport, string, int) {
	t.Helper()
	out, errOut, code := run(t, home, nil, "doctor", "--json")
	var rep doctorReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s\n%s", err, out, errOut)
	}
	return rep, errOut, code
}

// checks maps each check's name to its lines (commons may have several).
func checks(rep doctorReport) map[string]doctorCheck {
	out := map[string]doctorCheck{}
	for _, c := range rep.Checks {
		out[c.Name] = c
	}
	return out
}

func TestDoctorHealthyHome(t *testing.T) {
	home := doctorHome(t, commonstest.Start(t), commonstest.Token)
	rep, errOut, code := doctor(t, home)
	if code != 0 || !rep.OK || errOut != "" {
		t.Fatalf("doctor on a healthy home: exit %d %q\n%+v", code, errOut, rep.Checks)
	}
	want := map[string]string{"home": checkOK, "key": checkOK, "config": checkOK, "admit": checkOK, "store": checkOK, "node": checkWarn,
		"ports": checkOK, "reach": checkUnknown, "teams": checkOK, "commons": checkOK, "clock": checkOK, "directory": checkOK, "model": checkOK}
	got := checks(rep)
	for name, status := range want {
		if got[name].Status != status {
			t.Errorf("%s: %+v, want %s", name, got[name], status)
		}
	}
	if len(rep.Checks) != len(want) {
		t.Errorf("checks: %+v", rep.Checks)
	}
	if !strings.Contains(got["commons"].Detail, "accepts the token for pushing") {
		t.Errorf("commons: %+v", got["commons"])
	}
	// The people's form: one line per check.
	out := must(t, home, nil, "doctor")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != len(want) || !strings.HasPrefix(lines[0], "OK") {
		t.Errorf("doctor:\n%s", out)
	}
}

// A home with a key others can read, a taken API port and a token the
// commons refuses: each line says what is wrong and what to do; exit 1.
func TestDoctorFindsProblems(t *testing.T) {
	home := doctorHome(t, commonstest.Start(t), "wrong-token")
	if err := os.Chmod(filepath.Join(home, node.KeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	must(t, home, nil, "config", "set", "api", ln.Addr().String())
	rep, _, code := doctor(t, home)
	got := checks(rep)
	if code != 1 || rep.OK {
		t.Errorf("doctor exited %d: %+v", code, rep.Checks)
	}
	for name, want := range map[string]string{
		"key":     "run `chmod 600 ",
		"store":   "see key",
		"ports":   "the API address " + ln.Addr().String() + " is taken",
		"commons": "the token is refused for pushing",
	} {
		if !strings.Contains(got[name].Detail, want) || got[name].Status == checkOK {
			t.Errorf("%s: %+v, want %q", name, got[name], want)
		}
	}
	if !strings.Contains(got["ports"].Detail, "remem config set api") {
		t.Errorf("ports should say what to do: %s", got["ports"].Detail)
	}
	out, _, _ := run(t, home, nil, "doctor")
	if !strings.Contains(out, "FAIL  key") && !strings.Contains(out, "FAIL") {
		t.Errorf("doctor:\n%s", out)
	}
}

// A commons whose clock is 20 minutes behind: the clock check fails and
// says why it matters.
func TestDoctorClockSkew(t *testing.T) {
	srv, err := commons.NewServer(context.Background(), commons.ServerConfig{DataDir: t.TempDir(), Tokens: []string{"tok"}, ReadNeedsToken: true, Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().Add(-20*time.Minute).UTC().Format(http.TimeFormat))
		srv.ServeHTTP(w, r)
	}))
	defer srv.Close()
	defer hs.Close()
	home := doctorHome(t, hs.URL, "tok")
	rep, _, code := doctor(t, home)
	clock := checks(rep)["clock"]
	if code != 1 || clock.Status != checkFail || !strings.Contains(clock.Detail, "ahead of") || !strings.Contains(clock.Detail, "NTP") {
		t.Errorf("clock 20 min behind the commons: exit %d %+v", code, clock)
	}
	if c := checks(rep)["commons"]; c.Status != checkOK {
		t.Errorf("commons with the right token (read needs one): %+v", c)
	}

	// Reading needs a token, and the one given is wrong.
	home = doctorHome(t, hs.URL, "nope")
	rep, _, _ = doctor(t, home)
	if c := checks(rep)["commons"]; c.Status != checkFail || !strings.Contains(c.Detail, "refused for reading") {
		t.Errorf("a wrong token on a commons that needs one to read: %+v", c)
	}
}

// A node holds the home: the store is asked through its API and its ports
// are its own.
func TestDoctorThroughRunningNode(t *testing.T) {
	home := doctorHome(t, "", "")
	m, err := node.Open(node.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	api, stop := serveAPI(t, home, m)
	must(t, home, nil, "config", "set", "api", api)
	rep, _, code := doctor(t, home)
	got := checks(rep)
	if code != 0 || got["store"].Status != checkOK || !strings.Contains(got["store"].Detail, "held by the running node") ||
		got["node"].Status != checkOK || got["ports"].Status != checkOK {
		t.Errorf("doctor with a node running: exit %d %+v", code, rep.Checks)
	}

	// The node is gone but its node.json stays.
	stop()
	rep, _, code = doctor(t, home)
	if n := checks(rep)["node"]; code != 1 || n.Status != checkFail || !strings.Contains(n.Detail, "remem node") {
		t.Errorf("a stale node.json: exit %d %+v", code, n)
	}
}

func TestDoctorMissingHome(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "typo")
	out, errOut, code := run(t, missing, nil, "doctor")
	if code != 1 || !strings.Contains(out, "remem init") || errOut != "" {
		t.Errorf("doctor on a missing home: exit %d %q %q", code, out, errOut)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("doctor created %s", missing)
	}
}

// TestDoctorReadsTheRunningNode: a node started with flags and no
// config.toml is reported as it runs (its API address and team), not as
// the configuration would start it (a new user's replay found doctor
// naming the default API port and "no team" for a node on --team t1).
func TestDoctorReadsTheRunningNode(t *testing.T) {
	home := newHome(t)
	p := startNode(t, home, "--team", "t1", "--listen", fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", freePort(t)))
	defer p.stop(t)
	rep, _, _ := doctor(t, home)
	got := checks(rep)
	if c := got["config"]; c.Status != checkOK || !strings.Contains(c.Detail, "no ") {
		t.Errorf("config without a config.toml: %+v", c)
	}
	if c := got["ports"]; c.Status != checkOK || !strings.Contains(c.Detail, p.api) {
		t.Errorf("ports of a node on %s: %+v", p.api, c)
	}
	if c := got["teams"]; c.Status != checkOK || !strings.Contains(c.Detail, "t1") {
		t.Errorf("teams of a node on --team t1: %+v", c)
	}
}

// TestDoctorSaysKeylessTeamsAreNotListed: a team without a team key is not
// in the peer directory, and doctor says so with how to make one.
func TestDoctorSaysKeylessTeamsAreNotListed(t *testing.T) {
	home := doctorHome(t, commonstest.Start(t), commonstest.Token)
	must(t, home, nil, "config", "unset", "team_keys")
	rep, _, _ := doctor(t, home)
	if c := checks(rep)["directory"]; c.Status != checkWarn || !strings.Contains(c.Detail, "remem team-key t") || !strings.Contains(c.Detail, "guesses its name") {
		t.Errorf("directory: %+v", c)
	}
}

// A lesson kept as a draft shows in doctor: how many wait for a sentence,
// and who writes one; a warning, not a failure.
func TestDoctorCountsDrafts(t *testing.T) {
	home := doctorHome(t, "", "")
	ev := `{"kind":"error","title":"cargo build","happened":"error: failed to parse manifest at ` + "`Cargo.toml`" +
		`\n\nCaused by:\n  feature ` + "`edition2024`" + ` is required\n  this version of Cargo is 1.79.0"}` + "\n"
	must(t, home, []byte(ev), "ingest", "-")
	must(t, home, nil, "sleep")
	rep, _, code := doctor(t, home)
	d := checks(rep)["drafts"]
	if code != 0 || d.Status != checkWarn || !strings.HasPrefix(d.Detail, "1 of this memory's lessons are drafts") || !strings.Contains(d.Detail, "remem lessons rewrite") {
		t.Errorf("exit %d, drafts %+v", code, d)
	}
}
