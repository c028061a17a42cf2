package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"syscall"
	"time"

	"github.com/remem/remem/internal/atomicfile"
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
	Seen        int64          `json:"seen"`
	Own         bool           `json:"own"`
	Published   bool           `json:"published"`
	Author      string         `json:"author,omitempty"`
	Origins     []string       `json:"origins"`
	Confirmers  []string       `json:"confirmers"`
	Layers      []string       `json:"layers"`
	Scopes      []string       `json:"scopes,omitempty"`
	Updated     time.Time      `json:"updated"`
	Score       float64        `json:"score,omitempty"` // relevance, for recall
}

// Filter narrows the lesson view.
type Filter struct {
	State  protocol.State // "" = the active view (no removed, no revoked)
	All    bool           // every state, inactive ones included
	Layers []Layer        // lessons.jsonl files added as domain layers
}

// Layer is a lessons.jsonl added as an extra layer: its name and its
// content. A layer carries the content, not a path, so that the node never
// opens a file a request names (SPEC §11): the command that names the file
// reads it with ReadLayer.
type Layer struct {
	Name  string `json:"name"`
	Lines string `json:"lines"` // the lessons.jsonl content
}

// MaxLayerFile is the largest lessons.jsonl ReadLayer takes: about two
// thousand lessons, more than one origin may hold (SPEC §12).
const MaxLayerFile = 1 << 20

// Lessons lists the lessons held with their computed state, strongest first.
func (m *Memory) Lessons(f Filter) ([]LessonView, error) {
	lessons, err := m.store.Lessons()
	if err != nil {
		return nil, err
	}
	now := m.Now()
	byHash := map[string]*LessonView{}
	var out []*LessonView
	for _, l := range lessons {
		v, err := m.view(l, now)
		if err != nil {
			return nil, err
		}
		byHash[v.Hash] = v
		out = append(out, v)
	}
	for _, layer := range f.Layers {
		views, err := parseLayer(layer)
		if err != nil {
			return nil, err
		}
		for _, v := range views {
			if have, ok := byHash[v.Hash]; ok {
				// The strongest instance is shown, with every layer it is in.
				layers := append(slices.Clone(have.Layers), v.Layers...)
				if v.Strength > have.Strength {
					*have = *v
				}
				have.Layers = uniqSorted(layers)
				continue
			}
			vv := v
			byHash[v.Hash] = vv
			out = append(out, vv)
		}
	}
	res := make([]LessonView, 0, len(out))
	for _, v := range out {
		switch {
		case f.All:
		case f.State != "":
			if v.State != f.State {
				continue
			}
		case !v.State.Active():
			continue
		case protocol.CheckAgentText(v.Text) != nil:
			// The active view is what agents read: a text held from before
			// the checks grew stricter stays out of it (--all shows it).
			continue
		}
		res = append(res, *v)
	}
	sort.SliceStable(res, func(i, j int) bool {
		if res[i].Strength != res[j].Strength {
			return res[i].Strength > res[j].Strength
		}
		return res[i].Hash < res[j].Hash
	})
	return res, nil
}

