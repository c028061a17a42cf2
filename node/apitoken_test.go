package node

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// privateRoutes are the routes that change the memory or read what is
// its own (events, drafts, the home, its exports), each with a body it
// would take.
var privateRoutes = []struct{ method, path, body string }{
	{"POST", "/memory/remember", `{"kind":"note","text":"the docs site builds in four minutes"}`},
	{"GET", "/lessons", ""},
	{"GET", "/lessons?query=docs", ""},
	{"POST", "/lessons", `{"kind":"error","text":"The docs site build fails without the fonts package installed"}`},
	{"GET", "/lessons/00000000000000000000000000000000", ""},
	{"POST", "/lessons/00000000000000000000000000000000/revoke", `{"reason":"wrong"}`},
	{"GET", "/status", ""},
	{"GET", "/peers", ""},
	{"POST", "/peers/connect", `{"addr":"/ip4/127.0.0.1/tcp/1"}`},
	{"POST", "/sleep", ""},
	{"GET", "/export", ""},
	{"POST", "/records", ""},
	{"POST", "/share", `{"set":{"project":"/tmp","surprises":true}}`},
	{"POST", "/commons/push", `{"url":"http://127.0.0.1:1"}`},
	{"POST", "/commons/pull", `{"url":"http://127.0.0.1:1"}`},
	{"POST", "/folder/sync", `{}`},
}

// homeToken reads the API token the memory's home holds.
func homeToken(t *testing.T, home string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(home, "api-token"))
	if err != nil {
		t.Fatalf("the home's API token: %v", err)
	}
	return strings.TrimSpace(string(data))
}

// TestAPIRefusesRequestsWithoutTheToken: every route that changes the
// memory or reads its own data answers 401 to a request without the
// home's token, with a wrong one, one a byte off, the token under another
// scheme or in a cookie, and changes nothing; a token in the URL is
// refused even beside the right header; another site is refused as
// before, token or not. The metrics and the page's files need none.
func TestAPIRefusesRequestsWithoutTheToken(t *testing.T) {
	m, _ := openTest(t, nil)
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "the page") })
	srv := httptest.NewServer(NewAPI(m, APIOptions{Web: page}))
	defer srv.Close()
	do := func(method, path, body string, hdr map[string]string) (int, string, http.Header) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if method == "POST" {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data), resp.Header
	}
	wrong := strings.Repeat("ab", 32)
	for _, r := range privateRoutes {
		for name, hdr := range map[string]map[string]string{
			"no token":           nil,
			"a wrong token":      {"Authorization": "Bearer " + wrong},
			"an empty bearer":    {"Authorization": "Bearer "},
			"a bearer of spaces": {"Authorization": "Bearer    "},
		} {
			code, body, h := do(r.method, r.path, r.body, hdr)
			if code != http.StatusUnauthorized || !strings.Contains(body, "api-token") || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s with %s: %d %s (WWW-Authenticate %q), want 401 saying where the token is", r.method, r.path, name, code, body, h.Get("WWW-Authenticate"))
			}
		}
	}
	// Every route of the table but the metrics needs the token, a route
	// added later too.
	var open []string
	for _, ep := range (&api{}).endpoints(http.NotFoundHandler()) {
		path := strings.ReplaceAll(ep.path, "{hash}", "00000000000000000000000000000000")
		if ep.open {
			open = append(open, ep.method+" "+path)
			continue
		}
		if code, body, _ := do(ep.method, path, "{}", nil); code != http.StatusUnauthorized {
			t.Errorf("%s %s without the token: %d %s, want 401", ep.method, path, code, body)
		}
	}
	if strings.Join(open, ", ") != "GET /metrics" {
		t.Errorf("the routes open without the token: %v, want GET /metrics only", open)
	}
	if n, _ := m.store.CountEvents(); n != 0 {
		t.Errorf("requests without the token stored %d events", n)
	}
	if views, _ := m.Lessons(Filter{All: true}); len(views) != 0 {
		t.Errorf("requests without the token made lessons: %+v", views)
	}

	token := homeToken(t, m.Home())
	if len(token) != 64 {
		t.Fatalf("the token is %d characters, want 64 hex", len(token))
	}
	offByOne := []byte(token)
	offByOne[len(offByOne)-1] ^= 1
	for _, r := range privateRoutes {
		for name, hdr := range map[string]map[string]string{
			"the token a byte off":       {"Authorization": "Bearer " + string(offByOne)},
			"the token and more":         {"Authorization": "Bearer " + token + "0"},
			"the token cut short":        {"Authorization": "Bearer " + token[:63]},
			"the token without a scheme": {"Authorization": token},
			"the token as Basic":         {"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("remem:"+token))},
			"the token in a cookie":      {"Cookie": "token=" + token + "; api-token=" + token},
			"another site's cookie":      {"Cookie": "token=" + token, "Sec-Fetch-Site": "none"},
		} {
			if code, body, _ := do(r.method, r.path, r.body, hdr); code != http.StatusUnauthorized {
				t.Errorf("%s %s with %s: %d %s, want 401", r.method, r.path, name, code, body)
			}
		}
		bearer := map[string]string{"Authorization": "Bearer " + token}
		if code, body, _ := do(r.method, r.path, r.body, bearer); code == http.StatusUnauthorized || code == http.StatusForbidden {
			t.Errorf("%s %s with the token: %d %s", r.method, r.path, code, body)
		}
		for _, q := range []string{"token", "access_token", "api_token"} {
			sep := "?"
			if strings.Contains(r.path, "?") {
				sep = "&"
			}
			code, body, _ := do(r.method, r.path+sep+q+"="+token, r.body, bearer)
			if code != http.StatusBadRequest || !strings.Contains(body, "Authorization: Bearer") {
				t.Errorf("%s %s with ?%s=TOKEN: %d %s, want 400 saying where the token goes", r.method, r.path, q, code, body)
			}
		}
		for _, hdr := range []map[string]string{
			{"Authorization": "Bearer " + token, "Origin": "http://evil.example.com"},
			{"Authorization": "Bearer " + token, "Sec-Fetch-Site": "cross-site"},
			{"Cookie": "token=" + token, "Origin": "https://evil.example.com", "Sec-Fetch-Site": "cross-site"},
		} {
			if code, body, _ := do(r.method, r.path, r.body, hdr); code != http.StatusForbidden {
				t.Errorf("%s %s from another site %v: %d %s, want 403", r.method, r.path, hdr, code, body)
			}
		}
	}
	// The scheme's name is case-insensitive (RFC 9110 §11.1).
	if code, body, _ := do("GET", "/status", "", map[string]string{"Authorization": "bearer " + token}); code != http.StatusOK {
		t.Errorf("GET /status with \"bearer\": %d %s", code, body)
	}
	for _, path := range []string{"/metrics", "/", "/app.js"} {
		if code, body, _ := do("GET", path, "", nil); code != http.StatusOK {
			t.Errorf("GET %s without the token: %d %s, want 200", path, code, body)
		}
	}
	if code, body, _ := do("GET", "/?token="+token, "", nil); code != http.StatusBadRequest {
		t.Errorf("the page with the token in its query: %d %s, want 400", code, body)
	}
}

