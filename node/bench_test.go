package node

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// batchOfLessons signs n lessons of distinct memories, as a gossip message
// carrying one sleep's news from a busy team would. Their texts differ
// only in two numbers, so the lexical similarity takes them all for one
// meaning (0.81 against a threshold of 0.48): every lesson corroborates
// every candidate before it, the merge rule's heaviest case.
func batchOfLessons(b *testing.B, seed, n int) [][]byte {
	return signedBatch(b, seed, n, func(i int) string {
		return fmt.Sprintf("The build of service %d fails when the cache volume %d is full", seed, i)
	})
}

// batchOfDistinctLessons is batchOfLessons with texts of mostly distinct
// meaning: eight sentence frames filled with four of 120 nouns, so that
// about 1.5% of pairs reach the threshold (a frame and a noun in common)
// and a received lesson corroborates a candidate or two, not all of them.
func batchOfDistinctLessons(b *testing.B, seed, n int) [][]byte {
	r := rand.New(rand.NewPCG(uint64(seed), 7))
	return signedBatch(b, seed, n, func(int) string {
		w := func() any { return benchNouns[r.IntN(len(benchNouns))] }
		// A few draws read to the text checks as raw data or an order
		// (false positives of theirs, e.g. "The artifact reports ..."):
		// the benchmark measures valid lessons, so it draws again.
		for range 100 {
			if text := fmt.Sprintf(benchFrames[r.IntN(len(benchFrames))], w(), w(), w(), w()); protocol.CheckLessonText(text) == nil {
				return text
			}
		}
		b.Fatal("100 draws of a lesson text in a row were refused by the text checks")
		return ""
	})
}

var benchNouns = []string{"cache", "volume", "proxy", "certificate", "cluster", "queue", "scheduler", "runner", "mirror", "registry",
	"index", "migration", "schema", "replica", "backup", "snapshot", "token", "session", "cookie", "socket",
	"compiler", "linker", "toolchain", "container", "image", "manifest", "lockfile", "vendor", "module", "plugin",
	"gateway", "firewall", "resolver", "balancer", "webhook", "pipeline", "artifact", "bucket", "tunnel", "daemon",
	"kernel", "driver", "printer", "keyboard", "monitor", "battery", "sensor", "camera", "speaker", "router",
	"spreadsheet", "invoice", "ledger", "payroll", "calendar", "mailbox", "archive", "catalog", "inventory", "warehouse",
	"thermostat", "elevator", "turbine", "conveyor", "forklift", "pallet", "sprinkler", "generator", "valve", "pump",
	"microscope", "centrifuge", "pipette", "incubator", "freezer", "reagent", "sample", "specimen", "assay", "plate",
	"kiosk", "terminal", "scanner", "badge", "turnstile", "locker", "projector", "whiteboard", "headset", "dongle",
	"tractor", "harvester", "irrigation", "greenhouse", "silo", "trailer", "compressor", "boiler", "furnace", "chimney",
	"satellite", "antenna", "modem", "repeater", "transponder", "beacon", "radar", "sonar", "telescope", "gyroscope",
	"ticket", "refund", "coupon", "voucher", "receipt", "checkout", "basket", "wishlist", "shipment", "parcel"}

var benchFrames = []string{
	"The %s %s breaks when the %s %s restarts",
	"Upgrading the %s silently resets the %s and the %s %s",
	"A full %s makes the %s reject every %s from the %s",
	"The %s only accepts a %s after the %s %s is renewed",
	"Nightly %s jobs lock the %s so the %s %s times out",
	"Without a warm %s the %s %s takes minutes to load the %s",
	"Old %s versions corrupt the %s when the %s has no %s",
	"The %s reports a stale %s until the %s and %s are synced",
}

func signedBatch(b *testing.B, seed, n int, text func(i int) string) [][]byte {
	b.Helper()
	out := make([][]byte, n)
	at := time.Now().Add(-time.Hour)
	for i := range out {
		s := sha256.Sum256([]byte(fmt.Sprintf("bench-%d-%d", seed, i)))
		id, _ := protocol.NewIdentity(s[:])
		rec, err := protocol.SignLesson(id, protocol.LessonDraft{Kind: protocol.KindError,
			Text: text(i), Seen: 2, Strength: 0.75, Updated: at})
		if err != nil {
			b.Fatal(err)
		}
		out[i] = rec.Raw
	}
	return out
}

// bareVerify is the baseline: ed25519.Verify over the same lines, with the
// signature and the signed bytes already cut out.
type bareLine struct {
	pub, msg, sig []byte
}

func bareOf(b *testing.B, lines [][]byte) []bareLine {
	out := make([]bareLine, len(lines))
	for i, l := range lines {
		rec, err := protocol.Decode(l)
		if err != nil {
			b.Fatal(err)
		}
		pub, _ := hex.DecodeString(rec.Key)
		s := string(l)
		at := len(`,"sig":"`)
		i0 := strings.Index(s, `,"sig":"`)
		sig, _ := hex.DecodeString(s[i0+at : i0+at+128])
		out[i] = bareLine{pub: pub, msg: []byte(s[:i0] + s[i0+at+129:]), sig: sig}
	}
	return out
}

