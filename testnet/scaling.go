package testnet

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A sweep runs the same testnet at growing sizes and shows how its cost
// grows: per node and per record delivered, CPU time, bytes and RSS, and
// the propagation latency. Per-node cost should stay flat, and latency
// grow like the hops of the graph, i.e. like log n.

// ScalePoint is one run of a sweep.
type ScalePoint struct {
	Nodes               int     `json:"nodes"`
	OK                  bool    `json:"ok"`
	Error               string  `json:"error,omitempty"`
	WallMs              float64 `json:"wall_ms"`
	TookMs              float64 `json:"took_ms"` // simulated on the simulated network
	Deliveries          int     `json:"deliveries"`
	MedianHops          int     `json:"median_hops"`
	CPUSeconds          float64 `json:"cpu_seconds"`
	CPUMsPerNode        float64 `json:"cpu_ms_per_node"`
	CPUUsPerDelivery    float64 `json:"cpu_us_per_delivery"`
	BytesPerNode        float64 `json:"bytes_per_node"`
	BytesPerDelivery    float64 `json:"bytes_per_delivery"`
	RSSPerNodeBytes     int64   `json:"rss_per_node_bytes"`
	P50Ms               float64 `json:"propagate_p50_ms"`
	P99Ms               float64 `json:"propagate_p99_ms"`
	DuplicatesPerRecord float64 `json:"duplicates_per_record"`
}

// Scaling is scaling.json: the points of a sweep, and how each measure
// grows with n.
type Scaling struct {
	Network Network      `json:"network"`
	Links   *SimLinks    `json:"links,omitempty"`
	Time    string       `json:"time"`
	Points  []ScalePoint `json:"points"`
	// Growth: the exponent k of a least-squares fit y ∝ n^k over the runs
	// that passed (0: flat per node), and for latency the ms added per
	// doubling of n in a fit y = a + b·log2 n.
	Growth map[string]float64 `json:"growth"`
}

