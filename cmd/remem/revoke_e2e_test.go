package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
)

// TestRevokeGoesOutAtOnceThroughTheNode: a lesson published and then revoked
// through a running node reach its folder within seconds, though the node
// sleeps only every hour, and `remem revoke` says the node sends it now;
// without a node it says when the revocation will leave.
func TestRevokeGoesOutAtOnceThroughTheNode(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	must(t, home, nil, "init")
	p := startNode(t, home, "--folder", dir, "--listen", fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", freePort(t)))
	defer p.stop(t)
	hash := strings.TrimSpace(strings.TrimPrefix(must(t, home, nil, "publish", "--kind", "error", "The integration suite times out when the VPN is down"), "published "))
	var origin string
	testutil.Eventually(t, 10*time.Second, "the published lesson in the node's folder", func() bool {
		files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		if len(files) != 1 {
			return false
		}
		data, _ := os.ReadFile(files[0])
		origin = strings.TrimSuffix(filepath.Base(files[0]), ".jsonl")
		return strings.Contains(string(data), hash)
	})
	out := must(t, home, nil, "revoke", hash)
	if !strings.Contains(out, "withdrew its lesson") || !strings.Contains(out, "sending the revocation now") {
		t.Fatalf("revoke through the node says: %s", out)
	}
	testutil.Eventually(t, 10*time.Second, "the revocation in the node's folder", func() bool {
		data, _ := os.ReadFile(filepath.Join(dir, origin+".jsonl"))
		return strings.Contains(string(data), `"revoke":"`+hash+`"`)
	})

	other := newHome(t)
	h := strings.TrimSpace(strings.TrimPrefix(must(t, other, nil, "publish", "--kind", "error", "The staging database is reset every night at midnight"), "published "))
	out = must(t, other, nil, "revoke", h)
	if !strings.Contains(out, "withdrew its lesson") || !strings.Contains(out, "leaves with this memory's next exchange") {
		t.Fatalf("revoke without a node says: %s", out)
	}
}

// TestConfirmerRevokeIsNotAWithdrawal: a memory that only confirmed a
// lesson is told that its revocation counts toward a quorum, not that the
// lesson is revoked.
func TestConfirmerRevokeIsNotAWithdrawal(t *testing.T) {
	a, b, dir := newHome(t), newHome(t), t.TempDir()
	hash := strings.TrimSpace(strings.TrimPrefix(must(t, a, nil, "publish", "--kind", "error", "go test fails with undefined: mocks.NewClient."), "published "))
	must(t, a, nil, "folder", "sync", dir)
	must(t, b, nil, "folder", "sync", dir)
	project := t.TempDir() // b's person opted it in: what b meets there is confirmed
	must(t, b, nil, "share", "--project", project)
	must(t, b, nil, "remember", "--kind", "error", "--title", "go test ./...", "--happened", "undefined: mocks.NewClient", "--cwd", project)
	if out := must(t, b, nil, "sleep"); !strings.Contains(out, "1 confirmations") {
		t.Fatalf("b's sleep: %s", out)
	}
	out := must(t, b, nil, "revoke", hash)
	for _, want := range []string{"not a withdrawal", "revocation quorum (1 of the 3 confirmers needed", "stays"} {
		if !strings.Contains(out, want) {
			t.Errorf("the confirmer's revoke says %q, without %q", out, want)
		}
	}
	if strings.HasPrefix(out, "revoked") {
		t.Errorf("the confirmer is told the lesson is revoked: %s", out)
	}
}
