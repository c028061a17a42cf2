package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/folder"
	"github.com/remem/remem/internal/atomicfile"
	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// Client is the Service of a memory held by a running node, reached through
// its local HTTP API.
type Client struct {
	BaseURL string // e.g. http://127.0.0.1:7878
	Token   string // the node's API token (APITokenFile), sent as a bearer
	HTTP    *http.Client
	origin  string
}

var _ Service = (*Client)(nil)

// NodeInfo is what a running node writes to $REMEM_HOME/node.json so that
// commands on the same home find its API.
type NodeInfo struct {
	API    string `json:"api"`
	PID    int    `json:"pid"`
	Origin string `json:"origin"`
}

// WriteNodeInfo records the running node's API address in home.
func WriteNodeInfo(home string, info NodeInfo) error {
	data, _ := json.Marshal(info)
	return atomicfile.Write(filepath.Join(home, NodeFile), "", data, 0o600)
}

// RemoveNodeInfo forgets the running node's address (on exit); a file
// already gone is no error.
func RemoveNodeInfo(home string) error {
	if err := os.Remove(filepath.Join(home, NodeFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// DialNode returns a Client for the node running on home, or an error when
// none answers.
func DialNode(ctx context.Context, home string) (*Client, error) {
	c, info, err := reachNode(home)
	if err != nil {
		return nil, err
	}
	var st Status
	if err := c.do(ctx, "GET", "/status", nil, &st); err != nil {
		return nil, fmt.Errorf("the node of %s (pid %d) does not answer at %s: %w", home, info.PID, info.API, err)
	}
	c.origin = st.Origin
	return c, nil
}

// ReachNode is DialNode without asking the node anything: a Client for the
// node that holds home, for a caller that must be quick (a hook) and falls
// back on the inbox when the request fails. Its Origin is node.json's.
func ReachNode(home string, timeout time.Duration) (*Client, error) {
	c, _, err := reachNode(home)
	if err != nil {
		return nil, err
	}
	c.HTTP = &http.Client{Timeout: timeout}
	return c, nil
}

func reachNode(home string) (*Client, NodeInfo, error) {
	data, err := os.ReadFile(filepath.Join(home, NodeFile))
	if err != nil {
		return nil, NodeInfo{}, fmt.Errorf("no running node found for %s: %w", home, err)
	}
	var info NodeInfo
	if err := json.Unmarshal(data, &info); err != nil || info.API == "" {
		return nil, info, fmt.Errorf("%s is damaged; stop the node and start it again", filepath.Join(home, NodeFile))
	}
	// The token goes only to the node that holds the home: a node that
	// died leaves node.json behind, and any user of the machine may listen
	// on the port it names (the default one is well known) to take the
	// token, which the next node on the home keeps. Only the person's own
	// processes can open the home's lock, and its holder wrote its pid in
	// it: held, with node.json's pid, it is the node that wrote node.json.
	pid, held, err := store.Holder(home)
	if err != nil {
		return nil, info, err
	}
	if !held || pid != info.PID {
		return nil, info, fmt.Errorf("no running node found for %s: %s names pid %d, which does not hold the home (its node has stopped); the API token is not sent to %s, which another process may be listening on", home, NodeFile, info.PID, info.API)
	}
	token, err := ReadAPIToken(home)
	if err != nil {
		return nil, info, err
	}
	return &Client{BaseURL: "http://" + info.API, Token: token, HTTP: &http.Client{Timeout: 5 * time.Minute}, origin: info.Origin}, info, nil
}

func (c *Client) Origin() string { return c.origin }
func (c *Client) Close() error   { return nil }

// WebURL is the link that opens the node's page for its person: the token
// rides after #, which a browser never sends, and the page moves it out of
// the address bar into the tab's sessionStorage.
func (c *Client) WebURL() string { return WebURL(strings.TrimPrefix(c.BaseURL, "http://"), c.Token) }

// WebURL is the link to the page of the node whose API listens on addr.
func WebURL(addr, token string) string { return "http://" + addr + "/#token=" + token }

// do sends a request and decodes the JSON answer into out.
func (c *Client) do(ctx context.Context, method, path string, in any, out any) error {
	code, data, err := c.send(ctx, method, path, in)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return answerError(method, path, code, data)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// doPartial is do for work that goes on past failures (api.partial): the
// report arrives beside the error.
func (c *Client) doPartial(ctx context.Context, path string, in any, out any) error {
	code, data, err := c.send(ctx, http.MethodPost, path, in)
	if err != nil {
		return err
	}
	if code == http.StatusBadGateway {
		var a struct {
			Error  string          `json:"error"`
			Report json.RawMessage `json:"report"`
		}
		if json.Unmarshal(data, &a) == nil && a.Error != "" {
			_ = json.Unmarshal(a.Report, out) // a report it cannot read: the error still says what failed
			return errors.New(a.Error)
		}
	}
	if code != http.StatusOK {
		return answerError(http.MethodPost, path, code, data)
	}
	return json.Unmarshal(data, out)
}

// send sends a request and returns the answer's status and body.
func (c *Client) send(ctx context.Context, method, path string, in any) (int, []byte, error) {
	var body io.Reader
	switch v := in.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(v)
	default:
		data, err := json.Marshal(v)
		if err != nil {
			return 0, nil, err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return 0, nil, err
	}
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = resp.Body.Close() }() // a read body: its close says nothing
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp.StatusCode, data, err
}

// answerError is the error of an answer other than 200: the API's own
// words when it gave them.
func answerError(method, path string, code int, data []byte) error {
	var e apiError
	if json.Unmarshal(data, &e) == nil && e.Error != "" {
		if code == http.StatusNotFound {
			return notHeld(e.Error)
		}
		return errors.New(e.Error)
	}
	return fmt.Errorf("%s %s: %d %s", method, path, code, http.StatusText(code))
}

// Lessons lists the node's lessons, with the layers of its configuration.
// The node is never sent a layer (SPEC §9): f.Layers are composed here, by
// ComposeLayers as the node composes its own, over every lesson the node
// holds in every state, so that state and provenance still come from the
// node's records.
func (c *Client) Lessons(ctx context.Context, f Filter) ([]LessonView, error) {
	var out []LessonView
	if len(f.Layers) > 0 {
		if err := c.do(ctx, "GET", "/lessons?all=1", nil, &out); err != nil {
			return nil, err
		}
		views, err := ComposeLayers(out, f.Layers, c.heldView(ctx))
		if err != nil {
			return nil, err
		}
		return f.cut(f.apply(views)), nil
	}
	q := url.Values{"limit": {fmt.Sprint(f.Limit)}} // 0: every lesson
	if f.State != "" {
		q.Set("state", string(f.State))
	}
	if f.All {
		q.Set("all", "1")
	}
	return out, c.do(ctx, "GET", "/lessons?"+q.Encode(), nil, &out)
}

// heldView asks the node about a hash that is not among its lessons: it may
// hold records of it (a revocation without the lesson).
func (c *Client) heldView(ctx context.Context) HeldView {
	return func(hash string) (LessonView, bool, error) {
		p, err := c.Show(ctx, hash)
		if errors.Is(err, ErrUnknownLesson) {
			return LessonView{}, false, nil
		}
		if err != nil {
			return LessonView{}, false, err
		}
		return p.LessonView, true, nil
	}
}

func (c *Client) Show(ctx context.Context, hash string) (Provenance, error) {
	var p Provenance
	return p, c.do(ctx, "GET", "/lessons/"+url.PathEscape(hash), nil, &p)
}

// Recall asks the node for the lessons relevant to query. With layers, the
// view is composed here (see Lessons) and ranked as the node ranks: a
// lesson the node scored keeps its score; one only these layers bring, or
// that they reach, is scored here by its text with the lexical similarity.
func (c *Client) Recall(ctx context.Context, query string, limit int, layers ...Layer) ([]LessonView, error) {
	var out []LessonView
	if len(layers) == 0 {
		q := url.Values{"query": {query}}
		if limit > 0 { // the node takes none for its default
			q.Set("limit", fmt.Sprint(limit))
		}
		return out, c.do(ctx, "GET", "/lessons?"+q.Encode(), nil, &out)
	}
	views, err := c.Lessons(ctx, Filter{Layers: layers})
	if err != nil || len(views) == 0 {
		return nil, err
	}
	scored, err := c.Recall(ctx, query, len(views))
	if err != nil {
		return nil, err
	}
	scores := make(map[string]float64, len(scored))
	for _, v := range scored {
		scores[v.Hash] = v.Score
	}
	names := make([]string, 0, len(layers))
	for _, l := range layers {
		names = append(names, l.Name)
	}
	sim := consolidate.NewLexical()
	for _, v := range views {
		score, ok := scores[v.Hash]
		if !ok && slices.ContainsFunc(v.Layers, func(n string) bool { return slices.Contains(names, n) }) {
			if score, err = sim.Similarity(ctx, query, v.Text); err != nil {
				return nil, err
			}
		}
		if score <= 0 {
			continue
		}
		v.Score = score
		out = append(out, v)
	}
	return rankRecall(out, limit), nil
}

func (c *Client) Remember(ctx context.Context, evs []protocol.Event) (IngestReport, error) {
	var buf bytes.Buffer
	for _, ev := range evs {
		line, _ := json.Marshal(ev)
		buf.Write(append(line, '\n'))
	}
	return c.Ingest(ctx, "event", buf.Bytes()) // named as Memory.Remember names them
}

// Ingest sends the events to the node with their source, which names the
// bad lines as it would without a node.
func (c *Client) Ingest(ctx context.Context, source string, data []byte) (IngestReport, error) {
	var rep IngestReport
	err := c.do(ctx, "POST", "/memory/remember?"+url.Values{"source": {source}}.Encode(), data, &rep)
	return rep, err
}

func (c *Client) Sleep(ctx context.Context) (SleepReport, error) {
	var rep SleepReport
	return rep, c.do(ctx, "POST", "/sleep", nil, &rep)
}

func (c *Client) Publish(ctx context.Context, kind, text string) (Signed, error) {
	var s Signed
	return s, c.do(ctx, "POST", "/lessons", map[string]string{"kind": kind, "text": text}, &s)
}

func (c *Client) Revoke(ctx context.Context, hash, reason string) (RevokeReport, error) {
	var s RevokeReport
	return s, c.do(ctx, "POST", "/lessons/"+url.PathEscape(hash)+"/revoke", map[string]string{"reason": reason}, &s)
}

func (c *Client) RewriteDraft(ctx context.Context, hash, text string) (Rewritten, error) {
	var out Rewritten
	return out, c.do(ctx, "POST", "/lessons/"+url.PathEscape(hash)+"/rewrite", map[string]string{"text": text}, &out)
}

func (c *Client) Export(ctx context.Context) ([]string, error) {
	var out []string
	return out, c.do(ctx, "GET", "/export", nil, &out)
}

func (c *Client) Import(ctx context.Context, scope string, data []byte) (ReceiveReport, error) {
	var rep ReceiveReport
	return rep, c.do(ctx, "POST", "/records?scope="+url.QueryEscape(scope), data, &rep)
}

func (c *Client) Share(ctx context.Context, req ShareRequest) (ShareSettings, error) {
	var s ShareSettings
	if !req.List && req.Set.Project != "" {
		if abs, err := filepath.Abs(req.Set.Project); err == nil {
			req.Set.Project = abs
		}
	}
	return s, c.do(ctx, "POST", "/share", req, &s)
}

func (c *Client) PushCommons(ctx context.Context, req CommonsRequest) (commons.PushResult, error) {
	var res commons.PushResult
	return res, c.do(ctx, "POST", "/commons/push", req, &res)
}

func (c *Client) PullCommons(ctx context.Context, req CommonsRequest) (commons.PullReport, error) {
	var rep commons.PullReport
	return rep, c.doPartial(ctx, "/commons/pull", req, &rep)
}

// SyncFolder asks the node to sync its folder of dir, by the folder's
// scope (dir taken from this process's directory): the node syncs only the
// folders of its configuration, and refuses another with how to add it.
func (c *Client) SyncFolder(ctx context.Context, dir string) (FolderSync, error) {
	var reps []FolderSync
	err := c.doPartial(ctx, "/folder/sync", FolderSyncRequest{Scope: folder.ScopeName(dir)}, &reps)
	if len(reps) != 1 {
		return FolderSync{}, err
	}
	return reps[0], err
}

// Status asks the running node for its status.
func (c *Client) Status(ctx context.Context) (Status, error) {
	var st Status
	return st, c.do(ctx, "GET", "/status", nil, &st)
}

// notHeld is the node's "no lesson …" answer as it said it, which is
// ErrUnknownLesson for errors.Is without saying so twice.
type notHeld string

func (e notHeld) Error() string        { return string(e) }
func (e notHeld) Is(target error) bool { return target == ErrUnknownLesson }
