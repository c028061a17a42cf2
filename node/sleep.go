package node

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/remem/remem/internal/progress"
	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// SleepReport says what one sleep did.
type SleepReport struct {
	InboxTaken    int `json:"inbox_taken"`
	InboxRejected int `json:"inbox_rejected"`
	Events        int `json:"events"`
	NewLessons    int `json:"new_lessons"`
	Raised        int `json:"raised"`
	Confirmations int `json:"confirmations"`
	MetBefore     int `json:"met_before"`
	Signed        int `json:"signed"`
	KeptLocal     int `json:"kept_local"`
	Withdrawn     int `json:"withdrawn"` // revocations signed of revoked lessons published or confirmed here (withdrawRevoked)
	// ConfirmationsKeptLocal counts candidates met here only in projects
	// not opted in for their kind: raised here, not confirmed.
	ConfirmationsKeptLocal int           `json:"confirmations_kept_local,omitempty"`
	Dropped                []string      `json:"dropped,omitempty"`
	Took                   time.Duration `json:"took_ns"`

	// Writers tells which writer wrote the new lessons and which answers
	// were not kept.
	Writers WriterCounts `json:"writers,omitzero"`

	// InboxRejectsDropped counts older rejected lines the drain pushed
	// past the bound of the rejects files (RejectsInfo says where the rest are).
	InboxRejectsDropped int64 `json:"inbox_rejects_dropped,omitempty"`
}

func (r SleepReport) String() string {
	s := fmt.Sprintf("took %d events (%d from the inbox); %d new lessons, %d raised; %d confirmations; %d records signed; %d kept local",
		r.Events, r.InboxTaken, r.NewLessons, r.Raised, r.Confirmations, r.Signed, r.KeptLocal)
	if r.ConfirmationsKeptLocal > 0 {
		s += fmt.Sprintf("; %d candidates met only in projects not opted in (raised here, not confirmed)", r.ConfirmationsKeptLocal)
	}
	if r.Withdrawn > 0 {
		s += fmt.Sprintf("; %d revoked lessons withdrawn", r.Withdrawn)
	}
	if r.InboxRejected > 0 {
		s += fmt.Sprintf("; %d inbox lines rejected (kept in %s)", r.InboxRejected, RejectsFile)
	}
	if r.InboxRejectsDropped > 0 {
		s += fmt.Sprintf("; %d older rejected lines dropped past the bound (counted in %s)", r.InboxRejectsDropped, RejectsDroppedFile)
	}
	if !r.Writers.Empty() {
		s += "; written by " + r.Writers.String()
	}
	if r.KeptLocal > 0 {
		s += " (only lessons of projects opted in with `remem share --project DIR` are published)"
	}
	return s
}

// lessonsFileEvery bounds how often records received from others rewrite
// lessons.jsonl.
const lessonsFileEvery = 5 * time.Second

// pending is an event waiting to be absorbed, with its content.
type pending struct {
	ev      store.StoredEvent
	content string
	at      time.Time
	// named is the hash of the lesson held that the event's "matches"
	// names (SPEC §2), "" when it names none.
	named string
}

// Sleep drains the inbox, runs the verify pass over received candidates,
// clusters the remaining events into own lessons, signs what may be shared
// into the outbox and writes lessons.jsonl.
func (m *Memory) Sleep(ctx context.Context) (SleepReport, error) {
	start := time.Now()
	ctx = m.withSleepSimilarity(m.withModel(ctx))
	var rep SleepReport
	in, err := m.DrainInbox()
	rep.InboxTaken, rep.InboxRejected, rep.InboxRejectsDropped = in.Taken, len(in.Rejected), in.RejectsDropped
	if err != nil {
		return rep, err
	}
	now := m.Now()
	if err := m.sleepLocked(ctx, now, &rep); err != nil {
		return rep, err
	}
	// lessons.jsonl is rewritten after this sleep changed lessons, after
	// received records changed them (at most every few seconds: a busy node
	// receives all the time), and at least hourly so that decayed strengths
	// and states show. A quiet sleep writes nothing.
	since := now.Sub(time.Unix(0, m.fileWritten.Load()))
	changed := m.changes.Load() != m.fileVersion.Load()
	if rep.Events+rep.Signed > 0 || (changed && since >= lessonsFileEvery) || since > time.Hour {
		v := m.changes.Load()
		if err := m.writeLessonsFile(ctx); err != nil {
			return rep, err
		}
		m.fileVersion.Store(v)
		m.fileWritten.Store(now.UnixNano())
	}
	m.mu.Lock()
	m.stats.LastSleep = now
	m.mu.Unlock()
	// Kept for `remem status` at rest; a busy node writes it once a minute.
	if saved := time.Unix(0, m.sleepSaved.Load()); rep.Events+rep.Signed > 0 || now.Sub(saved) > time.Minute {
		if err := m.store.SetMeta("last_sleep", now); err != nil {
			return rep, err
		}
		m.sleepSaved.Store(now.UnixNano())
	}
	rep.Took = time.Since(start)
	m.metrics.slept(rep)
	if rep.Events+rep.Signed > 0 {
		m.log.Info("slept", "events", rep.Events, "new", rep.NewLessons, "raised", rep.Raised, "confirmations", rep.Confirmations, "signed", rep.Signed)
	}
	return rep, nil
}

