package node

import (
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
