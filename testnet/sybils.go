package testnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// Sybils of the byzantine phase: fresh keys, valid records. One fresh key
// (the offender of this attack) publishes a lesson; waves of fresh keys
// confirm it, confirm honest lessons and then revoke them, so that they are
// three, thirty or more "other memories" and a "quorum of confirmers"
// (SPEC §8). Each key publishes from its own raw host, since only an origin
// publishes its own records on a topic. Honest nodes admit each other only
// (a trust list), so the records are held and move nothing: the offender's
// lesson stays a candidate, no honest lesson is revoked and no state or
// strength changes.

// SybilReport says what the sybils sent and what it changed.
type SybilReport struct {
	Waves       []int  `json:"waves"` // fresh keys per wave
	Keys        int    `json:"keys"`
	RecordsSent int    `json:"records_sent"`
	Lesson      string `json:"lesson"`  // the offender's lesson they confirm
	Targets     int    `json:"targets"` // honest lessons they confirm and revoke
	Nodes       int    `json:"nodes"`   // honest nodes checked
	// Checked are the (node, hash) states computed with and without the
	// sybils' records at one instant; Changed: states that differ, and
	// stored strengths that changed from before the sybils to after (want 0).
	Checked int `json:"checked"`
	Changed int `json:"changed"`
	// OffenderCommon: honest nodes that show the offender's lesson as
	// common (want 0); Revoked: honest lessons revoked at some node by the
	// sybils (want 0).
	OffenderCommon int `json:"offender_common"`
	// CommonIfAllAdmitted: honest nodes where the same records would make
	// it common were every origin admitted (admit_all): the attack is real.
	CommonIfAllAdmitted int    `json:"common_if_all_admitted"`
	Revoked             int    `json:"revoked"`
	Admission           string `json:"admission"`
	// The open team: every honest node's records with nothing admitted
	// but the memory itself, as a node of one open team that admits nobody
	// computes them (SPEC §8): lessons held and how many are common (want 0).
	OpenLessons    int `json:"open_lessons"`
	OpenCandidates int `json:"open_candidates"`
	OpenCommon     int `json:"open_common"`
}

// sybilBatch is how many sybil hosts run at once.
const sybilBatch = 10

type viewKey struct {
	node int
	hash string
}

type viewOf struct {
	strength float64
	updated  time.Time
}

// strengths reads the stored strength of every lesson the nodes hold:
// what a rise changes (a view decays it with time).
func strengths(nodes []*tnode) (map[viewKey]viewOf, error) {
	out := map[viewKey]viewOf{}
	for _, n := range nodes {
		ls, err := n.d.Memory().Stored().Lessons()
		if err != nil {
			return nil, fmt.Errorf("reading the lessons of %s: %w", n.name(), err)
		}
		for _, l := range ls {
			out[viewKey{n.idx, l.Hash}] = viewOf{l.Strength, l.Updated}
		}
	}
	return out, nil
}

