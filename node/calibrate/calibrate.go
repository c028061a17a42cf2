package calibrate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/remem/remem/internal/progress"
	"github.com/remem/remem/node"
	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// Report is what Clusters measured.
type Report struct {
	Rows []RowReport `json:"rows"`
	// Bad are the rows that could not be scored (ReadRows' bad lines
	// passed in, and rows whose events the memory did not take).
	Bad    []BadRow `json:"bad,omitempty"`
	Totals Totals   `json:"totals"`
}

// Totals sum the rows scored.
type Totals struct {
	Rows          int `json:"rows"`
	ExactGrouping int `json:"exact_grouping"` // rows whose events went to lessons exactly as their groups say
	// ExactByFamily counts the rows whose events went to lessons exactly
	// as their groups split by family of lesson kinds say
	// (consolidate.Families: a correction never shares a lesson with an
	// error), the most the node's clustering can reach.
	ExactByFamily   int `json:"exact_grouping_by_family"`
	LessonsWritten  int `json:"lessons_written"`
	LessonsExpected int `json:"lessons_expected"`
	FactsKept       int `json:"facts_kept"`
	Facts           int `json:"facts"`
	// FactsRatio is FactsKept/Facts (1 when no row names a fact).
	FactsRatio float64 `json:"facts_ratio"`
	// RawData counts the lessons that are no drafts and hold a private
	// string of their row; RawFlagged, those of them protocol.FindRawData
	// flags.
	RawData    int `json:"raw_data"`
	RawFlagged int `json:"raw_flagged"`
	Drafts     int `json:"drafts"`
	Published  int `json:"published_looking"` // lessons that are no drafts: what would be signed
	BadRows    int `json:"bad_rows"`
}

// RowReport is one row scored.
type RowReport struct {
	ID              string `json:"id"`
	Domain          string `json:"domain,omitempty"`
	Line            int    `json:"line,omitempty"`
	Events          int    `json:"events"`
	LessonsWritten  int    `json:"lessons_written"`
	LessonsExpected int    `json:"lessons_expected"`
	ExactGrouping   bool   `json:"exact_grouping"`
	ExactByFamily   bool   `json:"exact_grouping_by_family"`
	// Grouping is the partition the memory made: the events (indices into
	// the row's events) of each lesson written, in the order of Lessons.
	Grouping [][]int `json:"grouping"`
	// Unabsorbed are the events no lesson took (a cluster the writer
	// could not write is dropped and its events stay pending).
	Unabsorbed []int `json:"unabsorbed,omitempty"`
	// Duplicates counts the events the store took as repeats of an earlier
	// one (same agent, session, kind and title, SPEC §2); each goes where
	// that one went.
	Duplicates int           `json:"duplicates,omitempty"`
	FactsKept  int           `json:"facts_kept"`
	Facts      int           `json:"facts"`
	Groups     []GroupReport `json:"groups"`
	RawData    int           `json:"raw_data"`
	RawFlagged int           `json:"raw_flagged"`
	Drafts     int           `json:"drafts"`
	Published  int           `json:"published_looking"`
	// Lessons are the lessons written, ordered by their first event.
	Lessons []LessonReport `json:"lessons"`
	// Dropped are the clusters sleep could not write a lesson for.
	Dropped []string `json:"dropped,omitempty"`
}

// GroupReport is one expected lesson against what was written.
type GroupReport struct {
	Events []int `json:"events"`
	// Lessons are the indices (into RowReport.Lessons) of the lessons its
	// events went to.
	Lessons   []int      `json:"lessons"`
	FactsKept int        `json:"facts_kept"`
	Facts     int        `json:"facts"`
	Missing   [][]string `json:"missing,omitempty"` // the facts not found
	Reference string     `json:"reference,omitempty"`
}

// LessonReport is one lesson the memory wrote.
type LessonReport struct {
	Hash string `json:"hash"`
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Draft is why the lesson is a draft (store.Lesson.Draft), "" when it
	// would be signed.
	Draft  string `json:"draft,omitempty"`
	Events []int  `json:"events"`
	// Private are the row's private strings its text holds.
	Private []string `json:"private,omitempty"`
	// RawData: it is no draft and holds a private string.
	RawData bool `json:"raw_data,omitempty"`
	// Flagged are the kinds of raw data protocol.FindRawData finds in it.
	Flagged []string `json:"flagged,omitempty"`
}

