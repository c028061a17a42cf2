package node

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// LessonView is one lesson as a person or an agent reads it.
type LessonView struct {
	Hash        string         `json:"hash"`
	ID          string         `json:"id,omitempty"`
	Kind        string         `json:"kind"`
	Text        string         `json:"text"`
	State       protocol.State `json:"state"`
	StateReason string         `json:"state_reason"`
	Strength    float64        `json:"strength"`
	// StrengthReason says why the strength is what it is, so that the
	// author's 0.75 and a receiver's 0.50 of one lesson are not a puzzle:
	// a short phrase (StrengthWhy), a colon, then the rule.
	StrengthReason string   `json:"strength_reason"`
	Seen           int64    `json:"seen"`
	Own            bool     `json:"own"`
	Published      bool     `json:"published"`
	Author         string   `json:"author,omitempty"`
	Origins        []string `json:"origins"`
	Confirmers     []string `json:"confirmers"`
	// Verifiers are the memories other than the author that vouch for it
	// (published the same lesson or confirmed it: its confirmations);
	// Admitted are those this memory admits (SPEC §8): only they count
	// toward N. Support says it in words: "3 confirmations, none admitted".
	Verifiers []string `json:"verifiers"`
	Admitted  []string `json:"admitted"`
	Support   string   `json:"support"`
	// Vouched: this memory wrote it, an admitted origin published or
	// confirmed it, or a layer file the person configured holds it. Agents
	// get vouched lessons before strangers' candidates, whatever those
	// say (recall, context), so free keys cannot crowd them out.
	Vouched bool      `json:"vouched"`
	Layers  []string  `json:"layers"`
	Scopes  []string  `json:"scopes,omitempty"`
	Updated time.Time `json:"updated"`
	Score   float64   `json:"score,omitempty"` // relevance, for recall
	// Draft says why an own lesson is a draft (SPEC §3): kept and used
	// here, never signed until it is written as a sentence.
	Draft string `json:"draft,omitempty"`
}

// Filter narrows the lesson view.
type Filter struct {
	State  protocol.State // "" = the active view (no removed, no revoked)
	All    bool           // every state, inactive ones included
	Layers []Layer        // lessons.jsonl a reader adds (--layer), above the configured layers
	// Limit keeps the first Limit lessons (0: every one). With a limit the
	// active view and a state filter of an active state read the view
	// index, not every candidate held (indexedLessons).
	Limit int
}

// Lessons lists the lessons held with their computed state, those vouched
// for (LessonView.Vouched) first, then strongest first, with the configured layers and f.Layers composed over them
// (SPEC §9).
func (m *Memory) Lessons(f Filter) ([]LessonView, error) {
	if m.indexable(f) {
		return m.indexedLessons(f)
	}
	views, err := m.allLessons(f)
	return f.cut(views), err
}

// allLessons is the lesson view of f computed from every lesson held.
func (m *Memory) allLessons(f Filter) ([]LessonView, error) {
	lessons, err := m.store.Lessons()
	if err != nil {
		return nil, err
	}
	now := m.Now()
	held := make([]LessonView, 0, len(lessons))
	for _, l := range lessons {
		v, err := m.view(l, now)
		if err != nil {
			return nil, err
		}
		held = append(held, *v)
	}
	layers := append(m.layers.current(), f.Layers...)
	if len(layers) == 0 {
		return f.apply(held), nil
	}
	// Hashes held as records only are few: the store is asked about a
	// layer's hash only when some record of it is held.
	var recorded map[string]bool
	views, err := ComposeLayers(held, layers, func(hash string) (LessonView, bool, error) {
		if recorded == nil {
			hashes, err := m.store.Hashes()
			if err != nil {
				return LessonView{}, false, err
			}
			recorded = make(map[string]bool, len(hashes))
			for _, h := range hashes {
				recorded[h] = true
			}
		}
		if !recorded[hash] {
			return LessonView{}, false, nil
		}
		return m.recordsView(hash, now)
	})
	if err != nil {
		return nil, err
	}
	return f.apply(views), nil
}

