package node

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

func TestAPIGuard(t *testing.T) {
	m, _ := openTest(t, nil)
	srv := httptest.NewServer(NewAPI(m, APIOptions{}))
	defer srv.Close()
	self := strings.TrimPrefix(srv.URL, "http://") // 127.0.0.1:port
	_, port, _ := net.SplitHostPort(self)
	do := func(method, host, ctype, body string, hdr map[string]string) int {
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
		req.Header.Set("Authorization", "Bearer "+m.APIToken())
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	event := `{"kind":"note","text":"the docs site builds in four minutes"}`
	origin := func(o string) map[string]string { return map[string]string{"Origin": o} }
	site := func(s string) map[string]string { return map[string]string{"Sec-Fetch-Site": s} }
	cases := []struct {
		name                      string
		method, host, ctype, body string
		hdr                       map[string]string
		want                      int
	}{
		{"json post", "POST", "", "application/json", event, nil, http.StatusOK},
		{"ndjson post", "POST", "", "application/x-ndjson", event, nil, http.StatusOK},
		{"form post from a web page", "POST", "", "text/plain", event, nil, http.StatusUnsupportedMediaType},
		{"no content type", "POST", "", "", event, nil, http.StatusUnsupportedMediaType},
		{"rebinding host", "GET", "evil.example.com:7878", "", "", nil, http.StatusForbidden},
		{"localhost", "GET", "localhost:7878", "", "", nil, http.StatusOK},
		{"ipv6 loopback", "GET", "[::1]:7878", "", "", nil, http.StatusOK},
		{"bad event", "POST", "", "application/json", `{"kind":"nope"}`, nil, http.StatusBadRequest},

		// The page at / fetches the API from its own origin: a GET carries
		// no Origin, and Sec-Fetch-Site is same-origin (none when typed).
		{"the page's own fetch", "GET", "", "", "", map[string]string{"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}, http.StatusOK},
		{"address typed by the person", "GET", "", "", "", map[string]string{"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate"}, http.StatusOK},
		{"own origin post", "POST", "", "application/json", event, map[string]string{"Origin": "http://" + self, "Sec-Fetch-Site": "same-origin"}, http.StatusOK},
		{"own origin, localhost", "GET", "localhost:7878", "", "", origin("http://localhost:7878"), http.StatusOK},
		{"own origin, other case", "GET", "", "", "", origin("HTTP://" + self), http.StatusOK},

		{"another site's origin", "GET", "", "", "", origin("http://evil.example.com"), http.StatusForbidden},
		{"another site's json post", "POST", "", "application/json", event, origin("https://evil.example.com"), http.StatusForbidden},
		{"another site's form post", "POST", "", "text/plain", event, origin("http://evil.example.com"), http.StatusForbidden},
		{"opaque origin (sandbox, file:)", "GET", "", "", "", origin("null"), http.StatusForbidden},
		{"another local port", "GET", "", "", "", origin("http://127.0.0.1:1"), http.StatusForbidden},
		{"same host over https", "GET", "", "", "", origin("https://" + self), http.StatusForbidden},
		{"localhost page to the ip", "GET", "", "", "", origin("http://localhost:" + port), http.StatusForbidden},
		{"origin with a path", "GET", "", "", "", origin("http://" + self + "/x"), http.StatusForbidden},
		{"cross-site fetch", "GET", "", "", "", site("cross-site"), http.StatusForbidden},
		{"img from another site", "GET", "", "", "", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Dest": "image", "Sec-Fetch-Mode": "no-cors"}, http.StatusForbidden},
		{"same-site page on another port", "GET", "", "", "", site("same-site"), http.StatusForbidden},
		{"unknown fetch site", "GET", "", "", "", site("elsewhere"), http.StatusForbidden},
		{"cross-site post without origin", "POST", "", "application/json", event, site("cross-site"), http.StatusForbidden},
	}
	for _, c := range cases {
		if got := do(c.method, c.host, c.ctype, c.body, c.hdr); got != c.want {
			t.Errorf("%s: status %d, want %d", c.name, got, c.want)
		}
	}
}

func TestMetricsCountRecordsAndRefusals(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := Open(Config{Home: t.TempDir(), Create: true, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	id, _ := protocol.GenerateIdentity()
	rec, _ := protocol.SignLesson(id, protocol.LessonDraft{Kind: "error", Text: "The nightly export times out above ten thousand rows", Seen: 1, Strength: 0.5, Updated: time.Now().Add(-time.Minute)})
	data := append(append([]byte("garbage\n"), rec.Raw...), '\n')
	if _, err := m.Receive(context.Background(), "import", protocol.SplitLines(data)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewAPI(m, APIOptions{Gatherer: reg}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`remem_node_records_total{outcome="accepted"} 1`, `remem_node_refused_lines_total{reason="json"} 1`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestAPILayerParameterReadsNoFile: GET /lessons once took ?layer=NAME=PATH
// and read PATH, so any web page could make the node read /dev/zero
// without limit or hang on a FIFO. The parameter is now refused, by name,
// before anything is read.
func TestAPILayerParameterReadsNoFile(t *testing.T) {
	m, _ := openTest(t, nil)
	srv := httptest.NewServer(NewAPI(m, APIOptions{}))
	defer srv.Close()
	hc := testutil.BearerClient(m.APIToken())
	hc.Timeout = 3 * time.Second
	start := time.Now()
	resp, err := hc.Get(srv.URL + "/lessons?layer=x=/dev/zero")
	if err != nil {
		t.Fatalf("GET /lessons?layer=x=/dev/zero did not answer within 3s: %v", err)
	}
	var e apiError
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(e.Error, `"layer"`) {
		t.Errorf("status %d %q, want 400 naming the parameter \"layer\"", resp.StatusCode, e.Error)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("answered after %v", d)
	}
}

// TestAPIParameterNames: the recall query is ?query= (the name the CLI help
// and the MCP tools use), ?q= still answers the same; state and all
// together are refused rather than all dropping state; a POST's ?source=
// names the bad lines, as the file a command read.
func TestAPIParameterNames(t *testing.T) {
	m, _ := openTest(t, nil)
	if _, err := m.Publish("error", "go test fails on a clean checkout without the generated mocks"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewAPI(m, APIOptions{}))
	defer srv.Close()
	hc := testutil.BearerClient(m.APIToken())
	get := func(path string) (int, string) {
		resp, err := hc.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, byQuery := get("/lessons?query=" + url.QueryEscape("go test mocks"))
	if code != http.StatusOK || !strings.Contains(byQuery, `"score"`) {
		t.Fatalf("?query=: %d %s", code, byQuery)
	}
	// Strength moves with the clock between the two; hash and score do not.
	ranked := func(body string) (out []string) {
		var views []LessonView
		if err := json.Unmarshal([]byte(body), &views); err != nil {
			t.Fatal(err)
		}
		for _, v := range views {
			out = append(out, fmt.Sprint(v.Hash, v.Score))
		}
		return out
	}
	if code, byQ := get("/lessons?q=" + url.QueryEscape("go test mocks")); code != http.StatusOK || !slices.Equal(ranked(byQ), ranked(byQuery)) {
		t.Errorf("?q= answers %d %s, ?query= %s", code, byQ, byQuery)
	}
	if code, body := get("/lessons?state=common&all=1"); code != http.StatusBadRequest || !strings.Contains(body, "not both") {
		t.Errorf("?state=common&all=1: %d %s, want 400", code, body)
	}

	post := func(path string) IngestReport {
		resp, err := hc.Post(srv.URL+path, "application/x-ndjson", strings.NewReader(`{"kind":"note","text":"ok"}`+"\nnot json\n"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var rep IngestReport
		if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	for path, want := range map[string]string{
		"/memory/remember?source=" + url.QueryEscape("/home/a/session.jsonl"): "/home/a/session.jsonl",
		"/memory/remember?source=" + url.QueryEscape("a\x1b[2Jb"):             "a[2Jb", // no terminal control
		"/memory/remember": "POST /memory/remember",
	} {
		if rep := post(path); len(rep.Rejected) != 1 || rep.Rejected[0].String() != want+":2: the line is not a JSON object" {
			t.Errorf("POST %s: rejected %+v, want it named %s:2", path, rep.Rejected, want)
		}
	}
}

// TestAPIStatusCodes: a query parameter that is unknown, repeated or not
// of its kind is 400 naming it and what it takes, on every route; a method
// a path does not take is 405 with Allow, whatever the content type; a
// body over the cap is 413.
func TestAPIStatusCodes(t *testing.T) {
	m, _ := openTest(t, nil)
	srv := httptest.NewServer(NewAPI(m, APIOptions{}))
	defer srv.Close()
	hc := testutil.BearerClient(m.APIToken())
	big := strings.Repeat("x", maxBody+1)
	cases := []struct {
		name, method, path, ctype, body string
		want                            int
		says                            []string // in the error, or the Allow header for 405
	}{
		{"a limit", "GET", "/lessons?limit=2", "", "", http.StatusOK, nil},
		{"limit not a number", "GET", "/lessons?limit=abc", "", "", http.StatusBadRequest, []string{`"limit"`, "whole number", `"abc"`}},
		{"limit below zero", "GET", "/lessons?limit=-3", "", "", http.StatusBadRequest, []string{`"limit"`, "whole number"}},
		{"limit of a recall", "GET", "/lessons?query=go&limit=1e3", "", "", http.StatusBadRequest, []string{`"limit"`}},
		{"all neither true nor false", "GET", "/lessons?all=maybe", "", "", http.StatusBadRequest, []string{`"all"`, "true or false"}},
		{"a state that is none", "GET", "/lessons?state=lost", "", "", http.StatusBadRequest, []string{`"state"`, "candidate"}},
		{"a parameter twice", "GET", "/lessons?limit=1&limit=2", "", "", http.StatusBadRequest, []string{`"limit"`, "once"}},
		{"status takes none", "GET", "/status?verbose=1", "", "", http.StatusBadRequest, []string{`"verbose"`, "no parameter"}},
		{"show takes none", "GET", "/lessons/00000000000000000000000000000000?x=1", "", "", http.StatusBadRequest, []string{`"x"`}},
		{"export takes none", "GET", "/export?all=1", "", "", http.StatusBadRequest, []string{`"all"`}},
		{"remember takes source", "POST", "/memory/remember?sourc=a.jsonl", "application/json", `{"kind":"note","text":"x"}`, http.StatusBadRequest, []string{`"sourc"`, "source"}},

		{"delete the lessons", "DELETE", "/lessons", "", "", http.StatusMethodNotAllowed, []string{"GET, HEAD, POST"}},
		{"delete with a form's type", "DELETE", "/lessons", "text/plain", "x", http.StatusMethodNotAllowed, []string{"GET, HEAD, POST"}},
		{"put the status", "PUT", "/status", "application/json", "{}", http.StatusMethodNotAllowed, []string{"GET, HEAD"}},
		{"get a revoke", "GET", "/lessons/00000000000000000000000000000000/revoke", "", "", http.StatusMethodNotAllowed, []string{"POST"}},

		{"an event over the cap", "POST", "/memory/remember", "application/x-ndjson", big, http.StatusRequestEntityTooLarge, []string{"limit"}},
		{"a lesson over the cap", "POST", "/lessons", "application/json", `{"kind":"error","text":"` + big + `"}`, http.StatusRequestEntityTooLarge, []string{"limit"}},
		{"records over the cap", "POST", "/records", "application/json", big, http.StatusRequestEntityTooLarge, []string{"limit"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
			if c.ctype != "" {
				req.Header.Set("Content-Type", c.ctype)
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.want {
				t.Fatalf("%s %s: %d %s, want %d", c.method, c.path, resp.StatusCode, data, c.want)
			}
			if c.want == http.StatusOK {
				return
			}
			var e apiError
			if err := json.Unmarshal(data, &e); err != nil || e.Error == "" {
				t.Errorf("%s %s: the answer is not a JSON error: %s", c.method, c.path, data)
			}
			said := e.Error
			if c.want == http.StatusMethodNotAllowed {
				said = resp.Header.Get("Allow")
			}
			for _, s := range c.says {
				if !strings.Contains(said, s) {
					t.Errorf("%s %s: %q lacks %q", c.method, c.path, said, s)
				}
			}
		})
	}
}
