package protocol

import (
	"bytes"
	"os"
	"testing"
)

// FuzzVerify feeds arbitrary lines to the verifier: it must never panic, an
// accepted line must carry a consistent record, and a refusal must name a
// reason. The seeds are the conformance vectors and the project's own.
func FuzzVerify(f *testing.F) {
	for _, path := range []string{"testdata/conformance/records.jsonl", "testdata/vectors/records.jsonl"} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for _, v := range decodeRecordVectors(f, data) {
			f.Add(v)
		}
	}
	f.Add([]byte(`{"v":1}`))
	f.Add([]byte(`{"v":1,"sig":"","x":{"sig":1}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := Verify(line, conformanceNow)
		if err != nil {
			if ReasonOf(err) == "" {
				t.Fatalf("refusal without a reason: %v", err)
			}
			return
		}
		if !bytes.Equal(rec.Raw, line) || rec.Type == 0 || len(rec.Origin) != 16 || len(rec.Hash) != 32 {
			t.Fatalf("accepted an inconsistent record %+v", rec)
		}
		if rec.Type == TypeLesson && LessonHash(rec.Kind, rec.Text) != rec.Hash {
			t.Fatal("accepted a wrong hash")
		}
		if rec.Time.After(conformanceNow.Add(MaxClockSkew)) {
			t.Fatal("accepted a future record")
		}
	})
}

// FuzzNorm checks Norm's invariants: idempotent, no double or edge spaces.
func FuzzNorm(f *testing.F) {
	for _, s := range []string{"  Go  test\tFAILS ", "İstanbul", "ΟΔΟΣ ΣΑ", "unit\x1fsep", "a\u2028b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := Norm(s)
		if Norm(n) != n {
			t.Fatalf("Norm not idempotent on %q: %q then %q", s, n, Norm(n))
		}
		if len(n) > 0 && (n[0] == ' ' || n[len(n)-1] == ' ') || bytes.Contains([]byte(n), []byte("  ")) {
			t.Fatalf("Norm(%q) = %q has stray spaces", s, n)
		}
	})
}

func decodeRecordVectors(f *testing.F, data []byte) [][]byte {
	var out [][]byte
	for _, l := range SplitLines(data) {
		v := struct {
			Line    *string
			LineB64 []byte `json:"line_b64"`
		}{}
		if err := jsonUnmarshal(l.Bytes, &v); err != nil {
			f.Fatal(err)
		}
		if v.Line != nil {
			out = append(out, []byte(*v.Line))
		} else {
			out = append(out, v.LineB64)
		}
	}
	return out
}