// TestAPITokenFile: the token is made with the home, in mode 0600, and on
// open for a home that has none; a token file others could read is
// replaced by a new one (the old is refused), and a client refuses to send
// a token from such a file, saying what to do. The client of a running
// node sends the home's token itself.
func TestAPITokenFile(t *testing.T) {
	home := t.TempDir()
	if _, _, err := InitHome(home); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, "api-token")
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the token made with the home: %v %v", info, err)
	}
	first := homeToken(t, home)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	m, err := Open(Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	second := homeToken(t, home)
	if second == first || len(second) != 64 {
		t.Fatalf("a home without a token: made %q (the removed one was %q)", second, first)
	}
	srv := httptest.NewServer(NewAPI(m, APIOptions{}))
	if err := WriteNodeInfo(home, NodeInfo{API: strings.TrimPrefix(srv.URL, "http://"), PID: os.Getpid(), Origin: m.Origin()}); err != nil {
		t.Fatal(err)
	}
	c, err := DialNode(context.Background(), home)
	if err != nil {
		t.Fatalf("dialing the node with the home's token: %v", err)
	}
	if _, err := c.Publish(context.Background(), "error", "The docs site build fails without the fonts package installed"); err != nil {
		t.Fatalf("publishing through the client: %v", err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := DialNode(context.Background(), home); err == nil || !strings.Contains(err.Error(), "0640") || !strings.Contains(err.Error(), "restart the node") {
		t.Errorf("a client reading a token others can read: %v, want a refusal saying what to do", err)
	}
	srv.Close()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m, err = Open(Config{Home: home})
	if err != nil {
		t.Fatalf("opening a home whose token others could read: %v", err)
	}
	defer m.Close()
	info, err = os.Stat(path)
	if third := homeToken(t, home); err != nil || info.Mode().Perm() != 0o600 || third == second {
		t.Errorf("a token others could read: mode %v, kept %v; want a new one in mode 0600", info.Mode().Perm(), third == second)
	}
	srv = httptest.NewServer(NewAPI(m, APIOptions{}))
	defer srv.Close()
	if err := (&Client{BaseURL: srv.URL, Token: second}).do(context.Background(), "GET", "/status", nil, nil); err == nil || !strings.Contains(err.Error(), "api-token") {
		t.Errorf("the replaced token: %v, want refused", err)
	}
}
