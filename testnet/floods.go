package testnet

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/remem/remem/internal/check"
	"github.com/remem/remem/internal/forge"
	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// Floods of strangers' records, the last step of the byzantine phase
// (issue 28): keys cost nothing and the team topic is open, so raw hosts
// publish valid records that honest nodes may hold — messages each signed
// by a fresh key, their lessons padded with an unknown member up to a large
// line, and one key's revocations of hashes no node holds — while honest
// nodes publish. Every honest lesson must still arrive, and the report
// says what the honest nodes then hold of origins they do not admit, how
// their homes grew and what the process's memory did.

// FloodParams size the floods. A zero count turns that flood off.
type FloodParams struct {
	Flooders    int // raw hosts that publish the floods between them
	FreshKeys   int // messages, each signed by a key made for it
	LinesPerKey int // lessons in each of those messages
	LineBytes   int // each lesson padded with an unknown member to this many bytes
	Revocations int // revocations from one key of hashes never held, RevocationsPerMsg a message
	// RevocationsPerMsg at most protocol.MaxOriginRecs: a bigger message
	// is rejected before a line is read and would test nothing new.
	RevocationsPerMsg int
	Every             time.Duration // between two messages of one flooder
	Hold              time.Duration // the floods stop after this long, sent or not (0: the phase timeout)
}

// DefaultFloods: two flooders send 200 fresh keys of 4 lessons of 6 KiB
// (800 records, 4.7 MiB) and 1,200 revocations (past the per-origin cap
// of 1,000), a message every 10 ms each, for at most 20 s: several times
// the testnet's strangers' budget, and short enough for TestSmallTestnet
// (every honest node validates every message in one process).
func DefaultFloods() FloodParams {
	return FloodParams{Flooders: 2, FreshKeys: 200, LinesPerKey: 4, LineBytes: 6 << 10,
		Revocations: 1200, RevocationsPerMsg: 200, Every: 10 * time.Millisecond, Hold: 20 * time.Second}
}

// DefaultStrangers is the testnet's strangers' budget: room for the
// sybils' 232 records, which must reach every node before the floods,
// and a fifth of what the floods send (2,000 records, 5 MiB).
func DefaultStrangers() node.StrangerBudget {
	return node.StrangerBudget{Records: 400, Bytes: 1 << 20}
}

// Validate checks the counts and sizes: every message the floods send
// must be one an honest validator could accept, or they flood nothing.
func (f FloodParams) Validate() error {
	var l check.List
	l.AtLeast("Flooders", f.Flooders, 0)
	l.AtLeast("FreshKeys", f.FreshKeys, 0)
	l.AtLeast("Revocations", f.Revocations, 0)
	l.If((f.FreshKeys > 0 || f.Revocations > 0) && f.Flooders == 0, "Flooders", f.Flooders, "want at least 1 to send the floods")
	if f.FreshKeys > 0 {
		l.If(f.LinesPerKey < 1 || f.LinesPerKey > protocol.MaxOriginRecs, "LinesPerKey", f.LinesPerKey, fmt.Sprintf("want 1 to %d", protocol.MaxOriginRecs))
		l.If(f.LineBytes < minFloodLine || f.LineBytes > protocol.MaxLineBytes, "LineBytes", f.LineBytes, fmt.Sprintf("want %d to %d", minFloodLine, protocol.MaxLineBytes))
		l.If(f.LinesPerKey*(f.LineBytes+1) > protocol.MaxGossipMsg, "LinesPerKey", f.LinesPerKey, "LinesPerKey lines of LineBytes over one gossip message")
	}
	if f.Revocations > 0 {
		l.If(f.RevocationsPerMsg < 1 || f.RevocationsPerMsg > protocol.MaxOriginRecs, "RevocationsPerMsg", f.RevocationsPerMsg, fmt.Sprintf("want 1 to %d", protocol.MaxOriginRecs))
	}
	l.NotNegative("Every", f.Every, "as fast as the hosts publish")
	l.NotNegative("Hold", f.Hold, "the phase timeout")
	return l.Err()
}

// minFloodLine is the smallest LineBytes: a flood lesson unpadded.
const minFloodLine = 640

// on reports whether any flood is to run.
func (f FloodParams) on() bool { return f.Flooders > 0 && (f.FreshKeys > 0 || f.Revocations > 0) }

