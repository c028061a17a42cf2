package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/internal/display"
	"github.com/remem/remem/protocol"
)

// Status is what GET /status answers: the memory and, when a daemon runs it,
// its network.
type Status struct {
	Origin string   `json:"origin"`
	Key    string   `json:"key"`
	Home   string   `json:"home"`
	PeerID string   `json:"peer_id,omitempty"`
	Addrs  []string `json:"addrs,omitempty"`
	// Reachability is what AutoNAT (or --reachability) says: public,
	// private or unknown; Relays the relays the node knows.
	Reachability string                  `json:"reachability,omitempty"`
	Relays       []string                `json:"relays,omitempty"`
	Topics       []string                `json:"topics,omitempty"`
	Scopes       []string                `json:"scopes"`
	Peers        []PeerStatus            `json:"peers"`
	LastSleep    time.Time               `json:"last_sleep"`
	NextSleep    time.Time               `json:"next_sleep,omitempty"`
	Records      int                     `json:"records"`
	Lessons      int                     `json:"lessons"`
	Stats        Stats                   `json:"stats"`
	Refused      map[protocol.Reason]int `json:"refused_by_reason"`
	Started      time.Time               `json:"started,omitempty"`

	// Writers tells which writer (default, command, sampling) wrote how
	// many of this memory's lessons, and how many answers were refused.
	Writers WriterCounts `json:"writers,omitzero"`

	// Rejects says where rejected event lines are and how many the bound
	// on their files dropped.
	Rejects RejectsInfo `json:"rejects"`
}

// PeerStatus is one connected peer.
type PeerStatus struct {
	ID     string   `json:"id"`
	Origin string   `json:"origin"`
	Addrs  []string `json:"addrs"`
	Topics []string `json:"topics"`
	Score  float64  `json:"score"`
	// Kind is how the peer is best connected: direct, hole-punched or
	// relayed; Conns every connection.
	Kind  string       `json:"kind"`
	Conns []ConnStatus `json:"conns"`
	// LatencyMs is the last measured round trip (GET /peers measures it;
	// absent when never measured).
	LatencyMs float64 `json:"latency_ms,omitempty"`
}

// APIOptions configure the local HTTP API.
type APIOptions struct {
	// Network adds the daemon's view (peers, topics) to a status.
	Network func(*Status)
	// Gatherer serves /metrics; nil serves the default registry.
	Gatherer prometheus.Gatherer
	// Web serves the read-only page at / (nil: a short text).
	Web http.Handler
	// SleepNow replaces a plain sleep for POST /sleep, so a daemon also
	// publishes what the sleep signed.
	SleepNow func(context.Context) (SleepReport, error)
	// Signed is told that a request signed a record (a lesson, a
	// revocation), so a daemon sends it now instead of at its next sleep.
	Signed func()
	// Peers and Connect serve GET /peers and POST /peers/connect (nil: no
	// libp2p host).
	Peers   func(context.Context) ([]PeerStatus, error)
	Connect func(ctx context.Context, addr string) (PeerStatus, error)
}

const maxBody = 4 << 20

// NewAPI serves the local HTTP API of SPEC §11 for m.
func NewAPI(m *Memory, opts APIOptions) http.Handler {
	a := &api{m: m, svc: Local{M: m}, opts: opts}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /memory/remember", a.remember)
	mux.HandleFunc("GET /lessons", a.lessons)
	mux.HandleFunc("POST /lessons", a.publish)
	mux.HandleFunc("GET /lessons/{hash}", a.show)
	mux.HandleFunc("POST /lessons/{hash}/revoke", a.revoke)
	mux.HandleFunc("GET /status", a.status)
	mux.HandleFunc("GET /peers", a.peers)
	mux.HandleFunc("POST /peers/connect", a.connect)
	mux.HandleFunc("POST /sleep", a.sleep)
	mux.HandleFunc("GET /export", a.export)
	mux.HandleFunc("POST /records", a.importRecords)
	mux.HandleFunc("POST /share", a.share)
	mux.HandleFunc("POST /commons/push", a.pushCommons)
	mux.HandleFunc("POST /commons/pull", a.pullCommons)
	mux.HandleFunc("POST /folder/sync", a.syncFolder)
	g := opts.Gatherer
	if g == nil {
		g = prometheus.DefaultGatherer
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	if opts.Web != nil {
		mux.Handle("/", opts.Web)
	} else {
		mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "remem node %s: GET /lessons, /status, /metrics\n", m.Origin())
		})
	}
	return guard(mux)
}

