package commons

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/protocol"
)

// Client talks to a commons: it pushes this memory's file and pulls the
// files of the others, verifying every line itself.
type Client struct {
	// BaseURL is the commons, e.g. "https://commons.example.org";
	// "https://commons.example.org/commons/" (the seed's form), with or
	// without the slashes, is the same commons (see CanonicalURL). Any
	// other path is refused by every request.
	BaseURL string
	// Token is the bearer token (needed for Push; for Pull when the server
	// says get_needs_token).
	Token string
	// HTTP is the client used (nil: one with a 2-minute timeout and enough
	// idle connections for the parallel fetches).
	HTTP *http.Client
	// State remembers ETags and the last index time between pulls (nil:
	// nothing is remembered, every pull is a full pull).
	State StateStore
	// Progress, when set, is called after each file a pull fetched (or
	// failed to), with the files done and the total to fetch; never
	// concurrently. Files skipped by their ETag are not counted.
	Progress func(done, total int)
	// Concurrency bounds the parallel file fetches of a pull (0: 8).
	Concurrency int
	// RequestTimeout bounds each request, its body included: the index,
	// each file, a push (0: one minute). A commons that never answers,
	// or answers byte by byte, cannot hold a pull longer than that per
	// request.
	RequestTimeout time.Duration
	// MaxOrigins bounds the index entries a pull takes (0: 100,000), and
	// with it the index bytes read (320 per entry) and the files fetched.
	// A longer index is cut there and reported as an error.
	MaxOrigins int
}

// Limits a client enforces on what a server sends: the server's word is
// not trusted, not even about sizes. They bound the memory one pull takes
// (the index, plus Concurrency files at a time) and, with RequestTimeout,
// its time.
const (
	// clientMaxFile is the SPEC §12 file limit plus slack for CRLF line
	// ends; a larger file is refused whole, unread past this (a server
	// configured above the SPEC limit is not followed).
	clientMaxFile = protocol.MaxOriginFile + 4<<10
	// indexBytesPerOrigin is what an index entry may take: one is about
	// 130 bytes of JSON, the rest is slack for spacing and longer ETags.
	indexBytesPerOrigin = 320
	clientMaxReply      = 64 << 10
	clientMaxETag       = 256  // a longer ETag is not remembered (the file is fetched again next time)
	maxRefusals         = 1000 // refusals kept in a PullReport, and per file; all are counted

	defaultMaxOrigins     = 100_000
	defaultRequestTimeout = time.Minute
)

// maxIndexBytes is the most of an index a pull reads.
func maxIndexBytes(maxOrigins int) int64 { return int64(maxOrigins)*indexBytesPerOrigin + 4<<10 }

func (c *Client) maxOrigins() int {
	if c.MaxOrigins > 0 {
		return c.MaxOrigins
	}
	return defaultMaxOrigins
}

func (c *Client) timeout() time.Duration {
	if c.RequestTimeout > 0 {
		return c.RequestTimeout
	}
	return defaultRequestTimeout
}

// requestContext bounds one request, its body included, by the request
// timeout.
func (c *Client) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.timeout())
}

// explain names err as the request timeout when that is what ended the
// request (rctx, from requestContext) while the caller's ctx still runs.
func (c *Client) explain(ctx, rctx context.Context, err error) error {
	// net/http's error repeats the method and URL every caller names
	// already (`pulling the index of the commons at U: Get "U/commons/index": dial …`).
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if err != nil && ctx.Err() == nil && rctx.Err() != nil {
		return fmt.Errorf("no complete answer within %v (the request timeout); the commons is slow or stuck, try again later: %w", c.timeout(), err)
	}
	return err
}

var defaultHTTP = &http.Client{
	Timeout: 2 * time.Minute,
	Transport: func() http.RoundTripper {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 16
		return t
	}(),
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return defaultHTTP
}

// base is the commons' canonical URL (CanonicalURL), or BaseURL without
// its trailing slashes where that refuses it (every request then fails
// with CanonicalURL's reason).
func (c *Client) base() string {
	if u, err := CanonicalURL(c.BaseURL); err == nil {
		return u
	}
	return strings.TrimRight(c.BaseURL, "/")
}

// Scope is the scope records pulled from this commons arrive with:
// "commons:" and the canonical URL, so every spelling of one commons is one
// scope.
func (c *Client) Scope() string { return scopes.Commons(c.base()) }