// apply keeps the views f selects, in view order (before).
func (f Filter) apply(views []LessonView) []LessonView {
	res := make([]LessonView, 0, len(views))
	for _, v := range views {
		if f.keep(v) {
			res = append(res, v)
		}
	}
	sort.SliceStable(res, func(i, j int) bool { return before(res[i], res[j]) })
	return res
}

// keep says whether f selects v.
func (f Filter) keep(v LessonView) bool {
	switch {
	case f.All:
	case f.State != "":
		return v.State == f.State
	case !v.State.Active():
		return false
	case protocol.CheckAgentText(v.Text) != nil:
		// The active view is what agents read: a text held from before
		// the checks grew stricter stays out of it (--all shows it).
		return false
	}
	return true
}

// before is the order of the lesson view: what is vouched for first, then
// strongest, then by hash.
func before(a, b LessonView) bool {
	if a.Vouched != b.Vouched {
		return a.Vouched // strangers' candidates after what is vouched for
	}
	if a.Strength != b.Strength {
		return a.Strength > b.Strength
	}
	return a.Hash < b.Hash
}

// cut keeps the first f.Limit views (all when Limit is 0).
func (f Filter) cut(views []LessonView) []LessonView {
	if f.Limit > 0 && len(views) > f.Limit {
		return views[:f.Limit]
	}
	return views
}

// recordsView is the view of a hash held as records only, with no lesson
// (a revocation may arrive without the lesson it withdraws); held is false
// when no record of it is held either.
func (m *Memory) recordsView(hash string, now time.Time) (LessonView, bool, error) {
	held, err := m.store.ForHash(hash)
	if err != nil || len(held) == 0 {
		return LessonView{}, false, err
	}
	v, err := m.view(lessonOfRecords(hash, held), now)
	if err != nil {
		return LessonView{}, false, err
	}
	return *v, true, nil
}

// lessonOfRecords stands for the lesson of a hash held as records only:
// its kind and text from a lesson record, if one is held.
func lessonOfRecords(hash string, held []store.Held) store.Lesson {
	l := store.Lesson{Hash: hash}
	for _, h := range held {
		if h.Record.Type == protocol.TypeLesson {
			l.Kind, l.Text = h.Record.Kind, h.Record.Text
		}
	}
	return l
}

// view computes one lesson's state and provenance from the records held.
func (m *Memory) view(l store.Lesson, now time.Time) (*LessonView, error) {
	if countView != nil {
		countView()
	}
	held, err := m.store.ForHash(l.Hash)
	if err != nil {
		return nil, err
	}
	recs := make([]*protocol.Record, 0, len(held))
	var scopes []string
	for _, h := range held {
		recs = append(recs, h.Record)
		scopes = append(scopes, h.Scopes...)
	}
	st := m.state(l.Hash, recs, now)
	if len(recs) == 0 {
		st.State, st.Reason = protocol.StateCandidate, "local only: not published"
	}
	layers := []string{l.Layer}
	if l.Own {
		layers = append(layers, store.LayerPersonal)
	}
	for _, s := range append(scopes, l.Scopes...) {
		layers = append(layers, layerOf(s))
	}
	origins := st.Publishers
	if st.Author != "" && !slices.Contains(origins, st.Author) {
		origins = append([]string{st.Author}, origins...)
	}
	if origins == nil {
		origins = []string{}
	}
	confirmers := st.Confirmers
	if confirmers == nil {
		confirmers = []string{}
	}
	shown := protocol.ShownStrength(l.Strength, l.Updated, st, now, m.cfg.Params.State.W)
	verifiers, admitted := nonNilStrings(st.Verifiers), nonNilStrings(st.Admitted)
	reason := st.Reason
	if st.State == protocol.StateCandidate && len(verifiers) > 0 {
		// Why it is a candidate, in the words every view uses.
		reason = fmt.Sprintf("%s; %d admitted needed (%s)", Support(len(verifiers), len(admitted)), m.cfg.Params.State.N, st.Reason)
	}
	admit := m.admitted()
	vouched := l.Own || len(admitted) > 0 || slices.ContainsFunc(origins, admit.Admits)
	return &LessonView{
		Verifiers: verifiers, Admitted: admitted, Support: Support(len(verifiers), len(admitted)), Vouched: vouched,
		Hash: l.Hash, ID: idOf(l), Kind: l.Kind, Text: l.Text, State: st.State, StateReason: reason,
		Strength: shown, StrengthReason: strengthReason(l, st.State, shown, m.cfg.Params.State.W),
		Seen: l.Seen, Own: l.Own, Published: l.Published, Author: st.Author, Origins: origins,
		Confirmers: confirmers, Layers: uniqSorted(layers), Scopes: uniqSorted(append(scopes, l.Scopes...)), Updated: l.Updated,
		Draft: l.Draft,
	}, nil
}

