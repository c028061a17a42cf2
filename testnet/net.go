package testnet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/remem/remem/gossip"
	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// tnode is one honest node of the testnet.
type tnode struct {
	idx    int
	home   string
	id     protocol.Identity
	pid    peer.ID
	listen string // its listen multiaddr
	gater  *gater
	boot   []int // the nodes it dials
	d      *node.Daemon
	cancel context.CancelFunc
	done   chan error
	live   bool
	start  time.Time // when it was last started
}

func (n *tnode) addr() string {
	return n.listen + "/p2p/" + n.pid.String()
}

func (n *tnode) name() string {
	return fmt.Sprintf("node %d (%s)", n.idx, n.id.Origin())
}

// cluster is a running testnet.
type cluster struct {
	cfg   Config
	p     Params
	dir   string
	temp  bool
	topo  Topology
	nodes []*tnode
	reg   *prometheus.Registry
	trk   *tracker
	net   hostNet
	part  *partition
	texts *textGen

	raws    int // raw hosts started, for their slots on the network
	probes  []*rawHost
	byz     []*rawHost
	lessons []*lesson // every lesson published in the run
	flood   *floodOrigins

	// spare are the homes and keys made before the start for the nodes a
	// late-join phase adds, so that every honest node admits them from
	// the start; trust are the origins of every honest node, spare ones
	// included: the trust list each honest memory runs with (SPEC §8), as
	// a team whose members know each other's keys configures it.
	spare []*tnode
	trust []string
}

// newCluster makes the homes and keys of cfg.Nodes nodes and draws the
// topology; start starts them.
func newCluster(cfg Config) (*cluster, error) {
	topo, err := NewTopology(cfg.Nodes, cfg.Degree, cfg.Seed)
	if err != nil {
		return nil, err
	}
	nw := &cluster{cfg: cfg, p: cfg.Params, topo: topo, reg: prometheus.NewRegistry(),
		trk: newTracker(cfg.Params.Memory.State), part: newPartition(), texts: newTextGen(cfg.Seed), flood: &floodOrigins{trusted: map[string]bool{}}}
	if cfg.Network == NetworkSim {
		nw.net = newSimNet(cfg.Links, cfg.Seed)
	} else if nw.net, err = newTCPNet(cfg.Nodes); err != nil {
		return nil, err
	}
	if cfg.Dir != "" {
		nw.dir = cfg.Dir
		if err := os.MkdirAll(nw.dir, 0o700); err != nil {
			return nil, fmt.Errorf("creating the testnet directory: %w", err)
		}
	} else {
		if nw.dir, err = os.MkdirTemp("", "remem-testnet-"); err != nil {
			return nil, fmt.Errorf("creating the testnet directory: %w", err)
		}
		nw.temp = true
	}
	for i := range cfg.Nodes {
		if _, err := nw.addNode(topo.Out[i]); err != nil {
			return nil, errors.Join(err, nw.removeDir())
		}
	}
	for i := range lateJoiners(cfg.Phases) {
		n, err := nw.makeHome(cfg.Nodes + i)
		if err != nil {
			return nil, errors.Join(err, nw.removeDir())
		}
		nw.spare = append(nw.spare, n)
	}
	for _, n := range append(slices.Clone(nw.nodes), nw.spare...) {
		nw.trust = append(nw.trust, n.id.Origin())
		nw.flood.trusted[n.id.Origin()] = true
	}
	return nw, nil
}

// lateJoiners is how many nodes the phases add.
func lateJoiners(phases []Phase) int {
	k := 0
	for _, ph := range phases {
		if ph == PhaseLateJoin {
			k++
		}
	}
	return k
}

// makeHome makes the home and key of node i.
func (nw *cluster) makeHome(i int) (*tnode, error) {
	home := filepath.Join(nw.dir, fmt.Sprintf("node-%03d", i))
	id, _, err := node.InitHome(home)
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", i, err)
	}
	pid, err := gossip.PeerIDOf(id)
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", i, err)
	}
	return &tnode{idx: i, home: home, id: id, pid: pid}, nil
}

