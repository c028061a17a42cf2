package node

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/commons/commonstest"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// sent is what a set of lines holds of one lesson hash, by type and origin.
type sent map[string]bool // "lesson/<origin>", "confirmation/<origin>", "revocation/<origin>"

func sentOf(t *testing.T, hash string, lines [][]byte) sent {
	t.Helper()
	out := sent{}
	for _, l := range lines {
		r, err := protocol.Decode(l)
		if err != nil {
			t.Fatal(err)
		}
		if r.Hash == hash {
			out[r.Type.String()+"/"+r.Origin] = true
		}
	}
	return out
}

func (s sent) only(t *testing.T, what string, want ...string) {
	t.Helper()
	if len(s) != len(want) {
		t.Errorf("%s holds %v of the lesson, want exactly %v", what, s, want)
		return
	}
	for _, w := range want {
		if !s[w] {
			t.Errorf("%s holds %v of the lesson, want exactly %v", what, s, want)
			return
		}
	}
}

// confirmedLesson: A learns a lesson from two events, B receives it and
// confirms it. It returns the lesson's hash.
func confirmedLesson(t *testing.T, clk *clock, a *Memory, projA string, b *Memory, projB string) string {
	t.Helper()
	if _, err := a.Remember([]protocol.Event{
		failure(projA, "s1", "undefined: mocks.NewClient on a clean checkout until go generate has run"),
		failure(projA, "s2", "undefined: mocks.NewClient after a fresh clone, go generate had not run"),
	}); err != nil {
		t.Fatal(err)
	}
	sleep(t, a)
	hash := ownLesson(t, a).Hash
	clk.Add(time.Minute)
	transfer(t, a, b, "team:x")
	clk.Add(time.Minute)
	if _, err := b.Remember([]protocol.Event{failure(projB, "s9", "undefined: mocks.NewClient on a clean checkout, go generate not run yet")}); err != nil {
		t.Fatal(err)
	}
	if rep := sleep(t, b); rep.Confirmations != 1 {
		t.Fatalf("B confirmed nothing: %+v", rep)
	}
	clk.Add(time.Minute)
	return hash
}

