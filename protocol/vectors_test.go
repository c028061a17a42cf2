package protocol_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/internal/forge"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// The project's own record vectors (testdata/vectors/records.jsonl), in the
// format of the conformance copy, for the choices the SPEC leaves open
// (README, "Choices where the SPEC is silent"). The conformance copy is
// never edited; these are signed here, with a fixed key, by forge.
const vectorsFile = "testdata/vectors/records.jsonl"

var updateVectors = flag.Bool("update-vectors", false, "rewrite "+vectorsFile+" from projectVectors")

// vectorsNow is the "now" of the vectors, as for the conformance ones.
var vectorsNow = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// vector is one line of the vectors file.
type vector struct {
	Name    string `json:"name"`
	Verdict string `json:"verdict"`
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Line    string `json:"line"`
}

// lessonMembers is a sound lesson of the vectors' key, as canonical JSON
// values; a case changes some of them before signing.
func lessonMembers(id protocol.Identity) map[string]string {
	m := forge.LessonMembers(id, "go test fails on a clean checkout until go generate has run", "2026-11-13T10:00:00Z")
	m["seen"], m["strength"] = "2", "0.75"
	return m
}

// projectVectors are the cases: what a Python verifier of the SPEC as
// written (json.loads, `v == 1`, `isinstance(seen, int) and seen >= 0`)
// decides, and where remem decides otherwise, why.
func projectVectors(t *testing.T) []vector {
	id := testutil.Identity(t, "remem project vectors")
	cases := []struct {
		name, verdict, reason, member, value string
	}{
		{"seen-2^63", "accept", "Python reads any integer; seen is kept byte for byte, never computed with", "seen", "9223372036854775808"},
		{"seen-2^64", "accept", "", "seen", "18446744073709551616"},
		{"seen-40-digits", "accept", "", "seen", "1" + strings.Repeat("0", 39)},
		{"seen-4300-digits", "accept", "CPython's json reads integers of up to 4,300 digits (sys.int_info.default_max_str_digits)", "seen", "9" + strings.Repeat("0", 4299)},
		{"seen-4301-digits", "reject", "seen: CPython's json raises on an integer of more than 4,300 digits", "seen", "9" + strings.Repeat("0", 4300)},
		{"seen-minus-zero", "accept", "-0 is the integer 0 in JSON and in Python", "seen", "-0"},
		{"seen-minus-2^63-minus-1", "reject", "seen: negative", "seen", "-9223372036854775809"},
		{"seen-integral-float", "reject", "seen: 2.0 is a float in Python, not an integer", "seen", "2.0"},
		{"seen-exponent", "reject", "seen: 2e0 is a float in Python, not an integer", "seen", "2e0"},
		{"seen-true", "reject", "seen: a JSON boolean is not a number (a Python verifier must not take bool for int)", "seen", "true"},
		{"v-1.0", "accept", "1.0 == 1 in Python; the signature covers the bytes as sent", "v", "1.0"},
		{"v-1.00", "accept", "", "v", "1.00"},
		{"v-1e0", "accept", "", "v", "1e0"},
		{"v-10E-1", "accept", "", "v", "10E-1"},
		{"v-1-plus-1e-20", "accept", "reads as the binary64 1.0, as Python's float does", "v", "1.00000000000000000001"},
		{"v-1.5", "skip", "unknown version", "v", "1.5"},
		{"v-2.0", "skip", "unknown version", "v", "2.0"},
		{"v-minus-1", "skip", "unknown version", "v", "-1"},
		{"v-1e400", "skip", "unknown version: infinity in Python", "v", "1e400"},
		{"v-true", "reject", "v: a JSON boolean is not a number (True == 1 in Python, but not in JSON)", "v", "true"},
	}
	out := make([]vector, 0, len(cases))
	for _, c := range cases {
		m := lessonMembers(id)
		m[c.member] = c.value
		out = append(out, vector{Name: c.name, Verdict: c.verdict, Type: "lesson", Reason: c.reason, Line: string(forge.Sign(id, m))})
	}
	return out
}

// TestProjectVectorsFile: the file holds exactly the cases above, signed
// (Ed25519 is deterministic, so the bytes never change); -update-vectors
// writes it.
func TestProjectVectorsFile(t *testing.T) {
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	for _, v := range projectVectors(t) {
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	if *updateVectors {
		if err := os.WriteFile(vectorsFile, want.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("%s is not what projectVectors signs: run go test ./protocol -run TestProjectVectorsFile -update-vectors", vectorsFile)
	}
}

// TestProjectVectors reads the vectors file and checks every verdict.
func TestProjectVectors(t *testing.T) {
	f, err := os.Open(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var v vector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		n++
		t.Run(v.Name, func(t *testing.T) {
			rec, err := protocol.Verify([]byte(v.Line), vectorsNow)
			if got := protocol.VerdictOf(err); string(got) != v.Verdict {
				t.Fatalf("verdict %s (%v), want %s (%s)", got, err, v.Verdict, v.Reason)
			}
			if err == nil && rec.Type.String() != v.Type {
				t.Errorf("type %s, want %s", rec.Type, v.Type)
			}
			if err == nil { // a stored line decodes again, as the store reads it
				if _, err := protocol.Decode([]byte(v.Line)); err != nil {
					t.Errorf("Decode of an accepted line: %v", err)
				}
			}
		})
	}
	if err := sc.Err(); err != nil || n == 0 {
		t.Fatalf("%s: %d vectors, %v", vectorsFile, n, err)
	}
}
