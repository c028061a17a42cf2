package textcheck

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// TestRawDataSets reads every testdata/rawdata*.jsonl ({"text", "raw",
// "category"} or "kind") and logs, per file and category, how many raw
// sentences are refused and how many public ones are; with -v it lists the
// mistakes. The targets (raw refused >= 0.97, public refused <= 0.03) are
// logged, not enforced: the sets are training data, not a gate.
func TestRawDataSets(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "rawdata*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no raw-data sets: %v", err)
	}
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		type tally struct{ raw, rawRefused, public, publicRefused int }
		per := map[string]*tally{}
		var all tally
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			var l struct {
				Text     string `json:"text"`
				Raw      bool   `json:"raw"`
				Category string `json:"category"`
				Kind     string `json:"kind"`
			}
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			cat := l.Category
			if cat == "" {
				cat = l.Kind
			}
			if per[cat] == nil {
				per[cat] = &tally{}
			}
			found := FindRawData(l.Text)
			got := found != nil
			for _, x := range []*tally{per[cat], &all} {
				if l.Raw {
					x.raw++
					if got {
						x.rawRefused++
					}
				} else {
					x.public++
					if got {
						x.publicRefused++
					}
				}
			}
			if got != l.Raw && testing.Verbose() {
				t.Logf("%s MISS [%s] want raw=%v, found %v: %q", filepath.Base(path), cat, l.Raw, found, l.Text)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		frac := func(a, b int) float64 {
			if b == 0 {
				return 0
			}
			return float64(a) / float64(b)
		}
		t.Logf("%s: raw refused %d/%d = %.3f, public refused %d/%d = %.3f", filepath.Base(path),
			all.rawRefused, all.raw, frac(all.rawRefused, all.raw), all.publicRefused, all.public, frac(all.publicRefused, all.public))
		cats := make([]string, 0, len(per))
		for c := range per {
			cats = append(cats, c)
		}
		sort.Strings(cats)
		for _, c := range cats {
			x := per[c]
			t.Logf("  %-28s raw refused %3d/%-3d public refused %3d/%-3d", c, x.rawRefused, x.raw, x.publicRefused, x.public)
		}
	}
}
