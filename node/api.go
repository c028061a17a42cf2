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
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/folder"
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
	Reachability string       `json:"reachability,omitempty"`
	Relays       []string     `json:"relays,omitempty"`
	Topics       []string     `json:"topics,omitempty"`
	Scopes       []string     `json:"scopes"`
	Peers        []PeerStatus `json:"peers"`
	LastSleep    time.Time    `json:"last_sleep"`
	NextSleep    time.Time    `json:"next_sleep,omitempty"`
	Records      int          `json:"records"`
	Lessons      int          `json:"lessons"`
	// Drafts counts own lessons kept as drafts (SPEC §3), which wait for
	// a sentence: a model's at a sleep, an agent's, or the person's.
	Drafts  int                     `json:"drafts"`
	Stats   Stats                   `json:"stats"`
	Refused map[protocol.Reason]int `json:"refused_by_reason"`
	Started time.Time               `json:"started,omitempty"`

	// Writers tells which writer (default, command, sampling) wrote how
	// many of this memory's lessons, and how many answers were refused.
	Writers WriterCounts `json:"writers,omitzero"`

	// Rejects says where rejected event lines are and how many the bound
	// on their files dropped.
	Rejects RejectsInfo `json:"rejects"`

	// Strangers is what records of origins not admitted take, beside the
	// budget they are held within.
	Strangers StrangerStatus `json:"strangers"`

	// Agents counts the events each agent reported in the last
	// AgentWindow, so a person sees which tools take part.
	Agents []AgentEvents `json:"agents"`

	// AdmissionNotice says once, after the upgrade to admitted verifiers
	// (SPEC §8), how many lessons held became candidates.
	AdmissionNotice string `json:"admission_notice,omitempty"`
}

// StrangerStatus is what strangers' records take (Status.Strangers).
type StrangerStatus struct {
	Records int            `json:"records"`
	Bytes   int64          `json:"bytes"`
	Budget  StrangerBudget `json:"budget"`
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
	// Folders are the shared folders of the node's configuration: POST
	// /folder/sync syncs them, and no other directory.
	Folders []string
}

const maxBody = 4 << 20

// NewAPI serves the local HTTP API of SPEC §11 for m. Every route is an
// endpoint of one table (endpoints), which says the query parameters it
// takes and whether it is open; the checks run in one order for all of
// them: the Host and another site (guard), a token in the URL (400), the
// method (405 with Allow), the token (401), the query (400 naming the
// parameter), a POST's content type (415), then the body's size (413).
//
// The token. Every process and user of the machine can reach the API, so
// a request to any route that changes the memory or reads what is its own
// MUST carry the memory's API token (m.APIToken, the home's APITokenFile)
// as "Authorization: Bearer TOKEN"; without it, or with another, the
// answer is 401. That is every route but two: GET /lessons and GET
// /lessons/{hash} show drafts (lessons kept local, unpublished) and the
// projects events came from, GET /status the home's path, GET /peers the
// peers' addresses, GET /export the memory's own records; the POSTs sign,
// revoke, ingest, sleep and move records. Open are GET /metrics (counts
// only, for a scraper that has no token) and the web page's own files at
// / (no data: the page asks the API with the token, which its link
// carries after #, never in what / serves). A token in a URL's query is
// refused (400): URLs end up in logs and histories. Cookies are never
// read.
func NewAPI(m *Memory, opts APIOptions) http.Handler {
	a := &api{m: m, svc: Local{M: m}, opts: opts}
	g := opts.Gatherer
	if g == nil {
		g = prometheus.DefaultGatherer
	}
	eps := a.endpoints(promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	if opts.Web == nil {
		eps = append(eps, endpoint{method: "GET", path: "/{$}", open: true, h: func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "remem node %s: GET /lessons, /status, /metrics\n", m.Origin())
		}})
	}
	mux := http.NewServeMux()
	byPath := map[string][]endpoint{}
	var paths []string
	for _, ep := range eps {
		if byPath[ep.path] == nil {
			paths = append(paths, ep.path)
		}
		byPath[ep.path] = append(byPath[ep.path], ep)
	}
	token := []byte(m.APIToken())
	for _, p := range paths {
		mux.Handle(p, route(byPath[p], token))
	}
	if opts.Web != nil {
		mux.Handle("/", opts.Web)
	}
	return guard(mux)
}

