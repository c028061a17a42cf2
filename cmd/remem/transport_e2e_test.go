package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
)

func lessonTexts(t *testing.T, home string) []string {
	t.Helper()
	var views []struct{ Text string }
	if err := json.Unmarshal([]byte(must(t, home, nil, "lessons", "--json")), &views); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range views {
		out = append(out, v.Text)
	}
	return out
}

// TestFolderSyncTwoHomes: two homes sharing one directory converge.
func TestFolderSyncTwoHomes(t *testing.T) {
	a, b, dir := newHome(t), newHome(t), t.TempDir()
	must(t, a, nil, "publish", "--kind", "error", "The integration suite times out when the VPN is down")
	must(t, b, nil, "publish", "--kind", "surprise", "The staging database is reset every night at midnight")
	os.WriteFile(filepath.Join(dir, "0123456789abcdef.jsonl"), []byte("garbage\n"), 0o644)
	must(t, a, nil, "folder", "sync", dir)
	out, errOut, code := run(t, b, nil, "folder", "sync", dir)
	if code != 0 || !strings.Contains(errOut, "refused") {
		t.Fatalf("sync of b: %d %s %s", code, out, errOut)
	}
	must(t, a, nil, "folder", "sync", dir)
	if la, lb := lessonTexts(t, a), lessonTexts(t, b); len(la) != 2 || len(lb) != 2 {
		t.Fatalf("not converged: a %v, b %v", la, lb)
	}
}

// startCommons runs `remem commons serve` on a free loopback port until the
// test ends, and returns its URL and a file with its token.
func startCommons(t *testing.T) (url, token string) {
	t.Helper()
	token = filepath.Join(t.TempDir(), "token")
	os.WriteFile(token, []byte("s3cret-token\n"), 0o600)
	return startCommonsWith(t, token, nil, "--data", t.TempDir()), token
}

