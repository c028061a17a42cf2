//go:build linux

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Helpers of the network-namespace test (netns_test.go): namespaces the
// test makes and always removes, and remem processes run inside them.

// requireNetNS skips the test unless it can make network namespaces (root,
// iproute2 and nftables), or fails it when REMEM_REQUIRE_NETNS=1 (CI).
func requireNetNS(t *testing.T) {
	t.Helper()
	why := ""
	switch {
	case os.Geteuid() != 0:
		why = "needs root to make network namespaces"
	case !hasCommand("ip"):
		why = "needs `ip` (iproute2)"
	case !hasCommand("nft"):
		why = "needs `nft` (nftables: apt-get install nftables)"
	}
	if why == "" {
		return
	}
	if os.Getenv("REMEM_REQUIRE_NETNS") == "1" {
		t.Fatalf("the network-namespace test %s, and REMEM_REQUIRE_NETNS=1 says it must run", why)
	}
	t.Skipf("the network-namespace test %s (set REMEM_REQUIRE_NETNS=1 to make this a failure)", why)
}

func hasCommand(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// netLab is a set of network namespaces named prefix+name. Cleanup kills
// every process in them, then deletes them.
type netLab struct {
	t      *testing.T
	prefix string
	made   []string
}

func newNetLab(t *testing.T) *netLab {
	t.Helper()
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	l := &netLab{t: t, prefix: fmt.Sprintf("rmm%d%s-", os.Getpid(), hex.EncodeToString(b))}
	t.Cleanup(l.cleanup)
	return l
}

// ns is the full name of the lab's namespace name.
func (l *netLab) ns(name string) string { return l.prefix + name }

// add makes the namespaces, each with its loopback up.
func (l *netLab) add(names ...string) {
	l.t.Helper()
	for _, n := range names {
		l.ip("netns", "add", l.ns(n))
		l.made = append(l.made, l.ns(n))
		l.ip("-n", l.ns(n), "link", "set", "lo", "up")
	}
}

// ip runs `ip args...` and fails the test when it fails.
func (l *netLab) ip(args ...string) string {
	l.t.Helper()
	return l.must(nil, "ip", args...)
}

// exec runs a command inside namespace name.
func (l *netLab) exec(stdin []byte, name string, args ...string) string {
	l.t.Helper()
	return l.must(stdin, "ip", append([]string{"netns", "exec", l.ns(name)}, args...)...)
}

func (l *netLab) must(stdin []byte, cmd string, args ...string) string {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, cmd, args...)
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	out, err := c.CombinedOutput()
	if err != nil {
		l.t.Fatalf("%s %s: %v\n%s", cmd, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// veth joins namespace a (interface ifA) to namespace b (interface ifB).
// Both ends are made inside their namespaces: nothing appears in the
// host's own namespace, even for a moment.
func (l *netLab) veth(a, ifA, b, ifB string) {
	l.t.Helper()
	l.ip("link", "add", "name", ifA, "netns", l.ns(a), "type", "veth", "peer", "name", ifB, "netns", l.ns(b))
}

// addr gives an interface of namespace name an address and brings it up.
func (l *netLab) addr(name, dev, cidr string) {
	l.t.Helper()
	l.ip("-n", l.ns(name), "addr", "add", cidr, "dev", dev)
	l.ip("-n", l.ns(name), "link", "set", dev, "up")
}

// cleanup kills what runs in the namespaces and deletes them; it reports
// what it could not do.
func (l *netLab) cleanup() {
	for _, ns := range l.made {
		out, _ := exec.Command("ip", "netns", "pids", ns).Output()
		for _, f := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	for _, ns := range l.made {
		// A process just killed may hold the namespace a moment longer;
		// `ip netns del` only unmounts the name, which it can do anyway.
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			l.t.Errorf("removing namespace %s: %v %s", ns, err, out)
		}
	}
}

// labProc is a long-running remem process inside a namespace.
type labProc struct {
	name   string
	cmd    *exec.Cmd
	stderr *syncBuffer
	start  time.Time
}

// start runs bin with args in namespace ns with REMEM_HOME=home; the
// process is killed by ctx and at the end of the test.
func (l *netLab) start(ctx context.Context, label, ns, home, bin string, args ...string) *labProc {
	l.t.Helper()
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", l.ns(ns), bin}, args...)...)
	cmd.Env = append(os.Environ(), "REMEM_HOME="+home)
	p := &labProc{name: label, cmd: cmd, stderr: &syncBuffer{}}
	cmd.Stdout, cmd.Stderr = p.stderr, p.stderr
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() {
		// `ip netns exec` execs the command: this is remem itself.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return p
}

// lines are the lines of the process's output that contain s.
func (p *labProc) lines(s string) []string {
	var out []string
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

// cli runs a remem command on home inside namespace ns (so that it
// reaches the node running there through its local API) and returns
// stdout, or stderr and false when it failed.
func (l *netLab) cli(ns, home, bin string, args ...string) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", l.ns(ns), bin, "--home", home}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return fmt.Sprintf("remem %s in %s: %v %s", strings.Join(args, " "), ns, err, errb.String()), false
	}
	return out.String(), true
}

// waitFor polls cond every 200 ms until it holds or timeout passes, and
// returns how long it took; on timeout it fails the test with what,
// followed by the logs of procs.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool, procs ...*labProc) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			var logs strings.Builder
			for _, p := range procs {
				fmt.Fprintf(&logs, "\n--- %s ---\n%s", p.name, p.stderr)
			}
			t.Fatalf("timed out after %v waiting for %s%s", timeout, what, logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	return time.Since(start)
}

// logTime is the time of the first log line holding every one of subs.
func (p *labProc) logTime(subs ...string) (time.Time, bool) {
	ts := p.logTimes(subs...)
	if len(ts) == 0 {
		return time.Time{}, false
	}
	return ts[0], true
}

// logTimes are the times of the log lines holding every one of subs.
func (p *labProc) logTimes(subs ...string) []time.Time {
	var out []time.Time
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(line, s)
		}
		if !all {
			continue
		}
		f := strings.Fields(line)
		if len(f) > 0 && strings.HasPrefix(f[0], "time=") {
			if at, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(f[0], "time=")); err == nil {
				out = append(out, at)
			}
		}
	}
	return out
}

