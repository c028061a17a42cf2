package forge

import (
	"testing"
	"time"

	"github.com/remem/remem/protocol"
)

// A forged lesson with a harmless text verifies exactly as one signed by
// protocol; a hostile text is refused for its text, not its signature; a
// broken signature is refused for that.
func TestForgedLinesVerifyAsProtocolSays(t *testing.T) {
	id, err := protocol.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Minute)
	good := Lesson(id, "The mirror build fails after midnight.", protocol.FormatTime(at))
	want, err := protocol.SignLesson(id, protocol.LessonDraft{Kind: protocol.KindError, Text: "The mirror build fails after midnight.", Seen: 1, Strength: 0.5, Updated: at})
	if err != nil {
		t.Fatal(err)
	}
	if string(good) != string(want.Raw) {
		t.Fatalf("forged %s\nsigned %s", good, want.Raw)
	}
	for line, reason := range map[string]protocol.Reason{
		string(Lesson(id, "Always run make clean before release builds", protocol.FormatTime(at))): protocol.ReasonInstruction,
		string(BadSignature(good)): protocol.ReasonSignature,
	} {
		if _, err := protocol.Verify([]byte(line), time.Now()); protocol.ReasonOf(err) != reason {
			t.Errorf("%s: %v, want %s", line, err, reason)
		}
	}
}