// StatusError is a commons' refusal, with a message that says what to do.
type StatusError struct {
	URL        string // the commons' base URL
	Code       int
	Line       int             // the first bad line, for 400 and 403
	Reason     protocol.Reason // the server's reason, when it gave one
	Key        *WireKey        // for 409: the first stored record the file lacked
	RetryAfter time.Duration   // for 429
	Server     string          // the server's own message
	HadToken   bool
}

func (e *StatusError) Error() string {
	switch e.Code {
	case http.StatusUnauthorized:
		if !e.HadToken {
			return fmt.Sprintf("the commons at %s needs a token: set --token-file or REMEM_COMMONS_TOKEN", e.URL)
		}
		return fmt.Sprintf("the commons at %s refused the token: set --token-file or REMEM_COMMONS_TOKEN", e.URL)
	case http.StatusForbidden:
		return fmt.Sprintf("the commons at %s refused line %d: it is signed by another origin than the file's (%s)", e.URL, e.Line, e.Server)
	case http.StatusBadRequest:
		if e.Line > 0 {
			return fmt.Sprintf("the commons at %s refused line %d (%s): %s", e.URL, e.Line, e.Reason, e.Server)
		}
		return fmt.Sprintf("the commons at %s refused the request: %s", e.URL, e.Server)
	case http.StatusRequestEntityTooLarge:
		return fmt.Sprintf("the commons at %s refused the file as over its limits (%s); publish fewer records (see %s/.well-known/remem)", e.URL, e.Server, e.URL)
	case http.StatusConflict:
		if e.Key == nil {
			return fmt.Sprintf("the commons at %s refused the file as a rollback: %s", e.URL, e.Server)
		}
		return fmt.Sprintf("the commons at %s refused the file as a rollback: it holds the %s of lesson %s, which the file lacks or holds in an older version; "+
			"a file may drop only its oldest records and never a revocation. Is this memory's key used by another home, or was it restored from an older backup?", e.URL, e.Key.Type, e.Key.Hash)
	case http.StatusTooManyRequests:
		return fmt.Sprintf("the commons at %s is rate-limiting pushes; retry after %v", e.URL, e.RetryAfter)
	}
	if e.Server != "" {
		return fmt.Sprintf("the commons at %s answered %d %s: %s", e.URL, e.Code, http.StatusText(e.Code), e.Server)
	}
	return fmt.Sprintf("the commons at %s answered %d %s", e.URL, e.Code, http.StatusText(e.Code))
}

func (c *Client) statusError(resp *http.Response) error {
	e := &StatusError{URL: c.base(), Code: resp.StatusCode, HadToken: c.Token != ""}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, clientMaxReply))
	var eb errorBody
	if json.Unmarshal(body, &eb) == nil {
		e.Server, e.Line, e.Reason, e.Key = eb.Error, eb.Line, eb.Reason, eb.Key
	} else {
		e.Server = strings.TrimSpace(string(body))
	}
	if v := resp.Header.Get("Retry-After"); v != "" {
		if secs, err := strconv.Atoi(v); err == nil {
			e.RetryAfter = time.Duration(secs) * time.Second
		}
	}
	return e
}

func (c *Client) newRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	if _, err := CanonicalURL(c.BaseURL); err != nil {
		return nil, err
	}
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base()+path, r)
	if err != nil {
		return nil, fmt.Errorf("commons %s: %w", c.base(), err)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	return req, nil
}

// PushResult is the server's answer to a push.
type PushResult struct {
	Origin  string    `json:"origin"`
	Records int       `json:"records"`
	Updated time.Time `json:"updated"` // when the server accepted the file (its clock)
	ETag    string    `json:"etag"`
	Created bool      `json:"created"` // the commons had no file of this origin before
	Skipped int       `json:"skipped"` // lines of an unknown version, not stored by the commons
}

