package testnet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

// runPhase runs one scenario and measures it.
func (c *cluster) runPhase(ctx context.Context, ph Phase, progress func(Phase, int, int), before []PhaseReport) PhaseReport {
	r := newRand(c.cfg.Seed, 10+uint64(slices.Index(Phases, ph)))
	pr := c.beginPhase(ph)
	progress(ph, 0, 1)
	var err error
	switch ph {
	case PhasePropagate:
		err = c.propagate(ctx, pr, r, progress)
	case PhaseConfirm:
		err = c.confirm(ctx, pr, r, progress)
	case PhaseRevoke:
		err = c.revoke(ctx, pr, r, progress)
	case PhaseChurn:
		err = c.churn(ctx, pr, r, progress)
	case PhasePartition:
		err = c.partition(ctx, pr, r, progress)
	case PhaseLateJoin:
		err = c.lateJoin(ctx, pr, r, progress)
	case PhaseByzantine:
		err = c.byzantine(ctx, pr, r, progress, before)
	default:
		err = fmt.Errorf("unknown phase %q", ph)
	}
	if err != nil {
		pr.fail("%v", err)
	}
	return pr.finishWith(ctx)
}

// results collects what a phase's waits found.
type results struct {
	delivered, expected int
	latencies           []float64
}

// add counts one wait's outcome.
func (pr *phaseRun) add(lat []float64, met, expected int, err error) {
	pr.res.delivered += met
	pr.res.expected += expected
	pr.res.latencies = append(pr.res.latencies, lat...)
	if err != nil {
		pr.fail("%v", err)
	}
}

func (pr *phaseRun) finishWith(ctx context.Context) PhaseReport {
	return pr.finish(ctx, pr.res.delivered, pr.res.expected, pr.res.latencies)
}

// chooser returns a function choosing a random node of among, or of the
// live nodes when among is empty.
func (c *cluster) chooser(r *rand.Rand, among []*tnode) func() *tnode {
	return func() *tnode {
		if len(among) > 0 {
			return among[r.IntN(len(among))]
		}
		live := c.live()
		return live[r.IntN(len(live))]
	}
}

// ---- propagate ----

func (c *cluster) propagate(ctx context.Context, pr *phaseRun, r *rand.Rand, progress func(Phase, int, int)) error {
	ls := c.publish(ctx, pr, c.cfg.Lessons, c.chooser(r, nil))
	exps := arrivals(c, ls, c.live(), time.Time{})
	pr.recordDeliveries += len(exps)
	lat, met, err := c.await(ctx, pr.rep.Name, exps, c.p.PhaseTimeout, progress, awaitOpts{})
	pr.add(lat, met, len(exps), err)
	return nil
}

// ---- confirm ----

// ensureLessons returns up to want lessons that every live node holds and
// that match keep, publishing (and waiting for) new ones when too few are
// held.
func (c *cluster) ensureLessons(ctx context.Context, pr *phaseRun, r *rand.Rand, want int, keep func(*lesson) bool, progress func(Phase, int, int)) ([]*lesson, error) {
	var have []*lesson
	for _, l := range c.lessons {
		if keep(l) {
			have = append(have, l)
		}
	}
	if len(have) < want {
		fresh := c.publish(ctx, pr, want-len(have), c.chooser(r, nil))
		exps := arrivals(c, fresh, c.live(), time.Time{})
		if _, _, err := c.await(ctx, pr.rep.Name, exps, c.p.PhaseTimeout, progress, awaitOpts{}); err != nil {
			return nil, fmt.Errorf("publishing lessons to work on: %w", err)
		}
		have = append(have, fresh...)
	}
	r.Shuffle(len(have), func(i, j int) { have[i], have[j] = have[j], have[i] })
	return have[:min(want, len(have))], nil
}