// sybils runs the sybil waves against the live nodes.
func (c *cluster) sybils(ctx context.Context, pr *phaseRun, r *rand.Rand, progress func(Phase, int, int)) (*SybilReport, error) {
	live := c.live()
	rep := &SybilReport{Waves: c.p.SybilWaves, Nodes: len(live),
		Admission: fmt.Sprintf("open team; each honest node trusts the %d honest origins", len(c.trust))}
	var targets []*lesson
	for _, l := range c.lessons {
		if !l.revoked && l.confirmed && len(targets) < 3 {
			targets = append(targets, l)
		}
	}
	for _, l := range c.lessons {
		if !l.revoked && !l.confirmed && len(targets) < 3 {
			targets = append(targets, l)
		}
	}
	rep.Targets = len(targets)
	before, err := strengths(live)
	if err != nil {
		return rep, err
	}

	// The offender's lesson.
	author, err := c.newRawHost(false)
	if err != nil {
		return rep, fmt.Errorf("starting the sybils' author: %w", err)
	}
	defer author.close()
	author.keepConnected(addrInfos(c.pick(r, live, 2)), 500*time.Millisecond)
	at := time.Now()
	les, err := protocol.SignLesson(author.id, protocol.LessonDraft{Kind: protocol.KindError, Seen: 1, Updated: at,
		Text: "The sybil relay of the staging cluster drops retries when the queue is nearly full"})
	if err != nil {
		return rep, err
	}
	rep.Lesson = les.Hash
	sybil := map[string]bool{author.id.Origin(): true}
	if err := c.sybilPublish(ctx, pr, progress, []*rawHost{author}, [][]byte{les.Raw}, live); err != nil {
		return rep, err
	}
	rep.RecordsSent++

	for _, w := range c.p.SybilWaves {
		for done := 0; done < w; done += sybilBatch {
			k := min(sybilBatch, w-done)
			hosts := make([]*rawHost, 0, k)
			var msgs [][]byte
			var errs []error
			for range k {
				h, err := c.newRawHost(false)
				if err != nil {
					errs = append(errs, err)
					break
				}
				hosts = append(hosts, h)
				sybil[h.id.Origin()] = true
				h.keepConnected(addrInfos(c.pick(r, live, 2)), 500*time.Millisecond)
				now := time.Now()
				var lines []*protocol.Record
				for _, hash := range append([]string{les.Hash}, hashesOf(targets)...) {
					cf, err := protocol.SignConfirmation(h.id, hash, now)
					if err != nil {
						errs = append(errs, err)
					}
					lines = append(lines, cf)
				}
				for _, l := range targets {
					rv, err := protocol.SignRevocation(h.id, l.rec.Hash, now.Add(time.Millisecond), "wrong")
					if err != nil {
						errs = append(errs, err)
					}
					lines = append(lines, rv)
				}
				if len(errs) > 0 {
					break
				}
				var b bytes.Buffer
				for _, rec := range lines {
					b.Write(rec.Raw)
					b.WriteByte('\n')
				}
				msgs = append(msgs, b.Bytes())
				rep.RecordsSent += len(lines)
			}
			if len(errs) == 0 {
				errs = append(errs, c.sybilPublish(ctx, pr, progress, hosts, msgs, live))
			}
			for _, h := range hosts {
				h.close()
			}
			rep.Keys += len(hosts)
			if err := errors.Join(errs...); err != nil {
				return rep, err
			}
		}
	}

	after, err := strengths(live)
	if err != nil {
		return rep, err
	}
	for k, b := range before {
		if a := after[k]; a != b {
			rep.Changed++
			pr.fail("the sybils changed the strength of lesson %s at node %d: %.2f, now %.2f", k.hash[:8], k.node, b.strength, a.strength)
		}
	}
	// Each state with the sybils' records and without them, at one now.
	targeted := map[string]bool{}
	for _, l := range targets {
		targeted[l.rec.Hash] = true
	}
	revoked := map[string]bool{}
	now := time.Now()
	for _, n := range live {
		admit := n.d.Memory().Admitted()
		err := eachHash(n, func(hash string, recs []*protocol.Record) {
			var honest []*protocol.Record
			for _, r := range recs {
				if !sybil[r.Origin] {
					honest = append(honest, r)
				}
			}
			with := protocol.ComputeState(hash, recs, now, c.p.Memory.State, admit).State
			rep.Checked++
			if hash == les.Hash {
				if with == protocol.StateCommon {
					rep.OffenderCommon++
				}
				if protocol.ComputeState(hash, recs, now, c.p.Memory.State, protocol.AdmitAll()).State == protocol.StateCommon {
					rep.CommonIfAllAdmitted++
				}
				return
			}
			without := protocol.ComputeState(hash, honest, now, c.p.Memory.State, admit).State
			if with != without {
				rep.Changed++
				pr.fail("the sybils changed lesson %s at node %d: %s, without them %s", hash[:8], n.idx, with, without)
				if targeted[hash] && with == protocol.StateRevoked {
					revoked[hash] = true
				}
			}
		})
		if err != nil {
			return rep, err
		}
	}
	rep.Revoked = len(revoked)
	if rep.OffenderCommon > 0 {
		pr.fail("%d honest nodes show the sybils' lesson as common", rep.OffenderCommon)
	}
	if rep.Revoked > 0 {
		pr.fail("the sybils revoked %d honest lessons", rep.Revoked)
	}
	for _, n := range live {
		lessons, candidates, common, err := openView(n, time.Now(), c.p.Memory.State)
		if err != nil {
			return rep, err
		}
		rep.OpenLessons += lessons
		rep.OpenCandidates += candidates
		rep.OpenCommon += common
	}
	if rep.OpenCommon > 0 {
		pr.fail("with nothing admitted, honest nodes would show %d lessons as common", rep.OpenCommon)
	}
	return rep, nil
}

