package node_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/commons/commonstest"
	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

// openCommons stands in front of a real commons and says in its info
// document that anyone may publish there (another implementation's open
// commons): its publishers were admitted by nobody.
func openCommons(t *testing.T, real string) string {
	t.Helper()
	target, err := url.Parse(real)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(r *http.Response) error {
		if r.Request.URL.Path != "/.well-known/remem" {
			return nil
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		body = bytes.Replace(body, []byte(`"put_needs_token":true`), []byte(`"put_needs_token":false`), 1)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestCommonsPublishersAreAdmitted (SPEC §8): the publishers whose files a
// commons serves whose every token publishes for named origins only are
// admitted (its operator admitted them), and their confirmations make a
// lesson common; the same records from a commons open to anyone move
// nothing (TestOneTokenHolderMintsNoAdmittedOrigins: nor with a shared
// token).
func TestCommonsPublishersAreAdmitted(t *testing.T) {
	ctx := context.Background()
	ids := sybils(t, 4) // an author and three confirmers, each pushing its own file
	// Its operator admitted each publisher: every token publishes for one
	// origin only.
	guarded := commonstest.StartWith(t, func(c *commons.ServerConfig) {
		c.Tokens, c.Publishers = nil, map[string][]string{}
		for _, id := range ids {
			tok := "tok-" + id.Origin()
			c.Tokens = append(c.Tokens, tok)
			c.Publishers[tok] = []string{id.Origin()}
		}
	})
	now := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	lesson, err := protocol.SignLesson(ids[0], protocol.LessonDraft{Kind: protocol.KindError, Text: "The mirror drops uploads over two gigabytes", Seen: 1, Strength: 0.5, Updated: now})
	if err != nil {
		t.Fatal(err)
	}
	push := func(id protocol.Identity, rec *protocol.Record) {
		t.Helper()
		c := &commons.Client{BaseURL: guarded, Token: "tok-" + id.Origin()}
		if _, err := c.Push(ctx, id.Origin(), [][]byte{rec.Raw}); err != nil {
			t.Fatal(err)
		}
	}
	push(ids[0], lesson)
	for _, id := range ids[1:] {
		c, err := protocol.SignConfirmation(id, lesson.Hash, now)
		if err != nil {
			t.Fatal(err)
		}
		push(id, c)
	}
	for _, tc := range []struct {
		name  string
		url   string
		want  protocol.State
		admit bool
	}{{"a commons that requires a token to publish", guarded, protocol.StateCommon, true},
		{"a commons open to anyone", openCommons(t, guarded), protocol.StateCandidate, false}} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := node.Open(node.Config{Home: t.TempDir(), Create: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = m.Close() })
			if _, err := m.PullCommons(ctx, m.CommonsClient(tc.url, "")); err != nil {
				t.Fatal(err)
			}
			if v := viewOf(t, m, lesson.Hash); v.State != tc.want {
				t.Errorf("after the pull: %s (%s), want %s", v.State, v.StateReason, tc.want)
			}
			ok, why := m.Admits(ids[1].Origin())
			if ok != tc.admit || (ok && !strings.Contains(why, "token-guarded commons")) {
				t.Errorf("a confirmer is admitted %v: %s", ok, why)
			}
		})
	}
}