// guard keeps web pages the user visits away from the local API (SPEC §11).
// A request must name the node by an IP address or "localhost" (a
// DNS-rebinding page names it by its own domain), must not come from
// another site (sameOrigin), and a POST must carry a JSON content type,
// which a cross-site form cannot send without a CORS preflight the API never
// answers.
func guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host != "localhost" && net.ParseIP(strings.Trim(host, "[]")) == nil {
			fail(w, http.StatusForbidden, fmt.Errorf("the local API answers requests addressed to an IP address or localhost, not %q", r.Host))
			return
		}
		if err := sameOrigin(r); err != nil {
			fail(w, http.StatusForbidden, err)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if ct != "application/json" && ct != "application/x-ndjson" {
				fail(w, http.StatusUnsupportedMediaType, fmt.Errorf("send the body as application/json (or application/x-ndjson for several events)"))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin refuses a request a browser marks as sent by another site: an
// Origin other than the API's own (http://<Host>), or a Sec-Fetch-Site
// other than same-origin (the page at /) or none (an address the person
// typed). same-site is refused too: a page served by any other port of
// 127.0.0.1 is same-site. Requests without these headers, from the CLI,
// curl or an agent, pass: the Host and content-type checks still apply.
func sameOrigin(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" && !strings.EqualFold(o, "http://"+r.Host) {
		return fmt.Errorf("the local API refuses requests from another site (Origin %q); open the page at http://%s/ instead", o, r.Host)
	}
	switch s := r.Header.Get("Sec-Fetch-Site"); s {
	case "", "same-origin", "none":
		return nil
	default:
		return fmt.Errorf("the local API refuses requests the browser marks as %q (Sec-Fetch-Site); only its own page at http://%s/ may use it", s, r.Host)
	}
}

type api struct {
	m    *Memory
	svc  Local
	opts APIOptions
}

// apiError is the JSON body of every error answer.
type apiError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	// JSON is data; written through the display net it stays the same
	// data, with no raw C1, DEL or bidi character for a terminal that
	// shows it (curl).
	enc := json.NewEncoder(display.NewWriter(w))
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client went away: nothing left to tell it
}

func fail(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, apiError{Error: err.Error()})
}

// badRequest marks an error as the caller's.
type badRequest struct{ error }

func (a *api) reply(w http.ResponseWriter, v any, err error) {
	var bad badRequest
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, v)
	case errors.Is(err, ErrUnknownLesson):
		fail(w, http.StatusNotFound, err)
	case errors.As(err, &bad), errors.Is(err, ErrBadHash):
		fail(w, http.StatusBadRequest, err)
	default:
		fail(w, http.StatusInternalServerError, err)
	}
}

func body(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return nil, badRequest{fmt.Errorf("reading the request body (limit %d bytes): %w", maxBody, err)}
	}
	return data, nil
}

func decode(w http.ResponseWriter, r *http.Request, v any) error {
	data, err := body(w, r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return badRequest{fmt.Errorf("the request body is not the JSON expected: %w", err)}
	}
	return nil
}

// remember takes one event as a JSON object, or several as JSON Lines.
func (a *api) remember(w http.ResponseWriter, r *http.Request) {
	data, err := body(w, r)
	if err != nil {
		a.reply(w, nil, err)
		return
	}
	rep, err := a.svc.Ingest(r.Context(), ingestSource(r), data)
	if err == nil && len(rep.Rejected) > 0 && rep.Taken == 0 && rep.Duplicates == 0 {
		writeJSON(w, http.StatusBadRequest, struct {
			apiError
			IngestReport
		}{apiError{Error: rep.Rejected[0].String()}, rep})
		return
	}
	a.reply(w, rep, err)
}

// ingestSource names the events of a POST /memory/remember in the report
// and rejects.jsonl: ?source= (the file a command read, so that a bad line
// is named FILE:LINE through a node as without one), cut to 200 printable
// characters; without it, the request.
func ingestSource(r *http.Request) string {
	src := strings.Map(func(c rune) rune {
		if unicode.IsPrint(c) {
			return c
		}
		return -1
	}, r.URL.Query().Get("source"))
	if src == "" {
		return "POST /memory/remember"
	}
	if s := []rune(src); len(s) > 200 {
		src = string(s[:200])
	}
	return src
}

