package node

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAPIGuard(t *testing.T) {
	m, _ := openTest(t, nil)
	srv := httptest.NewServer(NewAPI(m, APIOptions{}))
	defer srv.Close()
	do := func(method, host, ctype, body string) int {
		req, _ := http.NewRequest(method, srv.URL+"/memory/remember", strings.NewReader(body))
		if method == "GET" {
			req, _ = http.NewRequest(method, srv.URL+"/lessons", nil)
		}
		if host != "" {
			req.Host = host
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	event := `{"kind":"note","text":"the docs site builds in four minutes"}`
	cases := []struct {
		name                      string
		method, host, ctype, body string
		want                      int
	}{
		{"json post", "POST", "", "application/json", event, http.StatusOK},
		{"ndjson post", "POST", "", "application/x-ndjson", event, http.StatusOK},
		{"form post from a web page", "POST", "", "text/plain", event, http.StatusUnsupportedMediaType},
		{"no content type", "POST", "", "", event, http.StatusUnsupportedMediaType},
		{"rebinding host", "GET", "evil.example.com:7878", "", "", http.StatusForbidden},
		{"localhost", "GET", "localhost:7878", "", "", http.StatusOK},
		{"ipv6 loopback", "GET", "[::1]:7878", "", "", http.StatusOK},
		{"bad event", "POST", "", "application/json", `{"kind":"nope"}`, http.StatusBadRequest},
	}
	for _, c := range cases {
		if got := do(c.method, c.host, c.ctype, c.body); got != c.want {
			t.Errorf("%s: status %d, want %d", c.name, got, c.want)
		}
	}
}
