package main

import (
	"encoding/json"
	"fmt"
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

// TestCommonsRoundTripThroughBinary: serve, push from A, pull into B.
func TestCommonsRoundTripThroughBinary(t *testing.T) {
	a, b, data := newHome(t), newHome(t), t.TempDir()
	token := filepath.Join(t.TempDir(), "token")
	os.WriteFile(token, []byte("s3cret-token\n"), 0o600)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	srv := exec.Command(remem(t), "commons", "serve", "--listen", addr, "--data", data, "--token-file", token)
	var srvErr syncBuffer
	srv.Stderr = &srvErr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.Process.Signal(syscall.SIGTERM)
		if err := srv.Wait(); err != nil {
			t.Errorf("commons did not stop cleanly: %v\n%s", err, srvErr.String())
		} else if t.Failed() {
			t.Logf("commons said:\n%s", srvErr.String())
		}
	}()
	url := "http://" + addr
	testutil.Eventually(t, 10*time.Second, "the commons to answer", func() bool {
		resp, err := http.Get(url + "/.well-known/remem")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
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
