package testnet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/gossip"
	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

// Run builds a testnet of cfg.Nodes nodes, runs cfg.Phases on it, stops
// every node and returns what it measured. progress, when set, is told how
// far the current phase is (done of total arrivals, or nodes started). A
// phase that misses a delivery or fails to converge within its timeout is
// reported with its error and the run goes on; Run then returns the report
// together with an error naming every failed phase. Setup failures and the
// end of ctx stop the run.
func Run(ctx context.Context, cfg Config, progress func(phase Phase, done, total int)) (rep Report, err error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return rep, fmt.Errorf("testnet config: %w", err)
	}
	if progress == nil {
		progress = func(Phase, int, int) {}
	}
	g := cfg.Params.Gossip
	rep = Report{Nodes: cfg.Nodes, Degree: cfg.Degree, Lessons: cfg.Lessons, Seed: cfg.Seed, Scenario: cfg.Phases,
		SleepMs: ms(cfg.Sleep), Probes: cfg.Params.Probes, Started: time.Now().UTC(),
		Gossip: GossipReport{D: g.D, Dlo: g.Dlo, Dhi: g.Dhi, Dlazy: g.Dlazy, HeartbeatMs: ms(g.HeartbeatInterval), SyncPeers: g.SyncPeers}}
	start := time.Now()
	rep.RSSBaseBytes = rss()
	rep.CPUs = runtime.GOMAXPROCS(0)

	c, err := newCluster(cfg)
	if err != nil {
		return rep, err
	}
	rep.Edges = c.topo.Edges()
	rep.MedianHops = c.topo.MedianHops()
	cpu0 := busyCPU()
	rep.Network, rep.Time, rep.BytesSource = cfg.Network, "wall", "sync"
	if cfg.Network == NetworkSim {
		links := cfg.Links
		rep.Links, rep.Time = &links, "simulated"
	}
	if c.net.counts() {
		rep.BytesSource = string(cfg.Network)
	}

	// Background samplers, joined before Run returns.
	var peak atomic.Int64
	sampleCtx, stopSampling := context.WithCancel(context.Background())
	var bg sync.WaitGroup
	bg.Go(func() {
		for {
			if r := rss(); r > peak.Load() {
				peak.Store(r)
			}
			c.net.poll()
			select {
			case <-sampleCtx.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	})
	defer func() {
		stopSampling()
		bg.Wait()
	}()

	// Stopping the nodes may fail too; that joins whatever Run returns.
	defer func() {
		if cerr := c.close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("stopping the testnet: %w", cerr))
		}
	}()

	if err := c.setup(ctx, progress); err != nil {
		return rep, err
	}
	var failed []string
	for _, ph := range cfg.Phases {
		if ctx.Err() != nil {
			break
		}
		pr := c.runPhase(ctx, ph, progress, rep.Phases)
		rep.Phases = append(rep.Phases, pr)
		if !pr.ok() {
			failed = append(failed, string(ph))
		}
		if r := rss(); r > peak.Load() {
			peak.Store(r)
		}
	}
	rep.RSSBytes = peak.Load()
	rep.RSSPerNodeBytes = rep.RSSBytes / int64(cfg.Nodes)
	rep.TookMs = ms(time.Since(start))
	rep.WallMs = rep.TookMs
	rep.CPUSeconds = round2(busyCPU() - cpu0)
	rep.Targets = rep.targets()
	rep.LoadAverage = loadAverage()
	rep.OK = len(failed) == 0 && len(rep.Phases) == len(cfg.Phases)
	switch {
	case ctx.Err() != nil:
		return rep, fmt.Errorf("testnet interrupted: %w", ctx.Err())
	case len(failed) > 0:
		return rep, fmt.Errorf("phases failed: %s (see their errors in the report)", strings.Join(failed, ", "))
	}
	return rep, nil
}