// sleepLocked is the part of sleep that changes lessons, under sleepMu.
func (m *Memory) sleepLocked(ctx context.Context, now time.Time, rep *SleepReport) error {
	m.sleepMu.Lock()
	defer m.sleepMu.Unlock()
	stored, err := m.store.PendingEvents()
	if err != nil {
		return err
	}
	rep.Events = len(stored)
	var out []*protocol.Record
	if len(stored) > 0 {
		events := make([]pending, len(stored))
		for i, ev := range stored {
			events[i] = pending{ev: ev, content: episodeOf(ev.Event).Content(), at: eventTime(ev)}
		}
		lessons, err := m.store.Lessons()
		if err != nil {
			return err
		}
		m.resolveNamed(events, lessons)
		// Verify pass (SPEC §7): confirm candidates that came true here.
		events, confirms, err := m.verifyPass(ctx, lessons, events, now, rep)
		if err != nil {
			return err
		}
		out = append(out, confirms...)
		// Consolidate the rest into own lessons, one lesson kind at a time.
		events, err = m.joinNamed(events, now, rep)
		if err != nil {
			return err
		}
		for _, family := range consolidate.Families {
			if err := m.consolidate(ctx, family, events, now, rep); err != nil {
				return err
			}
		}
		if err := m.saveWriterCounts(rep.Writers); err != nil {
			return err
		}
		m.changed()
	}

	if err := m.rewriteDrafts(ctx, writerFrom(ctx), now, rep); err != nil { // rewrite.go
		return err
	}
	// Sign what changed and may be shared (corroboration may have raised
	// own lessons since the last sleep even without events).
	signed, err := m.signDirty(now, rep)
	if err != nil {
		return err
	}
	out = append(out, signed...)
	// Stop sending what was published or confirmed here of lessons revoked
	// since: sign this memory's revocation of each (withdrawRevoked).
	withdrawn, err := m.withdrawRevoked(now)
	if err != nil {
		return err
	}
	rep.Withdrawn = len(withdrawn)
	out = append(out, withdrawn...)
	if len(out) > 0 {
		m.changed()
	}
	rep.Signed = len(out)
	return nil
}

// eventTime is when an event happened: its "at" (every entry refuses one
// more than protocol.MaxClockSkew ahead of the clock), or the time it
// arrived when it has none or gives a later one.
func eventTime(ev store.StoredEvent) time.Time {
	if t, err := protocol.ParseTime(ev.Event.At); err == nil && t.Before(ev.Received) {
		return t.UTC()
	}
	return ev.Received
}