// FloodReport says what the floods sent and what honest nodes kept.
type FloodReport struct {
	Flooders        int   `json:"flooders"`
	FreshKeys       int   `json:"fresh_keys"` // messages sent, each signed by its own key
	FreshRecords    int   `json:"fresh_records"`
	FreshBytes      int64 `json:"fresh_bytes"`
	LineBytes       int   `json:"line_bytes"`
	Revocations     int   `json:"revocations"` // of hashes never held, by one key
	RevocationBytes int64 `json:"revocation_bytes"`
	// TookMs from the first message to the last one sent.
	TookMs float64 `json:"took_ms"`
	// HonestLessons published while the floods ran, and their arrivals
	// at the other honest nodes: expected, and delivered within the
	// phase's timeout (want all; they count among the phase's too).
	HonestLessons   int `json:"honest_lessons"`
	HonestExpected  int `json:"honest_expected"`
	HonestDelivered int `json:"honest_delivered"`
	// Rejected: what the honest nodes refused or ignored by reason while
	// the floods ran, as gossip.Stats.Rejected counts it (a line, or a
	// message for the per-origin cap, "too many records", and the cap on
	// new origins per peer).
	Rejected map[string]int `json:"rejected_lines"`
	// Nodes: each honest node, live through the floods.
	Nodes []FloodNode `json:"nodes"`
	// Budget: the honest memories' strangers' budget (records, and bytes
	// of stored values). Max…: the most a node held of origins it does not
	// admit after the floods, counted from its store (records, and bytes
	// of their lines), and as the memory counts them (MemoryMax…, stored
	// values: Memory.StrangerUse).
	Budget                   node.StrangerBudget `json:"budget"`
	MaxStrangerRecords       int                 `json:"max_stranger_records"`
	MaxStrangerBytes         int64               `json:"max_stranger_bytes"`
	MemoryMaxStrangerRecords int                 `json:"memory_max_stranger_records"`
	MemoryMaxStrangerBytes   int64               `json:"memory_max_stranger_bytes"`

	// Memory. Every node, flooder and the testnet share one process, so
	// no RSS is one node's: RSSPerHonestNodeBytes is the process's RSS
	// peak during the floods minus its RSS before them, divided by the
	// honest nodes; HeapLive… are the Go heap live after a collection,
	// before and after, per honest node. RSSNote says so in the report.
	RSSBeforeBytes        int64  `json:"rss_before_bytes"`
	RSSPeakBytes          int64  `json:"rss_peak_bytes"`
	RSSPerHonestNodeBytes int64  `json:"rss_growth_per_honest_node_bytes"`
	HeapLiveBeforePerNode int64  `json:"heap_live_before_per_node_bytes"`
	HeapLiveAfterPerNode  int64  `json:"heap_live_after_per_node_bytes"`
	RSSNote               string `json:"rss_note"`
}

// FloodNode is one honest node before and after the floods: the records
// and bytes (record lines) it holds of origins it does not admit, the
// floods' records it accepted (some may since have gone), and its home's
// disk use.
type FloodNode struct {
	Node                  int   `json:"node"`
	StrangerRecordsBefore int   `json:"stranger_records_before"`
	StrangerRecordsAfter  int   `json:"stranger_records_after"`
	StrangerBytesBefore   int64 `json:"stranger_bytes_before"`
	StrangerBytesAfter    int64 `json:"stranger_bytes_after"`
	FloodAccepted         int   `json:"flood_accepted"`
	RevocationsHeld       int   `json:"revocations_held"` // of the revocation flood, after

	HomeBytesBefore int64 `json:"home_bytes_before"`
	HomeGrowthBytes int64 `json:"home_growth_bytes"`
}

// floodOrigins are the floods' keys. The testnet made them, so it leaves
// their records out of the tracker, whose maps would hold every one in
// the process RSS that is measured.
type floodOrigins struct {
	mu       sync.RWMutex
	origins  map[string]bool
	accepted map[int]int     // flood records each node accepted, by index
	began    bool            // the floods have begun
	trusted  map[string]bool // the honest origins (cluster.trust)
}

// diverging reports whether honest nodes may hold different records of
// origin: once the floods have filled the strangers' budget each node
// keeps its own share of strangers' records (what it took first, what it
// evicted), so only what honest origins sent must agree.
func (f *floodOrigins) diverging(origin string) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.began && !f.trusted[origin]
}

func (f *floodOrigins) add(origin string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.began = true
	if f.origins == nil {
		f.origins = map[string]bool{}
	}
	f.origins[origin] = true
}