// RunVirtual is Run on the simulated network (cfg.Network must be
// NetworkSim), inside a synctest bubble that t gives: time in the bubble
// moves only when every goroutine in it waits, so a run of a thousand
// nodes on two cores takes the same simulated milliseconds as on a
// thousand machines. testing/synctest runs a bubble for a test only;
// `remem testnet --network sim` makes one through testing.Main. The
// report's Started and WallMs are the machine's time; the rest is
// simulated. The end of ctx stops the run within 100 simulated ms.
func RunVirtual(t *testing.T, ctx context.Context, cfg Config, progress func(phase Phase, done, total int)) (rep Report, err error) {
	if cfg.Network != NetworkSim {
		return rep, fmt.Errorf("testnet config: RunVirtual runs the simulated network; Network is %q", cfg.Network)
	}
	started, wall := time.Now().UTC(), time.Now()
	// A thousand nodes in one heap: the collector runs at the default
	// pace until the Go runtime's memory nears simMemoryPerNode a node,
	// then as often as it takes to stay there.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(max(cfg.Nodes, 1)) * simMemoryPerNode))
	synctest.Test(t, func(*testing.T) {
		// A bubble's goroutines may not wait on ctx, made outside it:
		// a goroutine of the bubble looks at it every 100 simulated ms.
		inner, cancel := context.WithCancel(context.Background())
		defer cancel()
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			for inner.Err() == nil {
				if ctx.Err() != nil {
					cancel()
					return
				}
				select {
				case <-inner.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
		rep, err = Run(inner, cfg, progress)
		cancel()
		<-watched
		if ctx.Err() != nil {
			err = fmt.Errorf("testnet interrupted: %w", ctx.Err())
		}
	})
	rep.Started, rep.WallMs = started, ms(time.Since(wall))
	return rep, err
}

// simMemoryPerNode is the soft memory limit of a simulated run per node,
// for the Go runtime (Badger's mapped files come on top).
const simMemoryPerNode = 7 << 20

// rss is the process's resident set (VmRSS), or the Go runtime's total
// memory where /proc cannot be read.
func rss() int64 {
	if f, err := os.Open("/proc/self/status"); err == nil {
		defer func() { _ = f.Close() }() // read only
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				fields := strings.Fields(rest)
				if len(fields) >= 1 {
					if kb, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
						return kb << 10
					}
				}
			}
		}
	}
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		return int64(s[0].Value.Uint64())
	}
	return 0
}

// setup starts the nodes and the probes and waits for the mesh.
func (c *cluster) setup(ctx context.Context, progress func(Phase, int, int)) error {
	sctx, cancel := context.WithTimeout(ctx, c.p.StartTimeout)
	defer cancel()
	total := len(c.nodes) + c.p.Probes
	progress(PhaseSetup, 0, total)
	if err := c.startAll(sctx, c.nodes, func(done int) { progress(PhaseSetup, done, total) }); err != nil {
		return fmt.Errorf("starting the testnet: %w", err)
	}
	r := newRand(c.cfg.Seed, 3)
	for k := range c.p.Probes {
		h, err := c.newRawHost(true)
		if err != nil {
			return fmt.Errorf("starting probe %d: %w", k, err)
		}
		c.probes = append(c.probes, h)
		// A node dials Degree others and about as many dial it: a probe
		// links to twice Degree nodes, so it sees what a node sees.
		targets := c.pick(r, c.live(), 2*c.cfg.Degree)
		h.keepConnected(addrInfos(targets), 500*time.Millisecond)
		progress(PhaseSetup, len(c.nodes)+k+1, total)
	}
	// The mesh: every node and probe sees a peer in the topic.
	for {
		var lonely []string
		for _, n := range c.live() {
			if !hasTopicPeer(n.d.Gossip().Peers()) {
				lonely = append(lonely, n.name())
			}
		}
		for k, h := range c.probes {
			if h.topicPeers() == 0 {
				lonely = append(lonely, fmt.Sprintf("probe %d", k))
			}
		}
		if len(lonely) == 0 {
			break
		}
		select {
		case <-sctx.Done():
			return fmt.Errorf("the mesh did not form within %v: %s have no peer in the team topic", c.p.StartTimeout, firstFew(lonely, 10))
		case <-time.After(50 * time.Millisecond):
		}
	}
	// A few heartbeats so that meshes fill up to D.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(5 * c.p.Gossip.HeartbeatInterval):
	}
	return nil
}

func hasTopicPeer(ps []gossip.PeerInfo) bool {
	for _, p := range ps {
		if len(p.Topics) > 0 {
			return true
		}
	}
	return false
}

