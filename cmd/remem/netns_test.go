//go:build linux

package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The "internet" of TestNetNSNodesBehindTwoNATsHolePunch is 11.0.0.0/24.
// go-libp2p hole-punches and advertises relay addresses only for what
// manet.IsPublicAddr calls public, which excludes the private blocks
// (10/8, 172.16/12, 192.168/16, 100.64/10, 127/8, 169.254/16) and the
// unroutable ones (the documentation blocks 192.0.2/24, 198.51.100/24,
// 203.0.113/24, the benchmarking block 198.18/15, 240/4, ...). 11/8 is
// none of those, so manet calls it public. It never leaves the test's
// namespaces: they are linked only to each other (the veth pairs are
// made inside them), and the test checks that "pub" and the routers have
// no default route, so a packet for any address outside the lab has
// nowhere to go.
const (
	netnsCommonsIP = "11.0.0.1" // the commons and its relay, in "pub"
	netnsNatAWan   = "11.0.0.2" // router natA's public leg
	netnsNatBWan   = "11.0.0.3" // router natB's public leg
	netnsTeam      = "netns"
)

// natRules make a router of the kind people have at home: it masquerades
// what it forwards out of its public leg, and its firewall drops what
// arrives on that leg unasked (a new flow to the router itself). Linux
// conntrack keeps the source port when it is free (an endpoint-independent
// mapping), which is what lets DCUtR punch. The input rule matters: without
// it, the peer's first punch packet, which reaches the router before the
// node's own packet has left, is accepted for the router itself and its
// conntrack entry confirmed; that entry holds the port pair, so the
// masquerade of the node's packet to the peer must take another source
// port, and the NAT acts as a symmetric one for exactly the flows hole
// punching opens (seen here: every QUIC attempt timed out). A packet the
// firewall drops never gets its entry confirmed.
const natRules = `table ip nat {
	chain postrouting {
		type nat hook postrouting priority 100;
		oifname "wan" masquerade
	}
}
table ip filter {
	chain input {
		type filter hook input priority 0; policy accept;
		iifname "wan" ct state new drop
	}
}
`