func held(t *testing.T, m *Memory, scope string) [][]byte {
	t.Helper()
	lines, err := holder{&Daemon{m: m}}.Held(scope)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

func outbox(t *testing.T, m *Memory, scope string) [][]byte {
	t.Helper()
	lines, _, err := m.OutboxSince(scope, 0)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// A lesson its origin revoked: its confirmer sends neither the lesson nor
// its confirmation anywhere (export, files, gossip, sync), the origin's
// revocation keeps travelling, and the confirmer's next sleep signs its own
// revocation of the lesson.
func TestRevokedByOriginGoneFromWhatIsSent(t *testing.T) {
	clk := newClock()
	a, projA := openTest(t, clk)
	b, projB := openTest(t, clk)
	hash := confirmedLesson(t, clk, a, projA, b, projB)
	conf := "confirmation/" + b.Origin()
	sentOf(t, hash, outbox(t, b, "team:x")).only(t, "B's gossip before the revocation", conf)

	if _, err := a.Revoke(hash, "fixed"); err != nil {
		t.Fatal(err)
	}
	transfer(t, a, b, "team:x")
	if st := stateOn(b, hash); st != protocol.StateRevoked {
		t.Fatalf("B computes %q", st)
	}
	own, err := b.OwnLines("")
	if err != nil {
		t.Fatal(err)
	}
	sentOf(t, hash, own).only(t, "B's export")
	sentOf(t, hash, outbox(t, b, "team:x")).only(t, "B's gossip")
	sentOf(t, hash, held(t, b, "team:x")).only(t, "B's sync offer", "revocation/"+a.Origin())

	rep := sleep(t, b)
	if rep.Withdrawn != 1 {
		t.Errorf("B's sleep withdrew %d lessons, want 1: %+v", rep.Withdrawn, rep)
	}
	rev := "revocation/" + b.Origin()
	own, _ = b.OwnLines("")
	sentOf(t, hash, own).only(t, "B's export after its sleep", rev)
	sentOf(t, hash, outbox(t, b, "team:x")).only(t, "B's gossip after its sleep", rev)
	sentOf(t, hash, held(t, b, "team:x")).only(t, "B's sync offer after its sleep", rev, "revocation/"+a.Origin())
	lines, _, err := b.FileLines("team:x")
	if err != nil {
		t.Fatal(err)
	}
	sentOf(t, hash, lines).only(t, "B's file", rev)
	if rep := sleep(t, b); rep.Withdrawn != 0 || rep.Signed != 0 {
		t.Errorf("a second sleep withdrew again: %+v", rep)
	}
}

// quorumRecords: the author's lesson, confirmations of four other
// memories, and revocations of three of them (a quorum at N = 3).
func quorumRecords(t *testing.T, at time.Time) (hash string, author string, lines [][]byte) {
	t.Helper()
	o := testutil.Identity(t, "author")
	l, err := protocol.SignLesson(o, protocol.LessonDraft{Kind: protocol.KindError, Text: "The nightly export stalls when the reporting replica lags", Seen: 2, Strength: 0.6, Updated: at})
	if err != nil {
		t.Fatal(err)
	}
	lines = append(lines, l.Raw)
	for i, name := range []string{"c1", "c2", "c3", "c4"} {
		id := testutil.Identity(t, name)
		c, err := protocol.SignConfirmation(id, l.Hash, at.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, c.Raw)
		if i < 3 {
			r, err := protocol.SignRevocation(id, l.Hash, at.Add(2*time.Minute), "")
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, r.Raw)
		}
	}
	return l.Hash, o.Origin(), lines
}

func receive(t *testing.T, m *Memory, scope string, lines [][]byte) {
	t.Helper()
	rep, err := m.Receive(context.Background(), scope, protocol.SplitLines(testutil.JoinLines(lines...)))
	if err != nil || len(rep.Refused) > 0 {
		t.Fatalf("receive: %v %+v", err, rep.Refused)
	}
}

// A lesson a quorum of its confirmers revoked: a holder offers no lesson
// record of it; the confirmations and the revocations, the quorum's
// evidence, keep travelling, so that a memory holding the lesson from
// before computes it revoked too.
func TestQuorumRevokedGoneFromSyncOffers(t *testing.T) {
	clk := newClock()
	h, _ := openTest(t, clk)
	hash, author, lines := quorumRecords(t, clk.Now().Add(-time.Hour))
	receive(t, h, "team:x", lines)
	if st := stateOn(h, hash); st != protocol.StateRevoked {
		t.Fatalf("the holder computes %q", st)
	}
	offer := held(t, h, "team:x")
	got := sentOf(t, hash, offer)
	if got["lesson/"+author] || len(got) != 7 {
		t.Fatalf("the sync offer holds %v: want the 4 confirmations and 3 revocations, no lesson", got)
	}
	x, _ := openTest(t, clk)
	receive(t, x, "team:x", lines[:1])
	if st := stateOn(x, hash); st == protocol.StateRevoked {
		t.Fatalf("x computes %q from the lesson alone", st)
	}
	receive(t, x, "team:x", offer)
	if st := stateOn(x, hash); st != protocol.StateRevoked {
		t.Errorf("a memory holding the lesson computes %q from the holder's offer", st)
	}
}

// An own lesson a quorum revoked leaves everything this memory sends at
// once, and its next sleep signs the author's revocation, so that its
// files may drop it (SPEC §10) and every holder then sees it revoked by
// its origin.
func TestQuorumRevokedOwnLessonWithdrawn(t *testing.T) {
	clk := newClock()
	h, _ := openTest(t, clk)
	text := "The nightly export stalls when the reporting replica lags"
	rec, err := h.Publish(protocol.KindError, text)
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	for _, name := range []string{"c1", "c2", "c3"} {
		id := testutil.Identity(t, name)
		c, _ := protocol.SignConfirmation(id, rec.Hash, clk.Now())
		r, _ := protocol.SignRevocation(id, rec.Hash, clk.Now(), "")
		lines = append(lines, c.Raw, r.Raw)
	}
	receive(t, h, "team:x", lines)
	own, _ := h.OwnLines("")
	sentOf(t, rec.Hash, own).only(t, "the export")
	sentOf(t, rec.Hash, outbox(t, h, "team:x")).only(t, "gossip")
	if got := sentOf(t, rec.Hash, held(t, h, "team:x")); got["lesson/"+h.Origin()] {
		t.Errorf("the sync offer holds the lesson: %v", got)
	}
	clk.Add(time.Minute)
	if rep := sleep(t, h); rep.Withdrawn != 1 {
		t.Fatalf("the sleep withdrew %d, want 1: %+v", rep.Withdrawn, rep)
	}
	own, _ = h.OwnLines("")
	sentOf(t, rec.Hash, own).only(t, "the export after the sleep", "revocation/"+h.Origin())
	// Revoked by its origin now: the confirmations stop travelling too.
	sentOf(t, rec.Hash, held(t, h, "team:x")).only(t, "the sync offer after the sleep", "revocation/"+h.Origin(),
		"revocation/"+testutil.Identity(t, "c1").Origin(), "revocation/"+testutil.Identity(t, "c2").Origin(), "revocation/"+testutil.Identity(t, "c3").Origin())
}

// A confirmer's commons file keeps the confirmation until the lesson is
// revoked; then its next push, with or without a sleep before it, is no
// rollback and holds the confirmer's revocation instead. Every record
// travels by the commons.
func TestRevokedConfirmationLeavesTheCommons(t *testing.T) {
	url := commonstest.Start(t)
	ctx := context.Background()
	c := &commons.Client{BaseURL: url, Token: "tok"} // no pull state: every pull takes every file
	push := func(m *Memory, what string) {
		t.Helper()
		if _, err := m.PushCommons(ctx, c); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	pull := func(m *Memory) {
		t.Helper()
		if _, err := m.PullCommons(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, sleepFirst := range []bool{false, true} {
		clk := newClock()
		a, projA := openTest(t, clk)
		b, projB := openTest(t, clk)
		stored := func(hash string) sent {
			t.Helper()
			req, _ := http.NewRequest("GET", url+"/commons/"+protocol.OriginFileName(b.Origin()), nil)
			req.Header.Set("Authorization", "Bearer tok")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("GET the stored file: %d %v", resp.StatusCode, err)
			}
			var lines [][]byte
			for _, l := range protocol.SplitLines(body) {
				lines = append(lines, l.Bytes)
			}
			return sentOf(t, hash, lines)
		}

		a.Remember([]protocol.Event{
			failure(projA, "s1", "undefined: mocks.NewClient on a clean checkout until go generate has run"),
			failure(projA, "s2", "undefined: mocks.NewClient after a fresh clone, go generate had not run"),
		})
		sleep(t, a)
		hash := ownLesson(t, a).Hash
		push(a, "A's lesson")
		clk.Add(time.Minute)
		pull(b)
		// A lesson of B's own, older than its confirmation: the commons
		// then takes no file of B that drops the confirmation without
		// B's revocation of it.
		if _, err := b.Publish(protocol.KindError, "The staging database is reset every night at midnight"); err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Minute)
		b.Remember([]protocol.Event{failure(projB, "s9", "undefined: mocks.NewClient on a clean checkout, go generate not run yet")})
		if rep := sleep(t, b); rep.Confirmations != 1 {
			t.Fatalf("B confirmed nothing: %+v", rep)
		}
		push(b, "B's confirmation")
		stored(hash).only(t, "B's file with its confirmation", "confirmation/"+b.Origin())

		clk.Add(time.Minute)
		if _, err := a.Revoke(hash, "fixed"); err != nil {
			t.Fatal(err)
		}
		push(a, "A's revocation")
		pull(b)
		if st := stateOn(b, hash); st != protocol.StateRevoked {
			t.Fatalf("B computes %q", st)
		}
		clk.Add(time.Minute)
		if sleepFirst {
			sleep(t, b)
		}
		push(b, fmt.Sprintf("B's push after the revocation (sleep first: %v)", sleepFirst))
		stored(hash).only(t, "B's file after the revocation", "revocation/"+b.Origin())
	}
}

// `remem share --off`: a project opted out signs nothing more, not even
// new versions of its lessons already published; those records stay as
// they were (never revoked behind the person's back). Opted in again, the
// next sleep signs the lesson as it now is.
func TestShareOffStopsSigning(t *testing.T) {
	clk := newClock()
	m, proj := openTest(t, clk)
	m.Remember([]protocol.Event{failure(proj, "s1", "the linter flags unused parameters in generated code")})
	if rep := sleep(t, m); rep.Signed != 1 {
		t.Fatalf("first sleep: %+v", rep)
	}
	before, _ := m.OwnLines("")
	if _, err := m.Unshare(proj); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Minute)
	m.Remember([]protocol.Event{failure(proj, "s2", "the linter flags unused parameters in generated code again")})
	rep := sleep(t, m)
	if rep.Raised != 1 || rep.Signed != 0 || rep.KeptLocal != 1 {
		t.Fatalf("the sleep after share --off: %+v", rep)
	}
	after, _ := m.OwnLines("")
	if string(testutil.JoinLines(after...)) != string(testutil.JoinLines(before...)) {
		t.Fatalf("the published records changed after share --off:\n%s\nwas\n%s", testutil.JoinLines(after...), testutil.JoinLines(before...))
	}
	if out := outbox(t, m, ""); len(out) != 1 {
		t.Fatalf("%d records in the outbox, want the first one only", len(out))
	}
	if _, err := m.Share(ProjectShare{Project: proj}); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Minute)
	if rep := sleep(t, m); rep.Signed != 1 {
		t.Fatalf("the sleep after sharing again: %+v", rep)
	}
	if l := ownLesson(t, m); l.Seen != 2 {
		t.Errorf("seen %d, want 2", l.Seen)
	}
	lines, _ := m.OwnLines("")
	if len(lines) != 1 || !strings.Contains(string(lines[0]), `"seen":2`) {
		t.Errorf("own lines after sharing again: %s", testutil.JoinLines(lines...))
	}
}