// verifyPass confirms each candidate that an event newer than its arrival
// matches, unless an event older than its arrival matched it already. It
// returns the events it did not absorb and the confirmations signed.
func (m *Memory) verifyPass(ctx context.Context, lessons []store.Lesson, events []pending, now time.Time, rep *SleepReport) ([]pending, []*protocol.Record, error) {
	var out []*protocol.Record
	used := make([]bool, len(events))
	matches, err := m.candidateMatches(ctx, lessons, events)
	if err != nil {
		return nil, nil, err
	}
	share, err := m.ShareSettings()
	if err != nil {
		return nil, nil, err
	}
	for _, cand := range lessons {
		if cand.Own || cand.Confirmed {
			continue
		}
		held, err := m.store.ForHash(cand.Hash)
		if err != nil {
			return nil, nil, err
		}
		if !confirmable(m.Origin(), cand.Hash, held, now, m.cfg.Params.State, m.admitted()) {
			continue
		}
		var matched []int
		for _, i := range matches[cand.Hash] {
			if used[i] {
				continue
			}
			if events[i].at.Before(cand.Arrived) {
				if !cand.MetBefore {
					rep.MetBefore++
				}
				cand.MetBefore = true
				continue
			}
			matched = append(matched, i)
		}
		if cand.MetBefore || len(matched) == 0 {
			if cand.MetBefore {
				if err := m.store.PutLesson(cand); err != nil {
					return nil, nil, err
				}
			}
			continue
		}
		seqs := make([]uint64, 0, len(matched))
		shared := false
		for _, i := range matched {
			used[i] = true
			seqs = append(seqs, events[i].ev.Seq)
			cand.Episodes = appendEpisode(cand.Episodes, events[i].content)
			shared = shared || share.allowsDir(cand.Kind, events[i].ev.Event.Cwd)
		}
		cand.Seen += int64(len(matched))
		cand.Strength = protocol.Rise(cand.Strength)
		cand.Updated = now
		step := store.Step{Lesson: cand, Absorbed: seqs}
		if shared {
			rec, err := protocol.SignConfirmation(m.id, cand.Hash, now)
			if err != nil {
				return nil, nil, err
			}
			rep.Confirmations++
			step.Lesson.Confirmed = true
			step.Signed = []*protocol.Record{rec}
			out = append(out, rec)
		} else {
			// Met here, but only in projects not opted in for its kind: a
			// confirmation would publish that (SPEC §6 opt-in), so the
			// candidate rises here alone, and an event of an opted-in
			// project confirms it later.
			rep.ConfirmationsKeptLocal++
		}
		// The confirmation, the lesson marked confirmed and the events it
		// took land together, so a crash can neither lose nor double it.
		if err := m.store.Commit(step); err != nil {
			return nil, nil, err
		}
		m.recent.note([]store.Lesson{step.Lesson}, nil) // its episodes grew
	}
	rest := events[:0:0]
	for i, ev := range events {
		if !used[i] {
			rest = append(rest, ev)
		}
	}
	return rest, out, nil
}

// candidateMatches finds, for each candidate the verify pass may confirm,
// the events of its kind that say the same, as indices into events in
// increasing order: the events whose "matches" names it (the reporting
// agent's judgement, SPEC §2), and those whose average linkage to it
// reaches the confirmation threshold (Params.confirmThreshold: a
// confirmation makes a lesson count toward common, so a lexical match
// needs more than joining a cluster does; a judged pair scores 1). An
// event that names another lesson matches no candidate by similarity.
// consolidate.Matches does it with one index lookup per event, where
// comparing every candidate with every event made a sleep over tens of
// thousands of events in a busy team's memory take minutes. A similarity
// that fails (an embedding endpoint down) is logged and matches nothing, as
// a failed comparison always has.
func (m *Memory) candidateMatches(ctx context.Context, lessons []store.Lesson, events []pending) (map[string][]int, error) {
	byFamily := map[string][]int{}
	for i, ev := range events {
		if ev.named != "" {
			continue
		}
		f := consolidate.FamilyOf(protocol.LessonKindOf(ev.ev.Event.Kind))[0]
		byFamily[f] = append(byFamily[f], i)
	}
	out := map[string][]int{}
	for first, idx := range byFamily {
		family := consolidate.FamilyOf(first)
		var groups []consolidate.Group
		for _, l := range lessons {
			if !l.Own && !l.Confirmed && slices.Contains(family, l.Kind) {
				groups = append(groups, groupOf(l))
			}
		}
		if len(groups) == 0 {
			continue
		}
		texts := make([]string, len(idx))
		for j, i := range idx {
			texts[j] = events[i].content
		}
		found, err := consolidate.Matches(ctx, m.similarity(ctx), m.cfg.Params.confirmThreshold(), groups, texts)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			m.log.Warn("similarity failed", "err", err)
			continue
		}
		for gi, js := range found {
			for _, j := range js {
				out[groups[gi].ID] = append(out[groups[gi].ID], idx[j])
			}
		}
	}
	for i, ev := range events {
		if ev.named != "" {
			out[ev.named] = append(out[ev.named], i)
		}
	}
	for h := range out {
		slices.Sort(out[h])
	}
	return out, nil
}

