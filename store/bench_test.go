package store

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

func benchOptions() map[string]Options {
	return map[string]Options{"small": {Small: true}, "default": {}}
}

// BenchmarkPutRecords merges batches of 1,000 signed records (a lesson and
// four confirmations per hash): new ones (the store grows by 1,000 keys per
// op, up to 100,000, then starts over), and the same batch again (all
// duplicates).
func BenchmarkPutRecords(b *testing.B) {
	batches, _ := hundredK(b)
	for _, name := range []string{"small", "default"} {
		opts := benchOptions()[name]
		b.Run(name+"/new", func(b *testing.B) { putNew(b, opts, batches, 1000) })
		// Batches of 50, as gossip delivers them (the receive path).
		b.Run(name+"/new50", func(b *testing.B) {
			var small [][]*protocol.Record
			for _, batch := range batches {
				for j := 0; j < len(batch); j += 50 {
					small = append(small, batch[j:min(j+50, len(batch))])
				}
			}
			putNew(b, opts, small, 50)
		})
		b.Run(name+"/duplicate", func(b *testing.B) {
			s, err := Open(b.TempDir(), opts)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			recs := batches[0]
			if _, err := s.PutRecords(recs, "team/a", t0); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := testutil.CPUTime()
			for i := 0; i < b.N; i++ {
				if _, err := s.PutRecords(recs, "team/a", t0); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportCPU(b, cpu, 1000)
		})
	}
}

var (
	forHashOnce sync.Once
	forHashRecs [][]*protocol.Record // batches of 1,000
	forHashKeys []string
)

// hundredK signs 100,000 records: 20,000 lessons, each with 4
// confirmations from other origins.
func hundredK(b *testing.B) ([][]*protocol.Record, []string) {
	forHashOnce.Do(func() {
		ids := []protocol.Identity{ident(b, 1), ident(b, 2), ident(b, 3), ident(b, 4), ident(b, 5)}
		var batch []*protocol.Record
		for h := 0; h < 20000; h++ {
			l := signLesson(b, ids[h%5], lessonText(h), 1, t0)
			forHashKeys = append(forHashKeys, l.Hash)
			batch = append(batch, l)
			for k := 1; k < 5; k++ {
				batch = append(batch, signConfirm(b, ids[(h+k)%5], l.Hash, t0.Add(time.Hour)))
			}
			if len(batch) >= 1000 {
				forHashRecs = append(forHashRecs, batch)
				batch = nil
			}
		}
	})
	return forHashRecs, forHashKeys
}

// BenchmarkForHash reads every record about one hash out of 100,000 held
// (5 records per hash).
func BenchmarkForHash(b *testing.B) {
	batches, hashes := hundredK(b)
	for _, name := range []string{"small", "default"} {
		b.Run(name, func(b *testing.B) {
			s, err := Open(b.TempDir(), benchOptions()[name])
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			start := time.Now()
			for _, batch := range batches {
				if _, err := s.PutRecords(batch, "commons", t0); err != nil {
					b.Fatal(err)
				}
			}
			fill := time.Since(start)
			if n, _ := s.CountRecords(); n != 100000 {
				b.Fatalf("%d records", n)
			}
			// Let the compactions the fill started finish, as they will on a
			// node that has been up a while, so they do not bill this read.
			if err := s.db.Flatten(1); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := testutil.CPUTime()
			for i := 0; i < b.N; i++ {
				held, err := s.ForHash(hashes[(i*7919)%len(hashes)])
				if err != nil || len(held) != 5 {
					b.Fatalf("%d, %v", len(held), err)
				}
			}
			b.StopTimer()
			reportCPU(b, cpu, 1)
			b.Logf("filled 100,000 records in %v", fill)
		})
	}
}

// BenchmarkScan walks all 100,000 records (Each) and lists the hashes.
func BenchmarkScan(b *testing.B) {
	batches, _ := hundredK(b)
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for _, batch := range batches {
		if _, err := s.PutRecords(batch, "commons", t0); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.db.Flatten(1); err != nil {
		b.Fatal(err)
	}
	b.Run("Each", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := s.Each(func(Held) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Hashes", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if hs, err := s.Hashes(); err != nil || len(hs) != 20000 {
				b.Fatal(len(hs), err)
			}
		}
	})
	// What the first merge after Open spends building the filter of the
	// held record keys.
	b.Run("HeldFilterBuild", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var f heldFilter
			if err := s.view(func(txn *badger.Txn) error { f.build(txn); return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("CountRecords", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := s.CountRecords(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// reportCPU adds cpu-ns/op (and per record) since start.
// putNew merges batches of records none of which the store holds: a new
// store is opened each time every batch has gone in once.
func putNew(b *testing.B, opts Options, batches [][]*protocol.Record, perBatch int) {
	var s *Store
	defer func() { s.Close() }()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := testutil.CPUTime()
	for i := 0; i < b.N; i++ {
		if i%len(batches) == 0 {
			b.StopTimer()
			if s != nil {
				s.Close()
			}
			var err error
			if s, err = Open(b.TempDir(), opts); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if _, err := s.PutRecords(batches[i%len(batches)], "team/a", t0); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportCPU(b, cpu, perBatch)
}

func reportCPU(b *testing.B, start time.Duration, perOp int) {
	d := float64(testutil.CPUTime()-start) / float64(b.N)
	b.ReportMetric(d, "cpu-ns/op")
	if perOp > 1 {
		b.ReportMetric(d/float64(perOp), "cpu-ns/record")
	}
}

func rssKiB() int { return procStatus("VmRSS:") }

func procStatus(field string) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field) {
			n, _ := strconv.Atoi(strings.Fields(line)[1])
			return n
		}
	}
	return 0
}

// BenchmarkSmallStoresRSS opens 100 small stores in one process, as a
// testnet does, and reports the resident memory each costs, busy and after
// 10 s idle (Badger releases its pooled table-builder buffers when idle):
//
//	REMEM_STORE_RSS=300 go test ./store -run x -bench SmallStoresRSS -benchtime 1x
//
// REMEM_STORE_RSS is the records per store (at least 300, the default);
// REMEM_STORE_HEAPPROF names a file for a heap profile.
func BenchmarkSmallStoresRSS(b *testing.B) {
	const n = 100
	perStore, _ := strconv.Atoi(os.Getenv("REMEM_STORE_RSS"))
	perStore = max(perStore, 300)
	var recs []*protocol.Record
	id := ident(b, 1)
	for i := 0; i < perStore; i++ {
		recs = append(recs, signLesson(b, id, lessonText(i), 1, t0))
	}
	for b.Loop() {
		runtime.GC()
		before := rssKiB()
		dir := b.TempDir()
		var stores []*Store
		for i := 0; i < n; i++ {
			s, err := Open(filepath.Join(dir, strconv.Itoa(i)), Options{Small: true})
			if err != nil {
				b.Fatal(err)
			}
			stores = append(stores, s)
			for j := 0; j < len(recs); j += 500 {
				if _, err := s.PutRecords(recs[j:min(j+500, len(recs))], "team/a", t0); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := s.ForHash(recs[i].Hash); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		busy := rssKiB()
		time.Sleep(10 * time.Second) // what is measured: the memory an idle store keeps
		runtime.GC()
		debug.FreeOSMemory()
		idle := rssKiB()
		b.ReportMetric(float64(busy-before)/1024/n, "busy-MiB/store")
		b.ReportMetric(float64(idle-before)/1024/n, "idle-MiB/store")
		b.ReportMetric(float64(procStatus("RssAnon:"))/1024, "idle-anon-MiB")
		if path := os.Getenv("REMEM_STORE_HEAPPROF"); path != "" {
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			if err := pprof.WriteHeapProfile(f); err != nil {
				b.Fatal(err)
			}
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
		}
		for _, s := range stores {
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