// view computes one lesson's state and provenance from the records held.
func (m *Memory) view(l store.Lesson, now time.Time) (*LessonView, error) {
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
	st := protocol.ComputeState(l.Hash, recs, now, m.cfg.Params.State)
	if len(recs) == 0 {
		st.State, st.Reason = protocol.StateCandidate, "local only: not published"
	}
	layers := []string{l.Layer}
	if l.Own {
		layers = append(layers, LayerPersonal)
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
	return &LessonView{
		Hash: l.Hash, ID: l.ID, Kind: l.Kind, Text: l.Text, State: st.State, StateReason: st.Reason,
		Strength: protocol.ShownStrength(l.Strength, l.Updated, st, now, m.cfg.Params.State.W),
		Seen:     l.Seen, Own: l.Own, Published: l.Published, Author: st.Author, Origins: origins,
		Confirmers: confirmers, Layers: uniqSorted(layers), Scopes: uniqSorted(append(scopes, l.Scopes...)), Updated: l.Updated,
	}, nil
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
	Records   []RecordView `json:"records"`
	Verifiers []string     `json:"verifiers"`
	Revokers  []string     `json:"revokers,omitempty"`
	MetBefore bool         `json:"met_before"`
	Confirmed bool         `json:"confirmed_here"`
	Projects  []string     `json:"projects,omitempty"`
	Episodes  int          `json:"episodes"`
	History   []StateStep  `json:"history"`
}

// StateStep is one change of a lesson's computed state.
type StateStep struct {
	At     time.Time      `json:"at"`
	State  protocol.State `json:"state"`
	Reason string         `json:"reason"`
}

// stateHistory replays the state function at every record's time and at
// now, keeping the steps where the state changed.
func stateHistory(hash string, recs []*protocol.Record, now time.Time, p protocol.StateParams) []StateStep {
	sorted := slices.Clone(recs)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Time.Before(sorted[j].Time) })
	var out []StateStep
	add := func(at time.Time, held []*protocol.Record) {
		st := protocol.ComputeState(hash, held, at, p)
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
				st := protocol.ComputeState(hash, sorted[:i+1], r.Time, p)
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

// Show returns one lesson with every record held for it.
func (m *Memory) Show(hash string) (Provenance, error) {
	var p Provenance
	l, ok, err := m.store.GetLesson(hash)
	if err != nil {
		return p, err
	}
	held, err := m.store.ForHash(hash)
	if err != nil {
		return p, err
	}
	if !ok && len(held) == 0 {
		return p, fmt.Errorf("%w: %s (`remem lessons --all` lists the hashes)", ErrUnknownLesson, hash)
	}
	if !ok {
		l = store.Lesson{Hash: hash}
		for _, h := range held {
			if h.Record.Type == protocol.TypeLesson {
				l.Kind, l.Text = h.Record.Kind, h.Record.Text
			}
		}
	}
	now := m.Now()
	v, err := m.view(l, now)
	if err != nil {
		return p, err
	}
	recs := make([]*protocol.Record, 0, len(held))
	for _, h := range held {
		recs = append(recs, h.Record)
		p.Records = append(p.Records, RecordView{Type: h.Record.Type.String(), Origin: h.Record.Origin, Time: h.Record.Time,
			Arrived: h.Arrived, Scopes: h.Scopes, Reason: h.Record.Reason, Line: string(h.Record.Raw),
			Unknown: protocol.UnknownMembers(h.Record.Raw)})
	}
	st := protocol.ComputeState(hash, recs, now, m.cfg.Params.State)
	p.LessonView = *v
	p.Verifiers, p.Revokers = st.Verifiers, st.Revokers
	if p.Verifiers == nil {
		p.Verifiers = []string{}
	}
	p.MetBefore, p.Confirmed, p.Projects, p.Episodes = l.MetBefore, l.Confirmed, l.Projects, len(l.Episodes)
	p.History = stateHistory(hash, recs, now, m.cfg.Params.State)
	sort.Slice(p.Records, func(i, j int) bool { return p.Records[i].Arrived.Before(p.Records[j].Arrived) })
	return p, nil
}

// Recall returns the active lessons most relevant to a task description,
// strongest first among equals.
func (m *Memory) Recall(ctx context.Context, query string, limit int) ([]LessonView, error) {
	views, err := m.Lessons(Filter{})
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
		score, err := m.sim.Similarity(ctx, query, v.Text+" "+joinEpisodes(groups[v.Hash].Episodes))
		if err != nil {
			return nil, err
		}
		if score <= 0 {
			continue
		}
		v.Score = score
		out = append(out, v)
	}
	sort.SliceStable(out, func(i, j int) bool {
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
	return out, nil
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

// lessonLine is one line of lessons.jsonl: the seed's fields and what this
// node adds. Readers ignore unknown fields; writers never drop one.
type lessonLine struct {
	ID       string         `json:"id"`
	Text     string         `json:"text"`
	Kind     string         `json:"kind"`
	Seen     int64          `json:"seen"`
	Strength float64        `json:"strength"`
	Updated  string         `json:"updated"`
	Hash     string         `json:"hash,omitempty"`
	State    protocol.State `json:"state,omitempty"`
	Origins  []string       `json:"origins,omitempty"`
}

// writeLessonsFile writes $REMEM_HOME/lessons.jsonl atomically.
func (m *Memory) writeLessonsFile(_ context.Context) error {
	now := m.Now()
	lessons, err := m.store.Lessons()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, l := range lessons {
		v, err := m.view(l, now)
		if err != nil {
			return err
		}
		if !v.State.Active() {
			continue
		}
		line, _ := json.Marshal(lessonLine{ID: l.ID, Text: l.Text, Kind: l.Kind, Seen: l.Seen, Strength: v.Strength,
			Updated: protocol.FormatTime(l.Updated), Hash: l.Hash, State: v.State, Origins: v.Origins})
		buf.Write(append(line, '\n'))
	}
	return atomicfile.Write(filepath.Join(m.cfg.Home, LessonsFile), "", buf.Bytes(), 0o644)
}

// ReadLayer reads the lessons.jsonl at path as the layer name. Only a
// regular file of at most MaxLayerFile bytes is read: a FIFO would block the
// command and a device such as /dev/zero would never end.
func ReadLayer(name, path string) (Layer, error) {
	if info, err := os.Stat(path); err != nil {
		return Layer{}, fmt.Errorf("layer %s: %w", name, err)
	} else if !info.Mode().IsRegular() {
		return Layer{}, fmt.Errorf("layer %s: %s is not a regular file (%v); give the path of a lessons.jsonl", name, path, info.Mode().Type())
	}
	// O_NONBLOCK: should a FIFO replace the file after the check above,
	// opening it does not wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Layer{}, fmt.Errorf("layer %s: %w", name, err)
	}
	defer func() { _ = f.Close() }() // read only
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return Layer{}, fmt.Errorf("layer %s: %s is not a regular file; give the path of a lessons.jsonl", name, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxLayerFile+1))
	if err != nil {
		return Layer{}, fmt.Errorf("layer %s: reading %s: %w", name, path, err)
	}
	if len(data) > MaxLayerFile {
		return Layer{}, fmt.Errorf("layer %s: %s is larger than %d bytes, more than a lessons.jsonl holds; split it into several layers", name, path, MaxLayerFile)
	}
	return Layer{Name: name, Lines: string(data)}, nil
}

// parseLayer reads the lessons of a layer. Its errors are the caller's: a
// layer that is not a lessons.jsonl.
func parseLayer(layer Layer) ([]*LessonView, error) {
	if layer.Name == "" {
		return nil, badRequest{errors.New("a layer needs a name, e.g. team")}
	}
	var out []*LessonView
	for _, l := range protocol.SplitLines([]byte(layer.Lines)) {
		var ll lessonLine
		if err := json.Unmarshal(l.Bytes, &ll); err != nil {
			return nil, badRequest{fmt.Errorf("layer %s line %d: not a lesson: %v", layer.Name, l.N, err)}
		}
		if !protocol.ValidKind(ll.Kind) || ll.Text == "" {
			return nil, badRequest{fmt.Errorf("layer %s line %d: a lesson needs text and a kind of error, correction or surprise", layer.Name, l.N)}
		}
		if protocol.CheckAgentText(ll.Text) != nil {
			continue // instructions and raw data are refused in every layer
		}
		updated, _ := time.Parse(time.RFC3339, ll.Updated)
		state := ll.State
		if state == "" {
			state = protocol.StateCandidate
		}
		out = append(out, &LessonView{Hash: protocol.LessonHash(ll.Kind, ll.Text), ID: ll.ID, Kind: ll.Kind, Text: ll.Text,
			State: state, StateReason: "from layer " + layer.Name, Strength: ll.Strength, Seen: ll.Seen,
			Origins: ll.Origins, Confirmers: []string{}, Layers: []string{layer.Name}, Updated: updated})
	}
	return out, nil
}
