package node

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// signer signs records as another memory would, for a transport to bring.
type signer struct {
	t  *testing.T
	id protocol.Identity
}

func newSigner(t *testing.T, seed string) signer { return signer{t: t, id: testutil.Identity(t, seed)} }

func (p signer) lesson(text string, at time.Time) []byte {
	p.t.Helper()
	rec, err := protocol.SignLesson(p.id, protocol.LessonDraft{Kind: protocol.KindError, Text: text, Seen: 1, Strength: 0.5, Updated: at})
	if err != nil {
		p.t.Fatal(err)
	}
	return rec.Raw
}

func (p signer) confirm(hash string, at time.Time) []byte {
	p.t.Helper()
	rec, err := protocol.SignConfirmation(p.id, hash, at)
	if err != nil {
		p.t.Fatal(err)
	}
	return rec.Raw
}

// deliver hands lines to m as one batch of the scope team:x.
func deliver(t *testing.T, m *Memory, lines ...[]byte) {
	t.Helper()
	rep, err := m.Receive(context.Background(), "team:x", protocol.SplitLines(testutil.JoinLines(lines...)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Refused) > 0 {
		t.Fatalf("refused: %+v", rep.Refused)
	}
}

// stored is the strength m keeps for hash (before decay).
func stored(t *testing.T, m *Memory, hash string) float64 {
	t.Helper()
	l, ok, err := m.store.GetLesson(hash)
	if err != nil || !ok {
		t.Fatalf("lesson %s: held %v, %v", hash, ok, err)
	}
	return l.Strength
}

func wantStrength(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Fatalf("%s: strength %v, want %v", what, got, want)
	}
}