// resolveNamed sets each event's named lesson from its "matches": the hash
// it names (a unique prefix, or the l-… id) when a lesson is held under it,
// own or received, of whatever kind (the agent judged it the same
// surprise). A name that fits no lesson, or several, is left out (logged):
// the event is then matched by similarity like any other.
func (m *Memory) resolveNamed(events []pending, lessons []store.Lesson) {
	held := make(map[string]bool, len(lessons))
	for _, l := range lessons {
		held[l.Hash] = true
	}
	for i := range events {
		ref := events[i].ev.Event.Matches
		if ref == "" {
			continue
		}
		h, err := m.ResolveHash(ref)
		if err == nil && !held[h] {
			err = fmt.Errorf("no lesson of this memory is held under %s", ref)
		}
		if err != nil {
			m.log.Info("an event's matches names no lesson here", "matches", ref, "err", err)
			continue
		}
		events[i].named = h
	}
}

// revokedHere reports whether hash is revoked by the records held, or
// withdrawn by this memory: its own revocation is not older than its own
// latest lesson record of it (SPEC §8 counts a revocation from then on).
func (m *Memory) revokedHere(hash string, now time.Time) (bool, error) {
	held, err := m.store.ForHash(hash)
	if err != nil {
		return false, err
	}
	recs := make([]*protocol.Record, len(held))
	var published, withdrawn time.Time
	for i, h := range held {
		r := h.Record
		recs[i] = r
		if r.Origin != m.Origin() {
			continue
		}
		switch r.Type {
		case protocol.TypeLesson:
			published = maxTime(published, r.Time)
		case protocol.TypeRevocation:
			withdrawn = maxTime(withdrawn, r.Time)
		}
	}
	if !withdrawn.IsZero() && !withdrawn.Before(published) {
		return true, nil
	}
	return m.state(hash, recs, now).State == protocol.StateRevoked, nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// confirmable: the lesson is not revoked and this memory never published it.
func confirmable(self, hash string, held []store.Held, now time.Time, p protocol.StateParams, admit protocol.Admitted) bool {
	recs := make([]*protocol.Record, 0, len(held))
	for _, h := range held {
		if h.Record.Type == protocol.TypeLesson && h.Record.Origin == self {
			return false
		}
		recs = append(recs, h.Record)
	}
	return protocol.ComputeState(hash, recs, now, p, admit).State != protocol.StateRevoked
}

// kindOf is the kind of the lesson written from the events idx of family:
// its first kind one of them maps to (consolidate.Families).
func kindOf(family []string, events []pending, idx []int) string {
	for _, k := range family {
		for _, i := range idx {
			if protocol.LessonKindOf(events[i].ev.Event.Kind) == k {
				return k
			}
		}
	}
	return family[0]
}

// joinNamed lets each event whose "matches" names an own lesson join it,
// of whatever kind, as the agent judged (SPEC §2); it returns the others.
func (m *Memory) joinNamed(events []pending, now time.Time, rep *SleepReport) ([]pending, error) {
	named := map[string][]pending{}
	rest := events[:0:0]
	for _, ev := range events {
		if ev.named != "" {
			named[ev.named] = append(named[ev.named], ev)
		} else {
			rest = append(rest, ev)
		}
	}
	for _, hash := range slices.Sorted(maps.Keys(named)) {
		l, ok, err := m.store.GetLesson(hash)
		if err != nil {
			return nil, err
		}
		if !ok || !l.Own {
			// A candidate the verify pass did not take (met before, or
			// revoked): compared by meaning like any event.
			rest = append(rest, named[hash]...)
			continue
		}
		evs := named[hash]
		if _, err := m.absorb(l, evs, indices(len(evs)), now); err != nil {
			return nil, err
		}
		rep.Raised++
	}
	return rest, nil
}

// consolidate clusters the pending events of one family of lesson kinds:
// events that join an own lesson raise it; the rest become new lessons.
func (m *Memory) consolidate(ctx context.Context, family []string, all []pending, now time.Time, rep *SleepReport) error {
	var events []pending
	for _, ev := range all {
		if slices.Contains(family, protocol.LessonKindOf(ev.ev.Event.Kind)) {
			events = append(events, ev)
		}
	}
	if len(events) == 0 {
		return nil
	}
	lessons, err := m.store.Lessons()
	if err != nil {
		return err
	}
	var groups []consolidate.Group
	byHash := map[string]store.Lesson{}
	for _, l := range lessons {
		if l.Own && slices.Contains(family, l.Kind) {
			groups = append(groups, groupOf(l))
			byHash[l.Hash] = l
		}
	}
	episodes := make([]consolidate.Episode, len(events))
	for i, ev := range events {
		episodes[i] = episodeOf(ev.ev.Event)
	}
	stage := family[0]
	asg, err := consolidate.Assign(progress.Named(ctx, stage), m.similarity(ctx), m.cfg.Params.Threshold, groups, episodes)
	if err != nil {
		return fmt.Errorf("clustering events: %w", err)
	}
	share, err := m.ShareSettings()
	if err != nil {
		return err
	}
	joined := map[string][]int{}
	for i, hash := range asg.Joined {
		joined[hash] = append(joined[hash], i)
	}
	for hash, idx := range joined {
		slices.Sort(idx)
		if _, err := m.absorb(byHash[hash], events, idx, now); err != nil {
			return err
		}
		rep.Raised++
	}
	for k, cluster := range asg.NewClusters {
		progress.Report(ctx, "writing "+stage, k, len(asg.NewClusters))
		// Ctrl-C stops between lessons: each lesson and the events it took
		// land in one commit, and the rest stay pending for the next sleep.
		if err := ctx.Err(); err != nil {
			return err
		}
		kind := kindOf(family, events, cluster)
		c := consolidate.Cluster{Kind: kind}
		for _, i := range cluster {
			c.Episodes = append(c.Episodes, episodes[i])
		}
		text, by, draft, err := m.writeLesson(ctx, c, &rep.Writers)
		if err != nil {
			rep.Dropped = append(rep.Dropped, err.Error())
			m.log.Warn("cluster dropped", "err", err)
			continue
		}
		hash := protocol.LessonHash(kind, text)
		existing, ok, err := m.store.GetLesson(hash)
		if err != nil {
			return err
		}
		if !ok {
			existing = store.Lesson{Hash: hash, ID: lessonID(hash), Kind: kind, Text: text, Own: true, Layer: store.LayerPersonal, Draft: draft,
				WrittenFrom: projectsOf(events, cluster)}
			rep.NewLessons++
			rep.Writers.count(&rep.Writers.Written, by)
		} else {
			if from := projectsOf(events, cluster); (!existing.Own && len(existing.WrittenFrom) == 0) ||
				(share.Allows(kind, from) && !share.Allows(kind, writtenFrom(existing))) {
				// A received candidate this memory's events wrote word for
				// word, or a lesson kept local for another project's events
				// that opted-in events alone wrote again: now written from
				// these.
				existing.WrittenFrom = from
			}
			existing.Own = true // this memory met it too: now it is its own as well
			rep.Raised++
		}
		if _, err := m.absorb(existing, events, cluster, now); err != nil {
			return err
		}
	}
	progress.Report(ctx, "writing "+stage, len(asg.NewClusters), len(asg.NewClusters))
	return nil
}

// indices are 0, 1, …, n-1.
func indices(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// projectsOf are the cwds of events[idx], "" for an event without one.
func projectsOf(events []pending, idx []int) []string {
	out := make([]string, 0, len(idx))
	for _, i := range idx {
		if cwd := events[i].ev.Event.Cwd; !slices.Contains(out, cwd) {
			out = append(out, cwd)
		}
	}
	return out
}

// absorb folds events into a lesson: seen and strength rise, the episodes and
// projects are remembered, and the lesson is marked for signing. It returns
// the lesson as stored.
func (m *Memory) absorb(l store.Lesson, events []pending, idx []int, now time.Time) (store.Lesson, error) {
	seqs := make([]uint64, 0, len(idx))
	for _, i := range idx {
		ev := events[i]
		seqs = append(seqs, ev.ev.Seq)
		l.Episodes = appendEpisode(l.Episodes, ev.content)
		if ev.ev.Event.Cwd != "" && !slices.Contains(l.Projects, ev.ev.Event.Cwd) {
			l.Projects = append(l.Projects, ev.ev.Event.Cwd)
		}
	}
	if l.Seen == 0 && l.Strength == 0 {
		l.Seen = int64(len(idx))
		l.Strength = protocol.InitialStrength(l.Seen)
	} else {
		l.Seen += int64(len(idx))
		l.Strength = protocol.Rise(l.Strength)
	}
	l.Updated = now
	l.Dirty = true
	// The lesson and the events it took land together; signing it is left
	// to signDirty, which a later sleep repeats if this one is cut short.
	return l, m.store.Commit(store.Step{Lesson: l, Absorbed: seqs})
}

// appendEpisode adds text to a lesson's episodes, dropping the oldest at
// the store's cap.
func appendEpisode(eps []string, text string) []string {
	if len(eps) >= store.MaxEpisodes {
		eps = eps[1:]
	}
	return append(eps, text)
}

// maxProposals bounds the agents' sentences tried for one cluster.
const maxProposals = 3

// writeLesson asks the writer for one sentence and holds it to the rules of
// SPEC §6; when a configured writer's sentence fails them the default writer
// is tried before the cluster is dropped. A writer carried by ctx
// (WithWriter) takes the configured one's place. by names the writer that
// wrote it; counts get the refusals and failures. draft is why the
// sentence is a draft (its redaction left a placeholder that does not read
// as words, textcheck.Redaction, or it reads like pasted tool output,
// protocol.Pasted), "" when it may be shared; a later writer is tried for
// a sentence that is no draft before a draft is taken.
func (m *Memory) writeLesson(ctx context.Context, c consolidate.Cluster, counts *WriterCounts) (text, by, draft string, err error) {
	first := m.write
	if w := writerFrom(ctx); w != nil {
		first = w
	}
	var writers []consolidate.Writer
	for _, p := range c.Proposals(maxProposals) {
		writers = append(writers, p)
	}
	writers = append(writers, first)
	if _, isDefault := first.(*consolidate.DefaultWriter); !isDefault {
		writers = append(writers, &consolidate.DefaultWriter{Redact: protocol.RedactRawData})
	}
	var errs []error
	var firstDraft struct{ text, by, why string }
	for _, w := range writers {
		name := consolidate.WriterName(w)
		text, err := w.Write(ctx, c)
		if err != nil {
			if isBudget(err) {
				counts.count(&counts.Skipped, name)
			} else {
				counts.count(&counts.Failed, name)
				if name != "default" {
					m.log.Warn("a writer gave no sentence", "writer", name, "err", err)
				}
			}
			errs = append(errs, err)
			continue
		}
		dw, isDefault := w.(*consolidate.DefaultWriter)
		text, draft, err = vetSentence(text, isDefault, c)
		if err == nil && isDefault {
			text, draft = withUntold(dw, c, text, draft)
		}
		if err != nil {
			counts.count(&counts.Refused, name)
			if name != "default" {
				m.log.Warn("a writer's sentence was refused", "writer", name, "err", err)
			}
			errs = append(errs, fmt.Errorf("a %s writer's sentence %q: %w", name, text, err))
			continue
		}
		if draft != "" {
			if firstDraft.text == "" {
				firstDraft.text, firstDraft.by, firstDraft.why = text, name, draft
			}
			continue
		}
		return text, name, "", nil
	}
	if firstDraft.text != "" {
		return firstDraft.text, firstDraft.by, firstDraft.why, nil
	}
	if ctx.Err() != nil {
		return "", "", "", ctx.Err()
	}
	if text, ok := fallbackDraft(&consolidate.DefaultWriter{Redact: protocol.RedactRawData}, c); ok {
		m.log.Info("no writer's sentence passed the checks; the cluster's facts are kept as a draft", "kind", c.Kind, "events", len(c.Episodes))
		return text, "default", unwordedDraft, nil
	}
	return "", "", "", fmt.Errorf("no lesson written for a %s cluster of %d events: %w", c.Kind, len(c.Episodes), errors.Join(errs...))
}

// vetSentence holds a writer's sentence to SPEC §6 and §3: it returns the
// sentence as it may be kept (redacted), why it is a draft ("" when it may
// be shared: its redaction left a placeholder that does not read as words,
// or it reads like pasted tool output, protocol.Pasted), or why it is
// refused. A writer that wrote raw data into its
// sentence is refused like one that wrote an order: redacted, it would be a
// sentence nobody wrote. The default writer (byDefault), which redacts the
// events before it writes, is redacted instead, and a placeholder it
// glued in makes a draft, as the events' own redaction says.
func vetSentence(text string, byDefault bool, c consolidate.Cluster) (string, string, error) {
	if found := protocol.FindRawData(text); !byDefault && len(found) > 0 {
		return text, "", fmt.Errorf("it holds raw data (%s)", found[0].Kind)
	}
	red := protocol.RedactRawDataReport(text)
	text = red.Text
	if byDefault && !red.Draft {
		if why := episodesDraft(c); why != "" {
			red.Draft, red.Reason = true, why
		}
	}
	if err := protocol.CheckLessonText(text); err != nil {
		return text, "", err
	}
	if red.Draft {
		return text, red.Reason, nil
	}
	if why := protocol.Pasted(text); why != "" {
		// Tool output in place of a sentence (SPEC §3, written, not
		// pasted), from whichever writer: a draft.
		return text, "reads like pasted output: " + why, nil
	}
	if why := protocol.CutOut(text); byDefault && why != "" {
		// The default writer cut a piece of output that lost its context:
		// it could not say it in its own words (SPEC §3), a draft.
		return text, "cut from output: " + why, nil
	}
	return text, "", nil
}

// episodesDraft returns why redacting the cluster's events would make a
// draft of a lesson written from them (SPEC §3), or "". A field is read
// as the default writer reads it (Episode.Written): the lines of tool
// output and the flags it leaves out cannot put a placeholder into its
// sentence.
func episodesDraft(c consolidate.Cluster) string {
	for _, e := range c.Episodes {
		for _, f := range e.Written() {
			if f == "" {
				continue
			}
			if red := protocol.RedactRawDataReport(f); red.Draft {
				return red.Reason
			}
		}
	}
	return ""
}

// signDirty signs the own lessons that changed and may be shared; the
// records are in the outbox when it returns.
//
// A lesson may be shared while one of the projects it came from is opted
// in for its kind (ShareSettings.Allows), whether or not it was published
// before: after `remem share --project DIR --off`, its lessons are signed
// no more. Their records already out stay as they are (nothing is revoked
// behind the person's back; `remem revoke` withdraws one), and such a
// lesson stays dirty, so that if its project is opted in again the next
// sleep signs it as it then is. A lesson published by hand (`remem
// publish`) that came from no project keeps being signed.
func (m *Memory) signDirty(now time.Time, rep *SleepReport) ([]*protocol.Record, error) {
	lessons, err := m.store.OwnLessons()
	if err != nil {
		return nil, err
	}
	dirty := slices.IndexFunc(lessons, func(l store.Lesson) bool { return l.Dirty }) >= 0
	if !dirty {
		return nil, nil
	}
	share, err := m.ShareSettings()
	if err != nil {
		return nil, err
	}
	var out []*protocol.Record
	var steps []store.Step
	for _, l := range lessons {
		if !l.Dirty {
			continue
		}
		revoked, err := m.revokedHere(l.Hash, now)
		if err != nil {
			return nil, err
		}
		if revoked {
			// A lesson this memory withdrew (or a quorum revoked) is never
			// signed again by a sleep, though another origin still
			// publishes it: a newer lesson record would outrank the
			// revocation and bring the lesson back at every holder that
			// lacks the other origin's record. Only `remem publish` of it,
			// a person's choice, does that.
			l.Dirty = false
			steps = append(steps, store.Step{Lesson: l})
			continue
		}
		if l.Draft != "" {
			// A draft is never signed (SPEC §3): it stays local until a
			// writer has written it as a sentence that passes.
			rep.KeptLocal++
			l.Dirty = false
			steps = append(steps, store.Step{Lesson: l})
			continue
		}
		if from := writtenFrom(l); !share.Allows(l.Kind, from) && !(l.Published && len(from) == 0) {
			rep.KeptLocal++
			if !l.Published {
				// Never out: it is signed when a new event raises it
				// after its project is opted in.
				l.Dirty = false
				steps = append(steps, store.Step{Lesson: l})
			}
			continue
		}
		l.Dirty = false
		step := store.Step{Lesson: l}
		rec, err := protocol.SignLesson(m.id, protocol.LessonDraft{Kind: l.Kind, Text: l.Text, Seen: l.Seen,
			Strength: l.Strength, Updated: now, ID: l.ID})
		if err != nil {
			// Raw data or an instruction: the lesson stays local, never signed.
			rep.KeptLocal++
			m.log.Warn("lesson kept local", "hash", l.Hash, "err", err)
		} else {
			out = append(out, rec)
			step.Lesson.Published = true
			step.Signed = []*protocol.Record{rec}
		}
		steps = append(steps, step)
	}
	// Every lesson marked published lands with its record, in one change.
	if err := m.store.Commit(steps...); err != nil {
		return nil, err
	}
	return out, nil
}
