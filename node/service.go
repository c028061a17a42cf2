package node

import (
	"context"
	"io"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/internal/progress"
	"github.com/remem/remem/protocol"
)

// Service is what the CLI, the MCP server and the web page ask of a memory.
// Local serves it from an open Memory; Client serves it through the local
// HTTP API of a running node, with the same results.
type Service interface {
	Origin() string
	Lessons(ctx context.Context, f Filter) ([]LessonView, error)
	Show(ctx context.Context, hash string) (Provenance, error)
	Recall(ctx context.Context, query string, limit int, layers ...Layer) ([]LessonView, error)
	Remember(ctx context.Context, evs []protocol.Event) (IngestReport, error)
	Ingest(ctx context.Context, source string, data []byte) (IngestReport, error)
	Sleep(ctx context.Context) (SleepReport, error)
	Publish(ctx context.Context, kind, text string) (Signed, error)
	Revoke(ctx context.Context, hash, reason string) (RevokeReport, error)
	RewriteDraft(ctx context.Context, hash, text string) (Rewritten, error)
	Export(ctx context.Context) ([]string, error)
	Import(ctx context.Context, scope string, data []byte) (ReceiveReport, error)
	Share(ctx context.Context, req ShareRequest) (ShareSettings, error)
	// The transports a command runs by hand: through a running node they
	// run inside it, which holds the home (and the pull state).
	PushCommons(ctx context.Context, req CommonsRequest) (commons.PushResult, error)
	PullCommons(ctx context.Context, req CommonsRequest) (commons.PullReport, error)
	SyncFolder(ctx context.Context, dir string) (FolderSync, error)
	Close() error
}

// Signed is a record this memory just signed.
type Signed struct {
	Hash   string `json:"hash"`
	Origin string `json:"origin"`
	Line   string `json:"line"`
}

// CommonsRequest names a commons to push to or pull from and the bearer
// token to send it ("" for none).
type CommonsRequest struct {
	URL   string `json:"url"`
	Token string `json:"token,omitempty"`
}

// ShareRequest changes or lists the per-project opt-ins.
type ShareRequest struct {
	List bool         `json:"list,omitempty"`
	Off  bool         `json:"off,omitempty"`
	Set  ProjectShare `json:"set"`
}

// Local is the Service of a memory opened in this process.
type Local struct{ M *Memory }

var _ Service = Local{}

func (l Local) Origin() string { return l.M.Origin() }
func (l Local) Lessons(_ context.Context, f Filter) ([]LessonView, error) {
	return l.M.Lessons(f)
}
func (l Local) Show(_ context.Context, hash string) (Provenance, error) { return l.M.Show(hash) }
func (l Local) Recall(ctx context.Context, q string, limit int, layers ...Layer) ([]LessonView, error) {
	return l.M.Recall(ctx, q, limit, layers...)
}
func (l Local) Remember(_ context.Context, evs []protocol.Event) (IngestReport, error) {
	return l.M.Remember(evs)
}
func (l Local) Ingest(ctx context.Context, source string, data []byte) (IngestReport, error) {
	return l.M.Ingest(source, &readProgress{ctx: ctx, r: bytesReader(data), total: len(data)})
}

// readProgress reports the bytes read of a long import, a step each 64 KiB.
type readProgress struct {
	ctx         context.Context
	r           io.Reader
	done, total int
}

func (p *readProgress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	before := p.done
	p.done += n
	if p.done>>16 != before>>16 || err != nil {
		progress.Report(p.ctx, "reading events", p.done, p.total)
	}
	return n, err
}
func (l Local) Sleep(ctx context.Context) (SleepReport, error) { return l.M.Sleep(ctx) }
func (l Local) Publish(_ context.Context, kind, text string) (Signed, error) {
	return signedOf(l.M.Publish(kind, text))
}
func (l Local) Revoke(_ context.Context, hash, reason string) (RevokeReport, error) {
	rec, err := l.M.Revoke(hash, reason)
	if err != nil {
		return RevokeReport{}, err
	}
	return l.M.revokeReport(rec)
}
func (l Local) RewriteDraft(_ context.Context, hash, text string) (Rewritten, error) {
	return l.M.RewriteDraft(hash, text)
}
func (l Local) Export(context.Context) ([]string, error) {
	lines, err := l.M.OwnLines("")
	out := make([]string, len(lines))
	for i, b := range lines {
		out[i] = string(b)
	}
	return out, err
}
func (l Local) Import(ctx context.Context, scope string, data []byte) (ReceiveReport, error) {
	return l.M.Import(ctx, scope, data)
}
func (l Local) Share(_ context.Context, req ShareRequest) (ShareSettings, error) {
	switch {
	case req.List:
		return l.M.ShareSettings()
	case req.Off:
		return l.M.Unshare(req.Set.Project)
	}
	return l.M.Share(req.Set)
}
func (l Local) PushCommons(ctx context.Context, req CommonsRequest) (commons.PushResult, error) {
	return l.M.PushCommons(ctx, l.M.CommonsClient(req.URL, req.Token))
}

// PullCommons reports the files fetched as progress ("pulling files").
func (l Local) PullCommons(ctx context.Context, req CommonsRequest) (commons.PullReport, error) {
	c := l.M.CommonsClient(req.URL, req.Token)
	c.Progress = func(done, total int) { progress.Report(ctx, "pulling files", done, total) }
	return l.M.PullCommons(ctx, c)
}
func (l Local) SyncFolder(ctx context.Context, dir string) (FolderSync, error) {
	return l.M.SyncFolder(ctx, dir)
}
func (l Local) Close() error { return l.M.Close() }

func signedOf(rec *protocol.Record, err error) (Signed, error) {
	if err != nil {
		return Signed{}, err
	}
	return Signed{Hash: rec.Hash, Origin: rec.Origin, Line: string(rec.Raw)}, nil
}
