package node_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/remem/remem/node"
	remcp "github.com/remem/remem/node/mcp"
	"github.com/remem/remem/protocol"
)

// benchHome is a memory on disk for the view benchmark, with its clock.
type benchHome struct {
	m   *node.Memory
	now time.Time
	api http.Handler
}

// viewBenchHome holds 150 own lessons and 150 of a trusted colleague, and
// strangers' candidates of fresh keys, delivered 500 to a batch as a
// flood over gossip would. Every text draws on one vocabulary; the
// strangers' also say "zebrafish", which no vouched lesson does.
func viewBenchHome(b *testing.B, strangers int) *benchHome {
	b.Helper()
	colleague := node.IDOfSeed(b, "bench colleague")
	h := &benchHome{now: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)}
	m, err := node.Open(node.Config{Home: b.TempDir(), Create: true, Now: func() time.Time { return h.now },
		Admission: node.Admission{Trust: []string{colleague.Origin()}},
		// Above the default budget (50,000 strangers' records), as a
		// person may configure it: the views must not depend on it.
		Strangers: node.StrangerBudget{Records: 1 << 30, Bytes: 1 << 40}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = m.Close() })
	h.m, h.api = m, node.NewAPI(m, node.APIOptions{})
	r := rand.New(rand.NewPCG(1, 2))
	for own := 0; own < 150; {
		if _, err := m.Publish(protocol.KindError, node.RandomText(r)); err == nil {
			own++
		}
	}
	candidates := 0
	deliver := func(recs []*protocol.Record) {
		rep, err := m.Deliver(context.Background(), "team:bench", recs)
		if err != nil {
			b.Fatal(err)
		}
		candidates += rep.Candidates
		h.now = h.now.Add(time.Minute)
	}
	var theirs []*protocol.Record
	for len(theirs) < 150 {
		rec, err := protocol.SignLesson(colleague, protocol.LessonDraft{Kind: protocol.KindError, Text: node.RandomText(r), Seen: 1, Strength: 0.5, Updated: h.now})
		if err == nil {
			theirs = append(theirs, rec)
		}
	}
	deliver(theirs)
	for done := 0; done < strangers; {
		var batch []*protocol.Record
		for ; len(batch) < 500 && done < strangers; done++ {
			id := node.IDOfSeed(b, fmt.Sprint("bench stranger ", done))
			text := fmt.Sprintf("%s near the zebrafish %d", node.RandomText(r), done)
			if rec, err := protocol.SignLesson(id, protocol.LessonDraft{Kind: protocol.KindError, Text: text, Seen: 9, Strength: 1, Updated: h.now}); err == nil {
				batch = append(batch, rec)
			}
		}
		deliver(batch)
	}
	if candidates < 150+strangers*9/10 {
		b.Fatalf("the home holds %d candidates, not the %d delivered", candidates, 150+strangers)
	}
	return h
}

// getLessons answers GET /lessons with path's query through the API.
func (h *benchHome) getLessons(b *testing.B, path string) {
	req := httptest.NewRequest("GET", "http://127.0.0.1"+path, nil)
	req.Header.Set("Authorization", "Bearer "+h.m.APIToken())
	rec := httptest.NewRecorder()
	h.api.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
}

// BenchmarkViewsWithStrangers measures `remem context --limit 5` (as
// PickContext picks it), `remem lessons` (its default limit of 50) and
// GET /lessons (its default limit) on a home of 300 own and trusted
// lessons with 100,000 strangers' candidates, against the same views of
// the same home without the strangers, alternating both in one loop:
// "x-base" is the ratio. "full/indexed" is the view computed from every
// lesson (the path before the index, Limit 0), measured once, against the
// indexed one on the home with strangers. context-zebrafish asks about
// what only the strangers say, so recall scores its 1,000 strongest.
func BenchmarkViewsWithStrangers(b *testing.B) {
	strangers := 100_000
	if testing.Short() {
		strangers = 5_000
	}
	base, flooded := viewBenchHome(b, 0), viewBenchHome(b, strangers)
	ctx := context.Background()
	pick := func(q string) func(*testing.B, *benchHome) {
		return func(b *testing.B, h *benchHome) {
			if _, err := remcp.PickContext(ctx, node.Local{M: h.m}, q, 5, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	views := []struct {
		name      string
		run, full func(*testing.B, *benchHome)
	}{
		{"context", pick("cluster proxy certificate queue"), func(b *testing.B, h *benchHome) {
			if _, err := h.m.Recall(ctx, "cluster proxy certificate queue", 0); err != nil {
				b.Fatal(err)
			}
			if _, err := h.m.Lessons(node.Filter{}); err != nil {
				b.Fatal(err)
			}
		}},
		{"context-zebrafish", pick("zebrafish"), func(b *testing.B, h *benchHome) {
			if _, err := h.m.Recall(ctx, "zebrafish", 0); err != nil {
				b.Fatal(err)
			}
			if _, err := h.m.Lessons(node.Filter{}); err != nil {
				b.Fatal(err)
			}
		}},
		{"lessons", func(b *testing.B, h *benchHome) {
			if _, err := h.m.Lessons(node.Filter{Limit: 50}); err != nil {
				b.Fatal(err)
			}
		}, func(b *testing.B, h *benchHome) {
			if _, err := h.m.Lessons(node.Filter{}); err != nil {
				b.Fatal(err)
			}
		}},
		{"GET-lessons", func(b *testing.B, h *benchHome) { h.getLessons(b, "/lessons") },
			func(b *testing.B, h *benchHome) { h.getLessons(b, "/lessons?limit=0") }},
	}
	for _, v := range views {
		b.Run(v.name, func(b *testing.B) {
			var onBase, onFlooded time.Duration
			for b.Loop() {
				t0 := time.Now()
				v.run(b, base)
				t1 := time.Now()
				v.run(b, flooded)
				onBase, onFlooded = onBase+t1.Sub(t0), onFlooded+time.Since(t1)
			}
			n := float64(b.N)
			b.ReportMetric(onBase.Seconds()*1e3/n, "base-ms/op")
			b.ReportMetric(onFlooded.Seconds()*1e3/n, "strangers-ms/op")
			b.ReportMetric(onFlooded.Seconds()/onBase.Seconds(), "x-base")
			t0 := time.Now()
			v.full(b, flooded)
			b.ReportMetric(time.Since(t0).Seconds()/(onFlooded.Seconds()/n), "full/indexed")
		})
	}
}
