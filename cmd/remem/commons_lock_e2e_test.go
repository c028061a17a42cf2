package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecondCommonsServeOnOneDataRefused: a second `remem commons serve`
// on the --data of a running one exits 1 at start, naming the directory
// and the process that holds it; the budgets' flags reach the info
// document.
func TestSecondCommonsServeOnOneDataRefused(t *testing.T) {
	data := t.TempDir()
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := startCommonsWith(t, token, nil, "--data", data, "--max-origins", "7", "--max-origins-per-token", "3")
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	_, errOut, code := run(t, newHome(t), nil, "commons", "serve", "--data", data, "--token-file", token, "--listen", addr)
	if code != 1 || !strings.Contains(errOut, data) || !strings.Contains(errOut, "in use by process ") {
		t.Fatalf("second commons serve on %s: exit %d, %q; want 1 naming the directory and its holder", data, code, errOut)
	}
	resp, err := http.Get(url + "/.well-known/remem")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var wk struct {
		Limits struct {
			Origins         int   `json:"origins"`
			OriginsPerToken int   `json:"origins_per_token"`
			TotalBytes      int64 `json:"total_bytes"`
		} `json:"limits"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&wk); err != nil {
		t.Fatal(err)
	}
	if l := wk.Limits; l.Origins != 7 || l.OriginsPerToken != 3 || l.TotalBytes != 2<<30 {
		t.Fatalf("info limits %+v, want the flags' budgets and the default byte budget", l)
	}
}