// startCommonsWith runs `remem commons serve` with the token file, the
// environment added and where it keeps the commons (--data or --storage),
// until the test ends, and returns its URL.
func startCommonsWith(t *testing.T, token string, env []string, where ...string) string {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	srv := exec.Command(remem(t), append([]string{"commons", "serve", "--listen", addr, "--token-file", token}, where...)...)
	srv.Env = append(os.Environ(), env...)
	var srvErr syncBuffer
	srv.Stderr = &srvErr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Signal(syscall.SIGTERM)
		if err := srv.Wait(); err != nil {
			t.Errorf("commons did not stop cleanly: %v\n%s", err, srvErr.String())
		} else if t.Failed() {
			t.Logf("commons said:\n%s", srvErr.String())
		}
	})
	url := "http://" + addr
	testutil.Eventually(t, 10*time.Second, "the commons to answer", func() bool {
		resp, err := http.Get(url + "/.well-known/remem")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	return url
}

// TestCommonsRoundTripThroughBinary: serve, push from A, pull into B.
func TestCommonsRoundTripThroughBinary(t *testing.T) {
	a, b := newHome(t), newHome(t)
	url, token := startCommons(t)
	must(t, a, nil, "publish", "--kind", "error", "The integration suite times out when the VPN is down")
	if _, errOut, code := run(t, a, nil, "commons", "push", url); code == 0 || !strings.Contains(errOut, "token") {
		t.Fatalf("a push without a token: %d %s", code, errOut)
	}
	must(t, a, nil, "commons", "push", "--token-file", token, url)
	out := must(t, b, nil, "commons", "pull", url)
	if !strings.Contains(out, "accepted 1") {
		t.Fatalf("pull: %s", out)
	}
	if texts := lessonTexts(t, b); len(texts) != 1 || !strings.Contains(texts[0], "VPN") {
		t.Fatalf("B holds %v", texts)
	}
	if out := must(t, b, nil, "commons", "pull", url); !strings.Contains(out, "fetched 0") {
		t.Fatalf("second pull fetched again: %s", out)
	}
}

// TestTransportsThroughRunningNode: while a node holds the home, `commons
// push`, `commons pull` and `folder sync` run inside it through its API
// (they once failed with "the memory ... is in use"), a folder of the
// node's named by a relative DIR included, and a pull that fails still
// says what it did. A DIR that is not one of the node's folders is
// refused with how to add it, and nothing is written there.
func TestTransportsThroughRunningNode(t *testing.T) {
	a, b, dir := newHome(t), t.TempDir(), t.TempDir()
	url, token := startCommons(t)
	must(t, a, nil, "publish", "--kind", "error", "The integration suite times out when the VPN is down")
	must(t, a, nil, "commons", "push", "--token-file", token, url)
	must(t, b, nil, "init")
	p := startNode(t, b, "--listen", fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", freePort(t)), "--folder", dir)
	defer p.stop(t)
	must(t, b, nil, "publish", "--kind", "surprise", "The staging database is reset every night at midnight")

	if out := must(t, b, nil, "commons", "push", "--token-file", token, url); !strings.Contains(out, "pushed 1 records to "+url) {
		t.Fatalf("push through the node: %s", out)
	}
	if out := must(t, b, nil, "commons", "pull", url); !strings.Contains(out, "accepted 1 records") {
		t.Fatalf("pull through the node: %s", out)
	}
	var rep struct {
		Fetched, Accepted int
	}
	if err := json.Unmarshal([]byte(must(t, b, nil, "commons", "pull", "--json", url)), &rep); err != nil || rep.Fetched != 0 || rep.Accepted != 0 {
		t.Fatalf("second pull through the node (the node's pull state): %+v %v", rep, err)
	}
	if texts := lessonTexts(t, b); len(texts) != 2 {
		t.Fatalf("b holds %v", texts)
	}

	must(t, a, nil, "folder", "sync", dir)
	cmd := exec.Command(remem(t), "folder", "sync", "--json", filepath.Base(dir))
	cmd.Dir, cmd.Env = filepath.Dir(dir), append(os.Environ(), "REMEM_HOME="+b)
	out, err := cmd.Output()
	var sync struct {
		Wrote  bool
		Report struct{ Files, Accepted int }
	}
	// The node may have written its own file already (it shares what it
	// signs): Wrote is not asked.
	if err != nil || json.Unmarshal(out, &sync) != nil || sync.Report.Files != 1 {
		t.Fatalf("folder sync of a relative DIR through the node: %v %s", err, out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Fatalf("the folder holds %d files, want a's and b's", len(entries))
	}
	elsewhere := t.TempDir()
	if _, errOut, code := run(t, b, nil, "folder", "sync", elsewhere); code == 0 || !strings.Contains(errOut, "remem config set folders") || !strings.Contains(errOut, "not a folder this node syncs") {
		t.Fatalf("folder sync of a DIR the node does not sync: exit %d\n%s", code, errOut)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("a refused sync wrote %d files into %s", len(entries), elsewhere)
	}

	gone := "http://" + fmt.Sprintf("127.0.0.1:%d", freePort(t))
	if out, errOut, code := run(t, b, nil, "commons", "pull", gone); code == 0 || !strings.Contains(out, "listed 0") || !strings.Contains(errOut, "connection refused") {
		t.Fatalf("a pull from nowhere through the node: exit %d\n%s%s", code, out, errOut)
	}
}

// TestFolderWatch: a watching sync takes a file another memory writes
// after it said it is watching (its first snapshot is taken by then).
func TestFolderWatch(t *testing.T) {
	a, b, dir := newHome(t), newHome(t), t.TempDir()
	must(t, b, nil, "init")
	watch := exec.Command(remem(t), "folder", "sync", "--watch", "--interval", "100ms", dir)
	watch.Env = append(os.Environ(), "REMEM_HOME="+b)
	var out, errOut syncBuffer
	watch.Stdout, watch.Stderr = &out, &errOut
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("the watching sync said:\n%s%s", out.String(), errOut.String())
		}
	}()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			watch.Process.Signal(syscall.SIGTERM)
			watch.Wait()
		}
	}
	defer stop()
	testutil.Eventually(t, 15*time.Second, "the sync to watch", func() bool { return strings.Contains(errOut.String(), "watching") })
	must(t, a, nil, "publish", "--kind", "error", "The integration suite times out when the VPN is down")
	must(t, a, nil, "folder", "sync", dir)
	testutil.Eventually(t, 15*time.Second, "the watching sync to take a's lesson", func() bool { return strings.Contains(out.String(), "accepted 1,") })
	stop()
	if texts := lessonTexts(t, b); len(texts) != 1 {
		t.Fatalf("the watching memory holds %v", texts)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Fatalf("the folder holds %d files, want a's and b's", len(entries))
	}
}