// strengthReason explains the strength shown for l (SPEC §7): where it
// started (an own lesson at 1 − 0.5^seen, a received one at 0.5), what
// raised it, and whether it decays.
func strengthReason(l store.Lesson, state protocol.State, shown float64, w time.Duration) string {
	if !state.Active() {
		return fmt.Sprintf("%s: a lesson out of the active view shows 0", state)
	}
	var why, rule string
	raisedBy := len(l.Corroborators) // for a received lesson, the origin that brought it is first
	switch {
	case l.Own:
		why = fmt.Sprintf("own, seen %d", l.Seen)
		rule = fmt.Sprintf("an own lesson starts at 1 − 0.5^seen (%.2f for %d surprises of this memory) and rises with each new one", protocol.InitialStrength(l.Seen), l.Seen)
	case l.Confirmed:
		why, raisedBy = "received, confirmed here", raisedBy-1
		rule = "a received lesson starts at 0.50 and rose when this memory's own events matched it (its confirmation)"
	default:
		why, raisedBy = "received, not confirmed here", raisedBy-1
		rule = "a received lesson starts at 0.50 and rises only when this memory's own events match it; its author's strength counts its own surprises"
	}
	if raisedBy > 0 {
		rule += fmt.Sprintf("; raised by %d other memories' lessons or confirmations", raisedBy)
	}
	if shown < l.Strength-0.005 {
		rule += fmt.Sprintf("; decaying from %.2f: with no rise it halves every %s", l.Strength, halfWindow(w))
	}
	return why + ": " + rule
}

// halfWindow is W/2 in days when it is at least a day (the default W is
// 90 days), else as a duration (the testnet's short windows).
func halfWindow(w time.Duration) string {
	if w >= 48*time.Hour {
		return fmt.Sprintf("%g days", (w/2).Hours()/24)
	}
	return (w / 2).String()
}

// Support counts a lesson's confirmations (its verifiers) and the admitted
// ones among them, as every view says it: "3 confirmations, 1 admitted",
// "3 confirmations, none admitted", "0 confirmations".
func Support(verifiers, admitted int) string {
	unit := "confirmations"
	if verifiers == 1 {
		unit = "confirmation"
	}
	switch {
	case verifiers == 0:
		return "0 confirmations"
	case admitted == 0:
		return fmt.Sprintf("%d %s, none admitted", verifiers, unit)
	}
	return fmt.Sprintf("%d %s, %d admitted", verifiers, unit, admitted)
}

// AgentSupport is Support framed for an agent: support from memories this
// one does not admit is said to be that, never common knowledge.
func (v LessonView) AgentSupport() string {
	n, m := len(v.Verifiers), len(v.Admitted)
	s := Support(n, m)
	switch {
	case n == 0 || m == n:
		return s
	case m == 0:
		return s + ": none from memories this one admits"
	}
	return fmt.Sprintf("%s: %d from memories this one does not admit", s, n-m)
}