// BenchmarkReceivePath measures records per second through the receive path
// (protocol.Verify as the gossip validator runs it, then Deliver: the merge
// into Badger and the merge rule) against bare ed25519.Verify of the same
// lines, alternating both in one loop on one core. Target: at least 0.8x.
// "deliver" sends lessons that all say the same (batchOfLessons), the
// merge rule's worst case; "deliver-distinct" lessons of mostly distinct
// meaning (batchOfDistinctLessons).
func BenchmarkReceivePath(b *testing.B) {
	deliver := func(m *Memory, recs []*protocol.Record) error {
		_, err := m.Deliver(context.Background(), "team:bench", recs)
		return err
	}
	b.Run("deliver", func(b *testing.B) { receivePath(b, batchOfLessons, deliver) })
	b.Run("deliver-distinct", func(b *testing.B) { receivePath(b, batchOfDistinctLessons, deliver) })
	// The set merge alone, without the merge rule's candidate lessons.
	b.Run("records-only", func(b *testing.B) {
		receivePath(b, batchOfLessons, func(m *Memory, recs []*protocol.Record) error {
			_, err := m.store.PutRecords(recs, "team:bench", time.Now())
			return err
		})
	})
}

func receivePath(b *testing.B, batch func(b *testing.B, seed, n int) [][]byte, merge func(*Memory, []*protocol.Record) error) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	m, err := Open(Config{Home: b.TempDir(), Create: true, Store: store.Options{}})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	const perMsg = 50
	batches := make([][][]byte, 0, 64)
	var path, bare, pathCPU, bareCPU time.Duration
	records := 0
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		if i >= len(batches) {
			batches = append(batches, batch(b, i, perMsg))
		}
		lines := batches[i]
		bl := bareOf(b, lines)
		b.StartTimer()

		c0, t0 := testutil.CPUTime(), time.Now()
		recs := make([]*protocol.Record, 0, perMsg)
		now := time.Now()
		for _, l := range lines {
			rec, err := protocol.Verify(l, now)
			if err != nil {
				b.Fatal(err)
			}
			recs = append(recs, rec)
		}
		if err := merge(m, recs); err != nil {
			b.Fatal(err)
		}
		c1, t1 := testutil.CPUTime(), time.Now()
		for _, x := range bl {
			if !ed25519.Verify(x.pub, x.msg, x.sig) {
				b.Fatal("bare verify failed")
			}
		}
		c2, t2 := testutil.CPUTime(), time.Now()
		path += t1.Sub(t0)
		bare += t2.Sub(t1)
		pathCPU += c1 - c0
		bareCPU += c2 - c1
		records += perMsg
	}
	b.ReportMetric(float64(records)/path.Seconds(), "path-records/s")
	b.ReportMetric(float64(records)/bare.Seconds(), "bare-verifies/s")
	b.ReportMetric(bare.Seconds()/path.Seconds(), "path/bare-throughput")
	// CPU time of the whole process (Badger's goroutines included) is steady
	// when other work shares the machine; wall time is not.
	b.ReportMetric(float64(records)/pathCPU.Seconds(), "path-records/cpu-s")
	b.ReportMetric(bareCPU.Seconds()/pathCPU.Seconds(), "path/bare-cpu-throughput")
}

// BenchmarkMemoryAtRest reports the heap a memory holding 1,000 records and
// their candidate lessons keeps after a GC.
func BenchmarkMemoryAtRest(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		m, err := Open(Config{Home: b.TempDir(), Create: true, Store: store.Options{Small: true}})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < 20; i++ {
			deliverLines(b, m, batchOfLessons(b, 1000+i, 50))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MiB")
		m.Close()
		b.StartTimer()
	}
}

