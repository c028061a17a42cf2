package protocol

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Every transport receives lines in batches: a folder or commons file, a
// gossip message, a sync answer, an import. VerifyBatch is the one entry
// that verifies a batch, so each transport gets the same rules: every line
// verified (SPEC §5), each bound to the origin the batch belongs to (the
// file's name, the message's signer; SPEC §10), and at most MaxOriginRecs
// records per origin.

// Refused is one line of a batch that was not taken (Line 0: the batch as
// a whole), with the source it came from (a file name, an origin, a peer).
type Refused struct {
	Source string `json:"source,omitempty"`
	Line   int    `json:"line"`
	Reason Reason `json:"reason"`
	Detail string `json:"detail"` // the whole message, the reason first
}

func (r Refused) String() string {
	where := r.Source
	if r.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, r.Line)
	}
	if where == "" {
		return r.Detail
	}
	return where + ": " + r.Detail
}

// Tally counts refused lines by reason.
type Tally map[Reason]int

// TallyOf counts refusals by reason (nil when there are none).
func TallyOf(refused []Refused) Tally {
	if len(refused) == 0 {
		return nil
	}
	t := Tally{}
	for _, r := range refused {
		t[r.Reason]++
	}
	return t
}

// Bound says what the lines of a batch must be and where they came from.
type Bound struct {
	// Source names the batch in refusals (a file name, an origin, a peer).
	Source string
	// Origin every line must be signed by: the origin a file is named
	// after, the signer of a gossip message. "" accepts any origin (a
	// catch-up sync answer, an import of another memory's export).
	Origin string
	// Each runs do(i) for every i in [0, n), in any order and possibly
	// concurrently; nil runs them in order here. A caller that stops early
	// (a deadline) leaves the lines it did not run out of the batch, and
	// should discard the batch.
	Each func(n int, do func(i int))
}

// Batch is what VerifyBatch made of a batch of lines.
type Batch struct {
	Records []*Record // in line order
	Refused []Refused // in line order
	Skipped []int     // line numbers of lines of an unknown version (not an error)
}

// First is the batch's first line not taken, refused or skipped, as a
// refusal (a skipped line with ReasonUnknownVersion): what a transport
// that takes a batch whole or not at all answers with. ok is false when
// every line was taken.
func (b Batch) First() (r Refused, ok bool) {
	if len(b.Refused) > 0 {
		r, ok = b.Refused[0], true
	}
	if len(b.Skipped) > 0 && (!ok || b.Skipped[0] < r.Line) {
		r = Refused{Line: b.Skipped[0], Reason: ReasonUnknownVersion,
			Detail: fmt.Sprintf("%s: the line is of a protocol version this implementation does not know", ReasonUnknownVersion)}
		ok = true
	}
	return r, ok
}

// VerifyBatch verifies lines as one batch bound by b at time now.
// Records of one origin beyond MaxOriginRecs are refused, keeping its
// revocations first and then its newest records.
func VerifyBatch(lines []Line, b Bound, now time.Time) Batch {
	type result struct {
		rec *Record
		err error
		ran bool
	}
	results := make([]result, len(lines))
	verify := func(i int) {
		rec, err := Verify(lines[i].Bytes, now)
		results[i] = result{rec: rec, err: err, ran: true}
	}
	if b.Each != nil {
		b.Each(len(lines), verify)
	} else {
		for i := range lines {
			verify(i)
		}
	}
	var out Batch
	refuse := func(i int, reason Reason, detail string) {
		out.Refused = append(out.Refused, Refused{Source: b.Source, Line: lines[i].N, Reason: reason, Detail: detail})
	}
	perOrigin := map[string]int{}
	kept := make([]int, 0, len(lines))
	for i, r := range results {
		switch {
		case !r.ran:
			continue
		case VerdictOf(r.err) == Skip:
			out.Skipped = append(out.Skipped, lines[i].N)
		case r.err != nil:
			refuse(i, ReasonOf(r.err), r.err.Error())
		case b.Origin != "" && r.rec.Origin != b.Origin:
			refuse(i, ReasonOriginMismatch, fmt.Sprintf("%s: the line is signed by origin %s, but %s holds only records of %s", ReasonOriginMismatch, r.rec.Origin, b.describe(), b.Origin))
		default:
			perOrigin[r.rec.Origin]++
			kept = append(kept, i)
		}
	}
	over := map[int]bool{}
	for origin, n := range perOrigin {
		if n <= MaxOriginRecs {
			continue
		}
		var mine []int
		for _, i := range kept {
			if results[i].rec.Origin == origin {
				mine = append(mine, i)
			}
		}
		slices.SortStableFunc(mine, func(x, y int) int { return keepOrder(results[x].rec, results[y].rec) })
		for _, i := range mine[MaxOriginRecs:] {
			over[i] = true
		}
	}
	for _, i := range kept {
		if over[i] {
			refuse(i, ReasonTooManyRecords, fmt.Sprintf("%s: an origin has at most %d records in one place; its revocations and newest records are kept", ReasonTooManyRecords, MaxOriginRecs))
			continue
		}
		out.Records = append(out.Records, results[i].rec)
	}
	slices.SortStableFunc(out.Refused, func(x, y Refused) int { return cmp.Compare(x.Line, y.Line) })
	return out
}

// keepOrder sorts the records an origin may keep first: revocations, then
// the newest.
func keepOrder(a, b *Record) int {
	if ar, br := a.Type == TypeRevocation, b.Type == TypeRevocation; ar != br {
		if ar {
			return -1
		}
		return 1
	}
	return b.Time.Compare(a.Time)
}

func (b Bound) describe() string {
	if b.Source != "" {
		return b.Source
	}
	return "this batch"
}