// Clusters scores each row on a fresh memory set up as cfg says (writer,
// similarity, threshold, clock, logger; its home, store, layers, admission
// and metrics are the fresh memory's own): the row's events are ingested
// in order through the normal ingest path, one sleep runs, and the lessons
// it wrote are compared with the row's groups, facts and private strings.
// Progress goes to the progress.Func ctx carries (stage "scoring rows").
// A row whose events the memory did not take is reported in Bad; err is
// for what stops the run (ctx cancelled, a memory that does not open).
func Clusters(ctx context.Context, cfg node.Config, rows []Row) (Report, error) {
	var rep Report
	for i, row := range rows {
		progress.Report(ctx, "scoring rows", i, len(rows))
		rr, bad, err := scoreRow(ctx, cfg, row)
		if err != nil {
			return rep, fmt.Errorf("row %q (line %d): %w", row.ID, row.Line, err)
		}
		if bad != "" {
			rep.Bad = append(rep.Bad, BadRow{Line: row.Line, ID: row.ID, Reason: bad})
			continue
		}
		rep.Rows = append(rep.Rows, rr)
	}
	progress.Report(ctx, "scoring rows", len(rows), len(rows))
	rep.sum()
	return rep, nil
}

// sum fills Totals from Rows and Bad.
func (r *Report) sum() {
	t := Totals{Rows: len(r.Rows), BadRows: len(r.Bad)}
	for _, row := range r.Rows {
		if row.ExactByFamily {
			t.ExactByFamily++
		}
		if row.ExactGrouping {
			t.ExactGrouping++
		}
		t.LessonsWritten += row.LessonsWritten
		t.LessonsExpected += row.LessonsExpected
		t.FactsKept += row.FactsKept
		t.Facts += row.Facts
		t.RawData += row.RawData
		t.RawFlagged += row.RawFlagged
		t.Drafts += row.Drafts
		t.Published += row.Published
	}
	t.FactsRatio = 1
	if t.Facts > 0 {
		t.FactsRatio = float64(t.FactsKept) / float64(t.Facts)
	}
	r.Totals = t
}

// AddBad adds rows that could not be read (ReadRows' bad lines) to the
// report, in line order with those already there.
func (r *Report) AddBad(bad []BadRow) {
	r.Bad = append(r.Bad, bad...)
	slices.SortStableFunc(r.Bad, func(a, b BadRow) int { return a.Line - b.Line })
	r.sum()
}

