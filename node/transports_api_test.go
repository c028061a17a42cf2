package node

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/remem/remem/protocol"
)

// TestTransportRoutesRefuseBadInput: the API's transport routes refuse, with
// what to write instead, a folder named relative to the node's directory,
// a commons URL the client would refuse, and a cross-site form post; a
// pull that fails says why in the commons client's words.
func TestTransportRoutesRefuseBadInput(t *testing.T) {
	m, _ := openTest(t, nil)
	srv := httptest.NewServer(NewAPI(m, APIOptions{}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL}
	ctx := context.Background()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	if _, err := c.PullCommons(ctx, CommonsRequest{URL: dead.URL}); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("a pull from a commons that is gone, through the API: %v", err)
	}
	for path, body := range map[string]string{
		"/folder/sync":  `{"dir":"share/remem"}`,
		"/commons/push": `{"url":"commons.example.org:8787"}`,
		"/commons/pull": `{"url":"https://host/other/path"}`,
	} {
		code, data, err := c.send(ctx, http.MethodPost, path, []byte(body))
		if err != nil || code != http.StatusBadRequest {
			t.Errorf("POST %s %s: %d %s %v", path, body, code, data, err)
		}
	}
	resp, err := http.Post(srv.URL+"/folder/sync", "text/plain", strings.NewReader(`{"dir":"/tmp"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("a form post to /folder/sync: %d", resp.StatusCode)
	}
}

// TestClientSyncFolderReportsWhatItTook: a folder sync through the API
// writes this memory's file and takes the others', and a damaged file comes
// back as the report beside the error, as from a Local.
func TestClientSyncFolderReportsWhatItTook(t *testing.T) {
	a, _ := openTest(t, nil)
	b, _ := openTest(t, nil)
	dir := t.TempDir()
	if _, err := a.Publish("error", "The integration suite times out when the VPN is down"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SyncFolder(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "0123456789abcdef.jsonl"), []byte("garbage\n"), 0o644)
	srv := httptest.NewServer(NewAPI(b, APIOptions{}))
	defer srv.Close()
	rep, err := (&Client{BaseURL: srv.URL}).SyncFolder(context.Background(), dir)
	if err != nil || rep.Report.Files != 2 || rep.Report.Accepted != 1 || len(rep.Report.Refused) != 1 {
		t.Fatalf("sync through the API: %+v %v", rep, err)
	}
	if _, err := os.Stat(filepath.Join(dir, protocol.OriginFileName(b.Origin()))); err != nil {
		t.Fatalf("b's file: %v", err)
	}
}