// TestRevokedOwnLessonIsNotSignedAgain: a confirmation raises an own
// lesson, which a sleep then signs again; when the author revoked the
// lesson in between, its next sleep must not sign it, or the newer lesson
// record would outrank the revocation and bring the lesson back everywhere
// (a new user found it: `revoke`, then `sleep` said "1 records signed"
// and the lesson was active again).
func TestRevokedOwnLessonIsNotSignedAgain(t *testing.T) {
	clk := newClock()
	a, _ := openTest(t, clk)
	b, _ := openTest(t, nil)
	ctx := context.Background()
	rec, err := a.Publish("error", "The integration suite times out when the VPN is down")
	if err != nil {
		t.Fatal(err)
	}
	conf, err := protocol.SignConfirmation(b.Identity(), rec.Hash, a.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Deliver(ctx, "team:t", []*protocol.Record{conf}); err != nil {
		t.Fatal(err)
	}
	if l, ok, err := a.store.GetLesson(rec.Hash); err != nil || !ok || !l.Dirty {
		t.Fatalf("the confirmation did not raise the own lesson for signing: %+v %v %v", l, ok, err)
	}
	clk.Add(time.Second) // a later second than the publication
	if _, err := a.Revoke(rec.Hash, "wrong"); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Second) // the sleep signs in a later second still
	rep, err := a.Sleep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	revoked, err := a.revokedHere(rec.Hash, a.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !revoked || rep.Signed != 0 {
		t.Fatalf("after revoke and sleep: revoked %v, %d records signed (%+v)", revoked, rep.Signed, rep)
	}
	if l, _, _ := a.store.GetLesson(rec.Hash); l.Dirty {
		t.Fatal("the revoked lesson is still waiting to be signed")
	}
}

// A memory that never held a lesson record (it joined after the lesson was
// revoked, and a revoked lesson's record is never sent) offers what a
// holder of the record offers once the author has withdrawn it: only the
// revocations. Before, it kept offering the quorum's confirmations as
// evidence, since "every publisher withdrew" was asked of lesson records
// it did not have, and the two never agreed (the testnet's late joiner,
// TestSimTestnet at 10 nodes).
func TestWithdrawnLessonsEvidenceStopsWithoutItsRecord(t *testing.T) {
	clk := newClock()
	at := clk.Now().Add(-time.Hour)
	hash, author, lines := quorumRecords(t, at)
	h, _ := openTest(t, clk)
	receive(t, h, "team:x", lines)
	before := held(t, h, "team:x") // the quorum's evidence, no lesson record
	late, _ := openTest(t, clk)
	receive(t, late, "team:x", before)
	if got, want := sentOf(t, hash, held(t, late, "team:x")), sentOf(t, hash, before); len(got) != len(want) {
		t.Fatalf("before the withdrawal the late memory offers %v, the holder %v", got, want)
	}
	w, err := protocol.SignRevocation(testutil.Identity(t, "author"), hash, at.Add(3*time.Minute), "")
	if err != nil {
		t.Fatal(err)
	}
	receive(t, h, "team:x", [][]byte{w.Raw})
	receive(t, late, "team:x", [][]byte{w.Raw})
	want := []string{"revocation/" + author}
	for _, c := range []string{"c1", "c2", "c3"} {
		want = append(want, "revocation/"+testutil.Identity(t, c).Origin())
	}
	sentOf(t, hash, held(t, h, "team:x")).only(t, "the holder of the lesson record", want...)
	sentOf(t, hash, held(t, late, "team:x")).only(t, "the memory that never held it", want...)
}
