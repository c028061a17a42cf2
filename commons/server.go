package commons

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/remem/remem/internal/check"
	"github.com/remem/remem/internal/parallel"
	"github.com/remem/remem/internal/version"
	"github.com/remem/remem/protocol"
)

// ServerConfig configures a commons server. A zero field takes the default
// its comment names; NewServer fills them in and calls Validate.
type ServerConfig struct {
	// DataDir holds the storage when Store is nil: DataDir/commons/<origin>.jsonl,
	// DataDir/index/ and DataDir/peers/. Created when missing.
	DataDir string
	// Store, when not nil, is where the commons is kept instead of
	// DataDir: e.g. an S3 bucket (OpenStorage), which any number of
	// servers may serve at once. The server closes it.
	Store Blobs
	// IndexSettle is, on a shared Store, how long an accepted file is
	// held back from index answers so that every replica's acceptance
	// before it is listed first (storage.go). Zero: DefaultIndexSettle on
	// a shared store, none on a directory.
	IndexSettle time.Duration
	// Tokens are the bearer tokens accepted; at least one is required,
	// since every PUT needs one.
	Tokens []string
	// Publishers binds tokens to the origins they may publish for (keys or
	// origins); a token not in it publishes for any origin. When every
	// token is bound, the operator admitted each publisher, and the info
	// document says so (publishers_admitted): memories that pull then count
	// the publishers as verifiers (SPEC §8). A shared token admits nobody:
	// its holder can publish for any number of fresh keys.
	Publishers map[string][]string
	// ReadNeedsToken makes GETs of files and of the index need a token too.
	ReadNeedsToken bool
	// Logger receives one line per request (keys origin, remote, status).
	// Nil discards.
	Logger *slog.Logger
	// Now is the clock (nil: time.Now); it stamps `updated` and is the
	// receiver's clock for the future-timestamp check.
	Now func() time.Time
	// Rate limits fall on the client that sends (SPEC §10), never on the
	// origin a file is named after, so nobody can use up an origin's PUTs
	// but its own sender. RatePerClient limits every PUT, accepted or
	// refused, per client address (an IPv6 address by its /64, which one
	// host usually holds whole); RatePerOrigin limits the accepted PUTs of
	// one origin's file per client address. The zero Rate means no limit;
	// the CLI passes DefaultOriginRate and DefaultClientRate.
	RatePerOrigin Rate
	RatePerClient Rate
	// RateListPerClient and RateListPerToken limit the peer directory's
	// listings (GET /commons/peers) per client address and, when a valid
	// token comes with one, per token as well, so that topic hashes cannot
	// be tried by the thousand. The zero Rate means no limit; the CLI
	// passes DefaultListClientRate and DefaultListTokenRate.
	RateListPerClient Rate
	RateListPerToken  Rate
	// Registry receives the metrics (nil: a fresh registry). /metrics
	// serves it when it is also a prometheus.Gatherer, else the default
	// gatherer.
	Registry prometheus.Registerer
	// MaxFileBytes and MaxRecords bound one origin's file. Zero means the
	// SPEC §12 limits, protocol.MaxOriginFile and protocol.MaxOriginRecs;
	// a negative value is refused.
	MaxFileBytes int
	MaxRecords   int
	// Budgets bound what the commons holds, whoever sends (budget.go): a
	// PUT of a new origin beyond one is refused (507; 403 for the token's),
	// while a stored origin's file is always replaced within the per-file
	// limits. MaxOrigins bounds the origins held, MaxBytes the bytes of
	// their files (on a shared store counted from a listing at start, then
	// by what this replica stores), MaxOriginsPerToken the
	// new origins one token stores (a token, not an address, is the unit
	// of cost). Zero means DefaultMaxOrigins, DefaultMaxBytes and
	// DefaultMaxOriginsPerToken; a negative value is refused.
	MaxOrigins         int
	MaxBytes           int64
	MaxOriginsPerToken int
	// Name is what the front page and the info document call this
	// commons (default "remem commons").
	Name string
	// P2P are the full multiaddrs (with /p2p/<id>) of the libp2p host that
	// runs beside this commons (`remem commons serve --p2p`), offering a
	// circuit relay and AutoNAT; the info document lists them, and nodes
	// use them as relays. Empty: no such host.
	P2P []string
}

