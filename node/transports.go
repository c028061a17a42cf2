package node

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/folder"
	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/protocol"
)

// FolderSync is what one folder sync did.
type FolderSync struct {
	Scope  string        `json:"scope"` // folder.ScopeName of the folder
	Wrote  bool          `json:"wrote"`
	Report folder.Report `json:"report"`
}

// SyncFolder writes this memory's file into dir, then reads every other
// memory's file there through the one receive path.
func (m *Memory) SyncFolder(ctx context.Context, dir string) (FolderSync, error) {
	out := FolderSync{Scope: folder.ScopeName(dir)}
	lines, left, err := m.FileLines(out.Scope)
	if err != nil {
		return out, err
	}
	if left > 0 {
		m.log.Warn("own records over the per-origin file limits; the oldest wait", "scope", folder.ScopeName(dir), "left_out", left)
	}
	if out.Wrote, err = folder.Write(dir, m.Origin(), lines); err != nil {
		return out, err // folder.Write names the file
	}
	return out, m.ReadFolder(ctx, dir, &out.Report)
}

// ReadFolder reads the other memories' files in dir.
func (m *Memory) ReadFolder(ctx context.Context, dir string, rep *folder.Report) error {
	r, err := folder.Read(dir, m.Origin(), m.Now(), m.deliverFunc(ctx))
	if rep != nil {
		*rep = r
	}
	m.CountRefused(r.ByReason())
	return err
}

func (m *Memory) deliverFunc(ctx context.Context) func(string, []*protocol.Record) error {
	return func(scope string, recs []*protocol.Record) error {
		_, err := m.Deliver(ctx, scope, recs)
		return err
	}
}

// PushCommons replaces this memory's file on the commons.
func (m *Memory) PushCommons(ctx context.Context, c *commons.Client) (commons.PushResult, error) {
	lines, left, err := m.FileLines(c.Scope())
	if err != nil {
		return commons.PushResult{}, err
	}
	if left > 0 {
		m.log.Warn("own records over the per-origin file limits; the oldest wait", "scope", c.Scope(), "left_out", left)
	}
	if len(lines) == 0 {
		return commons.PushResult{}, m.nothingFor(c.Scope())
	}
	return c.Push(ctx, m.Origin(), lines)
}

// nothingFor explains why no own record goes to scope: none is signed yet,
// or every one is a confirmation of a lesson that came by another scope,
// which `remem export` lists (it prints every scope's) but which goes only
// where its lesson came from (SPEC §7).
func (m *Memory) nothingFor(scope string) error {
	all, err := m.ownRecords("")
	if err != nil {
		return err
	}
	sign := "publish a lesson (`remem publish`, or `remem share --project DIR` and a sleep) to have something to push"
	_, url := scopes.Parse(scope)
	if len(all) == 0 {
		return fmt.Errorf("nothing to push to %s: this memory has signed no record yet; %s", url, sign)
	}
	return fmt.Errorf("nothing to push to %s: this memory's %d records (`remem export`) are confirmations of lessons that came by other scopes, and a confirmation goes only where its lesson came from (SPEC §7); %s",
		url, len(all), sign)
}

// PullCommons takes the files that changed on the commons since the last
// pull, verifying every line here.
//
// A commons' admitted publishers are known only once their records came:
// delivered as strangers' they may have been left out past the strangers'
// budget, so their files are forgotten (ETags, and the index time) and
// pulled once more, now admitted; else the pull state would skip them as
// unchanged until each publisher changed its file.
func (m *Memory) PullCommons(ctx context.Context, c *commons.Client) (commons.PullReport, error) {
	origins := map[string]bool{}
	leftOut := map[string]bool{} // origins some of whose records were left out past the budget
	pull := func() (commons.PullReport, error) {
		return c.Pull(ctx, m.Origin(), m.Now(), func(scope string, recs []*protocol.Record) error {
			for _, r := range recs {
				origins[r.Origin] = true
			}
			d, err := m.Deliver(ctx, scope, recs)
			if d.OverBudget > 0 {
				for _, r := range recs {
					leftOut[r.Origin] = true
				}
			}
			return err
		})
	}
	rep, err := pull()
	m.CountRefused(rep.Refused)
	if nerr := m.noteCommonsPublishers(ctx, c, origins); nerr != nil {
		m.log.Warn("the commons' publishers are not admitted", "commons", c.Scope(), "err", nerr)
	}
	var again []string
	for o := range leftOut {
		if m.admitted().Admits(o) {
			again = append(again, o)
		}
	}
	if len(again) == 0 || c.State == nil || err != nil {
		return rep, err
	}
	if ferr := forgetCommonsFiles(c, again); ferr != nil {
		return rep, ferr
	}
	rep2, err := pull()
	m.CountRefused(rep2.Refused)
	rep.Fetched += rep2.Fetched
	rep.Accepted += rep2.Accepted
	rep.Bytes += rep2.Bytes
	rep.Failed += rep2.Failed
	return rep, err
}

// forgetCommonsFiles makes c's next pull fetch the files of origins again:
// their ETags go, and the index is asked for whole.
func forgetCommonsFiles(c *commons.Client, origins []string) error {
	st, err := c.State.Load()
	if err != nil {
		return err
	}
	base, err := commons.CanonicalURL(c.BaseURL)
	if err != nil {
		return err
	}
	ss, ok := st.Servers[base]
	if !ok {
		return nil
	}
	for _, o := range origins {
		delete(ss.ETags, o)
	}
	ss.Since = time.Time{}
	st.Servers[base] = ss
	return c.State.Save(st)
}

// CommonsClient builds a client for url whose pull state lives in the home,
// in a file named after the commons' canonical URL (commons.CanonicalURL),
// so every spelling of one commons shares it. A url CanonicalURL refuses
// gives a client whose every request fails with the reason.
func (m *Memory) CommonsClient(url, token string) *commons.Client {
	name := url
	if u, err := commons.CanonicalURL(url); err == nil {
		name = u
	}
	return &commons.Client{BaseURL: url, Token: token,
		State: commons.FileState{Path: filepath.Join(m.Home(), "commons-"+safeName(name)+".json")}}
}