// ParseSizes reads a comma-separated list of node counts, e.g.
// "10,30,100", each from 2 to 2000, increasing.
func ParseSizes(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 2 || n > 2000 {
			return nil, fmt.Errorf("%q is not a size: want node counts from 2 to 2000, e.g. 10,30,100,300,1000", part)
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, fmt.Errorf("sizes %q must increase: each run's peak RSS is read from a process the larger runs reuse", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// PointOf summarises a run for a sweep.
func PointOf(rep Report, err error) ScalePoint {
	p := ScalePoint{Nodes: rep.Nodes, OK: err == nil && rep.OK, WallMs: rep.WallMs, TookMs: rep.TookMs,
		MedianHops: rep.MedianHops, CPUSeconds: rep.CPUSeconds, RSSPerNodeBytes: rep.RSSPerNodeBytes}
	if err != nil {
		p.Error = err.Error()
	}
	var bytes float64
	for _, ph := range rep.Phases {
		p.Deliveries += ph.Delivered
		p.BytesPerNode += ph.BytesPerNode
		bytes += ph.BytesPerNode * float64(ph.Nodes)
		if ph.Name == PhasePropagate {
			p.P50Ms, p.P99Ms, p.DuplicatesPerRecord = ph.P50Ms, ph.P99Ms, ph.DuplicatesPerRecord
		}
	}
	p.BytesPerNode = round2(p.BytesPerNode)
	if rep.Nodes > 0 {
		p.CPUMsPerNode = round2(rep.CPUSeconds * 1000 / float64(rep.Nodes))
	}
	if p.Deliveries > 0 {
		p.CPUUsPerDelivery = round2(rep.CPUSeconds * 1e6 / float64(p.Deliveries))
		p.BytesPerDelivery = round2(bytes / float64(p.Deliveries))
	}
	return p
}

// NewScaling gathers the points of a sweep and fits their growth.
func NewScaling(cfg Config, points []ScalePoint) Scaling {
	cfg = cfg.withDefaults()
	s := Scaling{Network: cfg.Network, Time: "wall", Points: points, Growth: map[string]float64{}}
	if cfg.Network == NetworkSim {
		links := cfg.Links
		s.Links, s.Time = &links, "simulated"
	}
	var ok []ScalePoint
	for _, p := range points {
		if p.OK {
			ok = append(ok, p)
		}
	}
	if len(ok) < 2 {
		return s
	}
	exp := func(name string, y func(ScalePoint) float64) {
		var xs, ys []float64
		for _, p := range ok {
			if v := y(p); v > 0 {
				xs, ys = append(xs, math.Log(float64(p.Nodes))), append(ys, math.Log(v))
			}
		}
		if len(xs) >= 2 {
			s.Growth[name] = round2(slope(xs, ys))
		}
	}
	exp("cpu_per_node_exponent", func(p ScalePoint) float64 { return p.CPUMsPerNode })
	exp("cpu_per_delivery_exponent", func(p ScalePoint) float64 { return p.CPUUsPerDelivery })
	exp("bytes_per_node_exponent", func(p ScalePoint) float64 { return p.BytesPerNode })
	exp("bytes_per_delivery_exponent", func(p ScalePoint) float64 { return p.BytesPerDelivery })
	exp("rss_per_node_exponent", func(p ScalePoint) float64 { return float64(p.RSSPerNodeBytes) })
	perDoubling := func(name string, y func(ScalePoint) float64) {
		var xs, ys []float64
		for _, p := range ok {
			xs, ys = append(xs, math.Log2(float64(p.Nodes))), append(ys, y(p))
		}
		s.Growth[name] = round2(slope(xs, ys))
	}
	perDoubling("p50_ms_per_doubling", func(p ScalePoint) float64 { return p.P50Ms })
	perDoubling("p99_ms_per_doubling", func(p ScalePoint) float64 { return p.P99Ms })
	perDoubling("median_hops_per_doubling", func(p ScalePoint) float64 { return float64(p.MedianHops) })
	return s
}

// slope is the least-squares slope of ys on xs.
func slope(xs, ys []float64) float64 {
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	n := float64(len(xs))
	mx, my = mx/n, my/n
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return 0
	}
	return sxy / sxx
}

// WriteFiles writes scaling.json and scaling.svg into dir.
func (s Scaling) WriteFiles(dir string) error {
	return writeFiles(dir, []fileWriter{{"scaling.json", s.writeJSON}, {"scaling.svg", s.WriteSVG}})
}

func (s Scaling) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// WriteTable writes the sweep as a table for a terminal.
func (s Scaling) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "remem testnet sweep on %s (%s time)\n", s.Network, s.Time)
	fmt.Fprintf(w, "%6s %4s %9s %9s %8s %11s %11s %10s %11s %8s %8s %7s\n",
		"nodes", "ok", "wall s", "took s", "hops", "CPU ms/node", "CPU µs/dlv", "KiB/node", "B/delivery", "RSS MiB", "p50 ms", "p99 ms")
	for _, p := range s.Points {
		ok := "yes"
		if !p.OK {
			ok = "NO"
		}
		fmt.Fprintf(w, "%6d %4s %9.1f %9.1f %8d %11.1f %11.1f %10.1f %11.0f %8.2f %8.0f %7.0f\n",
			p.Nodes, ok, p.WallMs/1000, p.TookMs/1000, p.MedianHops, p.CPUMsPerNode, p.CPUUsPerDelivery,
			p.BytesPerNode/1024, p.BytesPerDelivery, float64(p.RSSPerNodeBytes)/(1<<20), p.P50Ms, p.P99Ms)
	}
	keys := make([]string, 0, len(s.Growth))
	for k := range s.Growth {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "growth %s: %g\n", k, s.Growth[k])
	}
	return nil
}