// DefaultServerConfig is `remem commons serve` before its flags: the
// default rates, the SPEC §12 limits, a fresh registry. DataDir and Tokens
// have no default.
func DefaultServerConfig() ServerConfig {
	return ServerConfig{RatePerOrigin: DefaultOriginRate, RatePerClient: DefaultClientRate,
		RateListPerClient: DefaultListClientRate, RateListPerToken: DefaultListTokenRate,
		Registry: prometheus.NewRegistry(), MaxFileBytes: protocol.MaxOriginFile, MaxRecords: protocol.MaxOriginRecs,
		MaxOrigins: DefaultMaxOrigins, MaxBytes: DefaultMaxBytes, MaxOriginsPerToken: DefaultMaxOriginsPerToken}
}

// withDefaults fills the zero fields that have a default: Logger, Now,
// MaxFileBytes and MaxRecords (the zero Rate means no limit, and stays).
func (c ServerConfig) withDefaults() ServerConfig {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxFileBytes == 0 {
		c.MaxFileBytes = protocol.MaxOriginFile
	}
	if c.MaxRecords == 0 {
		c.MaxRecords = protocol.MaxOriginRecs
	}
	if c.MaxOrigins == 0 {
		c.MaxOrigins = DefaultMaxOrigins
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.MaxOriginsPerToken == 0 {
		c.MaxOriginsPerToken = DefaultMaxOriginsPerToken
	}
	if c.Name == "" {
		c.Name = "remem commons"
	}
	if c.IndexSettle == 0 && c.Store != nil && c.Store.Shared() {
		c.IndexSettle = DefaultIndexSettle
	}
	return c
}

// Validate checks c as NewServer would use it (zero fields take their
// defaults first): a data directory, at least one token that an
// Authorization header can carry, the rates and the limits. NewServer
// calls it. No token is ever repeated in an error.
func (c ServerConfig) Validate() error {
	c = c.withDefaults()
	var l check.List
	l.If(c.DataDir == "" && c.Store == nil, "DataDir", nil, "no data directory given (nor a Store)")
	l.If(c.IndexSettle < 0, "IndexSettle", c.IndexSettle, "must not be negative")
	l.If(len(c.Tokens) == 0, "Tokens", nil, "no token given; every PUT needs a bearer token (set --token-file)")
	for i, t := range c.Tokens {
		t = strings.TrimSpace(t) // a token file's trailing newline is not part of it
		switch {
		case t == "":
			l.Add("Tokens", nil, fmt.Sprintf("token %d is empty", i+1))
		case !validToken(t):
			l.Add("Tokens", nil, fmt.Sprintf("token %d holds a space or control character, which an Authorization header cannot carry as sent; use printable ASCII without spaces (e.g. hex or base64)", i+1))
		}
	}
	for tok, origins := range c.Publishers {
		if !slices.ContainsFunc(c.Tokens, func(t string) bool { return strings.TrimSpace(t) == tok }) {
			l.Add("Publishers", nil, "binds a token that is not among Tokens")
		}
		for _, e := range origins {
			if _, err := protocol.ParseOrigin(e); err != nil {
				l.Add("Publishers", nil, err.Error())
			}
		}
	}
	l.Nested("RatePerOrigin", c.RatePerOrigin.Validate())
	l.Nested("RatePerClient", c.RatePerClient.Validate())
	l.Nested("RateListPerClient", c.RateListPerClient.Validate())
	l.Nested("RateListPerToken", c.RateListPerToken.Validate())
	l.AtLeast("MaxFileBytes", c.MaxFileBytes, 1)
	l.AtLeast("MaxRecords", c.MaxRecords, 1)
	l.AtLeast("MaxOrigins", c.MaxOrigins, 1)
	l.If(c.MaxBytes < 1, "MaxBytes", c.MaxBytes, "must be at least 1")
	l.AtLeast("MaxOriginsPerToken", c.MaxOriginsPerToken, 1)
	return l.Err()
}

// Server is the HTTP commons of SPEC §10. It implements http.Handler.
type Server struct {
	cfg      ServerConfig
	log      *slog.Logger
	now      func() time.Time
	tokens   [][sha256.Size]byte
	owners   []string          // by token: its owner id in the store (budget.go)
	bound    []map[string]bool // by token: the origins it publishes for; nil: any
	st       *storage
	peers    *peerStore
	bySender *limiter // accepted PUTs per (client address, origin)
	byClient *limiter // every PUT per client address
	lists    *limiter // peer listings per client address
	listsTok *limiter // peer listings per token
	m        *metrics
	mux      *http.ServeMux
	maxBytes int
	maxRecs  int

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// DefaultIndexSettle is IndexSettle on a shared store: a PUT's writes take
// milliseconds, and replicas' clocks kept by NTP agree within as many.
const DefaultIndexSettle = 2 * time.Second

// NewServer opens (or creates) the storage in cfg.Store or cfg.DataDir,
// loading its index (on a directory, reconciled with the files), and
// returns the server. ctx bounds the opening (a bucket's listing may be
// long; an operator's interrupt stops it), not the server. It closes
// cfg.Store when it fails; else Close does.
func NewServer(ctx context.Context, cfg ServerConfig) (_ *Server, err error) {
	if cfg.Store != nil {
		defer func() {
			if err != nil {
				_ = cfg.Store.Close() // NewServer's error is the one to report
			}
		}()
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("commons server: %w", err)
	}
	s := &Server{cfg: cfg, log: cfg.Logger, now: cfg.Now, maxBytes: cfg.MaxFileBytes, maxRecs: cfg.MaxRecords}
	for _, t := range cfg.Tokens {
		t = strings.TrimSpace(t)
		s.tokens = append(s.tokens, sha256.Sum256([]byte(t)))
		s.owners = append(s.owners, ownerID(s.tokens[len(s.tokens)-1]))
		var only map[string]bool
		if origins, ok := cfg.Publishers[t]; ok {
			only = map[string]bool{}
			for _, e := range origins {
				o, _ := protocol.ParseOrigin(e) // Validate checked them
				only[o] = true
			}
		}
		s.bound = append(s.bound, only)
	}
	if s.m, err = newMetrics(cfg.Registry); err != nil {
		return nil, fmt.Errorf("commons server: metrics: %w", err)
	}
	b, legacy := cfg.Store, ""
	if b == nil {
		if b, err = openDirBlobs(cfg.DataDir); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				_ = b.Close() // lets the directory's lock go; NewServer's error is the one to report
			}
		}()
		legacy = cfg.DataDir
	}
	if s.st, err = openStorage(ctx, b, legacy, cfg.IndexSettle, s.now, s.log); err != nil {
		return nil, err
	}
	s.st.budget = budget{origins: cfg.MaxOrigins, bytes: cfg.MaxBytes, perToken: cfg.MaxOriginsPerToken}
	if s.peers, err = openPeerStore(ctx, b, s.now, s.log); err != nil {
		return nil, err
	}
	s.bySender = newLimiter(cfg.RatePerOrigin, s.now)
	s.byClient = newLimiter(cfg.RatePerClient, s.now)
	s.lists = newLimiter(cfg.RateListPerClient, s.now)
	s.listsTok = newLimiter(cfg.RateListPerToken, s.now)

	s.mux = http.NewServeMux()
	s.mux.HandleFunc("PUT /commons/{name}", s.handlePut)
	s.mux.HandleFunc("GET /commons/index", s.handleIndex)
	s.mux.HandleFunc("PUT /commons/peers/{origin}", s.handlePeerPut)
	s.mux.HandleFunc("GET /commons/peers", s.handlePeers)
	s.mux.HandleFunc("GET /commons/token", s.handleToken)
	s.mux.HandleFunc("GET /commons/{name}", s.handleGet)
	s.mux.HandleFunc("GET /.well-known/remem", s.handleWellKnown)
	s.mux.HandleFunc("GET /{$}", s.handleFront)
	s.mux.Handle("GET /metrics", s.m.endpoint)
	return s, nil
}

