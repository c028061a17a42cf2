package testnet

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is what a run measured. It is report.json, and what `remem
// testnet --json` prints.
type Report struct {
	Nodes           int     `json:"nodes"`
	Degree          int     `json:"degree"`
	Lessons         int     `json:"lessons"`
	Seed            int64   `json:"seed"`
	Scenario        []Phase `json:"scenario"`
	SleepMs         float64 `json:"sleep_ms"`
	Edges           int     `json:"edges"`
	MedianHops      int     `json:"median_hops"` // of the dial graph, over every pair of nodes
	Probes          int     `json:"probes"`
	RSSBytes        int64   `json:"rss_bytes"`          // peak VmRSS of the process while the nodes ran
	RSSPerNodeBytes int64   `json:"rss_per_node_bytes"` // rss_bytes / nodes (everything in the process counted)
	RSSBaseBytes    int64   `json:"rss_baseline_bytes"` // VmRSS before the first node started
	// Network is "tcp" (real sockets on 127.0.0.1) or "sim" (simulated
	// links, Links, in virtual time). Time says what the latencies and
	// durations count: "wall" for tcp, "simulated" for sim, where a
	// millisecond is one of the links' and the protocol's, never the CPU's;
	// WallMs is then how long the run took on this machine.
	Network Network   `json:"network"`
	Links   *SimLinks `json:"links,omitempty"`
	Time    string    `json:"time"`
	WallMs  float64   `json:"wall_ms"`
	// BytesSource says what bytes_per_node counts: "tcp" (every byte of the
	// nodes' sockets), "sim" (every byte on the nodes' simulated links) or
	// "sync" (the catch-up protocol only, where sockets cannot be read).
	BytesSource string `json:"bytes_source"`
	// CPUs the Go runtime runs on (GOMAXPROCS), and the machine's 1-minute
	// load average at the end: other work on the machine slows the nodes.
	CPUs        int          `json:"cpus"`
	LoadAverage float64      `json:"load_average"`
	Gossip      GossipReport `json:"gossip"`
	Started     time.Time    `json:"started"`
	TookMs      float64      `json:"took_ms"`
	CPUSeconds  float64      `json:"cpu_seconds"` // CPU time the process used from the first node's start
	// Targets are the protocol's bounds, checked on a simulated run.
	Targets []Target `json:"targets,omitempty"`
	// OK is true when every phase delivered everything and converged.
	OK     bool          `json:"ok"`
	Phases []PhaseReport `json:"phases"`
}

// Target is one bound the run is held to: OK when Value ≤ Bound.
type Target struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Bound float64 `json:"bound"`
	OK    bool    `json:"ok"`
	Why   string  `json:"why"`
}

// targets are the protocol's bounds on a simulated run (latencies in
// simulated ms mean something only there): propagation p50 within twice
// the median hops times the link latency, p99 within 3× p50, at most 3
// duplicate copies of a record per node, and catch-up sync moving at most
// 1.2× the bytes a churned or late node lacked, plus 2 KB.
func (r Report) targets() []Target {
	if r.Network != NetworkSim || r.Links == nil {
		return nil
	}
	var out []Target
	add := func(name string, value, bound float64, why string) {
		out = append(out, Target{Name: name, Value: round2(value), Bound: round2(bound), OK: value <= bound, Why: why})
	}
	for _, p := range r.Phases {
		switch p.Name {
		case PhasePropagate:
			hop := float64(r.Links.Latency) / float64(time.Millisecond)
			add("propagate_p50_ms", p.P50Ms, 2*float64(r.MedianHops)*hop,
				fmt.Sprintf("within 2× of %d median hops × %g ms a link", r.MedianHops, hop))
			add("propagate_p99_over_p50", p.P99Ms/max(p.P50Ms, 1e-9), 3, "p99 at most 3× p50")
			add("duplicates_per_record", max(0, p.DuplicatesPerRecord-1), 3, "copies beyond the first a node's router received per record")
		case PhaseChurn, PhaseLateJoin:
			for i, cu := range p.CatchUp {
				// The worst node: the most bytes beyond its bound.
				b := 1.2*float64(cu.LackedBytes) + 2048
				if i == 0 || float64(cu.OwnBytes)-b > out[len(out)-1].Value-out[len(out)-1].Bound {
					if i > 0 {
						out = out[:len(out)-1]
					}
					add(string(p.Name)+"_catch_up_bytes", float64(cu.OwnBytes), b,
						fmt.Sprintf("the worst of %d nodes: the sync bytes of its own catch-up against 1.2× the %d bytes it lacked + 2 KB", len(p.CatchUp), cu.LackedBytes))
				}
			}
		}
	}
	return out
}

