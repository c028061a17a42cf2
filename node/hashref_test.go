package node

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/remem/remem/protocol"
)

// collidingTexts are two lesson texts whose hashes share their first 8 hex
// characters (a birthday search over about 2^16 texts).
func collidingTexts(t *testing.T) (string, string) {
	seen := map[string]string{}
	for i := 0; i < 1<<20; i++ {
		text := fmt.Sprintf("The nightly mirror build on runner %d fails after midnight.", i)
		p := protocol.LessonHash("error", text)[:8]
		if other, ok := seen[p]; ok {
			return other, text
		}
		seen[p] = text
	}
	t.Fatal("no collision")
	return "", ""
}

// One resolver names a lesson for Show and Revoke, whether the memory is
// opened or a node's API answers through Client: the full hash, a unique
// prefix of 8 or more, the l-… id, in any case; a malformed reference is
// ErrBadHash, not "not held"; an ambiguous prefix lists the candidates.
func TestResolveHash(t *testing.T) {
	m, _ := openTest(t, nil)
	a, b := collidingTexts(t)
	for _, text := range []string{a, b, "The integration suite times out when the VPN is down."} {
		if _, err := m.Publish("error", text); err != nil {
			t.Fatal(err)
		}
	}
	ha, hb, hc := protocol.LessonHash("error", a), protocol.LessonHash("error", b), protocol.LessonHash("error", "The integration suite times out when the VPN is down.")
	srv := httptest.NewServer(NewAPI(m, APIOptions{}))
	defer srv.Close()
	ctx := context.Background()
	for name, svc := range map[string]Service{"local": Local{M: m}, "api": &Client{BaseURL: srv.URL, Token: m.APIToken()}} {
		common := 8
		for ha[common] == hb[common] {
			common++
		}
		for ref, want := range map[string]string{hc: hc, hc[:8]: hc, hc[:12]: hc, "l-" + hc[:8]: hc,
			" " + strings.ToUpper(hc[:10]) + " ": hc, ha[:common+1]: ha, hb[:common+1]: hb, ha: ha} {
			p, err := svc.Show(ctx, ref)
			if err != nil || p.Hash != want {
				t.Errorf("%s: show %q: %s %v, want %s", name, ref, p.Hash, err, want)
			}
		}
		for _, c := range []struct {
			ref, want string
			notHeld   bool
		}{
			{"zzzz", `not a lesson hash: "zzzz"; give the 32 hex characters, a unique prefix of at least 8, or the l-… id`, false},
			{hc[:7], "not a lesson hash", false},
			{"l-zz" + hc[:6], "not a lesson hash", false},
			{ha[:8], fmt.Sprintf("names several lessons (%s, %s); give more of the hash", min(ha, hb), max(ha, hb)), false},
			{"0000000000", "none starts with 0000000000", true},
			{strings.Repeat("0", 32), "no lesson with that hash is held here: " + strings.Repeat("0", 32), true},
		} {
			_, err := svc.Show(ctx, c.ref)
			if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, ErrUnknownLesson) != c.notHeld {
				t.Errorf("%s: show %q: %v, want %q (not held: %v)", name, c.ref, err, c.want, c.notHeld)
			}
			if err != nil && strings.Count(err.Error(), "no lesson with that hash") > 1 {
				t.Errorf("%s: show %q says it twice: %v", name, c.ref, err)
			}
		}
	}
	if _, err := m.Revoke(ha[:8], ""); !errors.Is(err, ErrBadHash) {
		t.Errorf("revoke by an ambiguous prefix: %v", err)
	}
	s, err := (&Client{BaseURL: srv.URL, Token: m.APIToken()}).Revoke(ctx, "l-"+hc[:8], "fixed")
	if err != nil || s.Hash != hc {
		t.Errorf("revoke by id through the API: %+v %v", s, err)
	}
	if _, err := m.Revoke(strings.Repeat("0", 32), ""); !errors.Is(err, ErrUnknownLesson) {
		t.Errorf("revoke of a hash not held: %v", err)
	}
}