// ServeHTTP serves the commons API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.closed.Load() {
		writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: "the commons server is shutting down"})
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Close closes the store and stops serving requests (they get 503). It is
// idempotent. Serve the handler with Serve so that requests in flight end
// before Close is called.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.closeErr = s.st.close()
	})
	return s.closeErr
}

// errorBody is the JSON of every error answer.
type errorBody struct {
	Error  string          `json:"error"`
	Line   int             `json:"line,omitempty"`
	Reason protocol.Reason `json:"reason,omitempty"`
	Key    *WireKey        `json:"key,omitempty"` // a 409's first missing key
	// Budget names the budget a new origin would pass (BudgetOrigins,
	// BudgetBytes, BudgetOriginsPerToken): a 507 or 403.
	Budget string `json:"budget,omitempty"`
}

// PutAnswer is the JSON of a successful PUT.
type PutAnswer struct {
	Origin  string    `json:"origin"`
	Records int       `json:"records"`
	Updated time.Time `json:"updated"`
	ETag    string    `json:"etag"`
	// Skipped counts the lines of an unknown version the PUT carried: taken
	// as SPEC §5 says (not an error), not stored, so never served.
	Skipped int `json:"skipped"`
}

// IndexEntry is one element of GET /commons/index.
type IndexEntry struct {
	Origin  string    `json:"origin"`
	Updated time.Time `json:"updated"`
	Records int       `json:"records"`
	ETag    string    `json:"etag"`
}