// has reports whether origin is a flood's key; a nil set has none.
func (f *floodOrigins) has(origin string) bool {
	if f == nil {
		return false
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.origins[origin]
}

// accept counts rec at node idx when it is a flood's, and says so.
func (f *floodOrigins) accept(idx int, rec *protocol.Record) bool {
	if !f.has(rec.Origin) {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.accepted == nil {
		f.accepted = map[int]int{}
	}
	f.accepted[idx]++
	return true
}

// total is the flood records accepted at every node.
func (f *floodOrigins) total() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	n := 0
	for _, v := range f.accepted {
		n += v
	}
	return n
}

func (f *floodOrigins) acceptedAt(idx int) int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.accepted[idx]
}

// floodText is the text of lesson i of flood key k: valid, harmless, and
// its own hash.
func floodText(k, i int) string {
	return fmt.Sprintf("The flood mirror %d of unit %d drops uploads when the disk is nearly full", i, k)
}

// freshKeyMessage is message k of the fresh-key flood: lines lessons of
// id, each padded with an unknown member (kept, signed, never shown: SPEC
// §7) to size bytes.
func freshKeyMessage(id protocol.Identity, k, lines, size int, at time.Time) []byte {
	var b bytes.Buffer
	for i := range lines {
		m := forge.LessonMembers(id, floodText(k, i), protocol.FormatTime(at))
		m["padding"] = protocol.EncodeString("")
		if pad := size - len(forge.Sign(id, m)); pad > 0 {
			m["padding"] = protocol.EncodeString(strings.Repeat("x", pad))
		}
		b.Write(forge.Sign(id, m))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// revocationMessage is id's revocations of count hashes no lesson has,
// from the from-th on.
func revocationMessage(id protocol.Identity, from, count int, at time.Time) ([]byte, error) {
	var b bytes.Buffer
	for i := from; i < from+count; i++ {
		rec, err := protocol.SignRevocation(id, protocol.LessonHash(protocol.KindError, "never held "+id.Origin()+" "+fmt.Sprint(i)), at, "")
		if err != nil {
			return nil, err
		}
		b.Write(rec.Raw)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// strangers is what a node holds of origins it does not admit.
type strangers struct {
	records int
	bytes   int64 // their lines
	revoker int   // records of the revocation flood's key among them
}

// strangersHeld counts what n holds of origins it does not admit, read
// from its store rather than asked of the memory: the testnet checks the
// budget, it does not take its word.
func strangersHeld(n *tnode, revoker string) (strangers, error) {
	var s strangers
	admit := n.d.Memory().Admitted()
	err := n.d.Memory().Stored().Each(func(h store.Held) error {
		if !admit.Admits(h.Record.Origin) {
			s.records++
			s.bytes += int64(len(h.Record.Raw))
			if h.Record.Origin == revoker {
				s.revoker++
			}
		}
		return nil
	})
	if err != nil {
		return s, fmt.Errorf("counting the strangers' records of %s: %w", n.name(), err)
	}
	return s, nil
}

// diskUse is what the files under dir take on disk (their allocated
// blocks where the system says, else their sizes).
func diskUse(dir string) int64 {
	var total int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil // a file that went away between listing and reading: Badger rotates them
		}
		if info, err := d.Info(); err == nil {
			total += allocated(info)
		}
		return nil
	})
	return total
}

// heapLive is the Go heap live after a collection run now.
func heapLive() int64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		return int64(s[0].Value.Uint64())
	}
	return 0
}

// floodJob is one message a flooder publishes: as a fresh key, or as
// itself. Its bytes are made when it is sent, so the testnet never holds
// the whole flood (its heap is measured with the nodes').
type floodJob struct {
	as   *protocol.Identity // nil: the flooder's own key
	kind string             // "fresh" or "revocations"
	recs int
	data func() ([]byte, error)
}

// floodJobs deals the floods' messages to the flooders: the fresh keys in
// turn, the revocations to the first, which revokes as revoker, its own
// key. Every key is made here, before a message goes out.
func floodJobs(f FloodParams, revoker protocol.Identity) ([][]floodJob, error) {
	jobs := make([][]floodJob, f.Flooders)
	for k := range f.FreshKeys {
		id, err := protocol.GenerateIdentity()
		if err != nil {
			return nil, err
		}
		jobs[k%f.Flooders] = append(jobs[k%f.Flooders], floodJob{as: &id, kind: "fresh", recs: f.LinesPerKey,
			data: func() ([]byte, error) { return freshKeyMessage(id, k, f.LinesPerKey, f.LineBytes, time.Now()), nil }})
	}
	var revs []floodJob
	for from := 0; from < f.Revocations; from += f.RevocationsPerMsg {
		count := min(f.RevocationsPerMsg, f.Revocations-from)
		revs = append(revs, floodJob{kind: "revocations", recs: count,
			data: func() ([]byte, error) { return revocationMessage(revoker, from, count, time.Now()) }})
	}
	jobs[0] = interleave(revs, jobs[0])
	return jobs, nil
}

