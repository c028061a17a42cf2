package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// untoldDraft is the reason of a draft the default writer's sentence
// became because the events say more than it tells (withUntold), and
// untoldLead opens what the draft carries after the sentence.
const (
	untoldDraft = "the events say more than the sentence tells"
	untoldLead  = " The events also say: "
)

// DraftSentence is the sentence of a draft the default writer made,
// without the lines of the events it carries after it (withUntold): what
// an agent's context shows of it, while matching reads the whole.
func DraftSentence(text string) string {
	if k := strings.Index(text, untoldLead); k > 0 {
		return text[:k+1]
	}
	return text
}

// withUntold makes a draft of the default writer's sentence when the
// cluster's events state facts it leaves out (DefaultWriter.Untold): the
// draft carries them after the sentence, as many as keep it a lesson's
// text (SPEC §6), so that matching and the writer or person who rewrites
// it have them (SPEC §3); left-out lines no lesson could hold (orders,
// raw data) are not carried, though they make the draft all the same. A
// sentence the events say no more than stays as it was vetted.
func withUntold(dw *consolidate.DefaultWriter, c consolidate.Cluster, text, draft string) (string, string) {
	return withLines(text, dw.Untold(c, text), draft)
}

// withLines is text with lines carried after it (withUntold), a draft.
func withLines(text string, lines []string, draft string) (string, string) {
	if len(lines) == 0 {
		return text, draft
	}
	base := strings.TrimRight(text, ". ") + "." + untoldLead
	var kept []string
	for _, l := range lines {
		try := base + strings.Join(append(kept, l), "; ") + "."
		if utf8.RuneCountInString(try) > protocol.MaxTextChars || protocol.CheckLessonText(try) != nil {
			continue
		}
		kept = append(kept, l)
	}
	if draft == "" {
		draft = untoldDraft
	}
	if len(kept) == 0 {
		return text, draft
	}
	out := protocol.RedactRawDataReport(base + strings.Join(kept, "; ") + ".").Text
	if protocol.CheckLessonText(out) != nil {
		return text, draft
	}
	return out, draft
}

// unwordedDraft is the reason of a draft the default writer made of a
// cluster it could not write a sentence of (fallbackDraft).
const unwordedDraft = "no writer's sentence passed the checks; the events' facts are kept until one does"

// fallbackDraft is the draft of a cluster no writer wrote a sentence of
// that passes the checks (SPEC §3): the call that failed, if any, and the
// facts of the events (DefaultWriter.Facts), as many as keep it a
// lesson's text, so that the cluster's facts stay for matching and for a
// writer who rewrites it. ok is false when not even that passes.
//
// The call alone is kept when none of the facts passes: a cluster with a
// lesson is one a model rewrites (rewriteDrafts) and later events join.
func fallbackDraft(dw *consolidate.DefaultWriter, c consolidate.Cluster) (text string, ok bool) {
	lead, lines := dw.Facts(c)
	called := lead != "" && protocol.CheckLessonText(lead) == nil
	if !called {
		lead = "The agent met a surprise."
	}
	text, _ = withLines(lead, lines, "")
	return text, called || text != lead
}

// ErrNotADraft says a rewrite named a lesson that is not a draft of this
// memory's own: a published lesson is withdrawn with `remem revoke`, and a
// lesson received is another memory's sentence.
var ErrNotADraft = errors.New("not a draft of this memory's own")

// Rewritten says what a rewrite of a draft did.
type Rewritten struct {
	// Draft is the hash of the draft written again; Hash the lesson's hash
	// now (the text is part of the hash).
	Draft string `json:"draft"`
	Hash  string `json:"hash"`
	Text  string `json:"text"`
	// Joined: a lesson with this text was held already, and the draft's
	// events joined it.
	Joined bool `json:"joined,omitempty"`
}

// RewriteDraft writes the draft named by ref (a hash, a unique prefix or an
// l-… id) as text, a sentence a person gives (`remem lessons rewrite`).
// The sentence must pass every check and be no draft itself (SPEC §3); the
// draft's events, seen and strength go to the new lesson, which the next
// sleep signs where its projects are opted in.
func (m *Memory) RewriteDraft(ref, text string) (Rewritten, error) {
	hash, err := m.ResolveHash(ref)
	if err != nil {
		return Rewritten{}, err
	}
	m.sleepMu.Lock()
	defer m.sleepMu.Unlock()
	l, ok, err := m.store.GetLesson(hash)
	if err != nil {
		return Rewritten{}, err
	}
	if !ok || !l.Own || l.Draft == "" {
		return Rewritten{}, fmt.Errorf("lesson %s: %w (`remem lessons --all` marks drafts; `remem revoke` withdraws a published lesson)", hash, ErrNotADraft)
	}
	text, err = consolidate.Proposed(text).Write(context.Background(), consolidate.Cluster{})
	if err != nil {
		return Rewritten{}, fmt.Errorf("the sentence: %w", err)
	}
	text, draft, err := vetSentence(text, false, consolidate.Cluster{})
	if err != nil {
		return Rewritten{}, fmt.Errorf("the sentence is refused: %w", err)
	}
	if draft != "" {
		return Rewritten{}, fmt.Errorf("the sentence would be a draft too (%s); write what happened in your own words", draft)
	}
	out, err := m.replaceDraft(l, text, m.Now())
	if err != nil {
		return Rewritten{}, err
	}
	m.changed()
	return out, nil
}

// replaceDraft puts a lesson written as text in the place of the draft l,
// in one change: the draft goes, its events, seen, strength, episodes and
// projects go to the lesson of that text (one held already, own or
// received, takes them as a raise), marked to be signed. text has passed
// vetSentence and is no draft.
func (m *Memory) replaceDraft(l store.Lesson, text string, now time.Time) (Rewritten, error) {
	hash := protocol.LessonHash(l.Kind, text)
	out := Rewritten{Draft: l.Hash, Hash: hash, Text: text}
	nl, held, err := m.store.GetLesson(hash)
	if err != nil {
		return out, err
	}
	if held && hash != l.Hash {
		out.Joined = true
		nl.Seen += l.Seen
		nl.Strength = protocol.Rise(nl.Strength)
		for _, e := range l.Episodes {
			nl.Episodes = appendEpisode(nl.Episodes, e)
		}
		nl.Projects = union(nl.Projects, l.Projects)
		if nl.Own {
			nl.WrittenFrom = union(nl.WrittenFrom, l.WrittenFrom)
		} else {
			nl.WrittenFrom = l.WrittenFrom // a candidate this memory's events wrote word for word
		}
		nl.Own = true
	} else {
		nl = l
		nl.Hash, nl.ID, nl.Text, nl.Published, nl.Confirmed = hash, lessonID(hash), text, false, false
	}
	nl.Draft = ""
	nl.Updated = now
	nl.Dirty = true
	if err := m.store.Commit(store.Step{Lesson: nl, Replaces: l.Hash}); err != nil {
		return out, err
	}
	m.recent.note([]store.Lesson{nl}, nil)
	return out, nil
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