// WellKnown is the commons' info document, in the spirit of Nostr's NIP-11:
// GET /.well-known/remem, or GET / asking for JSON (front.go). Every field
// a client needs to know before it pushes: the limits, which requests need
// a token, and what runs it.
type WellKnown struct {
	Protocol      int    `json:"protocol"`
	Name          string `json:"name"`
	Limits        Limits `json:"limits"`
	GetNeedsToken bool   `json:"get_needs_token"`
	PutNeedsToken bool   `json:"put_needs_token"` // always: only a token holder publishes
	// PublishersAdmitted: every token publishes only for the origins its
	// operator named (ServerConfig.Publishers), so each publisher here was
	// admitted by the operator (SPEC §8).
	PublishersAdmitted bool `json:"publishers_admitted"`
	// PeerDirectory: this commons is a rendezvous of libp2p peers too
	// (peers.go); absent from a commons that predates it.
	PeerDirectory *PeerDirectoryInfo `json:"peer_directory,omitempty"`
	// P2P: the libp2p host beside this commons, a circuit relay v2 and
	// AutoNAT service for nodes behind NAT (ServerConfig.P2P).
	P2P     []string `json:"p2p,omitempty"`
	Server  string   `json:"server"`
	Version string   `json:"version"` // internal/version.String() of the serving binary
}

// Limits are the server's limits as /.well-known/remem reports them.
type Limits struct {
	RecordsPerOrigin int `json:"records_per_origin"`
	FileBytes        int `json:"file_bytes"`
	LineBytes        int `json:"line_bytes"`
	// PutsPerClient limits every PUT of one client address; PutsPerOrigin
	// the accepted PUTs of one origin's file per client address. Absent:
	// no limit.
	PutsPerClient *RateInfo `json:"puts_per_client,omitempty"`
	PutsPerOrigin *RateInfo `json:"puts_per_origin,omitempty"`
	// The budgets on new origins (ServerConfig.MaxOrigins, MaxBytes,
	// MaxOriginsPerToken); TotalBytes is absent on a shared store, whose
	// files are not counted.
	Origins         int   `json:"origins"`
	TotalBytes      int64 `json:"total_bytes,omitempty"`
	OriginsPerToken int   `json:"origins_per_token"`
}

// RateInfo is a Rate as the info document reports it.
type RateInfo struct {
	PerMinute float64 `json:"per_minute"`
	Burst     int     `json:"burst"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		code, data = http.StatusInternalServerError, []byte(`{"error":"encoding the answer failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)+1))
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n')) // a client gone away is not the server's error
}

// clientIP is the request's remote address without its port (logged).
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// clientKey is what the rate limits count a sender by: its IPv4 address
// (also when written IPv4-mapped), or the /64 of its IPv6 address (one
// host is usually given a whole /64, so counting single IPv6 addresses
// would not limit it at all).
func clientKey(remote string) string {
	a, err := netip.ParseAddr(remote)
	if err != nil {
		return remote
	}
	if a = a.Unmap(); a.Is4() {
		return a.String()
	}
	p, err := a.WithZone("").Prefix(64)
	if err != nil {
		return remote
	}
	return p.String()
}

// bearerPrefix is the one form of credentials accepted.
const bearerPrefix = "Bearer "

// validToken reports whether t can be a token: not empty, printable ASCII
// without spaces (a superset of RFC 6750's b64token).
func validToken(t string) bool {
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] <= ' ' || t[i] > '~' {
			return false
		}
	}
	return true
}