// endpoints is the API, one line a route.
func (a *api) endpoints(metrics http.Handler) []endpoint {
	return []endpoint{
		{method: "POST", path: "/memory/remember", params: []param{anyText("source")}, h: a.remember},
		{method: "GET", path: "/lessons", params: lessonParams, hint: lessonHint, h: a.lessons},
		{method: "POST", path: "/lessons", h: a.publish},
		{method: "GET", path: "/lessons/{hash}", h: a.show},
		{method: "POST", path: "/lessons/{hash}/revoke", h: a.revoke},
		{method: "POST", path: "/lessons/{hash}/rewrite", h: a.rewrite},
		{method: "GET", path: "/status", h: a.status},
		{method: "GET", path: "/peers", h: a.peers},
		{method: "POST", path: "/peers/connect", h: a.connect},
		{method: "POST", path: "/sleep", h: a.sleep},
		{method: "GET", path: "/export", h: a.export},
		{method: "POST", path: "/records", params: []param{anyText("scope")}, h: a.importRecords},
		{method: "POST", path: "/share", h: a.share},
		{method: "POST", path: "/commons/push", h: a.pushCommons},
		{method: "POST", path: "/commons/pull", h: a.pullCommons},
		{method: "POST", path: "/folder/sync", h: a.syncFolder},
		{method: "GET", path: "/metrics", open: true, h: metrics.ServeHTTP},
	}
}

// endpoint is one method of one path of the API.
type endpoint struct {
	method, path string
	params       []param // the query parameters it takes; any other is refused
	hint         string  // said when an unknown parameter is refused
	open         bool    // answered without the API token
	h            http.HandlerFunc
}

// param is a query parameter an endpoint takes. ok (nil: any text) refuses
// a value not of its kind; want says what it takes.
type param struct {
	name, want string
	ok         func(string) bool
}

func anyText(name string) param { return param{name: name} }

// lessonParams are the query parameters GET /lessons takes. The recall
// query is "query", its name in the CLI's help and the MCP tools; "q" is
// the name it had first, still taken.
var lessonParams = []param{anyText("query"), anyText("q"),
	{name: "limit", want: "a whole number, 0 or more (0: 20 for a query, every lesson otherwise; without it 20 for a query, every lesson with all, else " + strconv.Itoa(DefaultLessonsLimit) + ")", ok: func(s string) bool {
		n, err := strconv.Atoi(s)
		return err == nil && n >= 0
	}},
	{name: "state", want: "one of candidate, common, fading, removed, revoked", ok: func(s string) bool { return slices.Contains(protocol.States, protocol.State(s)) }},
	{name: "all", want: "true or false (or 1 or 0)", ok: func(s string) bool { _, err := strconv.ParseBool(s); return err == nil }},
}

// lessonHint: a "layer" parameter once named a file for the node to read,
// and a caller still sending it must learn that it is gone. Layers are
// named in the node's configuration, never in a request (SPEC §9).
const lessonHint = "; layers are named in the node's config.toml (layers) or by a command's --layer, never in a request"

// route serves the endpoints of one path: a method none of them takes is
// 405 with Allow (GET takes HEAD too); then the token (unless the endpoint
// is open), the query and a POST's content type are checked before the
// endpoint runs. A POST must carry a JSON content type, which a cross-site
// form cannot send without a CORS preflight the API never answers.
func route(eps []endpoint, token []byte) http.Handler {
	var methods []string
	for _, ep := range eps {
		methods = append(methods, ep.method)
		if ep.method == http.MethodGet {
			methods = append(methods, http.MethodHead)
		}
	}
	slices.Sort(methods)
	allow := strings.Join(methods, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := r.Method
		if method == http.MethodHead {
			method = http.MethodGet
		}
		i := slices.IndexFunc(eps, func(ep endpoint) bool { return ep.method == method })
		if i < 0 {
			w.Header().Set("Allow", allow)
			fail(w, http.StatusMethodNotAllowed, fmt.Errorf("%s %s: this path takes %s only", r.Method, r.URL.Path, allow))
			return
		}
		ep := eps[i]
		if !ep.open {
			if err := authorize(r, token); err != nil {
				w.Header().Set("WWW-Authenticate", `Bearer realm="remem"`)
				fail(w, http.StatusUnauthorized, err)
				return
			}
		}
		if err := ep.checkQuery(r.URL.Query()); err != nil {
			fail(w, http.StatusBadRequest, fmt.Errorf("%s %s %w", ep.method, r.URL.Path, err))
			return
		}
		if ep.method != http.MethodGet {
			ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if ct != "application/json" && ct != "application/x-ndjson" {
				fail(w, http.StatusUnsupportedMediaType, fmt.Errorf("send the body as application/json (or application/x-ndjson for several events)"))
				return
			}
		}
		ep.h(w, r)
	})
}