func (c *cluster) confirm(ctx context.Context, pr *phaseRun, r *rand.Rand, progress func(Phase, int, int)) error {
	need := c.p.Memory.State.N
	live := c.live()
	if len(live)-1 < need {
		return fmt.Errorf("confirming needs %d nodes besides the author, only %d are live", need, len(live)-1)
	}
	ls, err := c.ensureLessons(ctx, pr, r, c.cfg.share(0.1, 2), func(l *lesson) bool { return !l.confirmed && !l.revoked && c.nodes[l.by].live }, progress)
	if err != nil {
		return err
	}
	// Who confirms what: need nodes other than the author per lesson.
	byNode := map[int][]*lesson{}
	for _, l := range ls {
		others := make([]*tnode, 0, len(live))
		for _, n := range live {
			if n.idx != l.by {
				others = append(others, n)
			}
		}
		for _, n := range c.pick(r, others, need) {
			byNode[n.idx] = append(byNode[n.idx], l)
		}
		c.trk.watchHash(l.rec.Hash)
	}
	confirmers := make([]int, 0, len(byNode))
	for idx := range byNode {
		confirmers = append(confirmers, idx)
	}
	slices.Sort(confirmers)
	// Each confirmer meets the surprises of its lessons, then sleeps.
	start := time.Now()
	for _, idx := range confirmers {
		var evs []protocol.Event
		for k, l := range byNode[idx] {
			evs = append(evs, protocol.Event{Kind: "error", Happened: l.rec.Text, Agent: "testnet",
				Session: fmt.Sprintf("confirm-%d-%d", idx, k), Cwd: c.nodes[idx].home})
		}
		if _, err := c.nodes[idx].d.Memory().Remember(evs); err != nil {
			return fmt.Errorf("%s: remembering events: %w", c.nodes[idx].name(), err)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		errs := make(chan error, len(confirmers))
		for _, idx := range confirmers {
			go func() {
				_, err := c.sleepNow(ctx, c.nodes[idx])
				if err != nil {
					err = fmt.Errorf("%s: sleep: %w", c.nodes[idx].name(), err)
				}
				errs <- err
			}()
		}
		for range confirmers {
			if err := <-errs; err != nil && ctx.Err() == nil {
				pr.fail("%v", err)
			}
		}
	}()
	var exps []expectation
	for _, l := range ls {
		for _, n := range live {
			exps = append(exps, expectation{node: n.idx, hash: l.rec.Hash, state: protocol.StateCommon, since: start,
				what: fmt.Sprintf("common state of lesson %s", l.rec.Hash[:8])})
		}
	}
	pr.recordDeliveries += len(ls) * need * (len(live) - 1)
	tick := func() {
		for _, idx := range confirmers {
			c.noteOwn(pr, c.nodes[idx])
		}
	}
	lat, met, err := c.await(ctx, pr.rep.Name, exps, c.p.PhaseTimeout, progress, awaitOpts{tick: tick})
	<-done
	pr.add(lat, met, len(exps), err)
	// Did every confirmer sign what it was meant to?
	for _, idx := range confirmers {
		own, err := c.nodes[idx].d.Memory().Stored().OwnRecords()
		if err != nil {
			return err
		}
		for _, l := range byNode[idx] {
			signed := slices.ContainsFunc(own, func(rec *protocol.Record) bool {
				return rec.Type == protocol.TypeConfirmation && rec.Hash == l.rec.Hash
			})
			if !signed {
				pr.fail("%s did not confirm lesson %s", c.nodes[idx].name(), l.rec.Hash[:8])
			}
		}
	}
	for _, l := range ls {
		l.confirmed = true
	}
	return nil
}

// noteOwn tells the tracker of the records n signed itself (they never pass
// its OnAccept) and counts the new ones as records of the phase.
func (c *cluster) noteOwn(pr *phaseRun, n *tnode) {
	own, err := n.d.Memory().Stored().OwnRecords()
	if err != nil {
		return
	}
	now := time.Now()
	for _, rec := range own {
		if _, ok := c.trk.arrival(n.idx, idOf(rec.Raw)); ok {
			continue
		}
		c.trk.accept(n.idx, rec, now)
		pr.countRecord()
	}
}

// ---- revoke ----

func (c *cluster) revoke(ctx context.Context, pr *phaseRun, r *rand.Rand, progress func(Phase, int, int)) error {
	want := c.cfg.share(0.1, 2)
	// One confirmed lesson among them when there is one: a common lesson
	// withdrawn by its origin is revoked too.
	var ls []*lesson
	for _, l := range c.lessons {
		if l.confirmed && !l.revoked && c.nodes[l.by].live {
			ls = append(ls, l)
			break
		}
	}
	more, err := c.ensureLessons(ctx, pr, r, want-len(ls), func(l *lesson) bool {
		return !l.revoked && !l.confirmed && c.nodes[l.by].live
	}, progress)
	if err != nil {
		return err
	}
	ls = append(ls, more...)
	live := c.live()
	var exps []expectation
	var wg errGroup
	for k, l := range ls {
		if k > 0 {
			time.Sleep(c.p.PublishEvery)
		}
		n := c.nodes[l.by]
		c.trk.watchHash(l.rec.Hash)
		rec, err := n.d.Memory().Revoke(l.rec.Hash, "withdrawn by the testnet")
		if err != nil {
			pr.fail("%s could not revoke lesson %s: %v", n.name(), l.rec.Hash[:8], err)
			continue
		}
		at := time.Now()
		c.trk.accept(n.idx, rec, at)
		pr.countRecord()
		l.revoked = true
		wg.Go(func() error {
			_, err := c.sleepNow(ctx, n)
			return err
		})
		for _, m := range live {
			if m.idx == n.idx {
				continue // its origin knows at once
			}
			exps = append(exps, expectation{node: m.idx, hash: l.rec.Hash, state: protocol.StateRevoked, since: at,
				what: fmt.Sprintf("revocation of lesson %s", l.rec.Hash[:8])})
		}
		pr.recordDeliveries += len(live) - 1
	}
	if err := wg.Wait(); err != nil && ctx.Err() == nil {
		pr.fail("sleep after revoking: %v", err)
	}
	lat, met, err := c.await(ctx, pr.rep.Name, exps, c.p.PhaseTimeout, progress, awaitOpts{})
	pr.add(lat, met, len(exps), err)
	// The active views agree: no live node lists a revoked lesson.
	for _, n := range live {
		views, err := n.d.Memory().Lessons(node.Filter{})
		if err != nil {
			return err
		}
		for _, v := range views {
			for _, l := range ls {
				if v.Hash == l.rec.Hash {
					pr.fail("%s still shows revoked lesson %s in its active view (%s)", n.name(), v.Hash[:8], v.State)
				}
			}
		}
	}
	return nil
}

// ---- churn ----

func (c *cluster) churn(ctx context.Context, pr *phaseRun, r *rand.Rand, progress func(Phase, int, int)) error {
	live := c.live()
	k := max(1, int(float64(len(live))*c.p.ChurnFraction+0.5))
	if k >= len(live) {
		return fmt.Errorf("churn would stop all %d live nodes", len(live))
	}
	// Stop k nodes whose absence leaves the rest connected, when such a
	// choice is found.
	var victims []*tnode
	for try := 0; try < 200; try++ {
		victims = c.pick(r, live, k)
		if c.connectedWithout(victims) {
			break
		}
	}
	slices.SortFunc(victims, func(a, b *tnode) int { return a.idx - b.idx })
	held := map[int]map[recID]bool{}
	for _, v := range victims {
		h, err := hold(v, time.Now(), c.p.Memory.State, c.flood.diverging)
		if err != nil {
			return err
		}
		held[v.idx] = map[recID]bool{}
		for id := range h.ids {
			held[v.idx][id] = true
		}
		pr.stopping(v)
	}
	c.net.poll()
	if err := c.stopAll(victims); err != nil {
		return err
	}
	// The others publish meanwhile.
	rest := c.live()
	ls := c.publish(ctx, pr, c.cfg.share(0.2, 2), c.chooser(r, rest))
	exps := arrivals(c, ls, rest, time.Time{})
	pr.recordDeliveries += len(exps)
	_, met, err := c.await(ctx, pr.rep.Name, exps, c.p.PhaseTimeout, progress, awaitOpts{})
	pr.add(nil, met, len(exps), err)
	// What the others hold now is what the churned nodes must get.
	conv, err := c.awaitConverged(ctx, c.p.ConvergeTimeout)
	if err != nil {
		return err
	}
	if !conv.ok {
		pr.fail("the nodes that stayed did not converge while the others were away: %s", conv.detail)
	}
	ref := conv.ref
	// Back they come, on the same homes and ports.
	wire0 := c.net.totals()
	if err := c.startAll(ctx, victims, nil); err != nil {
		return err
	}
	for _, v := range victims {
		pr.started(v)
	}
	return c.catchUp(ctx, pr, catchUpJob{nodes: victims, ref: ref, held: held, wire0: wire0}, progress)
}

// catchUpGrace is how long after its last missing record a catching-up
// node's bytes are read.
const catchUpGrace = 150 * time.Millisecond

// catchUpJob is what catchUp waits for: nodes that came back or joined,
// and what they must get.
type catchUpJob struct {
	nodes []*tnode
	ref   holding                // what the nodes that stayed hold
	held  map[int]map[recID]bool // by node index, the ids it held before (none when absent)
	wire0 map[int]uint64         // the wire byte counts before the nodes started
}

// catchUp waits until each of job.nodes holds every record of job.ref it
// did not hold before, and reports time and bytes per node.
func (c *cluster) catchUp(ctx context.Context, pr *phaseRun, job catchUpJob, progress func(Phase, int, int)) error {
	nodes, wire0 := job.nodes, job.wire0
	var exps []expectation
	lacked := map[int]*CatchUp{}
	for _, n := range nodes {
		cu := &CatchUp{Node: n.idx, Origin: n.id.Origin()}
		lacked[n.idx] = cu
		for id, rec := range job.ref.ids {
			if job.held[n.idx][id] {
				continue
			}
			cu.LackedRecords++
			cu.LackedBytes += int64(len(rec.Raw))
			exps = append(exps, expectation{node: n.idx, rec: id, since: n.start, what: recordName(rec)})
		}
	}
	pr.recordDeliveries += len(exps)
	// The bytes a node moved to catch up are read a moment after its last
	// missing record arrived: a sync session delivers its records before it
	// counts its bytes.
	var (
		mu       sync.Mutex
		captures sync.WaitGroup
		doneAt   = map[int]time.Time{}
	)
	capture := func(idx int) {
		n := c.nodes[idx]
		s := pr.stats(n)
		var wire uint64
		if c.net.counts() {
			wire = c.net.totals()[idx] - wire0[idx]
		}
		mu.Lock()
		cu := lacked[idx]
		cu.SyncBytes = s.SyncBytesIn + s.SyncBytesOut
		cu.ServedBytes = s.SyncRecordBytesOut
		cu.OwnBytes = cu.SyncBytes - cu.ServedBytes
		cu.WireBytes = int64(wire)
		mu.Unlock()
	}
	nodeDone := func(idx int) {
		doneAt[idx] = time.Now()
		captures.Go(func() {
			time.Sleep(catchUpGrace)
			capture(idx)
		})
	}
	lat, met, err := c.await(ctx, pr.rep.Name, exps, c.p.PhaseTimeout, progress, awaitOpts{nodeDone: nodeDone})
	pr.add(lat, met, len(exps), err)
	captures.Wait()
	for _, n := range nodes {
		cu := lacked[n.idx]
		if _, ok := doneAt[n.idx]; ok || cu.LackedRecords == 0 {
			if cu.LackedRecords == 0 {
				capture(n.idx)
			}
			last := n.start
			for _, e := range exps {
				if e.node != n.idx {
					continue
				}
				if t, ok := c.trk.arrival(n.idx, e.rec); ok && t.After(last) {
					last = t
				}
			}
			cu.CaughtUpMs = ms(last.Sub(n.start))
		} else {
			capture(n.idx) // the bytes so far
			cu.CaughtUpMs = -1
		}
		if cu.LackedBytes > 0 {
			cu.SyncRatio = round2(float64(cu.SyncBytes) / float64(cu.LackedBytes))
			cu.OwnRatio = round2(float64(cu.OwnBytes) / float64(cu.LackedBytes))
			cu.WireRatio = round2(float64(cu.WireBytes) / float64(cu.LackedBytes))
		}
		pr.rep.CatchUp = append(pr.rep.CatchUp, *cu)
	}
	return nil
}

// connectedWithout reports whether the live nodes other than out stay
// connected through the links they dial.
func (c *cluster) connectedWithout(out []*tnode) bool {
	gone := map[int]bool{}
	for _, n := range out {
		gone[n.idx] = true
	}
	return connected(len(c.nodes), func(i int) []int { return c.nodes[i].boot },
		func(i int) bool { return c.nodes[i].live && !gone[i] })
}

// ---- partition ----

func (c *cluster) partition(ctx context.Context, pr *phaseRun, r *rand.Rand, progress func(Phase, int, int)) error {
	halves := c.topo.Halves()
	sideOf := func(n *tnode) int {
		if n.idx < len(halves) {
			return halves[n.idx]
		}
		if len(n.boot) > 0 {
			return halves[n.boot[0]%len(halves)]
		}
		return 0
	}
	live := c.live()
	var sides [2][]*tnode
	for _, n := range live {
		s := sideOf(n)
		c.part.set(n.pid, s)
		sides[s] = append(sides[s], n)
	}
	for k, h := range c.probes {
		// Probes are dealt to the sides in turn; their links to the other
		// side are cut like the nodes'.
		c.part.set(h.peerID(), k%2)
	}
	if len(sides[0]) == 0 || len(sides[1]) == 0 {
		return fmt.Errorf("a side of the cut is empty (%d/%d live nodes)", len(sides[0]), len(sides[1]))
	}
	rep := &PartitionReport{Sides: [2]int{len(sides[0]), len(sides[1])}}
	pr.rep.Partition = rep
	pr.noGossipLatency = true
	c.part.activate(true)
	healed := false
	defer func() {
		if !healed {
			c.part.activate(false)
		}
	}()
	// Close what crosses the cut, until nothing does.
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, n := range live {
			rep.ClosedConns += n.gater.closeCut()
		}
		for _, h := range c.probes {
			rep.ClosedConns += h.gater.closeCut()
		}
		crossing := 0
		for _, n := range live {
			for _, p := range n.d.Gossip().Peers() {
				if c.part.cut(n.pid, p.ID) {
					crossing++
				}
			}
		}
		if crossing == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d connections still cross the cut after 10s", crossing)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Both sides publish, in turn.
	pick := [2]func() *tnode{c.chooser(r, sides[0]), c.chooser(r, sides[1])}
	turn := 0
	all := c.publish(ctx, pr, c.cfg.share(0.2, 2), func() *tnode {
		n := pick[turn%2]()
		turn++
		return n
	})
	var ls [2][]*lesson
	for _, l := range all {
		s := sideOf(c.nodes[l.by])
		ls[s] = append(ls[s], l)
	}
	var same []expectation
	for s := range 2 {
		same = append(same, arrivals(c, ls[s], sides[s], time.Time{})...)
	}
	pr.recordDeliveries += len(same)
	_, met, err := c.await(ctx, pr.rep.Name, same, c.p.PhaseTimeout, progress, awaitOpts{})
	pr.add(nil, met, len(same), err)
	// Nothing crossed.
	for s := range 2 {
		for _, l := range ls[s] {
			for _, n := range sides[1-s] {
				if _, ok := c.trk.arrival(n.idx, idOf(l.rec.Raw)); ok {
					rep.Leaked++
				}
			}
		}
	}
	if rep.Leaked > 0 {
		pr.fail("%d arrivals crossed the cut before it healed", rep.Leaked)
	}
	// Heal.
	c.part.activate(false)
	healed = true
	heal := time.Now()
	var cross []expectation
	for s := range 2 {
		cross = append(cross, arrivals(c, ls[s], sides[1-s], heal)...)
	}
	rep.CrossExpected = len(cross)
	pr.recordDeliveries += len(cross)
	lat, met, err := c.await(ctx, pr.rep.Name, cross, c.p.PhaseTimeout, progress, awaitOpts{})
	pr.add(lat, met, len(cross), err)
	if len(lat) > 0 {
		rep.HealToAllMs = slices.Max(lat)
	}
	return nil
}

// ---- latejoin ----

func (c *cluster) lateJoin(ctx context.Context, pr *phaseRun, r *rand.Rand, progress func(Phase, int, int)) error {
	if len(c.lessons) == 0 {
		// Run alone: give the late node something to catch up on.
		if _, err := c.ensureLessons(ctx, pr, r, c.cfg.Lessons, func(*lesson) bool { return true }, progress); err != nil {
			return err
		}
	}
	conv, err := c.awaitConverged(ctx, c.p.ConvergeTimeout)
	if err != nil {
		return err
	}
	if !conv.ok {
		pr.fail("the network had not converged before the late node joined: %s", conv.detail)
	}
	var boot []int
	for _, n := range c.pick(r, c.live(), c.cfg.Degree) {
		boot = append(boot, n.idx)
	}
	slices.Sort(boot)
	n, err := c.addNode(boot)
	if err != nil {
		return err
	}
	wire0 := c.net.totals()
	if err := c.startNode(ctx, n); err != nil {
		return err
	}
	pr.started(n)
	return c.catchUp(ctx, pr, catchUpJob{nodes: []*tnode{n}, ref: conv.ref, wire0: wire0}, progress)
}