// authorized checks the bearer token. It accepts exactly one Authorization
// header holding exactly "Bearer " and a token. RFC 9110 lets the scheme's
// case vary, but our client always sends this form, and a lenient parser
// is where padded, doubled or case-folded credentials slip past whatever
// else reads the header (proxies, logs), so any other form is refused: a
// strictness that costs nothing but a clear 401. The token's hash is
// compared with every configured token's hash in constant time
// (crypto/subtle), without an early exit; an empty token never matches,
// whatever the list holds.
func (s *Server) authorized(r *http.Request) bool {
	_, ok := s.tokenOf(r)
	return ok
}

// tokenOf is the index of the configured token r carries, as authorized
// checks it.
func (s *Server) tokenOf(r *http.Request) (int, bool) {
	vals := r.Header.Values("Authorization")
	if len(vals) != 1 {
		return 0, false
	}
	tok, ok := strings.CutPrefix(vals[0], bearerPrefix)
	if !ok || !validToken(tok) {
		return 0, false
	}
	sum := sha256.Sum256([]byte(tok))
	match, at := 0, 0
	for i := range s.tokens {
		eq := subtle.ConstantTimeCompare(sum[:], s.tokens[i][:])
		match |= eq
		at = subtle.ConstantTimeSelect(eq, i, at)
	}
	return at, match == 1
}

// publishersAdmitted: every token is bound to origins (Publishers).
func (s *Server) publishersAdmitted() bool {
	for _, only := range s.bound {
		if only == nil {
			return false
		}
	}
	return len(s.bound) > 0
}

func unauthorized(w http.ResponseWriter, msg string) int {
	w.Header().Set("WWW-Authenticate", `Bearer realm="remem commons"`)
	writeJSON(w, http.StatusUnauthorized, errorBody{Error: msg})
	return http.StatusUnauthorized
}

func tooMany(w http.ResponseWriter, wait time.Duration, what string) int {
	return tooManyRequests(w, wait, "PUTs "+what)
}

// tooManyRequests answers 429 with Retry-After (whole seconds, at least
// 1) and says what there were too many of.
func tooManyRequests(w http.ResponseWriter, wait time.Duration, what string) int {
	secs := int((wait + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeJSON(w, http.StatusTooManyRequests, errorBody{Error: fmt.Sprintf("too many %s; retry after %d s", what, secs)})
	return http.StatusTooManyRequests
}

func (s *Server) handlePut(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	remote := clientIP(r)
	name := r.PathValue("name")
	origin, _ := protocol.OriginOfFileName(name)
	code, records, reason := s.put(w, r, origin, remote)
	s.m.puts.WithLabelValues(strconv.Itoa(code)).Inc()
	d := time.Since(start)
	s.m.putTime.Observe(d.Seconds())
	attrs := []any{"origin", origin, "remote", remote, "status", code, "records", records, "duration", d}
	if reason != "" {
		attrs = append(attrs, "reason", reason)
	}
	if origin == "" {
		attrs[1] = name
	}
	level := slog.LevelInfo
	if code >= 500 {
		level = slog.LevelError
	}
	s.log.Log(r.Context(), level, "commons put", attrs...)
}

// handleToken answers whether the request's bearer token would be taken
// for a PUT (204) or not (401), without a file: `remem doctor` checks a
// push token this way instead of sending a PUT. It counts against the
// address's PUT rate like a PUT, so it is no quicker a way to guess tokens.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	if _, _, ok := s.admitWrite(w, r, clientIP(r), "", "this token is not one the commons takes for a PUT"); ok {
		w.WriteHeader(http.StatusNoContent)
	}
}

// admitWrite is the gate of every request that writes (or probes the
// token of a write): the address's PUT bucket first, so guessing tokens
// costs PUTs, then the token. When it refuses it has answered, with 429
// or 401 (msg); the status is returned. Else the token's index is.
func (s *Server) admitWrite(w http.ResponseWriter, r *http.Request, remote, origin, msg string) (int, int, bool) {
	if ok, wait := s.byClient.allow(clientKey(remote)); !ok {
		return tooMany(w, wait, "from this address"), 0, false
	}
	i, ok := s.tokenOf(r)
	if !ok {
		return unauthorized(w, msg), 0, false
	}
	if only := s.bound[i]; only != nil && origin != "" && !only[origin] {
		writeJSON(w, http.StatusForbidden, errorBody{Error: fmt.Sprintf("this token publishes only for the origins its operator named beside it, and %s is not one of them; ask the operator to add it", origin)})
		return http.StatusForbidden, 0, false
	}
	return 0, i, true
}

