package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/remem/remem/node/web"
)

func TestHandlerServesThePage(t *testing.T) {
	srv := httptest.NewServer(web.Handler())
	defer srv.Close()
	for _, tc := range []struct {
		path, ctype, body string
	}{
		{"/", "text/html; charset=utf-8", `<script src="app.js" defer></script>`},
		{"/app.js", "text/javascript; charset=utf-8", "textContent"},
		{"/app.css", "text/css; charset=utf-8", ".badge"},
		{"/favicon.svg", "image/svg+xml", "<svg"},
	} {
		resp, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != tc.ctype || !strings.Contains(string(body), tc.body) {
			t.Errorf("GET %s: %d %q, body lacks %q", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), tc.body)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q", tc.path, csp)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no X-Content-Type-Options: nosniff", tc.path)
		}
		// A second request with the ETag is answered 304.
		req, _ := http.NewRequest("GET", srv.URL+tc.path, nil)
		req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
		resp2, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp2.Body.Close()
		if resp2.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s with its ETag: %d, want 304", tc.path, resp2.StatusCode)
		}
	}
	resp, err := http.Get(srv.URL + "/secret.txt")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("an unknown path: %d, CSP %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	resp, err = http.Post(srv.URL+"/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d, want 405", resp.StatusCode)
	}
}

// The page never parses data as HTML: no innerHTML, outerHTML,
// insertAdjacentHTML, document.write or eval in its script, and no inline
// script or style in its HTML (the CSP would block them anyway).
func TestPageNeverParsesData(t *testing.T) {
	srv := httptest.NewServer(web.Handler())
	defer srv.Close()
	get := func(p string) string {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	js := get("/app.js")
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "DOMParser", "createContextualFragment"} {
		if strings.Contains(js, bad) {
			t.Errorf("app.js uses %s", bad)
		}
	}
	html := get("/")
	if strings.Count(html, "<script") != 1 || strings.Contains(html, "style=") || strings.Contains(html, "<style") || regexp.MustCompile(`\son[a-z]+=`).MatchString(html) {
		t.Errorf("index.html should have one external script and no inline script or style")
	}
}