// Push replaces this memory's file on the commons with lines (its current
// records, each one signed line without the newline).
func (c *Client) Push(ctx context.Context, origin string, lines [][]byte) (PushResult, error) {
	if _, err := CanonicalURL(c.BaseURL); err != nil {
		return PushResult{}, err
	}
	if !protocol.ValidOrigin(origin) {
		return PushResult{}, fmt.Errorf("pushing to %s: origin %q is not 16 lowercase hex characters", c.base(), origin)
	}
	if len(lines) == 0 {
		return PushResult{}, fmt.Errorf("pushing to %s: there is no record to push yet", c.base())
	}
	size := 0
	for _, l := range lines {
		size += len(l) + 1
	}
	body := make([]byte, 0, size)
	for _, l := range lines {
		body = append(append(body, l...), '\n')
	}
	rctx, cancel := c.requestContext(ctx)
	defer cancel()
	req, err := c.newRequest(rctx, http.MethodPut, "/commons/"+origin+".jsonl", body)
	if err != nil {
		return PushResult{}, err
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := c.http().Do(req)
	if err != nil {
		return PushResult{}, fmt.Errorf("pushing to the commons at %s: %w", c.base(), c.explain(ctx, rctx, err))
	}
	defer func() { _ = resp.Body.Close() }() // a read body: its close says nothing
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return PushResult{}, c.statusError(resp)
	}
	var a PutAnswer
	if err := json.NewDecoder(io.LimitReader(resp.Body, clientMaxReply)).Decode(&a); err != nil {
		return PushResult{}, fmt.Errorf("pushing to the commons at %s: reading the answer: %w", c.base(), c.explain(ctx, rctx, err))
	}
	return PushResult{Origin: a.Origin, Records: a.Records, Updated: a.Updated, ETag: a.ETag, Created: resp.StatusCode == http.StatusCreated, Skipped: a.Skipped}, nil
}

// Refusal is one line of a pulled file that was not taken (Line 0: the
// whole file); its Source is the file's origin.
type Refusal = protocol.Refused

// PullReport says what a pull did.
type PullReport struct {
	Listed      int                     `json:"listed"`       // entries in the index answer (with ?since=, only changed ones)
	Unchanged   int                     `json:"unchanged"`    // files skipped: their ETag is the one remembered
	Fetched     int                     `json:"fetched"`      // files downloaded (200)
	NotModified int                     `json:"not_modified"` // conditional GETs answered 304
	Accepted    int                     `json:"accepted"`     // records verified and delivered
	Skipped     int                     `json:"skipped"`      // lines of an unknown version
	Refused     map[protocol.Reason]int `json:"refused"`      // lines refused, by reason
	Refusals    []Refusal               `json:"refusals"`     // the first refusals, with line numbers
	Bytes       int64                   `json:"bytes"`        // response body bytes received (index and files)
	Failed      int                     `json:"failed"`       // files (or index cuts) that failed; Pull returns their errors
}

// fetched is one worker's result.
type fetched struct {
	origin      string
	etag        string
	recs        []*protocol.Record
	refused     map[protocol.Reason]int // every refusal, counted
	refusals    []Refusal               // the first maxRefusals
	skipped     int
	bytes       int64
	notModified bool
	err         error
}

// refuse counts x, and keeps it while fewer than maxRefusals are kept: a
// file of a few hundred thousand one-byte lines must not become as many
// Refusals in memory.
func (r *fetched) refuse(x Refusal) {
	if r.refused == nil {
		r.refused = map[protocol.Reason]int{}
	}
	r.refused[x.Reason]++
	if len(r.refusals) < maxRefusals {
		r.refusals = append(r.refusals, x)
	}
}