// admitRead is the gate of every GET of stored data: the token, when the
// commons was started with ReadNeedsToken. When it refuses it has
// answered 401; the status is returned.
func (s *Server) admitRead(w http.ResponseWriter, r *http.Request) (int, bool) {
	if s.cfg.ReadNeedsToken && !s.authorized(r) {
		return unauthorized(w, "this commons needs a bearer token to read"), false
	}
	return 0, true
}

// errTooLarge: a body over its limit (the caller answers 413).
var errTooLarge = errors.New("the body is over the limit")

// readLimited reads a request body of at most max bytes, or returns
// errTooLarge without reading past max+1 bytes (an announced length over
// max is refused unread).
func readLimited(w http.ResponseWriter, r *http.Request, max int) ([]byte, error) {
	if r.ContentLength > int64(max) {
		return nil, errTooLarge
	}
	// MaxBytesReader reads one byte past the limit to tell a body of
	// exactly max bytes from a larger one.
	body, err := readBody(http.MaxBytesReader(w, r.Body, int64(max)), r.ContentLength)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, errTooLarge
	}
	return body, err
}

// put handles one PUT and returns the status it answered, the records
// stored and, for a refused line, the reason.
func (s *Server) put(w http.ResponseWriter, r *http.Request, origin, remote string) (int, int, protocol.Reason) {
	client := clientKey(remote)
	code, tok, ok := s.admitWrite(w, r, remote, origin, "a PUT needs a valid bearer token")
	if !ok {
		return code, 0, ""
	}
	if origin == "" {
		writeJSON(w, http.StatusBadRequest, errorBody{Error: "the file name must be <16 lowercase hex>.jsonl (the origin)"})
		return http.StatusBadRequest, 0, ""
	}

	body, err := readLimited(w, r, s.maxBytes)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			return s.tooLarge(w), 0, protocol.ReasonFileTooLarge
		}
		writeJSON(w, http.StatusBadRequest, errorBody{Error: "reading the body: " + err.Error()})
		return http.StatusBadRequest, 0, ""
	}

	lines := protocol.SplitLines(body)
	if len(lines) > s.maxRecs {
		s.m.refused.WithLabelValues(string(protocol.ReasonTooManyRecords)).Inc()
		writeJSON(w, http.StatusRequestEntityTooLarge, errorBody{Reason: protocol.ReasonTooManyRecords,
			Error: fmt.Sprintf("the file holds %d records, the limit is %d", len(lines), s.maxRecs)})
		return http.StatusRequestEntityTooLarge, 0, protocol.ReasonTooManyRecords
	}
	if len(lines) == 0 {
		s.m.refused.WithLabelValues(string(ReasonEmpty)).Inc()
		writeJSON(w, http.StatusBadRequest, errorBody{Reason: ReasonEmpty,
			Error: "the file holds no record; a PUT must carry at least one record signed by its origin"})
		return http.StatusBadRequest, 0, ReasonEmpty
	}

	recs, skipped, bad := verifyAll(origin, lines, s.now())
	if bad == nil && len(recs) == 0 {
		bad = &protocol.Refused{Line: skipped[0], Reason: protocol.ReasonUnknownVersion,
			Detail: fmt.Sprintf("%s: every line is of a protocol version this commons does not know (%d skipped), so nothing shows who sent the file; a PUT must carry at least one version 1 record signed by its origin", protocol.ReasonUnknownVersion, len(skipped))}
	}
	if bad != nil {
		code := http.StatusBadRequest
		if bad.Reason == protocol.ReasonOriginMismatch {
			code = http.StatusForbidden
		}
		s.m.refused.WithLabelValues(string(bad.Reason)).Inc()
		writeJSON(w, code, errorBody{Error: fmt.Sprintf("line %d: %s", bad.Line, bad.Detail), Line: bad.Line, Reason: bad.Reason})
		return code, 0, bad.Reason
	}

	// The sender's bucket for this origin is keyed by its address, never
	// by the origin alone, and charged only for an accepted PUT (a refused
	// one is given back; the address bucket above bounds those): replays
	// and junk from others cannot use up the PUTs of the origin's owner.
	if len(skipped) > 0 {
		// Lines of an unknown version are not stored (SPEC §5 step 2): the
		// file stored and served is the verified lines, each byte for byte.
		body = joinRaw(recs)
		s.m.skipped.Add(float64(len(skipped)))
	}
	sender := client + " " + origin
	if ok, wait := s.bySender.allow(sender); !ok {
		return tooMany(w, wait, "of origin "+origin+" from this address"), 0, ""
	}
	e, created, _, err := s.st.put(r.Context(), origin, body, len(recs), s.owners[tok], func(old []byte) error { return checkRollback(old, recs) })
	var rb *rollbackError
	var be *budgetError
	switch {
	case errors.As(err, &be):
		s.bySender.giveBack(sender)
		s.m.refused.WithLabelValues(string(ReasonBudget)).Inc()
		code := http.StatusInsufficientStorage
		if be.which == BudgetOriginsPerToken {
			code = http.StatusForbidden
		}
		writeJSON(w, code, errorBody{Error: be.Error(), Reason: ReasonBudget, Budget: be.which})
		return code, 0, ReasonBudget
	case errors.As(err, &rb):
		s.bySender.giveBack(sender)
		s.m.refused.WithLabelValues(string(ReasonRollback)).Inc()
		k := rb.key()
		writeJSON(w, http.StatusConflict, errorBody{Error: rb.Error(), Reason: ReasonRollback, Key: &k})
		return http.StatusConflict, 0, ReasonRollback
	case errors.Is(err, errBusy):
		s.bySender.giveBack(sender)
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: err.Error() + "; the previous file is unchanged or a concurrent PUT's"})
		return http.StatusServiceUnavailable, 0, ""
	case err != nil:
		s.bySender.giveBack(sender)
		s.log.Error("commons storage failed", "origin", origin, "err", err)
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: "the server could not store the file; the previous one is unchanged"})
		return http.StatusInternalServerError, 0, ""
	}
	code = http.StatusOK
	if created {
		code = http.StatusCreated
	}
	w.Header().Set("ETag", e.ETag)
	writeJSON(w, code, PutAnswer{Origin: origin, Records: e.Records, Updated: e.Updated, ETag: e.ETag, Skipped: len(skipped)})
	return code, e.Records, ""
}