// interleave spreads few through many, the first of few first: floods that
// Hold cuts short (the race detector slows the flooders past it under
// load: 189 of 200 fresh keys and no revocation once) still send both
// kinds in proportion.
func interleave(few, many []floodJob) []floodJob {
	if len(few) == 0 {
		return many
	}
	every := max(1, len(many)/len(few))
	out := make([]floodJob, 0, len(few)+len(many))
	for i, j := range many {
		if i%every == 0 && len(few) > 0 {
			out = append(out, few[0])
			few = few[1:]
		}
		out = append(out, j)
	}
	return append(out, few...)
}

// floodSettle bounds the wait for the last flood records to be taken.
const floodSettle = 5 * time.Second

// floods runs the floods beside honest publications and reports them.
func (c *cluster) floods(ctx context.Context, pr *phaseRun, r *rand.Rand, progress func(Phase, int, int)) (*FloodReport, error) {
	f := c.p.Floods
	live := c.live()
	rep := &FloodReport{Flooders: f.Flooders, LineBytes: f.LineBytes, Budget: c.p.Strangers,
		RSSNote: fmt.Sprintf("one process holds the %d honest nodes, the flooders and the testnet: RSS per honest node is the process's RSS peak during the floods minus its RSS before them, over %d; the Go heap is live after a collection, per honest node", len(live), len(live))}
	hosts, err := c.startFlooders(r, live)
	defer func() {
		for _, h := range hosts {
			h.close()
		}
	}()
	if err != nil {
		return rep, err
	}
	// Every key is made and registered before a message goes out: the
	// tracker must never see a flood's record.
	revoker := hosts[0].id.Origin()
	jobs, err := floodJobs(f, hosts[0].id)
	if err != nil {
		return rep, err
	}
	c.flood.add(revoker)
	for _, js := range jobs {
		for _, j := range js {
			if j.as != nil {
				c.flood.add(j.as.Origin())
			}
		}
	}
	if err := awaitTopicPeers(ctx, hosts, 15*time.Second); err != nil {
		return rep, err
	}
	time.Sleep(5 * c.p.Gossip.HeartbeatInterval) // into the meshes, as the offenders

	before, rejected0, err := floodNodesBefore(live, revoker)
	if err != nil {
		return rep, err
	}
	rep.HeapLiveBeforePerNode = heapLive() / int64(len(live))
	rep.RSSBeforeBytes = rss()
	peak := startRSSPeak(ctx, rep.RSSBeforeBytes)
	defer peak.stop()

	// The floods, bounded by their counts and by Hold, and honest traffic
	// beside them.
	hold := f.Hold
	if hold == 0 {
		hold = c.p.PhaseTimeout
	}
	floodCtx, stopFloods := context.WithTimeout(ctx, hold)
	defer stopFloods()
	sent := sendFloods(floodCtx, pr, f, hosts, jobs, rep)
	ls := c.publish(ctx, pr, c.cfg.share(0.2, 2), c.chooser(r, nil))
	rep.HonestLessons = len(ls)
	exps := arrivals(c, ls, live, time.Time{})
	pr.recordDeliveries += len(exps)
	// Floods that outrun the validators (21 nodes in one process under
	// the race detector on 2 cores: 50 s, not 2) throttle honest messages
	// with the rest, and gossip marks a throttled message seen: sync
	// brings it, and its sessions crawl until the floods end. So an honest
	// lesson has the phase's timeout after the floods' Hold, not from its
	// publication; its latency is reported either way.
	lat, met, err := c.await(ctx, pr.rep.Name, exps, hold+c.p.PhaseTimeout, progress, awaitOpts{})
	pr.add(lat, met, len(exps), err)
	rep.HonestExpected, rep.HonestDelivered = len(exps), met
	first, last := sent()
	stopFloods()
	rep.TookMs = ms(last.Sub(first))

	c.awaitFloodSettled(ctx)
	rep.RSSPeakBytes = peak.stop()
	rep.RSSPerHonestNodeBytes = max(0, rep.RSSPeakBytes-rep.RSSBeforeBytes) / int64(len(live))
	rep.HeapLiveAfterPerNode = heapLive() / int64(len(live))
	if err := c.floodNodesAfter(rep, live, before, rejected0, revoker); err != nil {
		return rep, err
	}
	if rep.FreshKeys+rep.Revocations == 0 {
		pr.fail("the flooders sent nothing")
	}
	return rep, nil
}