// TestNetNSNodesBehindTwoNATsHolePunch (issue 13, item 3): two nodes, each
// behind its own masquerading NAT, know only the commons URL. A reserves a
// slot on the commons' relay and registers its relayed address in the
// directory; B finds A there, connects through the relay, receives A's
// lesson by gossip on the team scope, and DCUtR hole punching upgrades the
// connection to a direct one through both NATs.
//
// Topology (all in namespaces this test makes and removes):
//
//	lanA 10.1.0.2 ── 10.1.0.1 natA 11.0.0.2 ─┐
//	                                         br0 11.0.0.1 pub (commons + relay)
//	lanB 10.2.0.2 ── 10.2.0.1 natB 11.0.0.3 ─┘
//
// Needs root, iproute2 and nftables; skips without them unless
// REMEM_REQUIRE_NETNS=1.
func TestNetNSNodesBehindTwoNATsHolePunch(t *testing.T) {
	requireNetNS(t)
	bin := remem(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	lab := newNetLab(t)
	lab.add("pub", "natA", "natB", "lanA", "lanB")
	// pub: a bridge, the switch of the "internet", holding the commons.
	lab.ip("-n", lab.ns("pub"), "link", "add", "br0", "type", "bridge")
	lab.addr("pub", "br0", netnsCommonsIP+"/24")
	for _, r := range []struct{ nat, lan, wan, subnet, port string }{
		{"natA", "lanA", netnsNatAWan, "10.1.0", "pa"},
		{"natB", "lanB", netnsNatBWan, "10.2.0", "pb"},
	} {
		lab.veth(r.nat, "wan", "pub", r.port)
		lab.ip("-n", lab.ns("pub"), "link", "set", r.port, "master", "br0", "up")
		lab.addr(r.nat, "wan", r.wan+"/24")
		lab.veth(r.nat, "lan", r.lan, "eth0")
		lab.addr(r.nat, "lan", r.subnet+".1/24")
		lab.addr(r.lan, "eth0", r.subnet+".2/24")
		lab.ip("-n", lab.ns(r.lan), "route", "add", "default", "via", r.subnet+".1")
		lab.exec(nil, r.nat, "sysctl", "-qw", "net.ipv4.ip_forward=1")
		lab.exec([]byte(natRules), r.nat, "nft", "-f", "-")
	}
	// Isolation: only the LAN hosts have a default route, and it points
	// at their router, which has none.
	for _, ns := range []string{"pub", "natA", "natB"} {
		if out := strings.TrimSpace(lab.ip("-n", lab.ns(ns), "route", "show", "default")); out != "" {
			t.Fatalf("namespace %s has a default route %q: packets could leave the lab", ns, out)
		}
	}

	token := "netns-test-token-0123456789abcdef"
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	commonsURL := "http://" + netnsCommonsIP + ":8787"
	commonsProc := lab.start(ctx, "commons", "pub", t.TempDir(), bin, "commons", "serve",
		"--listen", netnsCommonsIP+":8787", "--data", t.TempDir(), "--token-file", tokenFile,
		"--p2p", "/ip4/"+netnsCommonsIP+"/tcp/4001", "--p2p", "/ip4/"+netnsCommonsIP+"/udp/4001/quic-v1")
	waitFor(t, 10*time.Second, "the commons and its relay host", func() bool {
		return len(commonsProc.lines("commons serving")) > 0 && len(commonsProc.lines("relay host")) > 0
	}, commonsProc)

	// AutoNAT decides the nodes' reachability unless
	// REMEM_NETNS_REACHABILITY says "private" (or "public"). Forced
	// private, A reserves its slot at once and its directory round after
	// that may dial B while B is still starting: a relayed connection that
	// reaches B before B's DCUtR service is ready (it waits for a public
	// address observed by the relay) is not punched by go-libp2p; B dials
	// A again through the relay once it is ready (gossip's repunchLoop,
	// 10-15 s later), and A punches then.
	reach := os.Getenv("REMEM_NETNS_REACHABILITY")
	// The directory lists only a team with a key (as teammates share it).
	keyFile := filepath.Join(t.TempDir(), "team.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("5a", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	nodeArgs := []string{"node", "--team", netnsTeam, "--team-key", netnsTeam + "=" + keyFile, "--commons", commonsURL, "--token-file", tokenFile,
		"--listen", "/ip4/0.0.0.0/tcp/4002", "--listen", "/ip4/0.0.0.0/udp/4002/quic-v1",
		"--mdns=false", "--api", "127.0.0.1:0", "--sleep", "1h"}
	if reach != "" {
		nodeArgs = append(nodeArgs, "--reachability", reach)
	}
	homeA, homeB := newHome(t), newHome(t)

	a := lab.start(ctx, "node A (lanA)", "lanA", homeA, bin, nodeArgs...)
	var aID string
	aRelayed := waitFor(t, 35*time.Second, "A holding a relayed address and registered in the directory", func() bool {
		st, ok := lab.status("lanA", homeA, bin)
		aID = st.PeerID
		if !ok || !slices.ContainsFunc(st.Addrs, func(s string) bool { return strings.Contains(s, "/p2p-circuit") }) {
			return false
		}
		// A registration made after the relayed address came: the
		// directory lists it (before, B would find only A's private
		// addresses).
		relayedAt, ok := a.logTime("addresses changed", "/p2p-circuit")
		return ok && slices.ContainsFunc(a.logTimes("directory: registered"), func(at time.Time) bool { return !at.Before(relayedAt) })
	}, a, commonsProc)
	t.Logf("A: relayed address and directory entry %v after its start; AutoNAT: %v", aRelayed.Round(time.Millisecond), a.lines("reachability changed"))
	if reach == "" && len(a.lines("to=private")) == 0 {
		t.Errorf("A reserved a relay slot without AutoNAT saying it is private: %v", a.lines("reachability changed"))
	}
	b := lab.start(ctx, "node B (lanB)", "lanB", homeB, bin, nodeArgs...)
	procs := []*labProc{a, b, commonsProc}
	waitFor(t, 15*time.Second, "B connected to A", func() bool {
		st, ok := lab.status("lanB", homeB, bin)
		return ok && slices.ContainsFunc(st.Peers, func(p labPeer) bool { return p.ID == aID })
	}, procs...)
	relayedAt, ok := b.logTime("peer connected", "peer="+aID, "kind=relayed")
	if !ok {
		t.Fatalf("B's first connection to A was not through the relay: %v", b.lines("peer connected"))
	}
	// Lesson 1, signed once B is connected (signed before, A would push
	// it to the commons and B would pull it from there at its start).
	published1 := time.Now()
	hash1 := lab.publish("lanA", homeA, bin, "The nightly deploy fails when the staging database is still migrating")
	arrived1, scopes1 := lab.waitLesson(t, "lanB", homeB, bin, hash1, procs...)

	// The hole punch: a log line on either side, and B holding a direct
	// connection to A at natA's public address. Nothing but a punched
	// hole lets B reach that address: natA forwards nothing it has not
	// seen A send first, and its firewall drops the rest.
	var direct []string
	waitFor(t, 30*time.Second, "the hole punch: B directly connected to A through natA", func() bool {
		st, ok := lab.status("lanB", homeB, bin)
		if !ok {
			return false
		}
		direct = direct[:0]
		for _, p := range st.Peers {
			if p.ID != aID {
				continue
			}
			for _, addr := range p.Addrs {
				if !strings.Contains(addr, "/p2p-circuit") && strings.Contains(addr, "/ip4/"+netnsNatAWan+"/") {
					direct = append(direct, addr)
				}
			}
		}
		return len(direct) > 0 && len(a.lines("hole punched"))+len(b.lines("hole punched")) > 0
	}, procs...)
	punchedAt, ok := b.logTime("hole punched")
	if !ok {
		punchedAt, _ = a.logTime("hole punched")
	}

	// Lesson 2, signed after the punch: it travels over the direct
	// connection.
	published2 := time.Now()
	hash2 := lab.publish("lanA", homeA, bin, "The integration suite times out when the cache warmer runs at the same time")
	arrived2, scopes2 := lab.waitLesson(t, "lanB", homeB, bin, hash2, procs...)

	for _, p := range []*labProc{a, b} {
		for _, s := range []string{"reachability changed", "peer connected", "hole punched", "hole punching failed", "directory", "relay unreachable"} {
			for _, line := range p.lines(s) {
				t.Logf("%s: %s", p.name, line)
			}
		}
	}
	if os.Getenv("REMEM_NETNS_LOGS") == "1" { // every process's whole log
		for _, p := range procs {
			t.Logf("--- %s ---\n%s", p.name, p.stderr)
		}
	}
	since := func(at time.Time) time.Duration { return at.Sub(b.start).Round(time.Millisecond) }
	over1 := "over the relayed connection (before the punch)"
	if arrived1.After(punchedAt) {
		over1 = "over the punched connection (the punch came first)"
	}
	t.Logf("from B's start: connected to A through the relay %v; hole punched %v (direct %v); lesson 1 (signed once B was connected) %v, %v after A was asked to sign it, %s; lesson 2 (signed after the punch) %v, %v after A was asked to sign it",
		since(relayedAt), since(punchedAt), direct, since(arrived1), arrived1.Sub(published1).Round(time.Millisecond), over1,
		since(arrived2), arrived2.Sub(published2).Round(time.Millisecond))
	for i, sc := range [][]string{scopes1, scopes2} {
		if !slices.Equal(sc, []string{"team:" + netnsTeam}) {
			t.Errorf("lesson %d on B has scopes %v, want only team:%s (gossip and sync with A, not a commons file)", i+1, sc, netnsTeam)
		}
	}
}