// openParams opens a memory in a fresh home with the given parameters.
func openParams(t *testing.T, clk *clock, p Params) *Memory {
	t.Helper()
	m, err := Open(Config{Home: t.TempDir(), Create: true, Now: clk.Now, Params: p, Admission: Admission{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

const (
	vpnText  = "The integration suite times out when the VPN is down"
	vpnText2 = "The integration suite times out whenever the VPN is down"
	vpnText3 = "The integration suite always times out when the VPN is down"
)

// SPEC §7: a candidate is raised, like an own lesson, by another origin's
// lesson of the same hash or meaning, once per origin; the origin that
// brought it and a newer version of a counted record raise nothing.
func TestCorroborationRaisesACandidate(t *testing.T) {
	clk := newClock()
	m, _ := openTest(t, clk)
	a, b, c := newSigner(t, "a"), newSigner(t, "b"), newSigner(t, "c")
	hash := protocol.LessonHash(protocol.KindError, vpnText)
	now := clk.Now()

	deliver(t, m, a.lesson(vpnText, now))
	wantStrength(t, "a new candidate", stored(t, m, hash), protocol.CandidateStrength)
	deliver(t, m, a.lesson(vpnText, now.Add(time.Second)))
	wantStrength(t, "a newer version from the origin that brought it", stored(t, m, hash), protocol.CandidateStrength)

	deliver(t, m, b.lesson(vpnText, now))
	wantStrength(t, "the same hash from another origin", stored(t, m, hash), 0.75)
	deliver(t, m, b.lesson(vpnText, now.Add(time.Second)))
	wantStrength(t, "the same origin again", stored(t, m, hash), 0.75)

	deliver(t, m, c.lesson(vpnText2, now))
	wantStrength(t, "the same meaning from a third origin", stored(t, m, hash), 0.875)
	deliver(t, m, c.lesson(vpnText3, now))
	wantStrength(t, "the same meaning again from the third origin", stored(t, m, hash), 0.875)
	if s := stored(t, m, protocol.LessonHash(protocol.KindError, vpnText2)); s != protocol.CandidateStrength {
		t.Errorf("the corroborating lesson is a candidate at %v, want %v", s, protocol.CandidateStrength)
	}

	// In one batch, as a sync brings them: the same outcome.
	m2, _ := openTest(t, clk)
	deliver(t, m2, a.lesson(vpnText, now), b.lesson(vpnText, now), a.lesson(vpnText, now.Add(time.Second)))
	wantStrength(t, "one batch with two origins", stored(t, m2, hash), 0.75)
}

// A confirmation raises the lesson wherever it arrives, once per
// confirming origin: at the origin of the lesson (seed §3: "raises it and
// is sent back") and at a third memory that holds it as a candidate, also
// when the confirmation came before the lesson.
func TestConfirmationRaisesTheLessonItReaches(t *testing.T) {
	clk := newClock()
	a, projA := openTest(t, clk)
	b, projB := openTest(t, clk)
	c, _ := openTest(t, clk)
	d, _ := openTest(t, clk)
	a.Remember([]protocol.Event{failure(projA, "s1", "undefined: mocks.NewClient on a clean checkout until go generate has run")})
	sleep(t, a)
	lesson := ownLesson(t, a)
	before := stored(t, a, lesson.Hash)

	clk.Add(time.Minute)
	transfer(t, a, b, "team:x")
	transfer(t, a, c, "team:x")
	clk.Add(time.Minute)
	b.Remember([]protocol.Event{failure(projB, "s9", "undefined: mocks.NewClient on a clean checkout, go generate not run yet")})
	if rep := sleep(t, b); rep.Confirmations != 1 {
		t.Fatalf("B confirmed nothing: %+v", rep)
	}
	clk.Add(time.Minute)

	transfer(t, b, a, "team:x")
	wantStrength(t, "the origin's lesson after B's confirmation", stored(t, a, lesson.Hash), protocol.Rise(before))
	transfer(t, b, a, "folder:/y")
	wantStrength(t, "the same confirmation by another scope", stored(t, a, lesson.Hash), protocol.Rise(before))
	if v := ownLesson(t, a); math.Abs(v.Strength-protocol.Rise(before)) > 1e-9 {
		t.Errorf("A shows strength %v, want %v", v.Strength, protocol.Rise(before))
	}

	transfer(t, b, c, "team:x")
	wantStrength(t, "a third memory's candidate after B's confirmation", stored(t, c, lesson.Hash), 0.75)
	transfer(t, b, c, "team:x")
	wantStrength(t, "the third memory, again", stored(t, c, lesson.Hash), 0.75)

	// The confirmation first, then the lesson.
	transfer(t, b, d, "team:x")
	transfer(t, a, d, "team:x")
	wantStrength(t, "a candidate whose confirmation came first", stored(t, d, lesson.Hash), 0.75)
}

// SPEC §8 and §7: the strength shown decays from the last verification
// when the records hold a later one than the lesson's local update, a
// fading lesson shows less than when it was common, and a removed one
// leaves every active view.
func TestShownStrengthFollowsTheState(t *testing.T) {
	clk := newClock()
	p := DefaultParams()
	p.State = protocol.StateParams{N: 2, W: time.Hour}
	m := openParams(t, clk, p)
	a, b, c := newSigner(t, "a"), newSigner(t, "b"), newSigner(t, "c")
	hash := protocol.LessonHash(protocol.KindError, vpnText)
	t0 := clk.Now()
	deliver(t, m, a.lesson(vpnText, t0), b.confirm(hash, t0), c.confirm(hash, t0))

	show := func() LessonView {
		t.Helper()
		pv, err := m.Show(hash)
		if err != nil {
			t.Fatal(err)
		}
		return pv.LessonView
	}
	v := show()
	if v.State != protocol.StateCommon {
		t.Fatalf("state %s (%s), want common", v.State, v.StateReason)
	}
	wantStrength(t, "common at once", v.Strength, 0.875)

	clk.Add(50 * time.Minute)
	common := show()
	if common.State != protocol.StateCommon || common.Strength >= 0.875 {
		t.Fatalf("after 50m: %s at %v, want common and decaying", common.State, common.Strength)
	}
	clk.Add(20 * time.Minute)
	fading := show()
	if fading.State != protocol.StateFading || !(fading.Strength < common.Strength) {
		t.Fatalf("after 70m: %s at %v, want fading below %v", fading.State, fading.Strength, common.Strength)
	}

	// B verifies again: back to common, and the strength decays from then,
	// not from the lesson's local update (B was counted: no rise).
	deliver(t, m, b.confirm(hash, clk.Now()))
	again := show()
	if again.State != protocol.StateCommon {
		t.Fatalf("after a new verification: %s, want common", again.State)
	}
	wantStrength(t, "stored after a counted origin verified again", stored(t, m, hash), 0.875)
	wantStrength(t, "shown right after the new verification", again.Strength, 0.875)

	clk.Add(2*time.Hour + time.Minute)
	removed := show()
	if removed.State != protocol.StateRemoved || removed.Strength != 0 {
		t.Fatalf("after 2W: %s at %v, want removed at 0", removed.State, removed.Strength)
	}
	if views, err := m.Lessons(Filter{}); err != nil || len(views) != 0 {
		t.Fatalf("a removed lesson in the active view: %+v %v", views, err)
	}
	if views, err := m.Lessons(Filter{State: protocol.StateRemoved}); err != nil || len(views) != 1 {
		t.Fatalf("the removed lesson is not listed as removed: %+v %v", views, err)
	}
	if views, err := m.Recall(context.Background(), "the integration suite over the VPN", 5); err != nil || len(views) != 0 {
		t.Fatalf("recall returns a removed lesson: %+v %v", views, err)
	}
	if err := m.writeLessonsFile(context.Background()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(m.Home(), LessonsFile))
	if err != nil || strings.Contains(string(data), hash) {
		t.Fatalf("lessons.jsonl holds a removed lesson: %s %v", data, err)
	}
}
