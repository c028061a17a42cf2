package consolidate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Embedding is a Similarity backed by an OpenAI-compatible embeddings
// endpoint: POST {URL}/embeddings with {"model": Model, "input": [texts]},
// and the cosine of the returned vectors (negative cosines count as 0).
// URL is the API base, e.g. "http://127.0.0.1:11434/v1". APIKey, when set,
// is sent as a bearer token and never appears in an error. Client defaults to
// an http.Client with a 60-second timeout.
//
// Vectors are cached per text (a bounded cache), so a text is sent once.
// Blank texts are never sent and score 0. Embedding is safe for concurrent
// use; use it through a pointer and do not copy it after first use.
// DefaultThreshold is calibrated for Lexical, not for embeddings: pick a
// threshold for the model in use.
type Embedding struct {
	URL, Model, APIKey string
	Client             *http.Client

	mu     sync.Mutex
	cache  map[string][]float64
	client *http.Client // Client, or the default made on first use
}

const (
	embedBatch      = 64       // texts per request
	embedCacheMax   = 1 << 14  // vectors kept before the cache is cleared
	embedMaxBody    = 64 << 20 // largest response read
	embedErrExcerpt = 300      // bytes of a failed response quoted in the error
)

// Similarity implements Similarity.
func (e *Embedding) Similarity(ctx context.Context, a, b string) (float64, error) {
	if strings.TrimSpace(a) == "" || strings.TrimSpace(b) == "" {
		return 0, nil
	}
	if err := e.Prepare(ctx, []string{a, b}); err != nil {
		return 0, err
	}
	e.mu.Lock()
	va, vb := e.cache[a], e.cache[b]
	e.mu.Unlock()
	if va == nil || vb == nil { // evicted between Prepare and here: fetch again
		vs, err := e.fetch(ctx, []string{a, b})
		if err != nil {
			return 0, err
		}
		va, vb = vs[0], vs[1]
	}
	if a == b {
		if norm(va) == 0 {
			return 0, nil
		}
		return 1, nil
	}
	return cosine(va, vb), nil
}

// Prepare fetches, in batches, the vectors of the texts not cached yet. It
// implements Preparer, so Assign sends all of its texts in a few requests.
func (e *Embedding) Prepare(ctx context.Context, texts []string) error {
	e.mu.Lock()
	var missing []string
	want := make(map[string]bool)
	for _, t := range texts {
		if strings.TrimSpace(t) == "" || want[t] {
			continue
		}
		if _, ok := e.cache[t]; !ok {
			want[t] = true
			missing = append(missing, t)
		}
	}
	e.mu.Unlock()
	for len(missing) > 0 {
		n := min(len(missing), embedBatch)
		vs, err := e.fetch(ctx, missing[:n])
		if err != nil {
			return err
		}
		e.mu.Lock()
		if e.cache == nil || len(e.cache)+n > embedCacheMax {
			e.cache = make(map[string][]float64)
		}
		for i, t := range missing[:n] {
			e.cache[t] = vs[i]
		}
		e.mu.Unlock()
		missing = missing[n:]
	}
	return nil
}

// fetch asks the endpoint for the vectors of texts, in order.
func (e *Embedding) fetch(ctx context.Context, texts []string) ([][]float64, error) {
	if e.URL == "" {
		return nil, errors.New("embedding: no URL configured")
	}
	endpoint := strings.TrimRight(e.URL, "/") + "/embeddings"
	body, err := json.Marshal(struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}{e.Model, texts})
	if err != nil {
		return nil, fmt.Errorf("embedding: encoding request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embedding: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if e.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.APIKey)
	}
	resp, err := e.httpClient().Do(req)
	if err != nil {
		return nil, fmt.Errorf("embedding: POST %s: %w", endpoint, err)
	}
	defer func() { _ = resp.Body.Close() }() // a read body: its close says nothing
	raw, err := io.ReadAll(io.LimitReader(resp.Body, embedMaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("embedding: POST %s: reading response: %w", endpoint, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("embedding: POST %s: %s: %s", endpoint, resp.Status, excerpt(raw, embedErrExcerpt))
	}
	if len(raw) > embedMaxBody {
		return nil, fmt.Errorf("embedding: POST %s: response larger than %d bytes", endpoint, embedMaxBody)
	}
	var parsed struct {
		Data []struct {
			Index     *int      `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &parsed); err != nil {
		return nil, fmt.Errorf("embedding: POST %s: decoding response: %w", endpoint, err)
	}
	if len(parsed.Data) != len(texts) {
		return nil, fmt.Errorf("embedding: POST %s: %d vectors for %d texts", endpoint, len(parsed.Data), len(texts))
	}
	out := make([][]float64, len(texts))
	dim := -1
	for k, d := range parsed.Data {
		i := k // servers that leave out "index" answer in order
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i >= len(texts) || out[i] != nil {
			return nil, fmt.Errorf("embedding: POST %s: bad or repeated index %d", endpoint, i)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embedding: POST %s: empty vector for input %d", endpoint, i)
		}
		if dim >= 0 && len(d.Embedding) != dim {
			return nil, fmt.Errorf("embedding: POST %s: vectors of different lengths (%d and %d)", endpoint, dim, len(d.Embedding))
		}
		dim = len(d.Embedding)
		out[i] = d.Embedding
	}
	return out, nil
}

func (e *Embedding) httpClient() *http.Client {
	if e.Client != nil {
		return e.Client
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.client == nil {
		e.client = &http.Client{Timeout: 60 * time.Second}
	}
	return e.client
}

// cosine is the cosine of two vectors, clamped to [0, 1]; vectors of
// different lengths or a zero vector give 0.
func cosine(a, b []float64) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot float64
	for i := range a {
		dot += a[i] * b[i]
	}
	na, nb := norm(a), norm(b)
	if na == 0 || nb == 0 {
		return 0
	}
	c := dot / (na * nb)
	if math.IsNaN(c) {
		return 0
	}
	return min(max(c, 0), 1)
}

func norm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

// excerpt returns at most n bytes of b as one line, for an error message.
func excerpt(b []byte, n int) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}