// startFlooders starts the flooders' raw hosts, each kept connected to a
// few live nodes; it returns those started even when one fails.
func (c *cluster) startFlooders(r *rand.Rand, live []*tnode) ([]*rawHost, error) {
	hosts := make([]*rawHost, 0, c.p.Floods.Flooders)
	for range c.p.Floods.Flooders {
		h, err := c.newRawHost(false)
		if err != nil {
			return hosts, fmt.Errorf("starting a flooder: %w", err)
		}
		hosts = append(hosts, h)
		h.keepConnected(addrInfos(c.pick(r, live, c.cfg.Degree)), 500*time.Millisecond)
	}
	return hosts, nil
}

// floodNodesBefore is, per live node, what it holds before the floods
// and the gossip refusals so far.
func floodNodesBefore(live []*tnode, revoker string) ([]FloodNode, []map[string]int, error) {
	before := make([]FloodNode, len(live))
	rejected := make([]map[string]int, len(live))
	for i, n := range live {
		s, err := strangersHeld(n, revoker)
		if err != nil {
			return nil, nil, err
		}
		before[i] = FloodNode{Node: n.idx, HomeBytesBefore: diskUse(n.home), StrangerRecordsBefore: s.records, StrangerBytesBefore: s.bytes}
		rejected[i] = n.d.Gossip().Stats().Rejected
	}
	return before, rejected, nil
}