func nonNilStrings(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// StrengthWhy is the short phrase of StrengthReason, for a table column.
func (v LessonView) StrengthWhy() string {
	why, _, _ := strings.Cut(v.StrengthReason, ":")
	return why
}

func uniqSorted(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// RecordView is one record held for a lesson, with where and when it came.
type RecordView struct {
	Type    string    `json:"type"`
	Origin  string    `json:"origin"`
	Time    time.Time `json:"time"`
	Arrived time.Time `json:"arrived"`
	Scopes  []string  `json:"scopes"`
	Reason  string    `json:"reason,omitempty"`
	Line    string    `json:"line"`
	// Unknown holds the members no record type defines, as raw JSON: for
	// people only, shown escaped; never given to an agent.
	Unknown map[string]string `json:"unknown_members,omitempty"`
}

// Provenance is everything held about one lesson.
type Provenance struct {
	LessonView
	Records []RecordView `json:"records"`
	// Admission says of each verifier whether this memory admits it, and
	// why (Memory.Admits).
	Admission []VerifierAdmission `json:"admission"`
	Revokers  []string            `json:"revokers,omitempty"`
	MetBefore bool                `json:"met_before"`
	Confirmed bool                `json:"confirmed_here"`
	Projects  []string            `json:"projects,omitempty"`
	Episodes  int                 `json:"episodes"`
	History   []StateStep         `json:"history"`
}

// VerifierAdmission is one verifier of a lesson and why it counts or not.
type VerifierAdmission struct {
	Origin   string `json:"origin"`
	Admitted bool   `json:"admitted"`
	Why      string `json:"why"`
}

// AdmissionText says a verifier's admission for a line: "admitted: in the
// trust list", or NotAdmitted's sentence.
func AdmissionText(admitted bool, why string) string {
	if admitted {
		return "admitted: " + why
	}
	return why
}

// StateStep is one change of a lesson's computed state.
type StateStep struct {
	At     time.Time      `json:"at"`
	State  protocol.State `json:"state"`
	Reason string         `json:"reason"`
}

// stateHistory replays the state function at every record's time and at
// now, keeping the steps where the state changed.
func stateHistory(hash string, recs []*protocol.Record, now time.Time, p protocol.StateParams, admit protocol.Admitted) []StateStep {
	sorted := slices.Clone(recs)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Time.Before(sorted[j].Time) })
	var out []StateStep
	add := func(at time.Time, held []*protocol.Record) {
		st := protocol.ComputeState(hash, held, at, p, admit)
		if len(out) == 0 || out[len(out)-1].State != st.State {
			out = append(out, StateStep{At: at, State: st.State, Reason: st.Reason})
		}
	}
	for i, r := range sorted {
		if i+1 < len(sorted) && sorted[i+1].Time.Equal(r.Time) {
			continue
		}
		add(r.Time, sorted[:i+1])
		// Time alone moves a common lesson to fading and removed.
		if i+1 < len(sorted) {
			next := sorted[i+1].Time
			for _, edge := range []time.Duration{p.W, 2 * p.W} {
				st := protocol.ComputeState(hash, sorted[:i+1], r.Time, p, admit)
				if t := st.Last.Add(edge + time.Second); !st.Last.IsZero() && t.Before(next) && t.Before(now) {
					add(t, sorted[:i+1])
				}
			}
		}
	}
	if len(sorted) > 0 {
		add(now, sorted)
	}
	if out == nil {
		out = []StateStep{}
	}
	return out
}

// ErrUnknownLesson says no lesson or record is held for a hash.
var ErrUnknownLesson = fmt.Errorf("no lesson with that hash is held here")

