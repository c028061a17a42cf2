package node_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"

	"github.com/remem/remem/node"
)

// tokenTrap is a listener another user of the machine put on the port a
// stale node.json names: it answers like a node and keeps every
// Authorization header it is sent.
func tokenTrap(t *testing.T) (addr string, got func() []string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var auths []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"origin":"0123456789abcdef"}`))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), auths...)
	}
}

// TestDialNodeSendsNoTokenToAStaleAddress: a node that died (killed, a
// crash, the power) leaves its node.json, whose port any user of the
// machine may then listen on (the default is 127.0.0.1:7878). `remem web`,
// `remem status`, `remem doctor` and a command finding the home held by
// another command dial that address with the home's API token, which
// outlives the node: whoever listens there gets a token the next node on
// the home takes. A client sends it only to the node that holds the home.
func TestDialNodeSendsNoTokenToAStaleAddress(t *testing.T) {
	for _, tc := range []struct {
		name string
		held bool // another command of the person holds the home
	}{{"no process holds the home", false}, {"a short command holds the home", true}} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			m, err := node.Open(node.Config{Home: home, Create: true})
			if err != nil {
				t.Fatal(err)
			}
			token := m.APIToken()
			if !tc.held {
				if err := m.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				t.Cleanup(func() { _ = m.Close() })
			}
			addr, got := tokenTrap(t)
			// The dead node's pid: not this process, which (in the second
			// case) is the command that holds the home.
			if err := node.WriteNodeInfo(home, node.NodeInfo{API: addr, PID: os.Getpid() + 1}); err != nil {
				t.Fatal(err)
			}
			c, err := node.DialNode(context.Background(), home)
			if err == nil {
				_ = c.Close()
			}
			for _, a := range got() {
				if a != "" {
					t.Fatalf("DialNode sent %q (the home's token: %v) to the address of a stale node.json (DialNode: %v)", a, a == "Bearer "+token, err)
				}
			}
			if err == nil {
				t.Errorf("DialNode of a home no node holds: no error")
			}
		})
	}
}