// TestPushSaysWhyNothingGoes: a memory whose only record is a confirmation
// of a lesson that came by a folder prints it in `export`, and `commons
// push` says why it does not go to the commons instead of "there is no
// record to push yet"; a fresh memory is told it has signed nothing.
func TestPushSaysWhyNothingGoes(t *testing.T) {
	a, b, dir := newHome(t), newHome(t), t.TempDir()
	url, token := startCommons(t)
	must(t, a, nil, "publish", "--kind", "error", "go test fails with undefined: mocks.NewClient.")
	must(t, a, nil, "folder", "sync", dir)
	must(t, b, nil, "folder", "sync", dir)
	project := t.TempDir() // b's person opted it in: what b meets there is confirmed
	must(t, b, nil, "share", "--project", project)
	must(t, b, nil, "remember", "--kind", "error", "--title", "go test ./...", "--happened", "undefined: mocks.NewClient", "--cwd", project)
	must(t, b, nil, "sleep")
	if out := must(t, b, nil, "export"); strings.Count(out, "\n") != 1 || !strings.Contains(out, `"confirm"`) {
		t.Fatalf("b's export: %s", out)
	}
	_, errOut, code := run(t, b, nil, "commons", "push", "--token-file", token, url)
	if code == 0 || !strings.Contains(errOut, "1 records (`remem export`) are confirmations") || !strings.Contains(errOut, "SPEC §7") {
		t.Fatalf("push of a confirmation only: exit %d: %s", code, errOut)
	}
	_, errOut, code = run(t, newHome(t), nil, "commons", "push", "--token-file", token, url)
	if code == 0 || !strings.Contains(errOut, "has signed no record yet") || strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
		t.Fatalf("push of a fresh memory: exit %d: %s", code, errOut)
	}
}

// TestStrengthSaysWhy: the author shows its lesson at 0.75 and a receiver
// at 0.50, and `lessons` and `show` say why on both.
func TestStrengthSaysWhy(t *testing.T) {
	a, b, dir := newHome(t), newHome(t), t.TempDir()
	project := filepath.Join(a, "api")
	os.MkdirAll(project, 0o755)
	must(t, a, nil, "share", "--project", project)
	for _, session := range []string{"s1", "s2"} {
		must(t, a, nil, "remember", "--kind", "error", "--session", session, "--title", "go test ./...", "--happened", "undefined: mocks.NewClient", "--cwd", project)
	}
	must(t, a, nil, "sleep")
	must(t, a, nil, "folder", "sync", dir)
	must(t, b, nil, "folder", "sync", dir)
	var views []struct {
		Hash           string
		Strength       float64
		StrengthReason string `json:"strength_reason"`
	}
	if err := json.Unmarshal([]byte(must(t, a, nil, "lessons", "--json")), &views); err != nil || len(views) != 1 {
		t.Fatalf("a's lessons: %v %+v", err, views)
	}
	if math.Abs(views[0].Strength-0.75) > 0.001 || !strings.HasPrefix(views[0].StrengthReason, "own, seen 2: an own lesson starts at 1 − 0.5^seen (0.75") {
		t.Fatalf("the author's view: %+v", views[0])
	}
	out := must(t, b, nil, "lessons")
	if !strings.Contains(out, "WHY") || !strings.Contains(out, "received, not confirmed here") {
		t.Fatalf("b's lessons:\n%s", out)
	}
	if out := must(t, b, nil, "show", views[0].Hash); !strings.Contains(out, "strength 0.50, received, not confirmed here: a received lesson starts at 0.50") {
		t.Fatalf("b's show:\n%s", out)
	}
}

// TestCommonsFrontPage: the served commons answers GET / with a page for
// people and, asked for JSON, its info document with the binary's version.
func TestCommonsFrontPage(t *testing.T) {
	url, _ := startCommons(t)
	resp, err := http.Get(url + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "remem commons push --token-file FILE URL") {
		t.Fatalf("GET /: %d\n%s", resp.StatusCode, page)
	}
	req, _ := http.NewRequest("GET", url+"/", nil)
	req.Header.Set("Accept", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info struct {
		Name          string
		PutNeedsToken bool `json:"put_needs_token"`
		Version       string
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || info.Name != "remem commons" || !info.PutNeedsToken || info.Version == "" {
		t.Fatalf("GET / as JSON: %v %+v", err, info)
	}
}
