package testnet

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"
)

// The plot: one CDF of arrival times per phase, on a log time axis, as a
// hand-written SVG (no dependency, opens in any browser).

var plotColors = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000", "#999999"}

const (
	plotW, plotH                   = 960, 540
	padL, padR, padT, padB         = 80, 280, 64, 72
	innerW, innerH                 = plotW - padL - padR, plotH - padT - padB
	legendX                        = plotW - padR + 24
	fontFamily                     = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"
	plotMinMs              float64 = 1
)

// WriteSVG draws propagation.svg: for each phase, the share of its arrivals
// (y) that came within a time (x, log scale).
func (r Report) WriteSVG(w io.Writer) error {
	bw := bufio.NewWriter(w)
	lo, hi := plotMinMs, 10.0
	for _, p := range r.Phases {
		for _, v := range p.Latencies {
			hi = max(hi, v)
		}
	}
	d0 := math.Floor(math.Log10(lo))
	d1 := math.Ceil(math.Log10(hi))
	if d1 <= d0 {
		d1 = d0 + 1
	}
	x := func(v float64) float64 {
		v = max(v, lo)
		return padL + (math.Log10(v)-d0)/(d1-d0)*innerW
	}
	y := func(f float64) float64 { return padT + (1-f)*innerH }

	fmt.Fprintf(bw, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s">
`, plotW, plotH, plotW, plotH, fontFamily)
	fmt.Fprintf(bw, `<title>%s</title>
`, esc(fmt.Sprintf("remem testnet: arrival times, %d nodes, seed %d", r.Nodes, r.Seed)))
	fmt.Fprintf(bw, `<rect width="%d" height="%d" fill="#ffffff"/>
`, plotW, plotH)
	fmt.Fprintf(bw, `<text x="%d" y="28" font-size="18" font-weight="600" fill="#222">%s</text>
`, padL, esc("Time from publication to arrival, per phase"))
	fmt.Fprintf(bw, `<text x="%d" y="48" font-size="12" fill="#555">%s</text>
`, padL, esc(fmt.Sprintf("%d nodes, degree %d, %d lessons, seed %d, mesh D=%d (Dlo %d, Dhi %d, Dlazy %d), sleep %g ms",
		r.Nodes, r.Degree, r.Lessons, r.Seed, r.Gossip.D, r.Gossip.Dlo, r.Gossip.Dhi, r.Gossip.Dlazy, r.SleepMs)))

	// Grid and ticks.
	fmt.Fprintf(bw, `<g stroke="#e6e6e6" stroke-width="1">
`)
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 0.9, 1} {
		fmt.Fprintf(bw, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f"/>
`, padL, y(f), padL+innerW, y(f))
	}
	for d := d0; d <= d1; d++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, d)
			if v < lo || v > math.Pow(10, d1) {
				continue
			}
			stroke := ""
			if m != 1 {
				stroke = ` stroke="#f2f2f2"`
			}
			fmt.Fprintf(bw, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d"%s/>
`, x(v), padT, x(v), padT+innerH, stroke)
		}
	}
	fmt.Fprintf(bw, "</g>\n")
	// Axes.
	fmt.Fprintf(bw, `<g stroke="#333" stroke-width="1.2" fill="none">
<line x1="%d" y1="%d" x2="%d" y2="%d"/>
<line x1="%d" y1="%d" x2="%d" y2="%d"/>
</g>
`, padL, padT+innerH, padL+innerW, padT+innerH, padL, padT, padL, padT+innerH)
	fmt.Fprintf(bw, `<g font-size="12" fill="#333">
`)
	for d := d0; d <= d1; d++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, d)
			if v < lo || v > math.Pow(10, d1) {
				continue
			}
			fmt.Fprintf(bw, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333"/>
`, x(v), padT+innerH, x(v), padT+innerH+5)
			if m == 1 || (d1-d0 <= 3) {
				fmt.Fprintf(bw, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>
`, x(v), padT+innerH+20, esc(msLabel(v)))
			}
		}
	}
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 0.9, 1} {
		fmt.Fprintf(bw, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#333"/>
<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>
`, padL-5, y(f), padL, y(f), padL-9, y(f), esc(pctLabel(f)))
	}
	fmt.Fprintf(bw, "</g>\n")
	fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="13" text-anchor="middle" fill="#222">%s</text>
`, padL+innerW/2, plotH-22, esc("time to arrival (log scale)"))
	fmt.Fprintf(bw, `<text transform="translate(22 %d) rotate(-90)" font-size="13" text-anchor="middle" fill="#222">%s</text>
`, padT+innerH/2, esc("share of arrivals in the phase"))

	// Curves and legend.
	fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="13" font-weight="600" fill="#222">phase</text>
`, legendX, padT+4)
	for i, p := range r.Phases {
		color := plotColors[i%len(plotColors)]
		s := slices.Clone(p.Latencies)
		slices.Sort(s)
		if len(s) > 0 {
			var path strings.Builder
			n := float64(len(s))
			fmt.Fprintf(&path, "M%.1f %.1f", x(s[0]), y(0))
			// A step per arrival: up to k+1 of n at v. Past maxSteps
			// arrivals, a step per 1/maxSteps of them (and the last), so a
			// thousand nodes' plot stays a few hundred KB.
			every := max(1, len(s)/maxSteps)
			for k, v := range s {
				if (k+1)%every != 0 && k != len(s)-1 {
					continue
				}
				fmt.Fprintf(&path, " H%.1f V%.1f", x(v), y(float64(k+1)/n))
			}
			fmt.Fprintf(bw, `<path d="%s" fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round">
<title>%s</title>
</path>
`, path.String(), color, esc(fmt.Sprintf("%s: p50 %s, p99 %s, max %s over %d arrivals",
				p.Name, msLabel(p.P50Ms), msLabel(p.P99Ms), msLabel(p.MaxMs), len(s))))
			fmt.Fprintf(bw, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>
`, x(p.P50Ms), y(0.5), color)
		}
		ly := padT + 28 + i*40
		fmt.Fprintf(bw, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>
<text x="%d" y="%d" font-size="13" fill="#222">%s</text>
<text x="%d" y="%d" font-size="11" fill="#555">%s</text>
`, legendX, ly, legendX+24, ly, color, legendX+32, ly+4, esc(string(p.Name)+status(p)),
			legendX+32, ly+19, esc(legendDetail(p, len(s))))
	}
	fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="11" fill="#777">%s</text>
`, legendX, padT+28+len(r.Phases)*40+10, esc("dot: median"))
	fmt.Fprintf(bw, "</svg>\n")
	return bw.Flush()
}

// maxSteps bounds the steps drawn of one phase's curve.
const maxSteps = 2000

func status(p PhaseReport) string {
	if p.ok() {
		return ""
	}
	return " (failed)"
}

func legendDetail(p PhaseReport, n int) string {
	if n == 0 {
		return "no arrivals measured"
	}
	return fmt.Sprintf("p50 %s · p99 %s · n=%d", msLabel(p.P50Ms), msLabel(p.P99Ms), n)
}

func msLabel(v float64) string {
	switch {
	case v >= 1000:
		s := fmt.Sprintf("%.3g", v/1000)
		return s + " s"
	default:
		return fmt.Sprintf("%.3g ms", v)
	}
}

func pctLabel(f float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.0f%%", f*100), ".0")
}

func esc(s string) string { return html.EscapeString(s) }
