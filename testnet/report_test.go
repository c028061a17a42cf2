package testnet

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestPercentile(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(100 - i) // 100..1, unsorted
	}
	cases := []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"empty", nil, 50, 0},
		{"one", []float64{7}, 99, 7},
		{"median of odd", []float64{3, 1, 2}, 50, 2},
		{"median of even is the lower", []float64{4, 1, 3, 2}, 50, 2},
		{"p50 of 1..100", hundred, 50, 50},
		{"p95 of 1..100", hundred, 95, 95},
		{"p99 of 1..100", hundred, 99, 99},
		{"p100 is the max", hundred, 100, 100},
		{"p0 is the min", hundred, 0, 1},
		{"p99 of ten is the max", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 99, 10},
		{"p90 of ten", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90, 9},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.xs, tc.p); got != tc.want {
				t.Errorf("Percentile(%v) = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
	// The input is not reordered.
	if hundred[0] != 100 {
		t.Error("Percentile sorted its input")
	}
}

func sampleReport() Report {
	r := Report{Nodes: 20, Degree: 3, Lessons: 100, Seed: 1, Scenario: Phases, SleepMs: 200, Edges: 60, Probes: 2,
		RSSBytes: 200 << 20, RSSPerNodeBytes: 10 << 20, BytesSource: "tcp", OK: false,
		Gossip: GossipReport{D: 4, Dlo: 3, Dhi: 8, Dlazy: 6, HeartbeatMs: 100, SyncPeers: 2}}
	for i, ph := range Phases {
		p := PhaseReport{Name: ph, Nodes: 20, Records: 10, Expected: 190, Delivered: 190, DeliveryRatio: 1, Converged: true}
		var lat []float64
		for k := range 190 {
			lat = append(lat, float64(k*(i+1))+0.5)
		}
		p.setLatencies(lat)
		if ph == PhaseByzantine {
			p.Error = `a <node> & "others" failed`
			p.Converged = false
			p.Byzantine = &ByzantineReport{Offenders: 2, Sent: map[string]int{"forged signature": 3},
				Floods: &FloodReport{Flooders: 2, FreshKeys: 200, FreshRecords: 800, LineBytes: 6144, Revocations: 1200,
					Budget: DefaultStrangers(), MaxStrangerRecords: 388, RSSPerHonestNodeBytes: 18 << 20, RSSNote: "the process's growth over 20",
					Nodes: []FloodNode{{Node: 3, StrangerRecordsBefore: 232, StrangerRecordsAfter: 388, HomeGrowthBytes: 1 << 20}}}}
		}
		if ph == PhaseLateJoin {
			p.Latencies = nil // a phase with nothing to plot
		}
		r.Phases = append(r.Phases, p)
	}
	return r
}

func TestReportJSONFields(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport().WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"nodes", "rss_bytes", "rss_per_node_bytes", "seed", "phases", "ok", "bytes_source", "gossip"} {
		if _, ok := m[k]; !ok {
			t.Errorf("report lacks %q", k)
		}
	}
	phases, _ := m["phases"].([]any)
	if len(phases) != len(Phases) {
		t.Fatalf("%d phases in JSON", len(phases))
	}
	for _, p := range phases {
		pm := p.(map[string]any)
		for _, k := range []string{"name", "delivery_ratio", "converged", "p50_ms", "p95_ms", "p99_ms", "max_ms",
			"duplicates_per_record", "bytes_per_node", "expected", "delivered"} {
			if _, ok := pm[k]; !ok {
				t.Errorf("phase %v lacks %q", pm["name"], k)
			}
		}
		if _, ok := pm["Latencies"]; ok {
			t.Error("latencies leak into the JSON")
		}
	}
	byz := phases[len(phases)-1].(map[string]any)["byzantine"].(map[string]any)
	floods, _ := byz["floods"].(map[string]any)
	for _, k := range []string{"fresh_keys", "revocations", "budget", "max_stranger_records", "memory_max_stranger_records", "nodes",
		"rss_growth_per_honest_node_bytes", "heap_live_after_per_node_bytes", "rss_note", "honest_expected", "honest_delivered"} {
		if _, ok := floods[k]; !ok {
			t.Errorf("the floods' report lacks %q", k)
		}
	}
	if n := floods["nodes"].([]any)[0].(map[string]any); n["stranger_records_after"].(float64) != 388 || n["home_growth_bytes"].(float64) != 1<<20 {
		t.Errorf("a flooded node in JSON: %v", n)
	}
	first := phases[0].(map[string]any)
	if first["p50_ms"].(float64) != 94.5 || first["max_ms"].(float64) != 189.5 {
		t.Errorf("propagate percentiles in JSON: %v %v", first["p50_ms"], first["max_ms"])
	}
}

