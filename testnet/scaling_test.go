package testnet

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestParseSizes(t *testing.T) {
	got, err := ParseSizes("10, 30,100")
	if err != nil || len(got) != 3 || got[0] != 10 || got[2] != 100 {
		t.Fatalf("ParseSizes: %v %v", got, err)
	}
	for _, bad := range []string{"", "10,x", "1", "3000", "30,10", "10,10", "-5"} {
		if _, err := ParseSizes(bad); err == nil {
			t.Errorf("ParseSizes(%q) took it", bad)
		}
	}
}

// A sweep whose per-node cost is flat and whose latency grows by 40 ms per
// doubling fits exponent 0 and slope 40; a failed run is left out of the
// fits but drawn.
func TestScalingGrowth(t *testing.T) {
	var points []ScalePoint
	for _, n := range []int{10, 20, 40, 80, 160} {
		points = append(points, ScalePoint{Nodes: n, OK: true, CPUMsPerNode: 50, BytesPerNode: 4096,
			RSSPerNodeBytes: 6 << 20, CPUUsPerDelivery: 300, BytesPerDelivery: 900,
			P50Ms: 100 + 40*math.Log2(float64(n)/10), P99Ms: 300, MedianHops: 3})
	}
	points = append(points, ScalePoint{Nodes: 320, OK: false, CPUMsPerNode: 5000, Error: "phases failed"})
	cfg := DefaultConfig()
	cfg.Network = NetworkSim
	s := NewScaling(cfg, points)
	for name, want := range map[string]float64{"cpu_per_node_exponent": 0, "rss_per_node_exponent": 0, "bytes_per_node_exponent": 0,
		"p50_ms_per_doubling": 40, "p99_ms_per_doubling": 0} {
		if got, ok := s.Growth[name]; !ok || math.Abs(got-want) > 0.01 {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	if s.Time != "simulated" || s.Links == nil {
		t.Errorf("a simulated sweep says time %q, links %v", s.Time, s.Links)
	}
	dir := t.TempDir()
	if err := s.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "scaling.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Scaling
	if err := json.Unmarshal(data, &back); err != nil || len(back.Points) != 6 {
		t.Fatalf("scaling.json: %v, %d points", err, len(back.Points))
	}
	svg, err := os.ReadFile(filepath.Join(dir, "scaling.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(svg, new(struct{})); err != nil {
		t.Fatalf("scaling.svg is not XML: %v", err)
	}
	if !bytes.Contains(svg, []byte(`fill="#ffffff" stroke=`)) {
		t.Error("the failed run is not drawn hollow")
	}
	var table bytes.Buffer
	if err := s.WriteTable(&table); err != nil || !bytes.Contains(table.Bytes(), []byte("  NO ")) {
		t.Errorf("table: %v\n%s", err, table.String())
	}
}

func TestPointOf(t *testing.T) {
	rep := Report{Nodes: 100, CPUSeconds: 20, RSSPerNodeBytes: 7 << 20, OK: true, MedianHops: 4, Phases: []PhaseReport{
		{Name: PhasePropagate, Nodes: 100, Delivered: 9900, BytesPerNode: 1000, P50Ms: 210, P99Ms: 400, DuplicatesPerRecord: 2.5},
		{Name: PhaseConfirm, Nodes: 100, Delivered: 100, BytesPerNode: 500},
	}}
	p := PointOf(rep, nil)
	if !p.OK || p.Deliveries != 10000 || p.CPUMsPerNode != 200 || p.CPUUsPerDelivery != 2000 ||
		p.BytesPerNode != 1500 || p.BytesPerDelivery != 15 || p.P50Ms != 210 || p.DuplicatesPerRecord != 2.5 {
		t.Fatalf("point: %+v", p)
	}
}