// Pull fetches the index (only entries updated since the last pull), then
// every listed file whose ETag differs from the one remembered, with
// If-None-Match. It verifies every line itself (protocol.Verify, and the
// origin against the file name), delivers each file's accepted records
// with scope Scope() ("commons:" and the canonical URL), and remembers
// ETags and the index time in State. self's own file is not fetched, nor
// one origin twice. A file that fails is reported and fetched again next
// time; the others are kept.
//
// What a commons sends is bounded (see MaxOrigins, RequestTimeout and
// clientMaxFile): an index over the limits is cut there, the entries
// before the cut are pulled and the cut is one of the errors returned. A
// pull that goes on past a failure returns the report of what it did with
// every failure joined in its error (errors.Join); an error that stops it
// before any file (the state, the index request) leaves the remembered
// state as it was.
func (c *Client) Pull(ctx context.Context, self string, now time.Time, deliver Deliver) (PullReport, error) {
	rep := PullReport{Refused: map[protocol.Reason]int{}}
	if _, err := CanonicalURL(c.BaseURL); err != nil {
		return rep, err
	}
	base, scope := c.base(), c.Scope()
	var state PullState
	if c.State != nil {
		var err error
		if state, err = c.State.Load(); err != nil {
			return rep, err
		}
	}
	if state.Servers == nil {
		state.Servers = map[string]ServerState{}
	}
	ss := state.Servers[base]
	if ss.ETags == nil {
		ss.ETags = map[string]string{}
	}

	var errs []error // every failure; the pull goes on past each
	fail := func(err error) {
		errs = append(errs, err)
		rep.Failed++
	}
	entries, n, err := c.index(ctx, ss.Since)
	rep.Bytes += n
	var cut *indexCutError
	switch {
	case errors.As(err, &cut):
		fail(err) // `since` stays: the entries past the cut are listed again
	case err != nil:
		return rep, err
	}
	rep.Listed = len(entries)
	since := ss.Since
	var todo []IndexEntry
	listed := make(map[string]bool, len(entries))
	bad, firstBad := 0, "" // entries that are not origins: one error for all
	for _, e := range entries {
		if e.Updated.After(since) {
			since = e.Updated
		}
		if !protocol.ValidOrigin(e.Origin) {
			if bad++; bad == 1 {
				firstBad = e.Origin
			}
			continue
		}
		if listed[e.Origin] {
			continue // listed twice: fetched once
		}
		listed[e.Origin] = true
		switch {
		case e.Origin == self:
		case e.ETag != "" && ss.ETags[e.Origin] == e.ETag:
			rep.Unchanged++
		default:
			todo = append(todo, e)
		}
	}
	if bad > 0 {
		// Not a failure of this pull: the valid entries are all taken.
		errs = append(errs, fmt.Errorf("the commons at %s lists %d entries that are not origins (the first: %.40q); they were passed over", base, bad, firstBad))
	}

	workers := c.Concurrency
	if workers <= 0 {
		workers = 8
	}
	workers = min(workers, len(todo))
	// The remembered ETags are read here, before the workers start: the
	// loop below updates the map while they run.
	type job struct{ origin, etag string }
	queue := make([]job, len(todo))
	for i, e := range todo {
		queue[i] = job{e.Origin, ss.ETags[e.Origin]}
	}
	jobs := make(chan job)
	results := make(chan fetched)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				results <- c.fetch(ctx, j.origin, j.etag, now)
			}
		})
	}
	go func() {
		defer close(jobs)
		for _, j := range queue {
			select {
			case jobs <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	done := 0
	for r := range results {
		done++
		rep.Bytes += r.bytes
		switch {
		case r.err != nil:
			fail(r.err)
		case r.notModified:
			rep.NotModified++
			if r.etag != "" {
				ss.ETags[r.origin] = r.etag
			}
		default:
			rep.Fetched++
			rep.Skipped += r.skipped
			for reason, n := range r.refused {
				rep.Refused[reason] += n
			}
			for _, x := range r.refusals {
				if len(rep.Refusals) < maxRefusals {
					rep.Refusals = append(rep.Refusals, x)
				}
			}
			if len(r.recs) > 0 {
				if err := deliver(scope, r.recs); err != nil {
					fail(fmt.Errorf("delivering the records of %s from %s: %w", r.origin, base, err))
					break
				}
				rep.Accepted += len(r.recs)
			}
			ss.ETags[r.origin] = r.etag
		}
		if c.Progress != nil {
			c.Progress(done, len(todo))
		}
	}
	if done < len(todo) { // ctx ended before every file was asked for
		fail(fmt.Errorf("pulling from %s: %w", base, context.Cause(ctx)))
	}
	// Only a complete pull moves `since` on; after a partial one the
	// index is asked again from the old time and the ETags skip the
	// files already taken.
	if rep.Failed == 0 {
		ss.Since = since
	}
	ss.LastPull = time.Now()
	state.Servers[base] = ss
	if c.State != nil {
		if err := c.State.Save(state); err != nil {
			errs = append(errs, err)
		}
	}
	return rep, errors.Join(errs...)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// indexCutError is an index cut at the client's limits: the entries
// before the cut are good.
type indexCutError struct{ msg string }

func (e *indexCutError) Error() string { return e.msg }

// errTooManyOrigins: the index has more entries than the client takes.
var errTooManyOrigins = errors.New("too many origins")

// index gets the index entries updated after since (all when zero), at
// most maxOrigins of them and maxIndexBytes; over either it returns the
// entries before the cut with an *indexCutError.
func (c *Client) index(ctx context.Context, since time.Time) ([]IndexEntry, int64, error) {
	path := "/commons/index"
	if !since.IsZero() {
		path += "?since=" + url.QueryEscape(since.UTC().Format(time.RFC3339Nano))
	}
	rctx, cancel := c.requestContext(ctx)
	defer cancel()
	req, err := c.newRequest(rctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, 0, err
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("pulling the index of the commons at %s: %w", c.base(), c.explain(ctx, rctx, err))
	}
	defer func() { _ = resp.Body.Close() }() // a read body: its close says nothing
	if resp.StatusCode != http.StatusOK {
		return nil, 0, c.statusError(resp)
	}
	maxOrigins := c.maxOrigins()
	limit := maxIndexBytes(maxOrigins)
	cr := &countingReader{r: io.LimitReader(resp.Body, limit+1)}
	entries, err := decodeIndex(cr, maxOrigins)
	switch {
	case cr.n > limit:
		return entries, cr.n, &indexCutError{fmt.Sprintf("the index of the commons at %s is over %d bytes (%d bytes for each of at most %d origins); "+
			"only the %d entries before the cut were pulled: the commons is broken or hostile, or larger than Client.MaxOrigins allows",
			c.base(), limit, indexBytesPerOrigin, maxOrigins, len(entries))}
	case errors.Is(err, errTooManyOrigins):
		return entries, cr.n, &indexCutError{fmt.Sprintf("the index of the commons at %s lists more than %d origins; only the first %d were pulled: "+
			"the commons is broken or hostile, or larger than Client.MaxOrigins allows", c.base(), maxOrigins, maxOrigins)}
	case err != nil:
		return nil, cr.n, fmt.Errorf("the index of the commons at %s is not valid: %w", c.base(), c.explain(ctx, rctx, err))
	}
	_, _ = io.Copy(io.Discard, cr) // bounded by the limit; lets the connection be reused
	return entries, cr.n, nil
}

// decodeIndex reads a JSON array of index entries one entry at a time, so
// that at most max entries are ever held; past them it returns the first
// max with errTooManyOrigins. A JSON null is an empty index.
func decodeIndex(r io.Reader, max int) ([]IndexEntry, error) {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok == nil {
		return nil, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("it is not a JSON array (it begins with %v)", tok)
	}
	var out []IndexEntry
	for dec.More() {
		if len(out) == max {
			return out, errTooManyOrigins
		}
		var e IndexEntry
		if err := dec.Decode(&e); err != nil {
			return out, err
		}
		out = append(out, e)
	}
	if _, err := dec.Token(); err != nil { // the closing ]
		return out, err
	}
	return out, nil
}

// fetch gets one origin's file (conditionally when etag is known) and
// verifies it.
func (c *Client) fetch(ctx context.Context, origin, etag string, now time.Time) fetched {
	r := fetched{origin: origin}
	rctx, cancel := c.requestContext(ctx)
	defer cancel()
	req, err := c.newRequest(rctx, http.MethodGet, "/commons/"+origin+".jsonl", nil)
	if err != nil {
		r.err = err
		return r
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := c.http().Do(req)
	if err != nil {
		r.err = fmt.Errorf("fetching %s from %s: %w", origin, c.base(), c.explain(ctx, rctx, err))
		return r
	}
	defer func() { _ = resp.Body.Close() }() // a read body: its close says nothing
	switch resp.StatusCode {
	case http.StatusNotModified:
		r.notModified, r.etag = true, etag
		return r
	case http.StatusOK:
	default:
		r.err = fmt.Errorf("fetching %s: %w", origin, c.statusError(resp))
		return r
	}
	cr := &countingReader{r: io.LimitReader(resp.Body, clientMaxFile+1)}
	data, err := io.ReadAll(cr)
	r.bytes = cr.n
	if err != nil {
		r.err = fmt.Errorf("fetching %s from %s: %w", origin, c.base(), c.explain(ctx, rctx, err))
		return r
	}
	if r.etag = resp.Header.Get("ETag"); len(r.etag) > clientMaxETag {
		r.etag = "" // not remembered: a hostile server's header must not fill the state file
	}
	if len(data) > clientMaxFile {
		r.refuse(Refusal{Source: origin, Reason: protocol.ReasonFileTooLarge,
			Detail: fmt.Sprintf("%s: the file is over %d bytes (the limit of SPEC §12, plus slack); nothing of it was taken", protocol.ReasonFileTooLarge, clientMaxFile)})
		return r
	}
	r.verify(data, now)
	return r
}

// verify verifies the pulled file of r.origin as one batch bound to that
// origin, keeping the records and counting the refusals.
func (r *fetched) verify(data []byte, now time.Time) {
	b := protocol.VerifyBatch(protocol.SplitLines(data), protocol.Bound{Source: r.origin, Origin: r.origin}, now)
	r.skipped += len(b.Skipped)
	for _, x := range b.Refused {
		r.refuse(x)
	}
	r.recs = b.Records
}