func addrInfos(nodes []*tnode) []peer.AddrInfo {
	out := make([]peer.AddrInfo, 0, len(nodes))
	for _, n := range nodes {
		if ai, err := peer.AddrInfoFromString(n.addr()); err == nil {
			out = append(out, *ai)
		}
	}
	return out
}

// pick returns k distinct nodes of from, chosen with r (all when k ≥ len).
func (c *cluster) pick(r *rand.Rand, from []*tnode, k int) []*tnode {
	s := slices.Clone(from)
	r.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	return s[:min(k, len(s))]
}

// ---- one phase's bookkeeping ----

// phaseRun measures one phase: counters at its start, and what nodes that
// stop during it had counted by then.
type phaseRun struct {
	c      *cluster
	rep    *PhaseReport
	start  time.Time
	base   map[int]gossip.Stats // counters at the start (or zero for a node started since)
	acc    map[int]gossip.Stats // counted by nodes before they stopped
	wire0  map[int]uint64
	probe0 []routerSnapshot
	seen   map[int]bool // nodes live at some point in the phase
	cpu0   float64      // busy CPU seconds of the process at the start
	recs   int          // records signed in the phase
	// recordDeliveries: records the nodes needed in the phase (for
	// validated_per_record).
	recordDeliveries int
	res              results
	published        []*lesson
	// noGossipLatency: the phase's lessons could not reach every probe at
	// once (a partition), so their probe arrivals say nothing about GossipSub.
	noGossipLatency bool

	mu   sync.Mutex // guards errs and recs against publishing goroutines
	errs []string
}

func (c *cluster) beginPhase(name Phase) *phaseRun {
	pr := &phaseRun{c: c, rep: &PhaseReport{Name: name}, start: time.Now(),
		base: map[int]gossip.Stats{}, acc: map[int]gossip.Stats{}, seen: map[int]bool{}}
	for _, n := range c.live() {
		pr.base[n.idx] = n.d.Gossip().Stats()
		pr.seen[n.idx] = true
	}
	pr.wire0 = c.net.totals()
	pr.cpu0 = busyCPU()
	for _, h := range c.probes {
		pr.probe0 = append(pr.probe0, h.trace.snapshot())
	}
	return pr
}

// stopping is called before n stops: its counters so far are kept.
func (pr *phaseRun) stopping(n *tnode) {
	s := n.d.Gossip().Stats()
	pr.acc[n.idx] = addStats(pr.acc[n.idx], subStats(s, pr.base[n.idx]))
	pr.base[n.idx] = gossip.Stats{}
}

// started is called after n (re)started in the phase: its counters start at zero.
func (pr *phaseRun) started(n *tnode) {
	pr.base[n.idx] = gossip.Stats{}
	pr.seen[n.idx] = true
}

// stats are the counters of n in the phase so far.
func (pr *phaseRun) stats(n *tnode) gossip.Stats {
	s := pr.acc[n.idx]
	if n.live {
		s = addStats(s, subStats(n.d.Gossip().Stats(), pr.base[n.idx]))
	}
	return s
}

func (pr *phaseRun) fail(format string, args ...any) {
	pr.mu.Lock()
	pr.errs = append(pr.errs, fmt.Sprintf(format, args...))
	pr.mu.Unlock()
}

func (pr *phaseRun) countRecord() {
	pr.mu.Lock()
	pr.recs++
	pr.mu.Unlock()
}

