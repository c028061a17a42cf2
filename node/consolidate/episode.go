package consolidate

import (
	"context"
	"slices"
	"strings"
)

// Episode is the part of an event that clustering and writing read. The
// JSON names are those of the events (SPEC §2), so a command writer sees the
// fields it would see in an events file.
type Episode struct {
	Kind     string `json:"kind"`
	Title    string `json:"title,omitempty"`
	Expected string `json:"expected,omitempty"`
	Happened string `json:"happened,omitempty"`
	Said     string `json:"said,omitempty"`
	AgentDid string `json:"agent_did,omitempty"`
	Text     string `json:"text,omitempty"`
	// Lesson is the sentence the reporting agent proposed (SPEC §2).
	Lesson string `json:"lesson,omitempty"`
}

// Content returns the meaningful words of the event, for similarity: the
// non-empty fields among Title, Happened, Expected, Said, AgentDid, Text and
// Lesson, in that order, joined by a space (the agent's own sentence says
// the surprise in a lesson's words, which is what it is compared with). Kind is left out: it is not part of what
// happened, and Assign keeps lesson kinds apart by itself.
func (e Episode) Content() string {
	var b strings.Builder
	for _, f := range [...]string{e.Title, e.Happened, e.Expected, e.Said, e.AgentDid, e.Text, e.Lesson} {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f)
	}
	return b.String()
}

// lessonKind maps an event kind to the kind of lesson it becomes (SPEC §3):
// error→error, correction→correction, environment, surprise and note→surprise.
// Lesson kinds map to themselves; anything else is returned lowercased, so
// unknown kinds only ever meet their own kind.
func lessonKind(kind string) string {
	k := strings.ToLower(strings.TrimSpace(kind))
	switch k {
	case "environment", "note":
		return "surprise"
	}
	return k
}

// Families are the lesson kinds clustered together. An error and a note or
// an environment report that tell the same surprise become one lesson
// (agents report a failure as an error and tell it again in a note);
// corrections, which quote the person and are shared only by their own
// opt-in, stay among themselves. The first kind of a family that one of a
// cluster's episodes maps to is the kind of its lesson.
var Families = [][]string{{"error", "surprise"}, {"correction"}}

// FamilyOf is the family of a lesson kind (a kind of no family is one of
// its own).
func FamilyOf(kind string) []string {
	for _, f := range Families {
		if slices.Contains(f, kind) {
			return f
		}
	}
	return []string{kind}
}

// familyKey names the family an event or lesson kind clusters in.
func familyKey(kind string) string { return FamilyOf(lessonKind(kind))[0] }

// Proposed is a Writer that writes the sentence the reporting agent
// proposed for its event (SPEC §2 "lesson"); the node holds it to every
// check like any writer's and falls back to its own writers when it fails.
// Its name is "agent".
type Proposed string

// Write implements Writer: one line of one sentence, as a model's answer
// must be.
func (p Proposed) Write(context.Context, Cluster) (string, error) { return oneLine("agent", string(p)) }

// Name names the writer in the counts.
func (Proposed) Name() string { return "agent" }

// Proposals are the distinct sentences the cluster's agents proposed, in
// the order of the episodes, at most max.
func (c Cluster) Proposals(max int) []Proposed {
	var out []Proposed
	for _, e := range c.Episodes {
		p := Proposed(strings.TrimSpace(e.Lesson))
		if p != "" && !slices.Contains(out, p) && len(out) < max {
			out = append(out, p)
		}
	}
	return out
}
