package testnet

import (
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"slices"
	"strings"
	"time"

	"github.com/remem/remem/protocol"
)

// digest is SHA-256 over a node's records in key order (each raw line and a
// newline) and, after each hash's records, the hash's computed state.
type digest struct{ h hash.Hash }

func newDigest() *digest { return &digest{h: sha256.New()} }

func (d *digest) line(raw []byte) {
	d.h.Write(raw)
	d.h.Write([]byte{'\n'})
}

func (d *digest) state(hash string, st protocol.State) {
	fmt.Fprintf(d.h, "state %s %s\n", hash, st)
}

func (d *digest) sum() (out [32]byte) {
	copy(out[:], d.h.Sum(nil))
	return out
}

// convergence is the outcome of one check.
type convergence struct {
	ok     bool
	took   time.Duration
	detail string // what differs, when not ok
	nodes  int
	ref    holding // the majority's holding
}

// checkOnce compares the holdings of nodes at one instant of the clock,
// leaving out the records of skip's origins.
func checkOnce(nodes []*tnode, p protocol.StateParams, skip func(origin string) bool) (convergence, error) {
	now := time.Now()
	hs := make([]holding, len(nodes))
	for i, n := range nodes {
		h, err := hold(n, now, p, skip)
		if err != nil {
			return convergence{}, err
		}
		hs[i] = h
	}
	count := map[[32]byte]int{}
	for _, h := range hs {
		count[h.digest]++
	}
	var major [32]byte
	best := -1
	for i, h := range hs {
		if c := count[h.digest]; c > best || (c == best && i == 0) {
			major, best = h.digest, c
		}
	}
	c := convergence{ok: len(count) <= 1, nodes: len(nodes)}
	var ref holding
	for _, h := range hs {
		if h.digest == major {
			ref = h
			break
		}
	}
	c.ref = ref
	if c.ok {
		return c, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d nodes differ from the %d that agree (%d records):", len(nodes)-best, len(nodes), best, len(ref.ids))
	shown := 0
	for i, h := range hs {
		if h.digest == major {
			continue
		}
		if shown == 8 {
			fmt.Fprintf(&b, "\n  … and %d more", len(nodes)-best-shown)
			break
		}
		shown++
		fmt.Fprintf(&b, "\n  %s: %s", nodes[i].name(), describeDiff(ref, h))
	}
	c.detail = b.String()
	return c, nil
}

// describeDiff says what h lacks and holds beyond ref, and which states differ.
func describeDiff(ref, h holding) string {
	var lacks, extra, states []string
	for id, r := range ref.ids {
		if _, ok := h.ids[id]; !ok {
			lacks = append(lacks, recordName(r))
		}
	}
	for id, r := range h.ids {
		if _, ok := ref.ids[id]; !ok {
			extra = append(extra, recordName(r))
		}
	}
	for hash, st := range ref.states {
		if got := h.states[hash]; got != st {
			states = append(states, fmt.Sprintf("%s is %s, not %s", hash[:8], orNone(got), st))
		}
	}
	slices.Sort(lacks)
	slices.Sort(extra)
	slices.Sort(states)
	var parts []string
	if len(lacks) > 0 {
		parts = append(parts, fmt.Sprintf("lacks %d records (%s)", len(lacks), firstFew(lacks, 4)))
	}
	if len(extra) > 0 {
		parts = append(parts, fmt.Sprintf("holds %d the others lack (%s)", len(extra), firstFew(extra, 4)))
	}
	if len(states) > 0 {
		parts = append(parts, fmt.Sprintf("%d states differ (%s)", len(states), firstFew(states, 4)))
	}
	if len(parts) == 0 {
		return "differs"
	}
	return strings.Join(parts, "; ")
}

func orNone(s protocol.State) string {
	if s == "" {
		return "unknown"
	}
	return string(s)
}

func recordName(r *protocol.Record) string {
	return fmt.Sprintf("%s of %s by %s", r.Type, r.Hash[:8], r.Origin)
}

func firstFew(s []string, n int) string {
	if len(s) <= n {
		return strings.Join(s, ", ")
	}
	return strings.Join(s[:n], ", ") + fmt.Sprintf(", … %d more", len(s)-n)
}

// awaitConverged polls until every live node holds the same records and
// computes the same states, or timeout passes. A check reads every node's
// store, so the polls space out as the wait grows: every 200 ms at first,
// then a tenth of the time waited so far, at most every 5 s.
func (nw *cluster) awaitConverged(ctx context.Context, timeout time.Duration) (convergence, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		c, err := checkOnce(nw.live(), nw.p.Memory.State, nw.flood.diverging)
		if err != nil {
			return c, err
		}
		c.took = time.Since(start)
		if c.ok || time.Now().After(deadline) || ctx.Err() != nil {
			if !c.ok && ctx.Err() != nil {
				return c, ctx.Err()
			}
			return c, nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(min(5*time.Second, max(200*time.Millisecond, time.Since(start)/10))):
		}
	}
}