// finish fills the counters, checks convergence and returns the report.
func (pr *phaseRun) finish(ctx context.Context, delivered, expected int, latencies []float64) PhaseReport {
	c := pr.c
	rep := pr.rep
	conv, err := c.awaitConverged(ctx, c.p.ConvergeTimeout)
	switch {
	case err != nil:
		pr.fail("convergence check: %v", err)
	case !conv.ok:
		pr.fail("not converged after %v: %s", c.p.ConvergeTimeout, conv.detail)
	}
	rep.Converged = err == nil && conv.ok
	rep.ConvergeMs = ms(conv.took)
	live := c.live()
	rep.Nodes = len(live)
	pr.mu.Lock()
	rep.Records = pr.recs
	pr.mu.Unlock()
	rep.Expected, rep.Delivered = expected, delivered
	if expected > 0 {
		rep.DeliveryRatio = round4(float64(delivered) / float64(expected))
	} else {
		rep.DeliveryRatio = 1
	}
	rep.setLatencies(latencies)

	var validated, syncBytes, syncIn int64
	for idx := range pr.seen {
		s := pr.stats(c.nodes[idx])
		validated += int64(s.Received + s.Ignored + s.SyncRecordsIn)
		syncBytes += s.SyncBytesIn + s.SyncBytesOut
		syncIn += int64(s.SyncRecordsIn)
		rep.Dropped += s.Dropped
	}
	if pr.recordDeliveries > 0 {
		rep.ValidatedPerRecord = round2(float64(validated) / float64(pr.recordDeliveries))
		rep.SyncShare = round4(min(1, float64(syncIn)/float64(pr.recordDeliveries)))
	}
	wire1 := c.net.totals()
	var wire uint64
	for idx := range pr.seen {
		wire += wire1[idx] - pr.wire0[idx]
	}
	if rep.Nodes > 0 {
		rep.SyncBytesPerNode = round2(float64(syncBytes) / float64(rep.Nodes))
		if c.net.counts() {
			rep.BytesPerNode = round2(float64(wire) / float64(rep.Nodes))
		} else {
			rep.BytesPerNode = rep.SyncBytesPerNode
		}
	}
	var first, dup int64
	for k, h := range c.probes {
		s := h.trace.snapshot()
		if k < len(pr.probe0) {
			first += s.first - pr.probe0[k].first
			dup += s.dup - pr.probe0[k].dup
		}
	}
	if first > 0 {
		rep.DuplicatesPerRecord = round2(float64(first+dup) / float64(first))
	}
	var gossipLat []float64
	for _, l := range pr.published {
		if pr.noGossipLatency {
			break
		}
		id := gossip.MessageIDOf(l.rec.Raw)
		for _, h := range c.probes {
			if at, ok := h.trace.arrived(id); ok {
				gossipLat = append(gossipLat, max(0, ms(at.Sub(l.at))))
			}
		}
	}
	slices.Sort(gossipLat)
	rep.GossipP50Ms = round2(percentileSorted(gossipLat, 50))
	rep.GossipP99Ms = round2(percentileSorted(gossipLat, 99))
	took := time.Since(pr.start)
	rep.TookMs = ms(took)
	if took > 0 {
		rep.CPUCores = round2((busyCPU() - pr.cpu0) / took.Seconds())
	}
	pr.mu.Lock()
	if len(pr.errs) > 0 {
		rep.Error = strings.Join(pr.errs, "; ")
	}
	pr.mu.Unlock()
	return *rep
}

func round4(x float64) float64 { return float64(int64(x*10000+0.5)) / 10000 }

func subStats(a, b gossip.Stats) gossip.Stats {
	return gossip.Stats{Received: a.Received - b.Received, Ignored: a.Ignored - b.Ignored,
		RejectedMessages: a.RejectedMessages - b.RejectedMessages, Rejected: subMap(a.Rejected, b.Rejected),
		Skipped: a.Skipped - b.Skipped, Published: a.Published - b.Published, Dropped: a.Dropped - b.Dropped,
		SyncSessions: a.SyncSessions - b.SyncSessions, SyncFailures: a.SyncFailures - b.SyncFailures,
		SyncRecordsIn: a.SyncRecordsIn - b.SyncRecordsIn, SyncRecordsOut: a.SyncRecordsOut - b.SyncRecordsOut,
		SyncBytesIn: a.SyncBytesIn - b.SyncBytesIn, SyncBytesOut: a.SyncBytesOut - b.SyncBytesOut,
		SyncRecordBytesOut: a.SyncRecordBytesOut - b.SyncRecordBytesOut, SyncRecordsOverBudget: a.SyncRecordsOverBudget - b.SyncRecordsOverBudget}
}

func addStats(a, b gossip.Stats) gossip.Stats {
	neg := subStats(gossip.Stats{}, b)
	return subStats(a, neg)
}

