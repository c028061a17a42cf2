package protocol

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func testIdentity(t testing.TB, name string) Identity {
	t.Helper()
	seeds := map[string]string{
		"alice": "6cbd010fd6bf879d307b66d6fa62405f13ad81b7541006ad4982980e2a0817f9",
		"bob":   "de83c70912836aeef2059c1a3cd6477f647d336f778e3dbe08996c93a6d0d9ae",
	}
	seed, _ := hex.DecodeString(seeds[name])
	id, err := NewIdentity(seed)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestSignReproducesVectors re-signs the canonical accepted vectors from
// their parsed fields: Ed25519 is deterministic, so our canonical encoding
// must give the independent implementation's bytes exactly.
func TestSignReproducesVectors(t *testing.T) {
	canonical := map[string]string{
		"lesson-ascii": "alice", "lesson-unicode-raw-float-1.0": "alice",
		"lesson-escapes-and-parents": "alice", "confirm": "bob", "revoke": "alice",
	}
	seen := 0
	for _, v := range readVectors[RecordVector](t, "records.jsonl") {
		who, ok := canonical[v.Name]
		if !ok {
			continue
		}
		seen++
		want := v.Bytes(t)
		rec, err := Verify(want, conformanceNow)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		id := testIdentity(t, who)
		var got *Record
		switch rec.Type {
		case TypeLesson:
			// A member the record types do not define (the vector's escapes
			// live in one) is signed as the sender wrote it.
			var ms []member
			got, ms = lessonMembers(id, LessonDraft{Kind: rec.Kind, Text: rec.Text, Seen: rec.Seen,
				Strength: rec.Strength, Updated: rec.Time, ID: rec.ID, Parents: rec.Parents})
			for name, raw := range UnknownMembers(want) {
				var s string
				if err := json.Unmarshal([]byte(raw), &s); err != nil {
					t.Fatalf("%s: member %s: %v", v.Name, name, err)
				}
				ms = append(ms, member{name, EncodeString(s)})
			}
			err = seal(id, got, ms)
		case TypeConfirmation:
			got, err = SignConfirmation(id, rec.Hash, rec.Time)
		case TypeRevocation:
			got, err = SignRevocation(id, rec.Hash, rec.Time, rec.Reason)
		}
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		if !bytes.Equal(got.Raw, want) {
			t.Errorf("%s:\n got %s\nwant %s", v.Name, got.Raw, want)
		}
	}
	if seen != len(canonical) {
		t.Fatalf("found %d of %d canonical vectors", seen, len(canonical))
	}
}

func TestSignThenVerify(t *testing.T) {
	id := testIdentity(t, "alice")
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	texts := []string{
		"go test fails on a clean checkout until go generate has run",
		"Le café <menu> & the 日本 build breaks 🙂 when TZ is unset",
		"The linter reports \"unused\" for \\t fields after a rename",
		"The encoder writes the line separators raw\u2028\u2029",
	}
	for _, text := range texts {
		rec, err := SignLesson(id, LessonDraft{Kind: KindError, Text: text, Seen: 3, Strength: 0.875, Updated: now, Parents: []string{LessonHash("error", "x")}})
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		got, err := Verify(rec.Raw, now)
		if err != nil {
			t.Fatalf("%q: %v\n%s", text, err, rec.Raw)
		}
		if got.Text != text || got.Hash != rec.Hash || got.Seen != 3 || got.Strength != 0.875 || len(got.Parents) != 1 {
			t.Errorf("round trip changed the record: %+v", got)
		}
	}
	for _, c := range []struct{ name, text string }{
		{"instruction", "Always run make clean before a release build"},
		{"raw data", "The build reads /home/alice/.netrc for credentials"},
		{"empty", "   "},
		{"too long", strings.Repeat("a", 1001)},
		{"bad utf-8", "caf\xe9"},
	} {
		if _, err := SignLesson(id, LessonDraft{Kind: KindError, Text: c.text, Updated: now}); err == nil {
			t.Errorf("%s: SignLesson accepted %q", c.name, c.text)
		}
	}
	if _, err := SignLesson(id, LessonDraft{Kind: "note", Text: "The note kind is no lesson", Updated: now}); err == nil {
		t.Error("SignLesson accepted kind note")
	}
}

func TestEncodeFloatMatchesPythonRepr(t *testing.T) {
	for f, want := range map[float64]string{
		0: "0.0", 1: "1.0", 0.5: "0.5", 0.75: "0.75", 0.875: "0.875", 0.1: "0.1",
		1.0 / 3: "0.3333333333333333", 1e-05: "1e-05", 0.0001: "0.0001", 1.5e-07: "1.5e-07",
		1e16: "1e+16", 1e15: "1000000000000000.0", 123.25: "123.25", -2.5: "-2.5",
	} {
		if got := EncodeFloat(f); got != want {
			t.Errorf("EncodeFloat(%v) = %s, want %s", f, got, want)
		}
	}
}

func TestEncodeStringMatchesPython(t *testing.T) {
	for in, want := range map[string]string{
		"plain":        `"plain"`,
		"q\"b\\":       `"q\"b\\"`,
		"\n\r\t\b\f":   `"\n\r\t\b\f"`,
		"\x01\x1f\x7f": "\"\\u0001\\u001f\x7f\"",
		"<>&\u2028é日🙂": "\"<>&\u2028é日🙂\"",
		"/":            `"/"`,
	} {
		if got := EncodeString(in); got != want {
			t.Errorf("EncodeString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestCutSigAnywhere(t *testing.T) {
	id := testIdentity(t, "bob")
	rec, err := SignConfirmation(id, LessonHash("error", "x"), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	line := string(rec.Raw)
	i := strings.Index(line, `,"sig":`)
	sigMember := line[i+1 : i+1+len(`"sig":""`)+128]
	unsigned := line[:i] + line[i+1+len(sigMember):]
	cases := []struct {
		name string
		line string
		ok   bool
	}{
		{"canonical", line, true},
		{"sig first: the cut leaves the signed bytes", "{" + sigMember + "," + unsigned[1:], true},
		{"sig last", unsigned[:len(unsigned)-1] + "," + sigMember + "}", true},
		{"white space added elsewhere", strings.Replace(line, `"v":1`, `"v": 1`, 1), false},
		{"two sigs", unsigned[:len(unsigned)-1] + "," + sigMember + "," + sigMember + "}", false},
		{"sig nested only", unsigned[:len(unsigned)-1] + `,"x":{` + sigMember + "}}", false},
	}
	for _, c := range cases {
		_, err := Verify([]byte(c.line), time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
		if (err == nil) != c.ok {
			t.Errorf("%s: err = %v, want ok=%v", c.name, err, c.ok)
		}
	}
}
