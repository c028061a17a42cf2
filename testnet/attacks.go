package testnet

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/gossip"
	"github.com/remem/remem/internal/check"
	"github.com/remem/remem/node"
)

// The byzantine phase also runs the attacks on a node's other doors, at
// once with the offenders' messages: sybil identities that open catch-up
// sync streams and stall in them, and a flood of idle and slow connections
// on one node's local HTTP API. Honest delivery must not notice.

// AttackParams size the attacks of the byzantine phase.
type AttackParams struct {
	Sybils       int // throwaway identities, each opening SyncStreams streams per target
	SyncStreams  int
	SyncTargets  int // honest nodes the sybils sync with
	APIFlood     int // idle connections opened on the API under attack
	APISlowloris int // of them, connections that send a header byte at a time
	APILimits    node.APILimits
	Hold         time.Duration // the attacks last at least this long
}

// DefaultAttacks: 8 sybils, and a flood of half again as many connections
// as the API under attack serves at once, a sixth of them slow.
func DefaultAttacks() AttackParams {
	return AttackParams{Sybils: 8, SyncStreams: 2, SyncTargets: 2, APIFlood: 96, APISlowloris: 16,
		APILimits: node.APILimits{ReadHeaderTimeout: time.Second, IdleTimeout: 2 * time.Second, MaxConns: 64}, Hold: 4 * time.Second}
}

// Validate checks the counts (zero: that attack is off), the API limits
// and Hold.
func (a AttackParams) Validate() error {
	var l check.List
	l.AtLeast("Sybils", a.Sybils, 0)
	l.AtLeast("SyncStreams", a.SyncStreams, 0)
	l.AtLeast("SyncTargets", a.SyncTargets, 0)
	l.AtLeast("APIFlood", a.APIFlood, 0)
	l.If(a.APISlowloris < 0 || a.APISlowloris > a.APIFlood, "APISlowloris", a.APISlowloris, fmt.Sprintf("want 0 to APIFlood (%d): the slow connections are part of the flood", a.APIFlood))
	l.Nested("APILimits", a.APILimits.OrDefaults(node.DefaultAPILimits()).Validate())
	l.NotNegative("Hold", a.Hold, "attacks as short as the phase")
	return l.Err()
}

// AttackReport says what the attacks of the byzantine phase did.
type AttackReport struct {
	SybilHosts   int `json:"sybil_hosts"`
	SybilStreams int `json:"sybil_streams"` // sync streams the sybils opened and held
	// The API under attack: connections the flood opened, and the honest
	// GET /status requests made during it, answered or not.
	APIFloodConns  int     `json:"api_flood_conns"`
	APIRequests    int     `json:"api_requests"`
	APIAnswered    int     `json:"api_answered"`
	APIMaxAnswerMs float64 `json:"api_max_answer_ms"`
	APIMaxConns    int     `json:"api_max_conns"`
}

// attacks is a running set of attacks; stop ends them and fills the report.
type attacks struct {
	rep    *AttackReport
	cancel context.CancelFunc
	wg     sync.WaitGroup
	hosts  []host.Host
	conns  []net.Conn
	srvErr chan error
	mu     sync.Mutex
}

// startAttacks starts the sybils on the first targets of live and the API
// flood on the last of them.
func (c *cluster) startAttacks(ctx context.Context, live []*tnode, ap AttackParams) (*attacks, error) {
	ctx, cancel := context.WithCancel(ctx)
	a := &attacks{rep: &AttackReport{}, cancel: cancel, srvErr: make(chan error, 1)}
	fail := func(err error) (*attacks, error) {
		a.stop()
		return nil, err
	}
	for i := range ap.Sybils {
		h, err := libp2p.New(append(c.net.rawHost(c.rawSlot()), libp2p.DisableMetrics())...)
		if err != nil {
			return fail(fmt.Errorf("starting sybil %d: %w", i, err))
		}
		a.hosts = append(a.hosts, h)
		a.rep.SybilHosts++
		for _, n := range live[:min(ap.SyncTargets, len(live))] {
			a.wg.Go(func() { a.stall(ctx, h, n, ap.SyncStreams) })
		}
	}
	target := live[len(live)-1]
	ln, dial, err := c.net.apiListener()
	if err != nil {
		return fail(fmt.Errorf("the API under attack: %w", err))
	}
	a.rep.APIMaxConns = ap.APILimits.MaxConns
	api := node.NewAPI(target.d.Memory(), node.APIOptions{})
	a.wg.Go(func() { a.srvErr <- node.ServeAPI(ctx, ln, api, ap.APILimits) })
	for i := range ap.APIFlood {
		conn, err := dial(ctx)
		if err != nil {
			break // out of descriptors or backlog: the flood is as big as it gets
		}
		a.conns = append(a.conns, conn)
		a.rep.APIFloodConns++
		if i < ap.APISlowloris {
			a.wg.Go(func() { slowloris(ctx, conn) })
		}
	}
	token := target.d.Memory().APIToken()
	a.wg.Go(func() { a.askStatus(ctx, dial, token) })
	return a, nil
}

// stall opens streams sync streams to n and sends nothing, holding them
// until the node lets go or the attack stops.
func (a *attacks) stall(ctx context.Context, h host.Host, n *tnode, streams int) {
	info, err := peer.AddrInfoFromString(n.addr())
	if err != nil {
		return
	}
	if err := h.Connect(ctx, *info); err != nil {
		return
	}
	var held []network.Stream
	for range streams {
		s, err := h.NewStream(ctx, n.pid, gossip.SyncProtocol)
		if err != nil {
			continue
		}
		held = append(held, s)
		a.mu.Lock()
		a.rep.SybilStreams++
		a.mu.Unlock()
	}
	<-ctx.Done()
	for _, s := range held {
		_ = s.Reset()
	}
}

// slowloris sends a request header a byte at a time.
func slowloris(ctx context.Context, c net.Conn) {
	req := []byte("GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + string(make([]byte, 64)))
	for _, b := range req {
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
		if _, err := c.Write([]byte{b}); err != nil {
			return // the server cut it: the point
		}
	}
}

// askStatus is the honest user of the API under attack: a GET /status
// with the memory's token every 250 ms while the flood lasts.
func (a *attacks) askStatus(ctx context.Context, dial func(context.Context) (net.Conn, error), token string) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) }}}
	defer client.CloseIdleConnections()
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(250 * time.Millisecond):
		}
		start := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1/status", nil)
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if ctx.Err() != nil {
			return
		}
		a.mu.Lock()
		a.rep.APIRequests++
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				a.rep.APIAnswered++
				a.rep.APIMaxAnswerMs = max(a.rep.APIMaxAnswerMs, round2(float64(time.Since(start).Microseconds())/1000))
			}
		}
		a.mu.Unlock()
	}
}

// stop ends the attacks and returns their report.
func (a *attacks) stop() *AttackReport {
	a.cancel()
	for _, c := range a.conns {
		_ = c.Close()
	}
	a.wg.Wait()
	for _, h := range a.hosts {
		_ = h.Close()
	}
	return a.rep
}