func TestSVGIsWellFormed(t *testing.T) {
	for _, r := range []Report{sampleReport(), {Nodes: 2}} {
		var buf bytes.Buffer
		if err := r.WriteSVG(&buf); err != nil {
			t.Fatal(err)
		}
		dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
		var root string
		texts := 0
		var all strings.Builder
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("not well-formed XML: %v\n%s", err, buf.String())
			}
			switch e := tok.(type) {
			case xml.StartElement:
				if root == "" {
					root = e.Name.Local
					if e.Name.Space != "http://www.w3.org/2000/svg" {
						t.Errorf("root namespace %q", e.Name.Space)
					}
				}
				if e.Name.Local == "text" {
					texts++
				}
			case xml.CharData:
				all.Write(e)
			}
		}
		if root != "svg" {
			t.Fatalf("root element %q", root)
		}
		if len(r.Phases) == 0 {
			continue
		}
		s := all.String()
		for _, want := range []string{"time to arrival", "share of arrivals", "propagate", "byzantine (failed)", "1 ms", "10 ms", "100 ms", "50%", "90%", "100%"} {
			if !strings.Contains(s, want) {
				t.Errorf("the plot lacks %q", want)
			}
		}
		if got := strings.Count(buf.String(), "<path "); got != len(r.Phases)-1 {
			t.Errorf("%d curves, want %d (one phase has no arrivals)", got, len(r.Phases)-1)
		}
		if texts < 20 {
			t.Errorf("only %d labels", texts)
		}
		if strings.Contains(buf.String(), "NaN") || strings.Contains(buf.String(), "Inf") {
			t.Error("NaN or Inf in the plot")
		}
	}
}

func TestReportTable(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport().WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"propagate", "byzantine", "190/190", "p99 ms", "RSS 200.0 MiB",
		"200 messages each signed by a fresh key (800 lessons", "1200 revocations of hashes never held", "budget 400, 1024.0 KiB",
		"node 3: 232 -> 388 records", "home +1.0 MiB", "RSS growth per honest node 18.00 MiB", "the process's growth over 20"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestParseScenario(t *testing.T) {
	all, err := ParseScenario("all")
	if err != nil || len(all) != len(Phases) {
		t.Fatalf("all: %v %v", all, err)
	}
	one, err := ParseScenario(" Churn ")
	if err != nil || len(one) != 1 || one[0] != PhaseChurn {
		t.Fatalf("churn: %v %v", one, err)
	}
	if _, err := ParseScenario("flood"); err == nil || !strings.Contains(err.Error(), "partition") {
		t.Fatalf("unknown scenario: %v", err)
	}
}

func TestTargetsPickTheWorstCatchUp(t *testing.T) {
	links := DefaultLinks()
	r := Report{Network: NetworkSim, Links: &links, MedianHops: 3, Phases: []PhaseReport{
		{Name: PhasePropagate, P50Ms: 200, P99Ms: 700, DuplicatesPerRecord: 2.5},
		{Name: PhaseChurn, CatchUp: []CatchUp{{LackedBytes: 1000, OwnBytes: 1500}, {LackedBytes: 10000, OwnBytes: 16000}, {LackedBytes: 100, OwnBytes: 200, SyncBytes: 90000}}},
	}}
	got := map[string]Target{}
	for _, tg := range r.targets() {
		got[tg.Name] = tg
	}
	if tg := got["propagate_p50_ms"]; !tg.OK || tg.Bound != 300 {
		t.Errorf("p50: %+v", tg)
	}
	if tg := got["propagate_p99_over_p50"]; tg.OK || tg.Value != 3.5 {
		t.Errorf("p99/p50: %+v", tg)
	}
	if tg := got["duplicates_per_record"]; !tg.OK || tg.Value != 1.5 {
		t.Errorf("duplicates: %+v", tg)
	}
	// 16000 > 1.2 × 10000 + 2048: the second node is the worst, and misses
	// (the third served its peers 90 KB: theirs, not its own).
	if tg := got["churn_catch_up_bytes"]; tg.OK || tg.Value != 16000 || tg.Bound != 14048 {
		t.Errorf("catch-up: %+v", tg)
	}
	if len(got) != 4 {
		t.Errorf("%d targets: %v", len(got), got)
	}
	r.Network, r.Links = NetworkTCP, nil
	if tg := r.targets(); tg != nil {
		t.Errorf("targets on TCP: %v", tg)
	}
}

// A thousand nodes' arrivals draw a curve of at most maxSteps steps per
// phase that still ends at every arrival.
func TestSVGOfManyArrivals(t *testing.T) {
	lat := make([]float64, 200_000)
	for i := range lat {
		lat[i] = 50 + float64(i%997)
	}
	p := PhaseReport{Name: PhasePropagate, Delivered: len(lat), Expected: len(lat), DeliveryRatio: 1, Converged: true}
	p.setLatencies(lat)
	var b bytes.Buffer
	if err := (Report{Nodes: 1000, Phases: []PhaseReport{p}}).WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	if b.Len() > 200<<10 {
		t.Errorf("propagation.svg of 200,000 arrivals is %d KB", b.Len()>>10)
	}
	if err := xml.Unmarshal(b.Bytes(), new(struct{})); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	if !strings.Contains(b.String(), fmt.Sprintf(" V%.1f\"", float64(padT))) {
		t.Error("the curve does not end at every arrival (y = 100%)")
	}
}