// lessonParams are the query parameters GET /lessons takes. Any other is
// refused by name: a "layer" parameter once named a file for the node to
// read, and a caller still sending it must learn that it is gone. Layers
// are named in the node's configuration, never in a request (SPEC §9).
// The recall query is "query", its name in the CLI's help and the MCP
// tools; "q" is the name it had first, still taken.
var lessonParams = []string{"query", "q", "limit", "state", "all"}

func (a *api) lessons(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := onlyParams(q, lessonParams); err != nil {
		a.reply(w, nil, err)
		return
	}
	limit, _ := strconv.Atoi(q.Get("limit"))
	query := q.Get("query")
	if query == "" {
		query = q.Get("q")
	}
	if query != "" {
		allowLong(w) // an embeddings backend is asked about every lesson
		if limit <= 0 {
			limit = 20
		}
		views, err := a.svc.Recall(r.Context(), query, limit)
		a.reply(w, nonNil(views), err)
		return
	}
	f := Filter{State: protocol.State(q.Get("state")), All: q.Get("all") == "1" || q.Get("all") == "true"}
	if f.State != "" && f.All {
		a.reply(w, nil, badRequest{fmt.Errorf("give state or all, not both: state=%s alone lists every lesson in that state", f.State)})
		return
	}
	a.listLessons(w, r, f, limit)
}

// onlyParams refuses a query that has a parameter not in known.
func onlyParams(q url.Values, known []string) error {
	for _, name := range slices.Sorted(maps.Keys(q)) {
		if !slices.Contains(known, name) {
			return badRequest{fmt.Errorf("GET /lessons takes no parameter %q, only %s; layers are named in the node's config.toml (layers) or by a command's --layer, never in a request", name, strings.Join(known, ", "))}
		}
	}
	return nil
}

// listLessons answers the lesson view of f, at most limit lessons when
// limit > 0.
func (a *api) listLessons(w http.ResponseWriter, r *http.Request, f Filter, limit int) {
	if f.State != "" && !validState(f.State) {
		a.reply(w, nil, badRequest{fmt.Errorf("state %q is not one of candidate, common, fading, removed, revoked", f.State)})
		return
	}
	views, err := a.svc.Lessons(r.Context(), f)
	if err == nil && limit > 0 && len(views) > limit {
		views = views[:limit]
	}
	a.reply(w, nonNil(views), err)
}

func validState(s protocol.State) bool {
	for _, st := range protocol.States {
		if st == s {
			return true
		}
	}
	return false
}

func nonNil(v []LessonView) []LessonView {
	if v == nil {
		return []LessonView{}
	}
	return v
}

func (a *api) show(w http.ResponseWriter, r *http.Request) {
	p, err := a.svc.Show(r.Context(), r.PathValue("hash"))
	a.reply(w, p, err)
}

func (a *api) publish(w http.ResponseWriter, r *http.Request) {
	var req struct{ Kind, Text string }
	if err := decode(w, r, &req); err != nil {
		a.reply(w, nil, err)
		return
	}
	s, err := a.svc.Publish(r.Context(), req.Kind, req.Text)
	if err != nil {
		err = badRequest{err}
	} else {
		a.signed()
	}
	a.reply(w, s, err)
}

func (a *api) revoke(w http.ResponseWriter, r *http.Request) {
	var req struct{ Reason string }
	if err := decode(w, r, &req); err != nil {
		a.reply(w, nil, err)
		return
	}
	rep, err := a.svc.Revoke(r.Context(), r.PathValue("hash"), req.Reason)
	if err != nil {
		err = badRequest{err}
	} else if rep.Sending = a.signed(); rep.Sending {
		rep.explain()
	}
	a.reply(w, rep, err)
}

// signed tells the daemon that a record was signed, and whether one runs
// to send it.
func (a *api) signed() bool {
	if a.opts.Signed == nil {
		return false
	}
	a.opts.Signed()
	return true
}

func (a *api) sleep(w http.ResponseWriter, r *http.Request) {
	allowLong(w) // a writer command or an embeddings backend may take minutes
	sleep := a.svc.Sleep
	if a.opts.SleepNow != nil {
		sleep = a.opts.SleepNow
	}
	rep, err := sleep(r.Context())
	a.reply(w, rep, err)
}