// scoreRow runs one row on a fresh memory. bad says why the row could not
// be scored.
func scoreRow(ctx context.Context, cfg node.Config, row Row) (rr RowReport, bad string, err error) {
	if len(row.events) != len(row.Events) {
		// A Row built by hand, not by DecodeRow: decode it now.
		line, merr := json.Marshal(row)
		if merr != nil {
			return rr, merr.Error(), nil
		}
		dec, derr := DecodeRow(line)
		if derr != nil {
			return rr, derr.Error(), nil
		}
		dec.Line = row.Line
		row = dec
	}
	dir, err := os.MkdirTemp("", "remem-calibrate-")
	if err != nil {
		return rr, "", fmt.Errorf("making a memory for the row: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }() // a scratch memory: nothing in it is kept
	c := cfg
	c.Home, c.Create, c.LockWait = dir, true, 0
	c.Store = store.Options{InMemory: true, Small: true, Logger: cfg.Store.Logger} // one row's events: small tables will do
	c.Layers, c.Admission, c.Registry, c.OnAccept = nil, node.Admission{}, nil, nil
	m, err := node.Open(c)
	if err != nil {
		return rr, "", err
	}
	defer func() { err = errors.Join(err, m.Close()) }()

	var in bytes.Buffer
	for _, raw := range row.Events {
		in.Write(raw)
		in.WriteByte('\n')
	}
	ing, err := m.Ingest("row "+row.ID, &in)
	if err != nil {
		return rr, "", err
	}
	if len(ing.Rejected) > 0 {
		e := ing.Rejected[0]
		return rr, fmt.Sprintf("event %d was not taken: %s", e.Line-1, e.Reason), nil
	}
	// The sleep's own stages would take over the caller's bar row by row.
	sleep, err := m.Sleep(progress.With(ctx, nil))
	if err != nil {
		return rr, "", err
	}
	lessons, err := m.Stored().Lessons()
	if err != nil {
		return rr, "", err
	}
	held, err := m.Stored().Events(time.Time{})
	if err != nil {
		return rr, "", err
	}
	rr = score(row, lessons, held, sleep.Dropped)
	rr.Duplicates = ing.Duplicates
	return rr, "", nil
}

// score compares what one sleep wrote with the row's labels. Events map
// to the lesson that absorbed them (store.StoredEvent.Lesson), found by
// their dedupe key, so an event the store took as a duplicate of an
// earlier one goes where that one went.
func score(row Row, lessons []store.Lesson, held []store.StoredEvent, dropped []string) RowReport {
	rr := RowReport{ID: row.ID, Domain: row.Domain, Line: row.Line, Events: len(row.events),
		LessonsExpected: len(row.Groups), Dropped: dropped, Grouping: [][]int{}, Lessons: []LessonReport{}}
	absorbedBy := map[string]string{} // dedupe key -> lesson hash
	for _, e := range held {
		absorbedBy[e.Event.DedupeKey()] = e.Lesson
	}
	byHash := map[string]store.Lesson{}
	for _, l := range lessons {
		if l.Own {
			byHash[l.Hash] = l
		}
	}
	// Lessons in the order of their first event; lessons no event of the
	// row went to (none in a fresh memory) after them.
	index := map[string]int{}
	eventLesson := make([]int, len(row.events)) // index into rr.Lessons, -1: none
	for i, ev := range row.events {
		hash := absorbedBy[ev.DedupeKey()]
		l, ok := byHash[hash]
		if !ok {
			eventLesson[i] = -1
			rr.Unabsorbed = append(rr.Unabsorbed, i)
			continue
		}
		k, seen := index[hash]
		if !seen {
			k = len(rr.Lessons)
			index[hash] = k
			rr.Lessons = append(rr.Lessons, lessonReport(l, row.Private))
		}
		rr.Lessons[k].Events = append(rr.Lessons[k].Events, i)
		eventLesson[i] = k
	}
	var rest []store.Lesson
	for hash, l := range byHash {
		if _, ok := index[hash]; !ok {
			rest = append(rest, l)
		}
	}
	slices.SortFunc(rest, func(a, b store.Lesson) int { return strings.Compare(a.Hash, b.Hash) })
	for _, l := range rest {
		rr.Lessons = append(rr.Lessons, lessonReport(l, row.Private))
	}
	rr.LessonsWritten = len(rr.Lessons)
	for _, l := range rr.Lessons {
		rr.Grouping = append(rr.Grouping, l.Events)
		switch {
		case l.Draft != "":
			rr.Drafts++
		default:
			rr.Published++
			if l.RawData {
				rr.RawData++
				if len(l.Flagged) > 0 {
					rr.RawFlagged++
				}
			}
		}
	}
	rr.ExactGrouping = len(rr.Unabsorbed) == 0 && samePartition(rr.Grouping, row.Groups)
	rr.ExactByFamily = len(rr.Unabsorbed) == 0 && samePartition(rr.Grouping, byFamily(row))
	for _, g := range row.Groups {
		gr := GroupReport{Events: g.Events, Reference: g.Lesson, Facts: len(g.Facts)}
		var texts []string
		for _, i := range g.Events {
			if k := eventLesson[i]; k >= 0 && !slices.Contains(gr.Lessons, k) {
				gr.Lessons = append(gr.Lessons, k)
				texts = append(texts, strings.ToLower(rr.Lessons[k].Text))
			}
		}
		slices.Sort(gr.Lessons)
		for _, alts := range g.Facts {
			if kept(texts, alts) {
				gr.FactsKept++
			} else {
				gr.Missing = append(gr.Missing, alts)
			}
		}
		rr.FactsKept += gr.FactsKept
		rr.Facts += gr.Facts
		rr.Groups = append(rr.Groups, gr)
	}
	return rr
}

// kept: one of the alternatives is in one of the (lower-cased) texts,
// case-insensitively.
func kept(texts, alts []string) bool {
	for _, a := range alts {
		a = strings.ToLower(a)
		for _, t := range texts {
			if strings.Contains(t, a) {
				return true
			}
		}
	}
	return false
}

func lessonReport(l store.Lesson, private []string) LessonReport {
	lr := LessonReport{Hash: l.Hash, Kind: l.Kind, Text: l.Text, Draft: l.Draft, Events: []int{}}
	lower := strings.ToLower(l.Text)
	for _, p := range private {
		if strings.Contains(lower, strings.ToLower(p)) {
			lr.Private = append(lr.Private, p)
		}
	}
	lr.RawData = l.Draft == "" && len(lr.Private) > 0
	for _, f := range protocol.FindRawData(l.Text) {
		if !slices.Contains(lr.Flagged, f.Kind) {
			lr.Flagged = append(lr.Flagged, f.Kind)
		}
	}
	return lr
}

// byFamily splits each of the row's groups by the family of lesson kinds
// its events map to.
func byFamily(row Row) []Group {
	var out []Group
	for _, g := range row.Groups {
		split := map[string][]int{}
		var order []string
		for _, i := range g.Events {
			f := consolidate.FamilyOf(protocol.LessonKindOf(row.events[i].Kind))[0]
			if _, ok := split[f]; !ok {
				order = append(order, f)
			}
			split[f] = append(split[f], i)
		}
		for _, f := range order {
			out = append(out, Group{Events: split[f]})
		}
	}
	return out
}

// samePartition: found (lists of event indices) and the groups are the
// same sets of sets.
func samePartition(found [][]int, groups []Group) bool {
	canon := func(sets [][]int) []string {
		out := make([]string, 0, len(sets))
		for _, s := range sets {
			s = slices.Clone(s)
			slices.Sort(s)
			out = append(out, fmt.Sprint(s))
		}
		slices.Sort(out)
		return out
	}
	want := make([][]int, len(groups))
	for i, g := range groups {
		want[i] = g.Events
	}
	var nonEmpty [][]int
	for _, s := range found {
		if len(s) > 0 {
			nonEmpty = append(nonEmpty, s)
		}
	}
	return len(nonEmpty) == len(found) && slices.Equal(canon(nonEmpty), canon(want))
}