// GossipReport are the mesh settings the run used.
type GossipReport struct {
	D           int     `json:"D"`
	Dlo         int     `json:"Dlo"`
	Dhi         int     `json:"Dhi"`
	Dlazy       int     `json:"Dlazy"`
	HeartbeatMs float64 `json:"heartbeat_ms"`
	SyncPeers   int     `json:"sync_peers"`
}

// PhaseReport is one phase.
type PhaseReport struct {
	Name Phase `json:"name"`
	// Nodes that took part (live honest nodes at the end of the phase).
	Nodes int `json:"nodes"`
	// Records signed in the phase (lessons, confirmations, revocations).
	Records int `json:"records"`
	// Expected arrivals (a record or a state at a node), and those met
	// before the phase's timeout.
	Expected      int     `json:"expected"`
	Delivered     int     `json:"delivered"`
	DeliveryRatio float64 `json:"delivery_ratio"`
	// Converged: every live node held the same records and computed the same
	// state for every hash, checked after the deliveries; ConvergeMs is how
	// long that check took to succeed.
	Converged  bool    `json:"converged"`
	ConvergeMs float64 `json:"converge_ms"`
	// Latency from when an arrival became possible (publication, restart,
	// healing) to the arrival, over every expected arrival met.
	P50Ms float64 `json:"p50_ms"`
	P95Ms float64 `json:"p95_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
	// DuplicatesPerRecord: gossip messages the router of a node received per
	// message it needed, every copy counted (probe hosts). ValidatedPerRecord:
	// the same from the nodes' gossip.Stats, which see first copies only,
	// plus the records catch-up sync brought, per record a node needed.
	DuplicatesPerRecord float64 `json:"duplicates_per_record"`
	ValidatedPerRecord  float64 `json:"validated_per_record"`
	// BytesPerNode: bytes sent plus received per live node during the phase
	// (see Report.BytesSource); SyncBytesPerNode: the catch-up protocol's
	// share of it.
	// GossipP50Ms and GossipP99Ms: the time from publication to the first
	// copy of a lesson's message at the probe hosts, i.e. GossipSub alone,
	// without a node's validation queue, store and delivery loop.
	GossipP50Ms float64 `json:"gossip_p50_ms,omitempty"`
	GossipP99Ms float64 `json:"gossip_p99_ms,omitempty"`
	// SyncShare: the share of the records nodes needed that came by
	// catch-up sync rather than gossip; Dropped: gossip messages the nodes
	// accepted but dropped because their subscription loop fell behind.
	SyncShare        float64 `json:"sync_share"`
	Dropped          int     `json:"dropped"`
	BytesPerNode     float64 `json:"bytes_per_node"`
	SyncBytesPerNode float64 `json:"sync_bytes_per_node"`
	TookMs           float64 `json:"took_ms"`
	// CPUCores: the CPU time the whole process used during the phase per
	// second, i.e. cores kept busy on average (of Report.CPUs): near CPUs,
	// the machine was the bottleneck and the latencies measure its queues
	// more than the protocol.
	CPUCores float64 `json:"cpu_cores"`
	Error    string  `json:"error,omitempty"`

	CatchUp   []CatchUp        `json:"catch_up,omitempty"`
	Partition *PartitionReport `json:"partition,omitempty"`
	Byzantine *ByzantineReport `json:"byzantine,omitempty"`

	// Latencies are the arrival times in ms behind the percentiles, for
	// the plot.
	Latencies []float64 `json:"-"`
}

// CatchUp is one churned or late node catching up.
type CatchUp struct {
	Node          int     `json:"node"`
	Origin        string  `json:"origin"`
	LackedRecords int     `json:"lacked_records"`
	LackedBytes   int64   `json:"lacked_bytes"` // the record lines it lacked
	CaughtUpMs    float64 `json:"caught_up_ms"` // from its start to its last missing record
	// SyncBytes moved by catch-up sync (both directions) until it caught
	// up, and WireBytes on its sockets meanwhile (connection set-up,
	// identify and GossipSub control included). ServedBytes are the
	// record frames among them that it sent: records that served peers
	// catching up beside it (nodes that came back with it), which those
	// count as theirs; its own catch-up never sends a record. OwnBytes =
	// SyncBytes - ServedBytes: what its own catch-up moved.
	SyncBytes   int64   `json:"sync_bytes"`
	SyncRatio   float64 `json:"sync_ratio"` // sync_bytes / lacked_bytes
	ServedBytes int64   `json:"served_bytes"`
	OwnBytes    int64   `json:"own_bytes"`
	OwnRatio    float64 `json:"own_ratio"` // own_bytes / lacked_bytes
	WireBytes   int64   `json:"wire_bytes,omitempty"`
	WireRatio   float64 `json:"wire_ratio,omitempty"`
}

// PartitionReport says how the cut went.
type PartitionReport struct {
	Sides         [2]int  `json:"sides"`          // nodes on each side
	ClosedConns   int     `json:"closed_conns"`   // connections cut when it started
	Leaked        int     `json:"leaked"`         // arrivals across the cut before it healed (want 0)
	HealToAllMs   float64 `json:"heal_to_all_ms"` // from healing to the last cross-side arrival
	CrossExpected int     `json:"cross_expected"`
}

// ByzantineReport says what the offenders did and what it cost.
type ByzantineReport struct {
	Offenders int `json:"offenders"`
	// Messages they published, by kind.
	Sent map[string]int `json:"sent"`
	// RejectedMessages: messages the honest nodes' validators rejected;
	// RejectedLines by reason.
	RejectedMessages int            `json:"rejected_messages"`
	RejectedLines    map[string]int `json:"rejected_lines"`
	// HeldForged: records of an offender held by any honest node (want 0).
	HeldForged int `json:"held_forged"`
	// Scores: the GossipSub scores honest nodes gave the offenders they met.
	Observers int     `json:"observers"`
	ScoreMin  float64 `json:"score_min"`
	ScoreMean float64 `json:"score_mean"`
	ScoreMax  float64 `json:"score_max"`
	// The clean run (propagate) for comparison, when it ran.
	CleanP50Ms float64 `json:"clean_p50_ms,omitempty"`
	CleanP99Ms float64 `json:"clean_p99_ms,omitempty"`
	// Attacks: sybil sync sessions and an API flood, run meanwhile.
	Attacks *AttackReport `json:"attacks,omitempty"`
	// PublishNote says how the offenders got their records out.
	PublishNote string `json:"publish_note"`
	// Sybils: fresh keys with valid records, and what they changed.
	Sybils *SybilReport `json:"sybils,omitempty"`
	// Floods: strangers' records beside honest traffic, and what the
	// honest nodes held and spent.
	Floods *FloodReport `json:"floods,omitempty"`
}

// Percentile returns the p-th percentile (0 < p ≤ 100) of xs by the
// nearest-rank method: the smallest value with at least p% of the values at
// or below it. It returns 0 for no values.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return percentileSorted(s, p)
}

func percentileSorted(s []float64, p float64) float64 {
	if len(s) == 0 {
		return 0
	}
	if p <= 0 {
		return s[0]
	}
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// setLatencies fills the percentiles from ms.
func (p *PhaseReport) setLatencies(ms []float64) {
	s := slices.Clone(ms)
	slices.Sort(s)
	p.Latencies = s
	p.P50Ms = round2(percentileSorted(s, 50))
	p.P95Ms = round2(percentileSorted(s, 95))
	p.P99Ms = round2(percentileSorted(s, 99))
	if len(s) > 0 {
		p.MaxMs = round2(s[len(s)-1])
	}
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

func ms(d time.Duration) float64 { return round2(float64(d) / float64(time.Millisecond)) }

// ok reports whether the phase delivered everything and converged.
func (p PhaseReport) ok() bool { return p.DeliveryRatio == 1 && p.Converged && p.Error == "" }

// WriteJSON writes the report as indented JSON.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteFiles writes report.json and propagation.svg into dir.
func (r Report) WriteFiles(dir string) error {
	return writeFiles(dir, []fileWriter{{"report.json", r.WriteJSON}, {"propagation.svg", r.WriteSVG}})
}

// fileWriter writes one file of a run's output.
type fileWriter struct {
	name  string
	write func(io.Writer) error
}

// writeFiles creates dir and writes each file into it, in order.
func writeFiles(dir string, files []fileWriter) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	for _, fw := range files {
		path := filepath.Join(dir, fw.name)
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		if err := fw.write(f); err != nil {
			_ = f.Close() // the write's error is the one to report
			return fmt.Errorf("writing %s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

// WriteTable writes the report as a table for a terminal.
func (r Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "remem testnet: %d nodes, degree %d (%d links, median %d hops), %d lessons, seed %d, sleep %gms, mesh D=%d Dlo=%d Dhi=%d Dlazy=%d\n",
		r.Nodes, r.Degree, r.Edges, r.MedianHops, r.Lessons, r.Seed, r.SleepMs, r.Gossip.D, r.Gossip.Dlo, r.Gossip.Dhi, r.Gossip.Dlazy)
	if l := r.Links; l != nil {
		fmt.Fprintf(w, "simulated network: links of %v ± %v, %.3g Mbit/s, %.3g%% loss; every time below is simulated, not the machine's\n",
			l.Latency, l.Jitter, float64(l.Bandwidth)/1e6, l.Loss*100)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tnodes\trecords\tdelivered\tconverged\tp50 ms\tp95 ms\tp99 ms\tmax ms\tdup/rec\tKiB/node\tcores\ttook s\t")
	for _, p := range r.Phases {
		conv := "no"
		if p.Converged {
			conv = "yes"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d/%d\t%s\t%.0f\t%.0f\t%.0f\t%.0f\t%.2f\t%.1f\t%.1f\t%.1f\t\n",
			p.Name, p.Nodes, p.Records, p.Delivered, p.Expected, conv, p.P50Ms, p.P95Ms, p.P99Ms, p.MaxMs,
			p.DuplicatesPerRecord, p.BytesPerNode/1024, p.CPUCores, p.TookMs/1000)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range r.Phases {
		for _, c := range p.CatchUp {
			fmt.Fprintf(w, "%s: node %d caught up in %.0f ms: lacked %d records (%d B), sync moved %d B (%.2fx) of which %d B for itself (%.2fx)",
				p.Name, c.Node, c.CaughtUpMs, c.LackedRecords, c.LackedBytes, c.SyncBytes, c.SyncRatio, c.OwnBytes, c.OwnRatio)
			if c.WireBytes > 0 {
				fmt.Fprintf(w, ", on the wire %d B (%.2fx)", c.WireBytes, c.WireRatio)
			}
			fmt.Fprintln(w)
		}
		if b := p.Byzantine; b != nil {
			fmt.Fprintf(w, "byzantine: %d offenders sent %s; honest validators rejected %d messages; forged records held: %d; offender scores %.1f..%.1f (mean %.1f, %d observers)",
				b.Offenders, kv(b.Sent), b.RejectedMessages, b.HeldForged, b.ScoreMin, b.ScoreMax, b.ScoreMean, b.Observers)
			if b.CleanP50Ms > 0 {
				fmt.Fprintf(w, "; honest p50/p99 %.0f/%.0f ms vs clean %.0f/%.0f ms", p.P50Ms, p.P99Ms, b.CleanP50Ms, b.CleanP99Ms)
			}
			fmt.Fprintln(w)
			if a := b.Attacks; a != nil {
				fmt.Fprintf(w, "attacks: %d sybils held %d sync streams; an API serving %d connections at once under a flood of %d answered %d of %d honest requests (slowest %.0f ms)\n",
					a.SybilHosts, a.SybilStreams, a.APIMaxConns, a.APIFloodConns, a.APIAnswered, a.APIRequests, a.APIMaxAnswerMs)
			}
			if s := b.Sybils; s != nil {
				fmt.Fprintf(w, "sybils: %d fresh keys in waves of %s sent %d valid records (confirming an offender's lesson, confirming and revoking %d honest lessons); %s: offender's lesson common at %d of %d honest nodes (%d with admit_all), honest lessons revoked %d, states and strengths changed %d of %d (want 0)\n",
					s.Keys, ints(s.Waves), s.RecordsSent, s.Targets, s.Admission, s.OffenderCommon, s.Nodes, s.CommonIfAllAdmitted, s.Revoked, s.Changed, s.Checked)
				fmt.Fprintf(w, "open team, nothing admitted: %d common, %d candidates of %d lessons held by %d nodes\n",
					s.OpenCommon, s.OpenCandidates, s.OpenLessons, s.Nodes)
			}
			if f := b.Floods; f != nil {
				f.write(w)
			}
		}
		if pr := p.Partition; pr != nil {
			fmt.Fprintf(w, "partition: sides %d/%d, %d connections cut, %d leaked, all across %.0f ms after healing\n",
				pr.Sides[0], pr.Sides[1], pr.ClosedConns, pr.Leaked, pr.HealToAllMs)
		}
		if p.Error != "" {
			fmt.Fprintf(w, "%s: %s\n", p.Name, p.Error)
		}
	}
	took := fmt.Sprintf("took %.1f s", r.TookMs/1000)
	if r.Time == "simulated" {
		took = fmt.Sprintf("took %.1f simulated s in %.1f s", r.TookMs/1000, r.WallMs/1000)
	}
	fmt.Fprintf(w, "RSS %.1f MiB (%.2f MiB per node, baseline %.1f MiB); %s on %d CPUs, %.1f CPU s (load average %.2f); bytes counted from %s\n",
		float64(r.RSSBytes)/(1<<20), float64(r.RSSPerNodeBytes)/(1<<20), float64(r.RSSBaseBytes)/(1<<20), took, r.CPUs, r.CPUSeconds, r.LoadAverage, r.BytesSource)
	for _, t := range r.Targets {
		verdict := "ok"
		if !t.OK {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "target %s: %g (bound %g, %s) %s\n", t.Name, t.Value, t.Bound, t.Why, verdict)
	}
	return nil
}

func kv(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", m[k], k)
	}
	return strings.Join(parts, ", ")
}

func ints(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}
