package protocol

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// conformanceNow is the "now" the vectors were written for.
var conformanceNow = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

const conformanceDir = "testdata/conformance"

// readVectors decodes every line of a conformance file into T.
func readVectors[T any](t *testing.T, name string) []T {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(conformanceDir, name))
	if err != nil {
		t.Fatalf("reading vectors: %v", err)
	}
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no vectors", name)
	}
	return out
}

// TestConformanceCopyMatchesShared fails when the repo's copy of the vectors
// drifts from ../shared/conformance, wherever that folder exists.
func TestConformanceCopyMatchesShared(t *testing.T) {
	shared := filepath.Join("..", "..", "shared", "conformance")
	entries, err := os.ReadDir(shared)
	if os.IsNotExist(err) {
		t.Skip("../shared/conformance is not here; the repo copy stands alone")
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		want, err := os.ReadFile(filepath.Join(shared, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(conformanceDir, e.Name()))
		if err != nil {
			t.Errorf("%s is missing from %s: copy it byte for byte", e.Name(), conformanceDir)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s/%s differs from %s: copy it again, never edit it", conformanceDir, e.Name(), shared)
		}
	}
}

func TestConformanceHash(t *testing.T) {
	type vector struct{ Kind, Text, Norm, Hash string }
	for _, v := range readVectors[vector](t, "hash.jsonl") {
		if got := Norm(v.Text); got != v.Norm {
			t.Errorf("Norm(%q) = %q, want %q", v.Text, got, v.Norm)
		}
		if got := LessonHash(v.Kind, v.Text); got != v.Hash {
			t.Errorf("LessonHash(%q, %q) = %s, want %s", v.Kind, v.Text, got, v.Hash)
		}
	}
}

func TestConformanceIdentity(t *testing.T) {
	type vector struct{ Name, Seed, Key, Origin string }
	for _, v := range readVectors[vector](t, "identity.jsonl") {
		seed, err := hex.DecodeString(v.Seed)
		if err != nil {
			t.Fatal(err)
		}
		id, err := NewIdentity(seed)
		if err != nil {
			t.Fatal(err)
		}
		if id.Key() != v.Key || id.Origin() != v.Origin {
			t.Errorf("%s: key %s origin %s, want %s %s", v.Name, id.Key(), id.Origin(), v.Key, v.Origin)
		}
	}
}

// RecordVector is one case of records.jsonl.
type RecordVector struct {
	Name, Verdict, Type, Reason string
	Line                        *string
	LineB64                     string `json:"line_b64"`
}

// Bytes returns the raw line of the vector.
func (v RecordVector) Bytes(t *testing.T) []byte {
	if v.Line != nil {
		return []byte(*v.Line)
	}
	b, err := base64.StdEncoding.DecodeString(v.LineB64)
	if err != nil {
		t.Fatalf("%s: %v", v.Name, err)
	}
	return b
}

func TestConformanceRecords(t *testing.T) {
	for _, v := range readVectors[RecordVector](t, "records.jsonl") {
		t.Run(v.Name, func(t *testing.T) {
			rec, err := Verify(v.Bytes(t), conformanceNow)
			if got := VerdictOf(err); string(got) != v.Verdict {
				t.Fatalf("verdict %s (%v), want %s (%s)", got, err, v.Verdict, v.Reason)
			}
			if err == nil && rec.Type.String() != v.Type {
				t.Errorf("type %s, want %s", rec.Type, v.Type)
			}
		})
	}
}

func TestConformanceImperative(t *testing.T) {
	type vector struct {
		Text       string
		Imperative bool
	}
	for _, v := range readVectors[vector](t, "imperative.jsonl") {
		err := CheckObservation(v.Text)
		if (err != nil) != v.Imperative {
			t.Errorf("CheckObservation(%q) = %v, want imperative=%v", v.Text, err, v.Imperative)
		}
	}
}