func subMap(a, b map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range a {
		out[k] += v
	}
	for k, v := range b {
		out[k] -= v
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}

// ---- waiting for arrivals ----

// awaitOpts tune one wait.
type awaitOpts struct {
	// tick runs on every poll (e.g. to note records a node signed itself).
	tick func()
	// nodeDone runs once per node when its last expectation is met.
	nodeDone func(idx int)
	// latency selects the expectations whose latency is reported (nil: all).
	latency func(e expectation) bool
}

// await waits until every expectation is met or timeout passes. It returns
// the latencies in ms of those met (as selected), how many were met, and an
// error naming the nodes that lack something.
func (c *cluster) await(ctx context.Context, ph Phase, exps []expectation, timeout time.Duration, progress func(Phase, int, int), o awaitOpts) ([]float64, int, error) {
	deadline := time.Now().Add(timeout)
	pending := make([]bool, len(exps))
	left := map[int]int{}
	for i, e := range exps {
		pending[i] = true
		left[e.node]++
	}
	var lat []float64
	met, last := 0, -1
	for {
		if o.tick != nil {
			o.tick()
		}
		for i, e := range exps {
			if !pending[i] {
				continue
			}
			at, ok := c.trk.met(e)
			if !ok {
				continue
			}
			pending[i] = false
			met++
			if o.latency == nil || o.latency(e) {
				lat = append(lat, max(0, ms(at.Sub(e.since))))
			}
			left[e.node]--
			if left[e.node] == 0 && o.nodeDone != nil {
				o.nodeDone(e.node)
			}
		}
		if met != last {
			progress(ph, met, len(exps))
			last = met
		}
		if met == len(exps) {
			return lat, met, nil
		}
		if ctx.Err() != nil {
			return lat, met, ctx.Err()
		}
		if time.Now().After(deadline) {
			return lat, met, c.missing(exps, pending, timeout)
		}
		select {
		case <-ctx.Done():
		case <-c.trk.notify:
			// let a burst of arrivals land before polling again
			time.Sleep(5 * time.Millisecond)
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// missing says, per node, what it still lacks.
func (c *cluster) missing(exps []expectation, pending []bool, timeout time.Duration) error {
	byNode := map[int][]string{}
	lacked := map[int][]recID{}
	n := 0
	for i, e := range exps {
		if pending[i] {
			byNode[e.node] = append(byNode[e.node], e.what)
			if e.state == "" {
				lacked[e.node] = append(lacked[e.node], e.rec)
			}
			n++
		}
	}
	idxs := make([]int, 0, len(byNode))
	for i := range byNode {
		idxs = append(idxs, i)
	}
	slices.Sort(idxs)
	var b strings.Builder
	fmt.Fprintf(&b, "after %v, %d of %d arrivals are missing at %d nodes:", timeout, n, len(exps), len(idxs))
	for k, i := range idxs {
		if k == 8 {
			fmt.Fprintf(&b, " … and %d more nodes", len(idxs)-k)
			break
		}
		state := "live"
		if !c.nodes[i].live {
			state = "stopped"
		}
		fmt.Fprintf(&b, " %s [%s, %d peers%s] lacks %d: %s;", c.nodes[i].name(), state, c.peerCount(c.nodes[i]), c.pathStats(c.nodes[i], lacked[i]), len(byNode[i]), firstFew(byNode[i], 3))
	}
	return errors.New(strings.TrimSuffix(b.String(), ";"))
}

// pathStats says what n's delivery paths did over the run, for the
// failure of a wait: gossip messages dropped before delivery, the sync
// sessions that should have brought them, and how many of the records n
// lacks its store holds (held but never reported is a fault of the
// reports, not of delivery).
func (c *cluster) pathStats(n *tnode, lacked []recID) string {
	if !n.live {
		return ""
	}
	s := n.d.Gossip().Stats()
	out := fmt.Sprintf("; over the run: %d gossip messages dropped, %d sync sessions (%d failed), %d records by sync, %d over budget",
		s.Dropped, s.SyncSessions, s.SyncFailures, s.SyncRecordsIn, s.SyncRecordsOverBudget)
	if len(lacked) == 0 {
		return out
	}
	h, err := hold(n, time.Now(), c.p.Memory.State, nil)
	if err != nil {
		return out + "; its store: " + err.Error()
	}
	k := 0
	for _, id := range lacked {
		if h.ids[id] != nil {
			k++
		}
	}
	return out + fmt.Sprintf("; its store holds %d of the %d records", k, len(lacked))
}

func (c *cluster) peerCount(n *tnode) int {
	if !n.live {
		return 0
	}
	return len(n.d.Gossip().Peers())
}

// ---- publishing ----

// lesson is a lesson published in the run.
type lesson struct {
	by        int
	rec       *protocol.Record
	at        time.Time
	confirmed bool
	revoked   bool
}

func (l *lesson) what(c *cluster) string {
	return fmt.Sprintf("lesson %s of node %d", l.rec.Hash[:8], l.by)
}

// publish has count lessons published, by nodes chosen with choose, one
// every PublishEvery; each is sent at once (SleepNow on its node). It
// returns when every SleepNow has returned.
func (c *cluster) publish(ctx context.Context, pr *phaseRun, count int, choose func() *tnode) []*lesson {
	var out []*lesson
	var wg sync.WaitGroup
	for k := range count {
		if ctx.Err() != nil {
			break
		}
		if k > 0 && c.p.PublishEvery > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(c.p.PublishEvery):
			}
		}
		n := choose()
		text, err := c.texts.next()
		if err != nil {
			pr.fail("%v", err)
			break
		}
		rec, err := n.d.Memory().Publish(protocol.KindError, text)
		if err != nil {
			pr.fail("%s could not publish %q: %v", n.name(), text, err)
			continue
		}
		now := time.Now()
		c.trk.accept(n.idx, rec, now)
		l := &lesson{by: n.idx, rec: rec, at: now}
		out = append(out, l)
		c.lessons = append(c.lessons, l)
		pr.published = append(pr.published, l)
		pr.countRecord()
		wg.Go(func() {
			if _, err := c.sleepNow(ctx, n); err != nil && ctx.Err() == nil {
				pr.fail("%s: sleep after publishing: %v", n.name(), err)
			}
		})
	}
	wg.Wait()
	return out
}

// arrivals are the expectations that every node of to except the publisher
// gets each lesson, from its publication (or from since, when later).
func arrivals(c *cluster, ls []*lesson, to []*tnode, since time.Time) []expectation {
	var exps []expectation
	for _, l := range ls {
		t0 := l.at
		if since.After(t0) {
			t0 = since
		}
		for _, n := range to {
			if n.idx == l.by {
				continue
			}
			exps = append(exps, expectation{node: n.idx, rec: idOf(l.rec.Raw), since: t0, what: l.what(c)})
		}
	}
	return exps
}

// errGroup runs functions and keeps the first error.
type errGroup struct {
	wg    sync.WaitGroup
	mu    sync.Mutex
	first error
}

func (g *errGroup) Go(f func() error) {
	g.wg.Go(func() {
		if err := f(); err != nil {
			g.mu.Lock()
			if g.first == nil {
				g.first = err
			}
			g.mu.Unlock()
		}
	})
}

func (g *errGroup) Wait() error {
	g.wg.Wait()
	return g.first
}

// sleepNow has n sleep and share now, within the phase timeout.
func (c *cluster) sleepNow(ctx context.Context, n *tnode) (node.SleepReport, error) {
	ctx, cancel := context.WithTimeout(ctx, c.p.PhaseTimeout)
	defer cancel()
	return n.d.SleepNow(ctx)
}

// busyCPU is the CPU time this process has used, in seconds (user and
// system, from getrusage where there is one; else the Go runtime's own
// estimate of its busy time).
func busyCPU() float64 {
	if t, ok := processCPU(); ok {
		return t
	}
	s := []metrics.Sample{{Name: "/cpu/classes/total:cpu-seconds"}, {Name: "/cpu/classes/idle:cpu-seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64 || s[1].Value.Kind() != metrics.KindFloat64 {
		return 0
	}
	return s[0].Value.Float64() - s[1].Value.Float64()
}

// loadAverage is the machine's 1-minute load average, or 0 where unknown.
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(fields[0], 64)
	return v
}