func hashesOf(ls []*lesson) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.rec.Hash
	}
	return out
}

// sybilPublish has each host publish its message once it has a peer in the
// topic, and waits until every live node holds every record of them.
func (c *cluster) sybilPublish(ctx context.Context, pr *phaseRun, progress func(Phase, int, int), hosts []*rawHost, msgs [][]byte, live []*tnode) error {
	var wg sync.WaitGroup
	errs := make([]error, len(hosts))
	for i, h := range hosts {
		wg.Go(func() {
			deadline := time.Now().Add(15 * time.Second)
			for h.topicPeers() == 0 {
				if time.Now().After(deadline) || ctx.Err() != nil {
					errs[i] = fmt.Errorf("a sybil found no peer in the topic within 15s")
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
			// A few heartbeats, as for the offenders, so that the first
			// message is not sent before the peers' streams are up.
			time.Sleep(5 * c.p.Gossip.HeartbeatInterval)
			errs[i] = h.publish(ctx, msgs[i])
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	since := time.Now()
	var exps []expectation
	for _, m := range msgs {
		for line := range bytes.SplitSeq(bytes.TrimSuffix(m, []byte("\n")), []byte("\n")) {
			for _, n := range live {
				exps = append(exps, expectation{node: n.idx, rec: idOf(line), since: since, what: "a sybil's record"})
			}
		}
	}
	if _, _, err := c.await(ctx, pr.rep.Name, exps, c.p.PhaseTimeout, progress, awaitOpts{}); err != nil {
		pr.fail("the sybils' records did not reach every honest node: %v", err)
	}
	return nil
}

// eachHash calls f with every hash n holds and its records.
func eachHash(n *tnode, f func(hash string, recs []*protocol.Record)) error {
	var cur string
	var recs []*protocol.Record
	err := n.d.Memory().Stored().Each(func(held store.Held) error {
		if held.Record.Hash != cur {
			if cur != "" {
				f(cur, recs)
			}
			cur, recs = held.Record.Hash, nil
		}
		recs = append(recs, held.Record)
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading the records of %s: %w", n.name(), err)
	}
	if cur != "" {
		f(cur, recs)
	}
	return nil
}

// openView computes the state of every lesson n holds with nothing
// admitted but n itself, as a memory of one open team that admits nobody:
// how many lessons, candidates and common ones.
func openView(n *tnode, now time.Time, p protocol.StateParams) (lessons, candidates, common int, err error) {
	admit := protocol.AdmitOrigins(n.id.Origin())
	err = eachHash(n, func(hash string, recs []*protocol.Record) {
		for _, r := range recs {
			if r.Type == protocol.TypeLesson {
				lessons++
				switch protocol.ComputeState(hash, recs, now, p, admit).State {
				case protocol.StateCandidate:
					candidates++
				case protocol.StateCommon:
					common++
				}
				return
			}
		}
	})
	return lessons, candidates, common, err
}
