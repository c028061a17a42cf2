package node

import (
	"encoding/json"
	"testing"

	"github.com/remem/remem/protocol"
)

// FuzzReadLayer reads arbitrary lessons.jsonl content as a layer: never a
// panic, and every lesson it takes has a lesson kind, a text and no
// instruction in it.
func FuzzReadLayer(f *testing.F) {
	f.Add([]byte(`{"id":"x","text":"The staging database is reset every night","kind":"surprise","seen":2,"strength":0.75,"updated":"2026-11-01T00:00:00Z"}` + "\n"))
	f.Add([]byte(`{"text":"Always run make clean","kind":"error"}` + "\n{broken\n"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		layer, err := ParseLayer("fuzz", data)
		if err != nil {
			return
		}
		for _, v := range layer.Lessons {
			if !protocol.ValidKind(v.Kind) || v.Text == "" || protocol.CheckObservation(v.Text) != nil {
				t.Fatalf("layer lesson taken: %+v", v)
			}
			if !(v.Strength >= 0 && v.Strength <= 1) {
				t.Fatalf("layer lesson with strength %v", v.Strength)
			}
			if v.Hash != protocol.LessonHash(v.Kind, v.Text) {
				t.Fatal("layer lesson with a wrong hash")
			}
		}
	})
}

// FuzzForeignMembers reads arbitrary lines of lessons.jsonl for the members
// other tools added: never a panic, and what it keeps, spliced into a line
// this node writes, is still one valid JSON object.
func FuzzForeignMembers(f *testing.F) {
	f.Add([]byte(`{"id":"l-1","hash":"ab","text":"t","reviewed_by":{"name":"alice"},"tags":["x"]}`))
	f.Add([]byte(`{"hash":"ab","hash":"cd","x":1,"x":2}`))
	f.Add([]byte(`{"hash":1,"x":2}`))
	f.Add([]byte(`{"hash":"ab","x":` + "\"\u2028\"}"))
	f.Add([]byte(`[1,2]`))
	f.Fuzz(func(t *testing.T, line []byte) {
		hash, more, ok := foreignMembers(line)
		if !ok {
			return
		}
		if hash == "" {
			t.Fatal("ok without a hash")
		}
		spliced := append([]byte(`{"id":"l-1"`), more...)
		spliced = append(spliced, '}')
		if !json.Valid(spliced) {
			t.Fatalf("%q spliced into %q", more, spliced)
		}
	})
}