type labPeer struct {
	ID    string   `json:"id"`
	Addrs []string `json:"addrs"`
}

type labStatus struct {
	PeerID string    `json:"peer_id"`
	Addrs  []string  `json:"addrs"`
	Peers  []labPeer `json:"peers"`
}

// status is `remem status --json` of the node running on home in ns.
func (l *netLab) status(ns, home, bin string) (labStatus, bool) {
	var st labStatus
	out, ok := l.cli(ns, home, bin, "status", "--json")
	return st, ok && json.Unmarshal([]byte(out), &st) == nil
}

// publish signs a lesson through the node running on home in ns and
// returns its hash.
func (l *netLab) publish(ns, home, bin, text string) string {
	l.t.Helper()
	out, ok := l.cli(ns, home, bin, "publish", "--kind", "error", "--json", text)
	var rec struct{ Hash string }
	if !ok || json.Unmarshal([]byte(out), &rec) != nil || rec.Hash == "" {
		l.t.Fatalf("publish in %s: %s", ns, out)
	}
	return rec.Hash
}

// waitLesson waits until the node on home in ns holds the lesson hash and
// returns when it arrived there (the earliest record's arrival) and the
// lesson's scopes.
func (l *netLab) waitLesson(t *testing.T, ns, home, bin, hash string, procs ...*labProc) (time.Time, []string) {
	t.Helper()
	var prov struct {
		Scopes  []string `json:"scopes"`
		Records []struct {
			Arrived time.Time `json:"arrived"`
		} `json:"records"`
	}
	waitFor(t, 10*time.Second, "lesson "+hash+" in "+ns, func() bool {
		out, ok := l.cli(ns, home, bin, "show", "--json", hash)
		return ok && json.Unmarshal([]byte(out), &prov) == nil && len(prov.Records) > 0
	}, procs...)
	first := prov.Records[0].Arrived
	for _, r := range prov.Records[1:] {
		if r.Arrived.Before(first) {
			first = r.Arrived
		}
	}
	return first, prov.Scopes
}