func (s *Server) tooLarge(w http.ResponseWriter) int {
	s.m.refused.WithLabelValues(string(protocol.ReasonFileTooLarge)).Inc()
	writeJSON(w, http.StatusRequestEntityTooLarge, errorBody{Reason: protocol.ReasonFileTooLarge,
		Error: fmt.Sprintf("the file is over %d bytes", s.maxBytes)})
	return http.StatusRequestEntityTooLarge
}

// readBody reads r to the end into one buffer sized from the announced
// length (bounded by the reader's own limit).
func readBody(r io.Reader, n int64) ([]byte, error) {
	size := 512
	if n > 0 && n < 1<<24 {
		size = int(n) + 1
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// parallelMin is the number of lines from which verifyAll spreads the work
// over the CPUs.
const parallelMin = 64

// verifyAll verifies every line of a PUT as one batch bound to origin
// (spread over the CPUs) and returns the records and the line numbers of
// the lines of an unknown version, or the first line refused. A line of
// an unknown version is skipped, as every receiver skips it (SPEC §5 step
// 2), so a memory of a newer version still pushes here; it is not stored,
// since this server cannot tell who wrote it nor whether it is sound.
func verifyAll(origin string, lines []protocol.Line, now time.Time) ([]*protocol.Record, []int, *protocol.Refused) {
	b := protocol.VerifyBatch(lines, protocol.Bound{Source: protocol.OriginFileName(origin), Origin: origin,
		Each: parallel.Each(context.Background(), parallelMin)}, now)
	if len(b.Refused) > 0 {
		return nil, nil, &b.Refused[0]
	}
	return b.Records, b.Skipped, nil
}

// joinRaw is the file of recs: each one's line as received, then '\n'.
func joinRaw(recs []*protocol.Record) []byte {
	n := 0
	for _, r := range recs {
		n += len(r.Raw) + 1
	}
	out := make([]byte, 0, n)
	for _, r := range recs {
		out = append(append(out, r.Raw...), '\n')
	}
	return out
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	remote := clientIP(r)
	name := r.PathValue("name")
	code := s.get(w, r, name)
	s.m.gets.Inc()
	s.log.Debug("commons get", "origin", name, "remote", remote, "status", code)
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, name string) int {
	if code, ok := s.admitRead(w, r); !ok {
		return code
	}
	origin, ok := protocol.OriginOfFileName(name)
	if !ok {
		writeJSON(w, http.StatusBadRequest, errorBody{Error: "the file name must be <16 lowercase hex>.jsonl (the origin)"})
		return http.StatusBadRequest
	}
	inm := r.Header.Get("If-None-Match")
	e, data, found, err := s.st.read(r.Context(), origin, func(etag string) bool { return etagMatch(inm, etag) })
	switch {
	case err != nil:
		s.log.Error("commons read failed", "origin", origin, "err", err)
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: "the server could not read the file"})
		return http.StatusInternalServerError
	case !found:
		writeJSON(w, http.StatusNotFound, errorBody{Error: "no file for origin " + origin})
		return http.StatusNotFound
	}
	h := w.Header()
	h.Set("ETag", e.ETag)
	h.Set("Cache-Control", "no-cache")
	if !e.Updated.IsZero() { // zero: a file just stored at another replica, not yet in this one's index
		h.Set("Last-Modified", e.Updated.UTC().Format(http.TimeFormat))
	}
	if data == nil {
		w.WriteHeader(http.StatusNotModified)
		return http.StatusNotModified
	}
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data) // a client gone away is not the server's error
	return http.StatusOK
}

