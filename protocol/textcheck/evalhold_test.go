package textcheck

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestUnstudiedSetsHold keeps the blind sets nobody studied (eval_*.jsonl,
// rawdata_eval_*.jsonl: never trained on, their misses never read) at the
// targets of issue 25: instructions and texts in other languages refused
// >= 0.95, English observations refused by every check <= 0.03, private
// texts refused >= 0.95, public ones <= 0.05. A change that fails it lost
// ground on text nobody fitted to; read the counts, not the misses.
func TestUnstudiedSetsHold(t *testing.T) {
	sets, _ := filepath.Glob(filepath.Join("testdata", "eval_*.jsonl"))
	raws, _ := filepath.Glob(filepath.Join("testdata", "rawdata_eval_*.jsonl"))
	if len(sets) == 0 || len(raws) == 0 {
		t.Fatal("no unstudied set in testdata")
	}
	for _, path := range sets {
		var orders, ordersRefused, obs, obsRefused int
		eachLine(t, path, func(b []byte) {
			var l setLine
			if err := json.Unmarshal(b, &l); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			got := !CheckText(l.Text).OK()
			if l.Imperative || l.Lang != "" && l.Lang != "en" {
				orders++
				if got {
					ordersRefused++
				}
			} else {
				obs++
				if got {
					obsRefused++
				}
			}
		})
		t.Logf("%s: refused %d of %d instructions and other languages, %d of %d observations", path, ordersRefused, orders, obsRefused, obs)
		if float64(ordersRefused) < 0.95*float64(orders) || float64(obsRefused) > 0.03*float64(obs) {
			t.Errorf("%s: below the targets (0.95 refused, 0.03 wrongly refused)", path)
		}
	}
	for _, path := range raws {
		var raw, rawFound, public, publicFound int
		eachLine(t, path, func(b []byte) {
			var l struct {
				Text string `json:"text"`
				Raw  bool   `json:"raw"`
			}
			if err := json.Unmarshal(b, &l); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			got := FindRawData(l.Text) != nil
			if l.Raw {
				raw++
				if got {
					rawFound++
				}
			} else {
				public++
				if got {
					publicFound++
				}
			}
		})
		t.Logf("%s: found %d of %d private texts, %d of %d public ones", path, rawFound, raw, publicFound, public)
		if float64(rawFound) < 0.95*float64(raw) || float64(publicFound) > 0.05*float64(public) {
			t.Errorf("%s: below the targets (0.95 found, 0.05 wrongly found)", path)
		}
	}
}

// eachLine calls fn with each line of the file at path.
func eachLine(t *testing.T, path string, fn func([]byte)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	for sc.Scan() {
		fn(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
