package node_test

import (
	"context"
	"testing"
	"time"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/commons/commonstest"
	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

// One holder of a commons' shared token pushes files of three keys made a
// second ago, each confirming and then revoking this memory's own lesson:
// the commons requires a token to publish, but its token is not bound to
// origins, so its operator admitted no publisher (SPEC §8); they are not
// admitted, and the own lesson stays.
func TestOneTokenHolderMintsNoAdmittedOrigins(t *testing.T) {
	ctx := context.Background()
	url := commonstest.Start(t)
	m, err := node.Open(node.Config{Home: t.TempDir(), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	own, err := m.Publish(protocol.KindError, "The release build fails when the changelog lacks the version")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	for _, k := range sybils(t, 3) {
		c, _ := protocol.SignConfirmation(k, own.Hash, now)
		r, _ := protocol.SignRevocation(k, own.Hash, now.Add(time.Second), "")
		cl := &commons.Client{BaseURL: url, Token: commonstest.Token}
		if _, err := cl.Push(ctx, k.Origin(), [][]byte{c.Raw, r.Raw}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.PullCommons(ctx, m.CommonsClient(url, "")); err != nil {
		t.Fatal(err)
	}
	if v := viewOf(t, m, own.Hash); v.State == protocol.StateRevoked {
		t.Errorf("three fresh keys pushed with one token revoked the own lesson: %s", v.StateReason)
	}
	if _, err := m.Sleep(ctx); err != nil {
		t.Fatal(err)
	}
	lines, err := m.OwnLines("")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if r, err := protocol.Decode(l); err == nil && r.Type == protocol.TypeRevocation {
			t.Errorf("the memory withdrew its own lesson on strangers' word: %s", l)
		}
	}
}