// addNode adds a node: a spare home made before the start when one is
// left, else a new home and key.
func (nw *cluster) addNode(boot []int) (*tnode, error) {
	i := len(nw.nodes)
	var n *tnode
	if len(nw.spare) > 0 && nw.spare[0].idx == i {
		n, nw.spare = nw.spare[0], nw.spare[1:]
	} else {
		var err error
		if n, err = nw.makeHome(i); err != nil {
			return nil, err
		}
	}
	listen, err := nw.net.nodeListen(i, false)
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", i, err)
	}
	n.listen, n.boot = listen, boot
	n.gater = newGater(n.pid, nw.part)
	nw.nodes = append(nw.nodes, n)
	return n, nil
}

func (nw *cluster) removeDir() error {
	if nw.temp {
		if err := os.RemoveAll(nw.dir); err != nil {
			return fmt.Errorf("removing the testnet's temporary homes %s: %w", nw.dir, err)
		}
	}
	return nil
}

// startNode starts n's daemon and waits until it serves. When its port was
// taken meanwhile it listens on another one and dials all its neighbours,
// since those that dial it know the old port only.
func (nw *cluster) startNode(ctx context.Context, n *tnode) error {
	if n.live {
		return nil
	}
	boot := n.boot
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		if err = nw.tryStart(ctx, n, boot); err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return err
		}
		listen, lerr := nw.net.nodeListen(n.idx, true)
		if lerr != nil {
			return lerr
		}
		n.listen = listen
		if n.idx < nw.topo.N {
			boot = nw.topo.Neighbours(n.idx)
		}
	}
	return err
}

func (nw *cluster) tryStart(ctx context.Context, n *tnode, boot []int) error {
	var addrs []string
	for _, j := range boot {
		addrs = append(addrs, nw.nodes[j].addr())
	}
	ready := make(chan struct{})
	idx := n.idx
	d, err := node.NewDaemon(node.DaemonConfig{
		// The honest nodes admit each other (SPEC §8): a trust list of
		// every honest origin on an open team, which sybils can reach.
		Memory: node.Config{Home: n.home, Params: nw.p.Memory, Store: store.Options{Small: true, Tiny: nw.cfg.Network == NetworkSim},
			Admission: node.Admission{Trust: nw.trust}, Strangers: nw.p.Strangers,
			OnAccept: func(_ string, rec *protocol.Record, _ time.Time) {
				if !nw.flood.accept(idx, rec) {
					nw.trk.accept(idx, rec, time.Now())
				}
			}},
		Gossip: gossip.Config{Teams: []string{nw.p.Team}, Listen: []string{n.listen},
			Bootstrap: addrs, Params: nw.p.Gossip, ConnGater: n.gater, Transport: nw.net.transport(n.idx)},
		SleepEvery: nw.cfg.Sleep,
		Registry:   nw.reg,
		Logger:     nw.cfg.Logger.With("node", n.idx),
		Ready:      func(*node.Daemon) { close(ready) },
	})
	if err != nil {
		return fmt.Errorf("starting %s: %w", n.name(), err)
	}
	// The tracker computes the states this memory computes.
	nw.trk.admit(idx, d.Memory().Admitted())
	// Each node's person opted in its home as the project its agents work
	// in, so that what they meet there is confirmed (SPEC §6 opt-in).
	if _, err := d.Memory().Share(node.ProjectShare{Project: n.home}); err != nil {
		return errors.Join(fmt.Errorf("starting %s: opting its project in: %w", n.name(), err), d.Close())
	}
	rctx, cancel := context.WithCancel(context.Background())
	n.d, n.cancel, n.done = d, cancel, make(chan error, 1)
	n.start = time.Now()
	go func() { n.done <- d.Run(rctx) }()
	select {
	case <-ready:
		n.live = true
		return nil
	case err := <-n.done:
		cancel()
		return fmt.Errorf("%s stopped while starting: %v", n.name(), err)
	case <-ctx.Done():
		cancel()
		<-n.done
		return fmt.Errorf("starting %s: %w", n.name(), ctx.Err())
	}
}