// checkQuery refuses a parameter the endpoint does not take, one given
// more than once, and a value not of its kind, naming it and what it
// takes. An empty value is no value.
func (ep endpoint) checkQuery(q url.Values) error {
	names := make([]string, len(ep.params))
	for i, p := range ep.params {
		names[i] = p.name
	}
	for _, name := range slices.Sorted(maps.Keys(q)) {
		i := slices.Index(names, name)
		switch {
		case i < 0 && len(names) == 0:
			return fmt.Errorf("takes no parameter; remove %q%s", name, ep.hint)
		case i < 0:
			return fmt.Errorf("takes no parameter %q, only %s%s", name, strings.Join(names, ", "), ep.hint)
		case len(q[name]) > 1:
			return fmt.Errorf("takes %q once, not %d times", name, len(q[name]))
		}
		if v, p := q.Get(name), ep.params[i]; v != "" && p.ok != nil && !p.ok(v) {
			return fmt.Errorf("takes %q as %s, not %q", name, p.want, v)
		}
	}
	return nil
}

// guard keeps web pages the user visits away from the local API (SPEC §11).
// A request must name the node by an IP address or "localhost" (a
// DNS-rebinding page names it by its own domain), must not come from
// another site (sameOrigin) and must carry no token in its URL, whatever
// the path; route checks the rest.
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
		if err := tokenInQuery(r); err != nil {
			fail(w, http.StatusBadRequest, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin refuses a request a browser marks as sent by another site: an
// Origin other than the API's own (http://<Host>), or a Sec-Fetch-Site
// other than same-origin (the page at /) or none (an address the person
// typed). same-site is refused too: a page served by any other port of
// 127.0.0.1 is same-site. Requests without these headers, from the CLI,
// curl or an agent, pass: the Host, token and content-type checks still
// apply.
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
	var (
		bad    badRequest
		tooBig *http.MaxBytesError
	)
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, v)
	case errors.As(err, &tooBig):
		fail(w, http.StatusRequestEntityTooLarge, err)
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
	if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) {
		return nil, fmt.Errorf("the request body is over the limit of %d bytes: send the events or records in several requests: %w", maxBody, err)
	}
	if err != nil {
		return nil, badRequest{fmt.Errorf("reading the request body: %w", err)}
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

func (a *api) lessons(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query() // checked by route: limit is a number, all a bool
	limit, _ := strconv.Atoi(q.Get("limit"))
	if !q.Has("limit") {
		limit = DefaultLessonsLimit
	}
	query := q.Get("query")
	if query == "" {
		query = q.Get("q")
	}
	if query != "" {
		allowLong(w) // an embeddings backend is asked about every lesson
		if limit <= 0 || !q.Has("limit") {
			limit = 20
		}
		views, err := a.svc.Recall(r.Context(), query, limit)
		a.reply(w, nonNil(views), err)
		return
	}
	all, _ := strconv.ParseBool(q.Get("all"))
	f := Filter{State: protocol.State(q.Get("state")), All: all}
	if f.State != "" && f.All {
		a.reply(w, nil, badRequest{fmt.Errorf("give state or all, not both: state=%s alone lists every lesson in that state", f.State)})
		return
	}
	if f.All && !q.Has("limit") {
		limit = 0 // every lesson, as the web page's table reads them
	}
	f.Limit = limit
	views, err := a.svc.Lessons(r.Context(), f)
	a.reply(w, nonNil(views), err)
}

// DefaultLessonsLimit is how many lessons GET /lessons gives without a
// limit (all=1 gives every one): strangers can make a memory hold any
// number of candidates, and the list a caller reads first is the vouched
// and strongest lessons, read from the view index.
const DefaultLessonsLimit = 100

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

func (a *api) rewrite(w http.ResponseWriter, r *http.Request) {
	var req struct{ Text string }
	if err := decode(w, r, &req); err != nil {
		a.reply(w, nil, err)
		return
	}
	out, err := a.svc.RewriteDraft(r.Context(), r.PathValue("hash"), req.Text)
	if err != nil {
		err = badRequest{err}
	}
	a.reply(w, out, err)
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

// FolderSyncRequest is the body of POST /folder/sync: the scope of one of
// the node's folders ("folder:/DIR", as GET /status lists them), or none
// for every folder. No request names a directory (SPEC §11): a folder is
// one of the node's configuration, as a layer is.
type FolderSyncRequest struct {
	Scope string `json:"scope,omitempty"`
}

// configureFolder says how a directory becomes a folder the node syncs.
const configureFolder = "a folder must be configured for the node to sync it: add its directory to config.toml's folders " +
	"(`remem config set folders DIR...`, naming every folder the node syncs) or start the node with --folder DIR, then restart the node; " +
	`POST /folder/sync with {} syncs every configured folder, {"scope": "folder:/DIR"} one of them`

// syncFolder syncs the node's folders (APIOptions.Folders), all of them or
// the one of the request's scope, and answers a report for each.
func (a *api) syncFolder(w http.ResponseWriter, r *http.Request) {
	allowLong(w)
	data, err := body(w, r)
	if err != nil {
		a.reply(w, nil, err)
		return
	}
	var req struct {
		FolderSyncRequest
		Dir  json.RawMessage `json:"dir"`
		Path json.RawMessage `json:"path"`
	}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, &req); err != nil {
			a.reply(w, nil, badRequest{fmt.Errorf("the request body is not the JSON expected: %w", err)})
			return
		}
	}
	if req.Dir != nil || req.Path != nil {
		a.reply(w, nil, badRequest{errors.New("POST /folder/sync names no directory; " + configureFolder)})
		return
	}
	dirs, err := a.folders(req.Scope)
	if err != nil {
		a.reply(w, nil, err)
		return
	}
	reps := make([]FolderSync, 0, len(dirs))
	var errs []error
	for _, dir := range dirs {
		rep, err := a.svc.SyncFolder(r.Context(), dir)
		reps = append(reps, rep)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", rep.Scope, err))
		}
	}
	a.partial(w, reps, errors.Join(errs...))
}