// etagMatch reports whether an If-None-Match header names etag (or is *).
// Weak validators compare equal to strong ones, as RFC 9110 asks for
// If-None-Match.
func etagMatch(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, part := range strings.Split(header, ",") {
		part = strings.TrimSpace(part)
		if part == "*" {
			return true
		}
		part = strings.TrimPrefix(part, "W/")
		if part == etag {
			return true
		}
	}
	return false
}

func (s *Server) handleIndex(w http.ResponseWriter, r *http.Request) {
	remote := clientIP(r)
	code := s.index(w, r)
	s.m.gets.Inc()
	s.log.Debug("commons index", "remote", remote, "status", code)
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) int {
	if code, ok := s.admitRead(w, r); !ok {
		return code
	}
	var since time.Time
	if v := r.URL.Query().Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody{Error: fmt.Sprintf("since=%q is not an RFC 3339 time", v)})
			return http.StatusBadRequest
		}
		since = t
		if since.IsZero() { // 0001-01-01T00:00:00Z: everything is after it
			since = since.Add(-time.Nanosecond)
		}
	}
	entries := s.st.list(r.Context(), since)
	out := make([]IndexEntry, len(entries))
	for i, e := range entries {
		out[i] = IndexEntry(e)
	}
	w.Header().Set("Cache-Control", "no-cache")
	writeJSON(w, http.StatusOK, out)
	return http.StatusOK
}

func (s *Server) handleWellKnown(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.info())
}

// info is the info document of this server.
func (s *Server) info() WellKnown {
	rate := Rate.info
	wk := WellKnown{
		Protocol: 1,
		Name:     s.cfg.Name,
		Limits: Limits{RecordsPerOrigin: s.maxRecs, FileBytes: s.maxBytes, LineBytes: protocol.MaxLineBytes,
			PutsPerClient: rate(s.cfg.RatePerClient), PutsPerOrigin: rate(s.cfg.RatePerOrigin),
			Origins: s.cfg.MaxOrigins, OriginsPerToken: s.cfg.MaxOriginsPerToken},
		GetNeedsToken:      s.cfg.ReadNeedsToken,
		PutNeedsToken:      true,
		PublishersAdmitted: s.publishersAdmitted(),
		PeerDirectory:      s.peerDirectoryInfo(),
		P2P:                s.cfg.P2P,
		Server:             "remem",
		Version:            version.String(),
	}
	if !s.st.shared {
		wk.Limits.TotalBytes = s.cfg.MaxBytes
	}
	return wk
}
