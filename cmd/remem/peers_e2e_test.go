package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestPeerWorkflow: the libp2p user's workflow through the binary, on
// loopback. `remem id` of a running node prints its dialable addresses
// and reachability; `remem connect` on another node dials one of them
// through that node's API; `remem peers` then shows the peer, how it is
// connected and its round trip. Bad input is an error that says what to
// write.
func TestPeerWorkflow(t *testing.T) {
	homeA, homeB := newHome(t), newHome(t)
	a := startNode(t, homeA, "--team", "w", "--listen", "/ip4/127.0.0.1/tcp/0")
	b := startNode(t, homeB, "--team", "w", "--listen", "/ip4/127.0.0.1/tcp/0")
	defer a.stop(t)
	defer b.stop(t)

	var id struct {
		PeerID       string   `json:"peer_id"`
		Running      bool     `json:"running"`
		Addrs        []string `json:"addrs"`
		Reachability string   `json:"reachability"`
	}
	if err := json.Unmarshal([]byte(must(t, homeA, nil, "id", "--json")), &id); err != nil {
		t.Fatal(err)
	}
	if !id.Running || len(id.Addrs) == 0 || id.Reachability == "" {
		t.Fatalf("remem id of a running node: %+v, want running with addresses and a reachability", id)
	}
	for _, a := range id.Addrs {
		if !strings.HasSuffix(a, "/p2p/"+id.PeerID) {
			t.Errorf("address %s does not end in /p2p/%s: another node cannot dial it as it is", a, id.PeerID)
		}
	}
	text := must(t, homeA, nil, "id")
	if !strings.Contains(text, "address  "+id.Addrs[0]) || !strings.Contains(text, "reach    ") {
		t.Errorf("remem id does not print the address and reachability:\n%s", text)
	}

	out := must(t, homeB, nil, "connect", "--json", id.Addrs[0])
	var p struct {
		ID   string `json:"id"`
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.ID != id.PeerID || p.Kind != "direct" {
		t.Fatalf("remem connect answered %s (%v), want peer %s connected directly", out, err, id.PeerID)
	}

	var peers []peerJSON
	if err := json.Unmarshal([]byte(must(t, homeB, nil, "peers", "--json")), &peers); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(peers, func(x peerJSON) bool { return x.ID == id.PeerID })
	if i < 0 {
		t.Fatalf("remem peers on B does not list A: %+v", peers)
	}
	if pa := peers[i]; pa.Kind != "direct" || pa.LatencyMs <= 0 || len(pa.Conns) == 0 || pa.Conns[0].Direction != "outbound" {
		t.Errorf("A as B's peers shows it: %+v; want direct, a measured round trip, an outbound connection", pa)
	}
	table := must(t, homeB, nil, "peers")
	if !strings.Contains(table, "KIND") || !strings.Contains(table, id.PeerID) || !strings.Contains(table, " ms") {
		t.Errorf("remem peers table:\n%s", table)
	}

	// Hostile or mistaken input: a clear error, exit 1, nothing dialled.
	for _, bad := range []string{"/ip4/127.0.0.1/tcp/1", "not-a-multiaddr", strings.Replace(id.Addrs[0], id.PeerID, mustPeerID(t, homeB), 1)} {
		_, stderr, code := run(t, homeB, nil, "connect", bad)
		if code == 0 || !(strings.Contains(stderr, "/p2p/") || strings.Contains(stderr, "this node itself")) {
			t.Errorf("remem connect %q: exit %d, stderr %q; want an error saying what to write", bad, code, stderr)
		}
	}
	// No node running: say how to start one.
	idle := newHome(t)
	if _, stderr, code := run(t, idle, nil, "peers"); code == 0 || !strings.Contains(stderr, "remem node") {
		t.Errorf("remem peers with no node: exit %d, %q", code, stderr)
	}
	if out := must(t, idle, nil, "id"); !strings.Contains(out, "not running") {
		t.Errorf("remem id with no node:\n%s", out)
	}
}

// peerJSON is one entry of `remem peers --json`.
type peerJSON struct {
	ID        string  `json:"id"`
	Kind      string  `json:"kind"`
	LatencyMs float64 `json:"latency_ms"`
	Conns     []struct{ Kind, Direction string }
}

func mustPeerID(t *testing.T, home string) string {
	t.Helper()
	var id struct {
		PeerID string `json:"peer_id"`
	}
	if err := json.Unmarshal([]byte(must(t, home, nil, "id", "--json")), &id); err != nil {
		t.Fatal(err)
	}
	return id.PeerID
}