// folders are the configured folders of scope ("": every one).
func (a *api) folders(scope string) ([]string, error) {
	scopes := make([]string, len(a.opts.Folders))
	for i, dir := range a.opts.Folders {
		scopes[i] = folder.ScopeName(dir)
	}
	switch i := slices.Index(scopes, scope); {
	case len(scopes) == 0:
		return nil, badRequest{errors.New("this node syncs no folder; " + configureFolder)}
	case scope == "":
		return a.opts.Folders, nil
	case i < 0:
		return nil, badRequest{fmt.Errorf("%q is not a folder this node syncs (it syncs %s); %s; or stop the node and run `remem folder sync DIR`, which syncs DIR itself",
			scope, strings.Join(scopes, ", "), configureFolder)}
	default:
		return a.opts.Folders[i : i+1], nil
	}
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
	if st.AdmissionNotice, err = m.admissionNotice(); err != nil {
		return st, err
	}
	used, budget, err := m.StrangerUse()
	if err != nil {
		return st, err
	}
	st.Strangers = StrangerStatus{Records: used.Records, Bytes: used.Bytes, Budget: budget}
	if st.Agents, err = m.AgentEvents(); err != nil {
		return st, err
	}
	lessons, err := m.store.Lessons()
	st.Lessons = len(lessons)
	for _, l := range lessons {
		if l.Own && l.Draft != "" {
			st.Drafts++
		}
	}
	return st, err
}

// AgentWindow is how far back Status counts events per agent.
const AgentWindow = 30 * 24 * time.Hour

// AgentEvents is what one agent reported in the last AgentWindow.
type AgentEvents struct {
	Agent   string    `json:"agent"`
	Events  int       `json:"events"`
	Pending int       `json:"pending"` // not absorbed into a lesson yet
	Last    time.Time `json:"last"`
}

// AgentEvents counts the events received in the last AgentWindow by the
// agent that reported them ("" for none named), most events first.
func (m *Memory) AgentEvents() ([]AgentEvents, error) {
	evs, err := m.store.Events(m.cfg.Now().Add(-AgentWindow))
	if err != nil {
		return nil, err
	}
	by := map[string]*AgentEvents{}
	for _, e := range evs {
		a := by[e.Event.Agent]
		if a == nil {
			a = &AgentEvents{Agent: e.Event.Agent}
			by[e.Event.Agent] = a
		}
		a.Events++
		if e.Lesson == "" {
			a.Pending++
		}
		if e.Received.After(a.Last) {
			a.Last = e.Received
		}
	}
	out := make([]AgentEvents, 0, len(by))
	for _, a := range by {
		out = append(out, *a)
	}
	slices.SortFunc(out, func(a, b AgentEvents) int {
		if a.Events != b.Events {
			return b.Events - a.Events
		}
		return strings.Compare(a.Agent, b.Agent)
	})
	return out, nil
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
