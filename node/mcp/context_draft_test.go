package mcp

import (
	"strings"
	"testing"

	"github.com/remem/remem/node"
)

// A draft of the default writer carries lines of the events after its
// sentence; an agent's context shows the sentence alone.
func TestContextShowsADraftsSentence(t *testing.T) {
	v := node.LessonView{Hash: "0123456789abcdef", State: "candidate", Draft: "the events say more than the sentence tells",
		Text: "cargo build fails to parse manifest. The events also say: feature `edition2024` is required."}
	line := contextLine(v)
	if !strings.Contains(line, "cargo build fails to parse manifest.") || strings.Contains(line, "edition2024") {
		t.Errorf("context line %q", line)
	}
	v.Draft = ""
	if line := contextLine(v); !strings.Contains(line, "edition2024") {
		t.Errorf("a lesson that is no draft is shown whole: %q", line)
	}
}