// rssPeak samples the process's RSS every 100 ms for its peak.
type rssPeak struct {
	peak   atomic.Int64
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

func startRSSPeak(ctx context.Context, start int64) *rssPeak {
	p := &rssPeak{}
	p.peak.Store(start)
	ctx, p.cancel = context.WithCancel(ctx)
	p.wg.Go(func() {
		for {
			if v := rss(); v > p.peak.Load() {
				p.peak.Store(v)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	return p
}

// stop ends the sampling (once) and returns the peak.
func (p *rssPeak) stop() int64 {
	p.once.Do(func() {
		p.cancel()
		p.wg.Wait()
	})
	return p.peak.Load()
}

// sendFloods sends each flooder's jobs, every f.Every, until they are
// sent or ctx ends, counting what went out in rep. The returned func
// waits for the flooders and gives when the first and last message went.
func sendFloods(ctx context.Context, pr *phaseRun, f FloodParams, hosts []*rawHost, jobs [][]floodJob, rep *FloodReport) func() (first, last time.Time) {
	var mu sync.Mutex
	var first, last time.Time
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Go(func() {
			for k, j := range jobs[i] {
				if k > 0 && f.Every > 0 {
					select {
					case <-ctx.Done():
					case <-time.After(f.Every):
					}
				}
				if ctx.Err() != nil {
					return
				}
				data, err := j.data()
				if err != nil {
					pr.fail("signing a flood message: %v", err)
					return
				}
				if j.as != nil {
					err = h.publishAs(ctx, *j.as, data)
				} else {
					err = h.publish(ctx, data)
				}
				if err != nil {
					continue
				}
				mu.Lock()
				now := time.Now()
				if first.IsZero() {
					first = now
				}
				last = now
				rep.count(j, len(data))
				mu.Unlock()
			}
		})
	}
	return func() (time.Time, time.Time) {
		wg.Wait()
		return first, last
	}
}

// count adds one sent message of j, of n bytes.
func (rep *FloodReport) count(j floodJob, n int) {
	if j.kind == "fresh" {
		rep.FreshKeys++
		rep.FreshRecords += j.recs
		rep.FreshBytes += int64(n)
		return
	}
	rep.Revocations += j.recs
	rep.RevocationBytes += int64(n)
}

// awaitFloodSettled waits until no node accepts a flood record for half a
// second, so "after" is after. At most floodSettle: past it, sync may go
// on moving strangers' records between honest nodes that each keep their
// own share.
func (c *cluster) awaitFloodSettled(ctx context.Context) {
	settle := time.Now().Add(floodSettle)
	for prev := -1; ; {
		cur := c.flood.total()
		if cur == prev || time.Now().After(settle) || ctx.Err() != nil {
			return
		}
		prev = cur
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// floodNodesAfter completes each node's FloodNode with what it holds after
// the floods, and the report's maxima and refusals.
func (c *cluster) floodNodesAfter(rep *FloodReport, live []*tnode, before []FloodNode, rejected0 []map[string]int, revoker string) error {
	rep.Rejected = map[string]int{}
	for i, n := range live {
		fn := before[i]
		s, err := strangersHeld(n, revoker)
		if err != nil {
			return err
		}
		fn.StrangerRecordsAfter, fn.StrangerBytesAfter, fn.RevocationsHeld = s.records, s.bytes, s.revoker
		fn.FloodAccepted = c.flood.acceptedAt(n.idx)
		fn.HomeGrowthBytes = diskUse(n.home) - fn.HomeBytesBefore
		rep.MaxStrangerRecords = max(rep.MaxStrangerRecords, fn.StrangerRecordsAfter)
		rep.MaxStrangerBytes = max(rep.MaxStrangerBytes, fn.StrangerBytesAfter)
		used, _, err := n.d.Memory().StrangerUse()
		if err != nil {
			return err
		}
		rep.MemoryMaxStrangerRecords = max(rep.MemoryMaxStrangerRecords, used.Records)
		rep.MemoryMaxStrangerBytes = max(rep.MemoryMaxStrangerBytes, used.Bytes)
		for reason, v := range subMap(n.d.Gossip().Stats().Rejected, rejected0[i]) {
			rep.Rejected[reason] += v
		}
		rep.Nodes = append(rep.Nodes, fn)
	}
	return nil
}

// awaitTopicPeers waits until every host has a peer in the topic.
func awaitTopicPeers(ctx context.Context, hosts []*rawHost, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ready := 0
		for _, h := range hosts {
			if h.topicPeers() > 0 {
				ready++
			}
		}
		if ready == len(hosts) {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("only %d of %d hosts found a peer in the topic within %v", ready, len(hosts), timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// write gives the floods' lines of the report's table.
func (f *FloodReport) write(w io.Writer) {
	fmt.Fprintf(w, "floods: %d flooders sent %d messages each signed by a fresh key (%d lessons padded with an unknown member to %d B, %.1f MiB) and %d revocations of hashes never held from one key (%.1f KiB) in %.1f s, beside %d honest lessons (%d of %d arrivals); honest validators refused or ignored %s\n",
		f.Flooders, f.FreshKeys, f.FreshRecords, f.LineBytes, float64(f.FreshBytes)/(1<<20), f.Revocations, float64(f.RevocationBytes)/(1<<10), f.TookMs/1000,
		f.HonestLessons, f.HonestDelivered, f.HonestExpected, orNothing(kv(f.Rejected)))
	fmt.Fprintf(w, "floods: strangers' records held, the most at one node after: %d records, %.1f KiB of lines (the memory counts %d, %.1f KiB stored; budget %d, %.1f KiB); per honest node, before -> after:\n",
		f.MaxStrangerRecords, float64(f.MaxStrangerBytes)/(1<<10), f.MemoryMaxStrangerRecords, float64(f.MemoryMaxStrangerBytes)/(1<<10), f.Budget.Records, float64(f.Budget.Bytes)/(1<<10))
	for _, n := range f.Nodes {
		fmt.Fprintf(w, "  node %d: %d -> %d records, %.1f -> %.1f KiB of strangers (%d of the revocations); %d flood records accepted; home %+.1f MiB (of %.1f MiB)\n",
			n.Node, n.StrangerRecordsBefore, n.StrangerRecordsAfter, float64(n.StrangerBytesBefore)/(1<<10), float64(n.StrangerBytesAfter)/(1<<10),
			n.RevocationsHeld, n.FloodAccepted, float64(n.HomeGrowthBytes)/(1<<20), float64(n.HomeBytesBefore)/(1<<20))
	}
	fmt.Fprintf(w, "floods: RSS growth per honest node %.2f MiB (RSS %.1f MiB before, %.1f MiB peak; %s); Go heap live per honest node %.2f -> %.2f MiB\n",
		float64(f.RSSPerHonestNodeBytes)/(1<<20), float64(f.RSSBeforeBytes)/(1<<20), float64(f.RSSPeakBytes)/(1<<20), f.RSSNote,
		float64(f.HeapLiveBeforePerNode)/(1<<20), float64(f.HeapLiveAfterPerNode)/(1<<20))
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}