// Show returns one lesson with every record held for it; ref is resolved
// by ResolveHash.
func (m *Memory) Show(ref string) (Provenance, error) {
	var p Provenance
	hash, err := m.ResolveHash(ref)
	if err != nil {
		return p, err
	}
	l, ok, err := m.store.GetLesson(hash)
	if err != nil {
		return p, err
	}
	held, err := m.store.ForHash(hash)
	if err != nil {
		return p, err
	}
	layers := layersOf(m.layers.current(), hash)
	if !ok && len(held) == 0 {
		// A lesson only the configured layers hold: no record, no
		// provenance.
		views, _ := ComposeLayers(nil, layers, nil)
		for _, v := range views {
			if v.Hash == hash {
				return Provenance{LessonView: v, Records: []RecordView{}, Admission: []VerifierAdmission{}, History: []StateStep{}}, nil
			}
		}
		return p, fmt.Errorf("%w: %s (`remem lessons --all` lists the hashes)", ErrUnknownLesson, hash)
	}
	if !ok {
		l = lessonOfRecords(hash, held)
	}
	now := m.Now()
	v, err := m.view(l, now)
	if err != nil {
		return p, err
	}
	// The configured layers' instances of the hash, as the lesson view
	// shows them: v comes first in what ComposeLayers returns.
	composed, _ := ComposeLayers([]LessonView{*v}, layers, nil)
	v = &composed[0]
	recs := make([]*protocol.Record, 0, len(held))
	for _, h := range held {
		recs = append(recs, h.Record)
		p.Records = append(p.Records, RecordView{Type: h.Record.Type.String(), Origin: h.Record.Origin, Time: h.Record.Time,
			Arrived: h.Arrived, Scopes: h.Scopes, Reason: h.Record.Reason, Line: string(h.Record.Raw),
			Unknown: protocol.UnknownMembers(h.Record.Raw)})
	}
	st := m.state(hash, recs, now)
	p.LessonView = *v
	p.Revokers = st.Revokers
	p.Admission = make([]VerifierAdmission, 0, len(st.Verifiers))
	for _, o := range st.Verifiers {
		ok, why := m.Admits(o)
		p.Admission = append(p.Admission, VerifierAdmission{Origin: o, Admitted: ok, Why: why})
	}
	p.MetBefore, p.Confirmed, p.Projects, p.Episodes = l.MetBefore, l.Confirmed, l.Projects, len(l.Episodes)
	p.History = stateHistory(hash, recs, now, m.cfg.Params.State, m.admitted())
	sort.Slice(p.Records, func(i, j int) bool { return p.Records[i].Arrived.Before(p.Records[j].Arrived) })
	return p, nil
}

// Recall returns the active lessons most relevant to a task description,
// strongest first among equals, with the configured layers and layers
// composed over the lessons held.
func (m *Memory) Recall(ctx context.Context, query string, limit int, layers ...Layer) ([]LessonView, error) {
	if m.indexable(Filter{Limit: limit}) {
		return m.indexedRecall(ctx, query, limit, layers)
	}
	return m.fullRecall(ctx, query, limit, layers)
}

// fullRecall is Recall computed over every lesson held.
func (m *Memory) fullRecall(ctx context.Context, query string, limit int, layers []Layer) ([]LessonView, error) {
	views, err := m.Lessons(Filter{Layers: layers})
	if err != nil {
		return nil, err
	}
	lessons, err := m.store.Lessons()
	if err != nil {
		return nil, err
	}
	groups := map[string]store.Lesson{}
	for _, l := range lessons {
		groups[l.Hash] = l
	}
	var out []LessonView
	for _, v := range views {
		if out, err = m.scoreInto(ctx, out, query, v, groups[v.Hash]); err != nil {
			return nil, err
		}
	}
	return rankRecall(out, limit), nil
}

// scoreInto appends v, of lesson l, to out with its relevance to query,
// when it has some.
func (m *Memory) scoreInto(ctx context.Context, out []LessonView, query string, v LessonView, l store.Lesson) ([]LessonView, error) {
	score, err := m.sim.Similarity(ctx, query, v.Text+" "+joinEpisodes(l.Episodes))
	if err != nil || score <= 0 {
		return out, err
	}
	v.Score = score
	return append(out, v), nil
}

// rankRecall orders scored lessons for recall and keeps the first limit
// (limit <= 0: all).
func rankRecall(out []LessonView, limit int) []LessonView {
	sort.SliceStable(out, func(i, j int) bool {
		// Vouched lessons first (LessonView.Vouched).
		if out[i].Vouched != out[j].Vouched {
			return out[i].Vouched
		}
		// Rounded relevance first, so near-equal scores fall back to strength.
		a, b := float64(int(out[i].Score*20)), float64(int(out[j].Score*20))
		if a != b {
			return a > b
		}
		return out[i].Strength > out[j].Strength
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

func joinEpisodes(eps []string) string {
	var b bytes.Buffer
	for i, e := range eps {
		if i >= 5 {
			break
		}
		b.WriteString(e)
		b.WriteByte(' ')
	}
	return b.String()
}