func (a *api) export(w http.ResponseWriter, r *http.Request) {
	lines, err := a.svc.Export(r.Context())
	if lines == nil {
		lines = []string{}
	}
	a.reply(w, lines, err)
}

func (a *api) importRecords(w http.ResponseWriter, r *http.Request) {
	data, err := body(w, r)
	if err != nil {
		a.reply(w, nil, err)
		return
	}
	scope := r.URL.Query().Get("scope")
	if scope == "" {
		scope = "import"
	}
	rep, err := a.svc.Import(r.Context(), scope, data)
	a.reply(w, rep, err)
}

func (a *api) share(w http.ResponseWriter, r *http.Request) {
	var req ShareRequest
	if err := decode(w, r, &req); err != nil {
		a.reply(w, nil, err)
		return
	}
	s, err := a.svc.Share(r.Context(), req)
	if err != nil {
		err = badRequest{err}
	}
	a.reply(w, s, err)
}

// commonsRequest reads the commons a push or pull names, refusing an
// address the client would refuse, with what to write instead.
func commonsRequest(w http.ResponseWriter, r *http.Request) (CommonsRequest, error) {
	var req CommonsRequest
	if err := decode(w, r, &req); err != nil {
		return req, err
	}
	if _, err := commons.CanonicalURL(req.URL); err != nil {
		return req, badRequest{err}
	}
	return req, nil
}

func (a *api) pushCommons(w http.ResponseWriter, r *http.Request) {
	allowLong(w) // the commons may be slow to answer
	req, err := commonsRequest(w, r)
	if err != nil {
		a.reply(w, nil, err)
		return
	}
	res, err := a.svc.PushCommons(r.Context(), req)
	a.reply(w, res, err)
}

// pullCommons answers the report even when some files failed: a pull goes
// on past a failed file, and the caller must learn what it did take.
func (a *api) pullCommons(w http.ResponseWriter, r *http.Request) {
	allowLong(w)
	req, err := commonsRequest(w, r)
	if err != nil {
		a.reply(w, nil, err)
		return
	}
	rep, err := a.svc.PullCommons(r.Context(), req)
	a.partial(w, rep, err)
}

// syncFolder takes an absolute DIR: the node's working directory is not
// the caller's.
func (a *api) syncFolder(w http.ResponseWriter, r *http.Request) {
	allowLong(w)
	var req struct {
		Dir string `json:"dir"`
	}
	if err := decode(w, r, &req); err != nil {
		a.reply(w, nil, err)
		return
	}
	if !filepath.IsAbs(req.Dir) {
		a.reply(w, nil, badRequest{fmt.Errorf("the folder %q is not an absolute path; name it from the root, like /mnt/share/remem", req.Dir)})
		return
	}
	rep, err := a.svc.SyncFolder(r.Context(), req.Dir)
	a.partial(w, rep, err)
}

// partial answers a report of work that went on past failures: 200 when
// nothing failed, else 502 with the report beside the error (Client reads
// both).
func (a *api) partial(w http.ResponseWriter, rep any, err error) {
	if err == nil {
		writeJSON(w, http.StatusOK, rep)
		return
	}
	writeJSON(w, http.StatusBadGateway, struct {
		Error  string `json:"error"`
		Report any    `json:"report"`
	}{err.Error(), rep})
}

func (a *api) status(w http.ResponseWriter, r *http.Request) {
	st, err := a.m.Status()
	if err == nil && a.opts.Network != nil {
		a.opts.Network(&st)
	}
	a.reply(w, st, err)
}

// Status describes the memory (the daemon adds its network).
func (m *Memory) Status() (Status, error) {
	stats, refused := m.Stats()
	st := Status{Origin: m.Origin(), Key: m.id.Key(), Home: m.cfg.Home, Stats: stats, Refused: refused,
		LastSleep: stats.LastSleep, Scopes: []string{}, Peers: []PeerStatus{}, Rejects: m.Rejects(true)}
	if st.LastSleep.IsZero() {
		if _, err := m.store.GetMeta("last_sleep", &st.LastSleep); err != nil {
			return st, err
		}
	}
	var err error
	if st.Records, err = m.store.CountRecords(); err != nil {
		return st, err
	}
	if st.Writers, err = m.WriterCounts(); err != nil {
		return st, err
	}
	lessons, err := m.store.Lessons()
	st.Lessons = len(lessons)
	return st, err
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
