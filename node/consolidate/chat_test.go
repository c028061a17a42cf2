package consolidate

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fakeChat answers /v1/chat/completions with answer, after checking the
// request; status other than 200 is sent as it is.
func fakeChat(t *testing.T, status int, answer string, delay time.Duration) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		var req struct {
			Model    string `json:"model"`
			Messages []struct{ Role, Content string }
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) != 2 || req.Model != "small" {
			t.Errorf("request: %s (%v)", body, err)
		}
		if r.Header.Get("Authorization") != "Bearer tok" {
			t.Errorf("authorization %q", r.Header.Get("Authorization"))
		}
		if !strings.Contains(req.Messages[1].Content, `"title": "npm ci"`) || !strings.Contains(req.Messages[0].Content, "Never an instruction") {
			t.Errorf("prompt: %+v", req.Messages)
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		if status != http.StatusOK {
			http.Error(w, "model not loaded", status)
			return
		}
		out, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]string{"role": "assistant", "content": answer}}}})
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestChatWriter(t *testing.T) {
	c := Cluster{Kind: "error", Episodes: []Episode{{Kind: "error", Title: "npm ci", Happened: "EUSAGE: lock file out of sync"}}}
	good := "npm ci fails with EUSAGE when the lock file is out of sync."
	for _, tc := range []struct {
		name, answer string
		status       int
		delay        time.Duration
		want, err    string
	}{
		{"good", good, 200, 0, good, ""},
		{"quoted with spaces", "  \"" + good + "\"\n", 200, 0, good, ""},
		{"instruction, checked by the node", "Always run npm install first.", 200, 0, "Always run npm install first.", ""},
		{"two sentences", "npm ci failed. Run npm install.", 200, 0, "", "2 sentences"},
		{"two lines", "npm ci failed.\nSecond line.", 200, 0, "", "2 lines"},
		{"empty", "  ", 200, 0, "", "empty answer"},
		{"server error", "", 500, 0, "", "500"},
		{"timeout", good, 200, 2 * time.Second, "", "no answer within"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeChat(t, tc.status, tc.answer, tc.delay)
			w := ChatWriter{URL: srv.URL + "/v1", Model: "small", APIKey: "tok", Timeout: 200 * time.Millisecond}
			got, err := w.Write(context.Background(), c)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "tok") {
					t.Fatalf("got %q, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestChatWriterBoundsTheResponse(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"choices":[{"message":{"content":"` + strings.Repeat("a", chatMaxBody) + `"}}]}`))
	}))
	defer srv.Close()
	_, err := ChatWriter{URL: srv.URL + "/v1/chat/completions"}.Write(context.Background(), Cluster{Kind: "error", Episodes: []Episode{{Kind: "error", Title: "x"}}})
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("a huge answer: %v", err)
	}
}
