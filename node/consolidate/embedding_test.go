package consolidate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeEmbedder is an OpenAI-compatible /embeddings server whose vector for a
// text counts its letters a..z, so texts with the same letters are identical.
type fakeEmbedder struct {
	mu       sync.Mutex
	requests int
	inputs   int
	reverse  bool // answer in reverse order, with indices
	noIndex  bool // leave out "index"
	status   int  // answer with this status instead
	drop     bool // answer one vector short
	t        *testing.T
}

func (f *fakeEmbedder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, "wrong route "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	if r.Header.Get("Authorization") != "Bearer k-123" || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "bad headers", http.StatusUnauthorized)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "test-model" {
		http.Error(w, fmt.Sprintf("bad request: %v model %q", err, req.Model), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests++
	f.inputs += len(req.Input)
	f.mu.Unlock()
	if f.status != 0 {
		http.Error(w, "the model is loading, please retry", f.status)
		return
	}
	type item struct {
		Index     *int      `json:"index,omitempty"`
		Embedding []float64 `json:"embedding"`
	}
	var data []item
	for i, s := range req.Input {
		if strings.TrimSpace(s) == "" {
			f.t.Errorf("blank text sent")
		}
		v := make([]float64, 26)
		for _, r := range strings.ToLower(s) {
			if r >= 'a' && r <= 'z' {
				v[r-'a']++
			}
		}
		it := item{Embedding: v}
		if !f.noIndex {
			it.Index = &i
		}
		data = append(data, it)
	}
	if f.reverse {
		for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
			data[i], data[j] = data[j], data[i]
		}
	}
	if f.drop {
		data = data[1:]
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

func newEmbedding(t *testing.T, f *fakeEmbedder) *Embedding {
	f.t = t
	srv := httptest.NewServer(f) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return &Embedding{URL: srv.URL + "/v1/", Model: "test-model", APIKey: "k-123", Client: srv.Client()}
}

func TestEmbedding(t *testing.T) {
	ctx := context.Background()
	f := &fakeEmbedder{}
	e := newEmbedding(t, f)
	cases := []struct {
		a, b string
		want float64
	}{
		{"abc", "abc", 1},
		{"abc", "cba", 1},                     // same letters
		{"aaa", "bbb", 0},                     // orthogonal
		{"ab", "a", 1 / math.Sqrt2},           // cosine
		{"", "abc", 0},                        // blank: no request
		{"   ", "   ", 0},                     // blank: no request
		{"go test fails", "go test fails", 1}, // identity
	}
	for _, c := range cases {
		got, err := e.Similarity(ctx, c.a, c.b)
		if err != nil {
			t.Fatal(err)
		}
		rev, _ := e.Similarity(ctx, c.b, c.a)
		if math.Abs(got-c.want) > 1e-12 || got != rev {
			t.Errorf("Similarity(%q, %q) = %v (reverse %v), want %v", c.a, c.b, got, rev, c.want)
		}
	}
	// every distinct non-blank text was sent once
	if f.inputs != 7 {
		t.Errorf("%d texts sent, want 7 (each distinct non-blank text once)", f.inputs)
	}
	before := f.requests
	e.Similarity(ctx, "abc", "ab")
	if f.requests != before {
		t.Errorf("cached texts were fetched again")
	}
}

func TestEmbeddingBatchesAndOrder(t *testing.T) {
	ctx := context.Background()
	for _, f := range []*fakeEmbedder{{reverse: true}, {noIndex: true}} {
		e := newEmbedding(t, f)
		var texts []string
		for i := range 150 {
			texts = append(texts, fmt.Sprintf("text %s", strings.Repeat(string(rune('a'+i%26)), 1+i/26)))
		}
		if err := e.Prepare(ctx, append(texts, texts...)); err != nil {
			t.Fatal(err)
		}
		if f.requests != 3 || f.inputs != 150 {
			t.Fatalf("%d requests with %d texts, want 3 with 150", f.requests, f.inputs)
		}
		// vectors landed on the right texts
		want := newEmbedding(t, &fakeEmbedder{})
		for _, i := range []int{0, 63, 64, 149} {
			a, _ := e.Similarity(ctx, texts[i], "text a")
			b, _ := want.Similarity(ctx, texts[i], "text a")
			if a != b {
				t.Fatalf("text %d: %v, want %v", i, a, b)
			}
		}
	}
}

func TestEmbeddingErrors(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		f    *fakeEmbedder
		want string
	}{
		{"server error", &fakeEmbedder{status: 503}, "503 Service Unavailable: the model is loading"},
		{"missing vector", &fakeEmbedder{drop: true}, "1 vectors for 2 texts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := newEmbedding(t, c.f).Similarity(ctx, "abc", "def")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if strings.Contains(err.Error(), "k-123") {
				t.Fatalf("the API key leaked into the error: %v", err)
			}
		})
	}
	e := newEmbedding(t, &fakeEmbedder{})
	e.APIKey = "wrong"
	if _, err := e.Similarity(ctx, "abc", "def"); err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("bad key: %v", err)
	}
	if _, err := (&Embedding{}).Similarity(ctx, "a", "b"); err == nil || !strings.Contains(err.Error(), "no URL") {
		t.Fatalf("no URL: %v", err)
	}
	// a server that answers garbage
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("not json")) }))
	defer srv.Close()
	if _, err := (&Embedding{URL: srv.URL}).Similarity(ctx, "a", "b"); err == nil || !strings.Contains(err.Error(), "decoding") {
		t.Fatalf("garbage: %v", err)
	}
	// vectors of different lengths
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[1]}]}`))
	}))
	defer srv2.Close()
	if _, err := (&Embedding{URL: srv2.URL}).Similarity(ctx, "a", "b"); err == nil || !strings.Contains(err.Error(), "different lengths") {
		t.Fatalf("ragged: %v", err)
	}
}

func TestAssignWithEmbedding(t *testing.T) {
	f := &fakeEmbedder{}
	e := newEmbedding(t, f)
	groups := []Group{{ID: "g", Text: "abc abc", Episodes: []string{"cab"}}}
	eps := []Episode{{Kind: "error", Text: "bca"}, {Kind: "error", Text: "xyz"}, {Kind: "error", Text: "zyx"}}
	got, err := Assign(context.Background(), e, 0.9, groups, eps)
	if err != nil {
		t.Fatal(err)
	}
	if got.Joined[0] != "g" || len(got.NewClusters) != 1 || len(got.NewClusters[0]) != 2 {
		t.Fatalf("Assign = %+v", got)
	}
	if f.requests != 1 {
		t.Fatalf("%d requests, want 1 (Prepare batches every text)", f.requests)
	}
}