// BenchmarkDeliverFloodOverEvents delivers one key's 1,000 new lessons to
// a memory holding 2,000 events: each new candidate is compared with the
// events for "met before", under the sleep lock. metBeforeEvents bounds
// that work.
func BenchmarkDeliverFloodOverEvents(b *testing.B) {
	m, err := Open(Config{Home: b.TempDir(), Create: true})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	evs := make([]protocol.Event, 2000)
	for i := range evs {
		evs[i] = protocol.Event{Kind: "error", Title: "go test", Happened: fmt.Sprintf("the integration suite %d times out when the VPN %d drops", i, i*7),
			Session: fmt.Sprintf("s%d", i)}
	}
	if _, err := m.Remember(evs); err != nil {
		b.Fatal(err)
	}
	flood, err := protocol.GenerateIdentity()
	if err != nil {
		b.Fatal(err)
	}
	batches := make([][]*protocol.Record, b.N)
	for n := range batches {
		for i := range protocol.MaxOriginRecs {
			rec, err := protocol.SignLesson(flood, protocol.LessonDraft{Kind: protocol.KindError,
				Text: fmt.Sprintf("The mirror build %d of round %d fails after midnight", i, n), Seen: 1, Strength: 0.5, Updated: time.Now().Add(-time.Hour)})
			if err != nil {
				b.Fatal(err)
			}
			batches[n] = append(batches[n], rec)
		}
	}
	b.ResetTimer()
	for n := range b.N {
		if _, err := m.Deliver(context.Background(), fmt.Sprintf("team:%d", n), batches[n]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDeliver is Deliver alone on records already verified, in CPU
// time per record: the merge rule and the store's reads and writes, as
// BenchmarkReceivePath's "deliver" and "deliver-distinct" run them.
func BenchmarkDeliver(b *testing.B) {
	for _, c := range []struct {
		name  string
		batch func(b *testing.B, seed, n int) [][]byte
	}{{"same", batchOfLessons}, {"distinct", batchOfDistinctLessons}} {
		b.Run(c.name, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			m, err := Open(Config{Home: b.TempDir(), Create: true, Store: store.Options{}})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			const perMsg = 50
			var cpu time.Duration
			records := 0
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				lines := c.batch(b, i, perMsg)
				recs := make([]*protocol.Record, len(lines))
				for j, l := range lines {
					if recs[j], err = protocol.Decode(l); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				c0 := testutil.CPUTime()
				if _, err := m.Deliver(context.Background(), "team:bench", recs); err != nil {
					b.Fatal(err)
				}
				cpu += testutil.CPUTime() - c0
				records += perMsg
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(records), "cpu-µs/record")
		})
	}
}

// BenchmarkMergeRule is the merge rule alone, in CPU per record: the
// lessons of one batch noted against a memory that holds 20 batches'
// candidates, as Deliver notes them, but not written, so that every
// round starts from the same state. Without the signing and the store's
// writes it varies less than BenchmarkReceivePath on a busy machine.
func BenchmarkMergeRule(b *testing.B) {
	for _, c := range []struct {
		name  string
		batch func(b *testing.B, seed, n int) [][]byte
	}{{"same", batchOfLessons}, {"distinct", batchOfDistinctLessons}} {
		b.Run(c.name, func(b *testing.B) {
			m, err := Open(Config{Home: b.TempDir(), Create: true, Store: store.Options{}})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			const perMsg = 50
			decode := func(seed int) []*protocol.Record {
				lines := c.batch(b, seed, perMsg)
				recs := make([]*protocol.Record, len(lines))
				for j, l := range lines {
					if recs[j], err = protocol.Decode(l); err != nil {
						b.Fatal(err)
					}
				}
				return recs
			}
			for i := range 20 {
				if _, err := m.Deliver(context.Background(), "team:bench", decode(i)); err != nil {
					b.Fatal(err)
				}
			}
			ctx, now := context.Background(), time.Now()
			var cpu time.Duration
			records := 0
			for i := 0; b.Loop(); i++ {
				// New texts each round, as new lessons would be: their
				// profiles are not cached yet.
				b.StopTimer()
				recs := decode(1000 + i)
				b.StartTimer()
				c0 := testutil.CPUTime()
				m.sleepMu.Lock()
				dc := m.newDeliverContext()
				if err := dc.preload(recs, m.Origin()); err != nil {
					b.Fatal(err)
				}
				for _, rec := range recs {
					if _, err := m.noteLesson(ctx, dc, rec, "team:bench", now); err != nil {
						b.Fatal(err)
					}
				}
				m.sleepMu.Unlock()
				cpu += testutil.CPUTime() - c0
				records += len(recs)
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(records), "cpu-µs/record")
		})
	}
}

// BenchmarkSleepOverCandidates times one sleep over 8,000 new events in a
// memory holding 400 received candidates: the verify pass matches the
// events with the candidates before clustering the rest. Comparing every
// candidate with every event, the sleep took 5.8 s, half of it in the
// verify pass; with consolidate.Matches 3.0 s.
func BenchmarkSleepOverCandidates(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		m, project := openTest(b, nil)
		for i := 0; i < 8; i++ {
			deliverLines(b, m, batchOfDistinctLessons(b, 500+i, 50))
		}
		gen := testutil.FailureEvents(8000, 5)
		evs := make([]protocol.Event, len(gen))
		for i, e := range gen {
			evs[i] = protocol.Event{Kind: "error", Title: e.Title, Happened: e.Happened, Session: fmt.Sprint("s", i), Cwd: project}
		}
		if _, err := m.Remember(evs); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := m.Sleep(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// deliverLines delivers signed lines (batchOfLessons…) to m on the bench
// team, as a gossip message would after its validator.
func deliverLines(b *testing.B, m *Memory, lines [][]byte) {
	b.Helper()
	recs := make([]*protocol.Record, len(lines))
	for j, l := range lines {
		recs[j], _ = protocol.Decode(l)
	}
	if _, err := m.Deliver(context.Background(), "team:bench", recs); err != nil {
		b.Fatal(err)
	}
}