// stopNode stops n and waits for its daemon to close its store.
func (nw *cluster) stopNode(n *tnode, timeout time.Duration) error {
	if !n.live {
		return nil
	}
	n.live = false
	n.cancel()
	select {
	case err := <-n.done:
		if err != nil {
			return fmt.Errorf("stopping %s: %w", n.name(), err)
		}
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("%s did not stop within %v", n.name(), timeout)
	}
}

// startAll starts the given nodes, a few at a time.
func (nw *cluster) startAll(ctx context.Context, nodes []*tnode, progress func(done int)) error {
	sem := make(chan struct{}, 8)
	var (
		mu   sync.Mutex
		errs []error
		done int
		wg   sync.WaitGroup
	)
	for _, n := range nodes {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			err := nw.startNode(ctx, n)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			}
			done++
			if progress != nil {
				progress(done)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// stopAll stops every live node in parallel.
func (nw *cluster) stopAll(nodes []*tnode) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for _, n := range nodes {
		if !n.live {
			continue
		}
		wg.Go(func() {
			if err := nw.stopNode(n, time.Minute); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// live returns the live nodes.
func (nw *cluster) live() []*tnode {
	var out []*tnode
	for _, n := range nw.nodes {
		if n.live {
			out = append(out, n)
		}
	}
	return out
}

// close stops everything and removes a temporary directory.
func (nw *cluster) close() error {
	var errs []error
	for _, h := range append(nw.byz, nw.probes...) {
		h.close()
	}
	nw.byz, nw.probes = nil, nil
	errs = append(errs, nw.stopAll(nw.nodes), nw.removeDir())
	nw.net.close()
	return errors.Join(errs...)
}

// ---- what a node holds ----

// holding is one node's record set and states, as its store says. The
// records compared are those in circulation: a lesson record whose origin
// has revoked it, and whatever of a revoked lesson is not a revocation (nor
// a quorum's evidence, node.RevocationOf), is kept by those who hold it
// but never sent on again (SPEC §8), so a node that joins later never gets
// it; those are counted in withdrawn and left out of ids and the digest. The revocation itself,
// and the state of every hash, are compared.
type holding struct {
	digest    [32]byte
	ids       map[recID]*protocol.Record
	states    map[string]protocol.State
	withdrawn int
}

// hold reads n's store: every record but those of origins skip names
// (nil: none), and the state of every hash at now.
func hold(n *tnode, now time.Time, p protocol.StateParams, skip func(origin string) bool) (holding, error) {
	h := holding{ids: map[recID]*protocol.Record{}, states: map[string]protocol.State{}}
	admit := n.d.Memory().Admitted()
	sum := newDigest()
	var cur string
	var recs []*protocol.Record
	flush := func() {
		if cur == "" {
			return
		}
		revokedAt := map[string]time.Time{}
		for _, r := range recs {
			if r.Type == protocol.TypeRevocation {
				revokedAt[r.Origin] = r.Time
			}
		}
		rv := node.RevocationOf(cur, recs, now, p, admit)
		for _, r := range recs {
			if at, ok := revokedAt[r.Origin]; (ok && r.Type == protocol.TypeLesson && !at.Before(r.Time)) || rv.Drops(r) {
				h.withdrawn++
				continue
			}
			h.ids[idOf(r.Raw)] = r
			sum.line(r.Raw)
		}
		st := protocol.ComputeState(cur, recs, now, p, admit).State
		h.states[cur] = st
		sum.state(cur, st)
		recs = recs[:0]
	}
	err := n.d.Memory().Stored().Each(func(held store.Held) error {
		r := held.Record
		if skip != nil && skip(r.Origin) {
			return nil
		}
		if r.Hash != cur {
			flush()
			cur = r.Hash
		}
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		return h, fmt.Errorf("reading the records of %s: %w", n.name(), err)
	}
	flush()
	h.digest = sum.sum()
	return h, nil
}
