package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"net/http"
	"path"
	"time"
)

//go:embed static
var static embed.FS

// CSP is the page's Content-Security-Policy: its own files only, no inline
// script or style, no framing, no forms.
const CSP = "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'"

type file struct {
	name, ctype string
	data        []byte
	etag        string
}

// routes maps a URL path to an embedded file.
var routes = map[string]string{
	"/":            "index.html",
	"/index.html":  "index.html",
	"/app.js":      "app.js",
	"/app.css":     "app.css",
	"/favicon.svg": "favicon.svg",
}

var types = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// Handler serves the read-only page. It answers GET and HEAD for the page's
// own files and 404 for any other path, with the security headers on every
// answer.
func Handler() http.Handler {
	files := map[string]*file{}
	for p, name := range routes {
		data, err := static.ReadFile("static/" + name)
		if err != nil {
			panic(fmt.Sprintf("web: embedded file %s missing: %v", name, err))
		}
		sum := sha256.Sum256(data)
		files[p] = &file{name: name, ctype: types[path.Ext(name)], data: data, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "the web page is read-only", http.StatusMethodNotAllowed)
			return
		}
		f, ok := files[r.URL.Path]
		if !ok {
			http.Error(w, "not found: the page is at /, the API at /lessons, /status and /metrics", http.StatusNotFound)
			return
		}
		h.Set("Content-Type", f.ctype)
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", f.etag)
		http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(f.data))
	})
}
