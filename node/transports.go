package node

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/folder"
	"github.com/remem/remem/protocol"
)

// FolderScope is the scope of records that came through a shared folder.
func FolderScope(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return "folder:" + abs
}

// FolderSync is what one folder sync did.
type FolderSync struct {
	Scope  string        `json:"scope"` // FolderScope of the folder
	Wrote  bool          `json:"wrote"`
	Report folder.Report `json:"report"`
}

// SyncFolder writes this memory's file into dir, then reads every other
// memory's file there through the one receive path.
func (m *Memory) SyncFolder(ctx context.Context, dir string) (FolderSync, error) {
	out := FolderSync{Scope: FolderScope(dir)}
	lines, left, err := m.FileLines(out.Scope)
	if err != nil {
		return out, err
	}
	if left > 0 {
		m.log.Warn("own records over the per-origin file limits; the oldest wait", "scope", FolderScope(dir), "left_out", left)
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
	if len(all) == 0 {
		return fmt.Errorf("nothing to push to %s: this memory has signed no record yet; %s", strings.TrimPrefix(scope, "commons:"), sign)
	}
	return fmt.Errorf("nothing to push to %s: this memory's %d records (`remem export`) are confirmations of lessons that came by other scopes, and a confirmation goes only where its lesson came from (SPEC §7); %s",
		strings.TrimPrefix(scope, "commons:"), len(all), sign)
}

// PullCommons takes the files that changed on the commons since the last
// pull, verifying every line here.
func (m *Memory) PullCommons(ctx context.Context, c *commons.Client) (commons.PullReport, error) {
	origins := map[string]bool{}
	deliver := m.deliverFunc(ctx)
	rep, err := c.Pull(ctx, m.Origin(), m.Now(), func(scope string, recs []*protocol.Record) error {
		for _, r := range recs {
			origins[r.Origin] = true
		}
		return deliver(scope, recs)
	})
	m.CountRefused(rep.Refused)
	if nerr := m.noteCommonsPublishers(ctx, c, origins); nerr != nil {
		m.log.Warn("the commons' publishers are not admitted", "commons", c.Scope(), "err", nerr)
	}
	return rep, err
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
