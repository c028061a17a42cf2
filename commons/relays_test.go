package commons

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const relayID = "12D3KooWJ4WB8YPsCoEoeq2a1R9SXBxPshnVrjcQK5VTiNJM1u3k"

// TestRelaysFromTheInfoDocument: the relays a commons lists are read from
// its info document; bad addresses are skipped and said; a hostile or
// broken commons is an error, never a crash or a huge read.
func TestRelaysFromTheInfoDocument(t *testing.T) {
	good := "/ip4/127.0.0.1/tcp/4001/p2p/" + relayID
	cases := []struct {
		name, body string
		code       int
		relays     int
		problems   int
		err        string
	}{
		{"one relay, two addresses", fmt.Sprintf(`{"protocol":1,"p2p":[%q,%q]}`, good, "/ip4/127.0.0.1/udp/4001/quic-v1/p2p/"+relayID), 200, 1, 0, ""},
		{"no p2p host", `{"protocol":1}`, 200, 0, 0, ""},
		{"an address without /p2p/", `{"protocol":1,"p2p":["/ip4/127.0.0.1/tcp/4001"]}`, 200, 0, 1, ""},
		{"not a multiaddr", `{"protocol":1,"p2p":["<script>",""]}`, 200, 0, 2, ""},
		{"too many", `{"protocol":1,"p2p":[` + strings.Repeat(fmt.Sprintf("%q,", good), MaxRelayAddrs+3) + fmt.Sprintf("%q", good) + `]}`, 200, 1, 1, ""},
		{"not JSON", `<html>`, 200, 0, 0, "not a remem commons"},
		{"not an info document", `{"p2p":[]}`, 200, 0, 0, "not a remem commons"},
		{"huge", `{"protocol":1,"name":"` + strings.Repeat("x", maxInfoBytes) + `"}`, 200, 0, 0, "over"},
		{"an error answer", `{"error":"down"}`, 503, 0, 0, "503"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/.well-known/remem" {
					http.NotFound(w, r)
					return
				}
				w.WriteHeader(tc.code)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer hs.Close()
			l, err := (&Client{BaseURL: hs.URL}).Relays(context.Background())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Relays) != tc.relays || len(l.Problems) != tc.problems {
				t.Errorf("%d relays, problems %q; want %d relays and %d problems", len(l.Relays), l.Problems, tc.relays, tc.problems)
			}
		})
	}
}

// FuzzRelayList: any list gives valid relays (an id and an address each)
// and at most MaxRelayAddrs read, never a panic.
func FuzzRelayList(f *testing.F) {
	f.Add("/ip4/127.0.0.1/tcp/4001/p2p/"+relayID, "/p2p/"+relayID)
	f.Add("", "/ip4/1.2.3.4")
	f.Fuzz(func(t *testing.T, a, b string) {
		l := parseRelayList([]string{a, b, a})
		for _, r := range l.Relays {
			if r.ID == "" {
				t.Fatalf("a relay without an id from %q %q", a, b)
			}
		}
		if len(l.Relays) > 2 {
			t.Fatalf("%d relays from two distinct addresses", len(l.Relays))
		}
	})
}
