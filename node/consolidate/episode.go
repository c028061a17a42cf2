package consolidate

import "strings"

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
}

// Content returns the meaningful words of the event, for similarity: the
// non-empty fields among Title, Happened, Expected, Said, AgentDid and Text,
// in that order, joined by a space. Kind is left out: it is not part of what
// happened, and Assign keeps lesson kinds apart by itself.
func (e Episode) Content() string {
	var b strings.Builder
	for _, f := range [...]string{e.Title, e.Happened, e.Expected, e.Said, e.AgentDid, e.Text} {
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
