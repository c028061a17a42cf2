package gossip

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/remem/remem/internal/forge"
	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/protocol"
)

// benchHeld are 100,000 lessons of 100 origins, signed once for every
// benchmark of the run.
var benchHeld = sync.OnceValue(func() *memHolder {
	h := newMemHolder()
	updated := protocol.FormatTime(time.Now().Add(-time.Hour))
	for o := range 100 {
		id, err := protocol.GenerateIdentity()
		if err != nil {
			panic(err)
		}
		for i := range 1000 {
			text := fmt.Sprintf("Running %s in batch %d of the nightly job times out after the dependency update when step %d runs twice", subjects[i%len(subjects)], o, i)
			rec, err := protocol.Decode(forge.Lesson(id, text, updated))
			if err != nil {
				panic(err)
			}
			h.put(scopes.Team("t"), rec)
		}
	}
	return h
})

// storeHolder reads fresh copies of its lines on every call, as a holder
// over a store does: what a snapshot keeps of them, it alone keeps alive.
type storeHolder struct{ *memHolder }

func (h storeHolder) Held(scope string) ([][]byte, error) {
	lines, err := h.memHolder.Held(scope)
	for i, l := range lines {
		lines[i] = bytes.Clone(l)
	}
	return lines, err
}

// BenchmarkSnapshot builds the snapshot of 100,000 held records and
// reports what it allocates and what it keeps alive per record, and the
// ratio of what it keeps to the held lines' own bytes (the baseline: a
// snapshot that held every line would keep at least 1 of them).
func BenchmarkSnapshot(b *testing.B) {
	h := storeHolder{benchHeld()}
	lines, _ := h.Held(scopes.Team("t"))
	lineBytes := 0
	for _, l := range lines {
		lineBytes += len(l)
	}
	recs := float64(len(lines))
	lines = nil
	var kept uint64
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		tm := &team{name: "t", scope: scopes.Team("t"), sync: newSyncState()}
		n := &Node{holder: h}
		before := heapInUse()
		s, err := n.snapshot(tm)
		if err != nil {
			b.Fatal(err)
		}
		kept = heapInUse() - before
		runtime.KeepAlive(s)
		runtime.KeepAlive(tm)
	}
	b.ReportMetric(float64(kept)/recs, "kept-B/record")
	b.ReportMetric(float64(kept)/float64(lineBytes), "kept/lines")
	b.ReportMetric(float64(lineBytes)/recs, "line-B/record")
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
