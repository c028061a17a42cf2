package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCommonsRelayHostThroughBinary: `remem commons serve --p2p` runs a
// libp2p host whose addresses the info document lists; its key is made
// once and kept, so the relay's peer id survives a restart; a bad listen
// address or a key file that is not a key is an error that says what to
// do, and nothing is served.
func TestCommonsRelayHostThroughBinary(t *testing.T) {
	data := t.TempDir()
	token := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(token, []byte("a-token-for-the-test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	serve := func(extra ...string) (p2p []string) {
		t.Helper()
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		args := append([]string{"commons", "serve", "--listen", addr, "--data", data, "--token-file", token}, extra...)
		cmd := exec.Command(remem(t), args...)
		cmd.Stderr = io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			resp, err := http.Get("http://" + addr + "/.well-known/remem")
			if err == nil {
				var info struct{ P2P []string }
				err = json.NewDecoder(resp.Body).Decode(&info)
				_ = resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				return info.P2P
			}
			if time.Now().After(deadline) {
				t.Fatalf("commons serve %v did not answer", args)
			}
		}
	}
	peerOf := func(addrs []string) string {
		t.Helper()
		if len(addrs) == 0 {
			t.Fatal("the info document lists no p2p address")
		}
		i := strings.LastIndex(addrs[0], "/p2p/")
		if i < 0 {
			t.Fatalf("p2p address %s has no /p2p/<id>", addrs[0])
		}
		return addrs[0][i+len("/p2p/"):]
	}

	if got := serve(); len(got) != 0 {
		t.Errorf("without --p2p the info document lists %v", got)
	}
	first := serve("--p2p", "/ip4/127.0.0.1/tcp/0")
	again := serve("--p2p", "/ip4/127.0.0.1/tcp/0")
	if peerOf(first) != peerOf(again) {
		t.Errorf("the relay's peer id changed across a restart: %s then %s", peerOf(first), peerOf(again))
	}
	for _, a := range first {
		if !strings.HasPrefix(a, "/ip4/127.0.0.1/tcp/") {
			t.Errorf("p2p address %s is not where it was told to listen", a)
		}
	}
	if info, err := os.Stat(filepath.Join(data, "p2p.key")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the relay key file: %v, %v; want mode 0600", info, err)
	}

	// Hostile or mistaken settings: exit 1 with what was wrong.
	badKey := filepath.Join(t.TempDir(), "bad.key")
	if err := os.WriteFile(badKey, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--p2p", "not-a-multiaddr"}, "listen address"},
		{[]string{"--p2p", "/ip4/127.0.0.1/tcp/0", "--p2p-key", badKey}, "not a libp2p private key"},
	} {
		args := append([]string{"commons", "serve", "--listen", "127.0.0.1:0", "--data", t.TempDir(), "--token-file", token}, tc.args...)
		_, stderr, code := run(t, t.TempDir(), nil, args...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("remem %s: exit %d, stderr %q; want an error saying %q", strings.Join(args, " "), code, stderr, tc.want)
		}
	}
}
