package commons

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFrontPage: GET / shows a person a page that says what the commons is,
// how to use it and its limits, and gives a program that asks for JSON the
// info document of /.well-known/remem, rates and version included.
func TestFrontPage(t *testing.T) {
	ts := newTestServer(t, func(c *ServerConfig) {
		c.Name, c.ReadNeedsToken = "Team <b>commons</b>", true
		c.RatePerClient, c.RatePerOrigin = DefaultClientRate, DefaultOriginRate
	})
	code, hdr, page := ts.get(t, "/", "Accept", "text/html,application/xhtml+xml,application/json;q=0.9")
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		t.Fatalf("GET / from a browser: %d %v", code, hdr)
	}
	for _, want := range []string{"<title>Team &lt;b&gt;commons&lt;/b&gt;</title>", "remem commons pull URL --token-file FILE",
		"Reading and publishing both need a bearer token", "1000 records and 262144 bytes", "60 uploads a minute per client address (bursts of 30)",
		"/.well-known/remem"} {
		if !strings.Contains(page, want) {
			t.Errorf("the front page lacks %q:\n%s", want, page)
		}
	}
	_, _, wk := ts.get(t, "/.well-known/remem")
	for _, ask := range [][]string{{"/", "Accept", "application/json"}, {"/?format=json"}} {
		code, hdr, body := ts.get(t, ask[0], ask[1:]...)
		if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") || body != wk {
			t.Fatalf("GET %v: %d %v\n%s\nwant %s", ask, code, hdr, body, wk)
		}
	}
	var info WellKnown
	if err := json.Unmarshal([]byte(wk), &info); err != nil {
		t.Fatal(err)
	}
	if info.Name != "Team <b>commons</b>" || !info.GetNeedsToken || !info.PutNeedsToken || info.Version == "" ||
		info.Limits.PutsPerClient == nil || info.Limits.PutsPerClient.PerMinute != 60 || info.Limits.PutsPerOrigin.Burst != 6 {
		t.Fatalf("the info document: %s", wk)
	}
	if code, _, _ := ts.get(t, "/nothing-here"); code != 404 {
		t.Fatalf("GET /nothing-here: %d", code)
	}
}

// TestTokenCheck: GET /commons/token says whether a token would be taken
// for a PUT, stores nothing, and counts against the address's PUT rate.
func TestTokenCheck(t *testing.T) {
	ts := newTestServer(t, func(c *ServerConfig) { c.RatePerClient = Rate{PerMinute: 60, Burst: 3} })
	for _, c := range []struct {
		token string
		want  int
	}{{testToken, 204}, {"wrong", 401}, {"", 401}, {testToken, 429}} {
		args := []string{}
		if c.token != "" {
			args = []string{"Authorization", "Bearer " + c.token}
		}
		if code, _, body := ts.get(t, "/commons/token", args...); code != c.want {
			t.Fatalf("token %q: %d %s, want %d", c.token, code, body, c.want)
		}
	}
	if _, _, index := ts.get(t, "/commons/index"); index != "[]" && index != "[]\n" {
		t.Fatalf("the check stored something: index %s", index)
	}
}
