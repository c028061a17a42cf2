package node

import (
	"context"
	"testing"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/commons/commonstest"
	"github.com/remem/remem/protocol"
)

// TestCommonsURLForms: https://host, https://host/, https://host/commons
// and https://host/commons/ are one commons for a memory: one scope, one
// pull-state file, and a pull by one spelling remembers what a pull by
// another fetched. Against a real commons server.
func TestCommonsURLForms(t *testing.T) {
	url := commonstest.Start(t)
	a, _ := openTest(t, nil)
	b, _ := openTest(t, nil)
	ctx := context.Background()
	if _, err := a.Publish(protocol.KindError, "The mirror build fails after midnight."); err != nil {
		t.Fatal(err)
	}
	if _, err := a.PushCommons(ctx, a.CommonsClient(url+"/commons/", "tok")); err != nil {
		t.Fatal(err)
	}
	var first *commons.Client
	for i, form := range []string{url, url + "/", url + "/commons", url + "/commons/"} {
		c := b.CommonsClient(form, "")
		if first == nil {
			first = c
		}
		if c.Scope() != "commons:"+url || c.State != first.State {
			t.Errorf("%s: scope %q, state %+v; want commons:%s and %+v", form, c.Scope(), c.State, url, first.State)
		}
		rep, err := b.PullCommons(ctx, c)
		if err != nil {
			t.Fatalf("pull from %s: %v", form, err)
		}
		if i == 0 && rep.Accepted != 1 || i > 0 && (rep.Accepted != 0 || rep.Unchanged+rep.Listed > 1) {
			t.Errorf("pull %d from %s: %+v", i, form, rep)
		}
	}
}