// WriteSVG draws scaling.svg: four panels against n on a log axis.
func (s Scaling) WriteSVG(w io.Writer) error {
	bw := bufio.NewWriter(w)
	const W, H, cols = 1000, 760, 2
	const pw, ph, ml, mt = 400, 240, 90, 110
	fmt.Fprintf(bw, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s">
<rect width="%d" height="%d" fill="#ffffff"/>
`, W, H, W, H, fontFamily, W, H)
	fmt.Fprintf(bw, `<text x="%d" y="30" font-size="18" font-weight="600" fill="#222">%s</text>
<text x="%d" y="52" font-size="12" fill="#555">%s</text>
`, ml, esc("How the cost of a remem network grows with its size"), ml, esc(s.subtitle()))
	panels := []struct {
		title string
		lines []svgLine
	}{
		{"CPU time per record delivered (µs)", []svgLine{{"per delivery", func(p ScalePoint) float64 { return p.CPUUsPerDelivery }}}},
		{"bytes per record delivered", []svgLine{{"per delivery", func(p ScalePoint) float64 { return p.BytesPerDelivery }}}},
		{"RSS per node (MiB)", []svgLine{{"per node", func(p ScalePoint) float64 { return float64(p.RSSPerNodeBytes) / (1 << 20) }}}},
		{"propagation latency (ms)", []svgLine{{"p50", func(p ScalePoint) float64 { return p.P50Ms }}, {"p99", func(p ScalePoint) float64 { return p.P99Ms }}}},
	}
	for i, pn := range panels {
		x0 := ml + (i%cols)*(pw+ml)
		y0 := mt + (i/cols)*(ph+ml)
		s.panel(bw, x0, y0, pw, ph, pn.title, pn.lines)
	}
	fmt.Fprintf(bw, "</svg>\n")
	return bw.Flush()
}

type svgLine struct {
	name string
	y    func(ScalePoint) float64
}

func (s Scaling) subtitle() string {
	sub := fmt.Sprintf("%s network", s.Network)
	if l := s.Links; l != nil {
		sub += fmt.Sprintf(", links of %v ± %v at %.3g Mbit/s; latencies in simulated ms", l.Latency, l.Jitter, float64(l.Bandwidth)/1e6)
	}
	return sub + "; a hollow point is a run that failed a phase"
}

// panel draws one plot: x is n on a log scale, y linear from 0.
func (s Scaling) panel(bw *bufio.Writer, x0, y0, w, h int, title string, lines []svgLine) {
	if len(s.Points) == 0 {
		return
	}
	lo, hi := float64(s.Points[0].Nodes), float64(s.Points[len(s.Points)-1].Nodes)
	if hi <= lo {
		hi = lo * 10
	}
	ymax := 0.0
	for _, l := range lines {
		for _, p := range s.Points {
			ymax = max(ymax, l.y(p))
		}
	}
	if ymax <= 0 {
		ymax = 1
	}
	ymax *= 1.1
	x := func(n float64) float64 {
		return float64(x0) + (math.Log(n)-math.Log(lo))/(math.Log(hi)-math.Log(lo))*float64(w)
	}
	y := func(v float64) float64 { return float64(y0+h) - v/ymax*float64(h) }
	fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="14" font-weight="600" fill="#222">%s</text>
`, x0, y0-12, esc(title))
	fmt.Fprintf(bw, `<g stroke="#e6e6e6">`)
	for k := 0; k <= 4; k++ {
		fmt.Fprintf(bw, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>`, x0, y(ymax/1.1*float64(k)/4), x0+w, y(ymax/1.1*float64(k)/4))
	}
	fmt.Fprintf(bw, "</g>\n")
	fmt.Fprintf(bw, `<g stroke="#333" fill="none"><line x1="%d" y1="%d" x2="%d" y2="%d"/><line x1="%d" y1="%d" x2="%d" y2="%d"/></g>
`, x0, y0+h, x0+w, y0+h, x0, y0, x0, y0+h)
	fmt.Fprintf(bw, `<g font-size="11" fill="#333">`)
	for _, p := range s.Points {
		fmt.Fprintf(bw, `<text x="%.1f" y="%d" text-anchor="middle">%d</text>`, x(float64(p.Nodes)), y0+h+16, p.Nodes)
	}
	for k := 0; k <= 4; k++ {
		v := ymax / 1.1 * float64(k) / 4
		fmt.Fprintf(bw, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`, x0-6, y(v), esc(shortNumber(v)))
	}
	fmt.Fprintf(bw, `<text x="%d" y="%d" text-anchor="middle">nodes (log scale)</text></g>
`, x0+w/2, y0+h+34)
	for i, l := range lines {
		color := plotColors[i%len(plotColors)]
		var path strings.Builder
		for k, p := range s.Points {
			cmd := "L"
			if k == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&path, "%s%.1f %.1f ", cmd, x(float64(p.Nodes)), y(l.y(p)))
		}
		fmt.Fprintf(bw, `<path d="%s" fill="none" stroke="%s" stroke-width="2"/>
`, strings.TrimSpace(path.String()), color)
		for _, p := range s.Points {
			fill := color
			if !p.OK {
				fill = "#ffffff"
			}
			fmt.Fprintf(bw, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s" stroke="%s" stroke-width="1.5"><title>%s</title></circle>
`, x(float64(p.Nodes)), y(l.y(p)), fill, color, esc(fmt.Sprintf("%d nodes: %s %.4g", p.Nodes, l.name, l.y(p))))
		}
		if len(lines) > 1 {
			fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="11" fill="%s">%s</text>
`, x0+8, y0+14+i*14, color, esc(l.name))
		}
	}
}

// shortNumber writes v in three digits with a k or M for thousands and
// millions.
func shortNumber(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
