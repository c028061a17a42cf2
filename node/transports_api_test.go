package node

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/folder"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// TestTransportRoutesRefuseBadInput: the API's transport routes refuse, with
// what to write instead, a folder named by a directory,
// a commons URL the client would refuse, and a cross-site form post; a
// pull that fails says why in the commons client's words.
func TestTransportRoutesRefuseBadInput(t *testing.T) {
	m, _ := openTest(t, nil)
	srv := httptest.NewServer(NewAPI(m, APIOptions{}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, Token: m.APIToken()}
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
	resp, err := testutil.BearerClient(m.APIToken()).Post(srv.URL+"/folder/sync", "text/plain", strings.NewReader(`{"dir":"/tmp"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("a form post to /folder/sync: %d", resp.StatusCode)
	}
}

// TestClientSyncFolderReportsWhatItTook: a sync of the node's folder
// through the API writes this memory's file and takes the others', and a damaged file comes
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
	srv := httptest.NewServer(NewAPI(b, APIOptions{Folders: []string{dir}}))
	defer srv.Close()
	rep, err := (&Client{BaseURL: srv.URL, Token: b.APIToken()}).SyncFolder(context.Background(), dir)
	if err != nil || rep.Report.Files != 2 || rep.Report.Accepted != 1 || len(rep.Report.Refused) != 1 {
		t.Fatalf("sync through the API: %+v %v", rep, err)
	}
	if _, err := os.Stat(filepath.Join(dir, protocol.OriginFileName(b.Origin()))); err != nil {
		t.Fatalf("b's file: %v", err)
	}
}

// TestFolderSyncTakesNoPath: POST /folder/sync syncs the folders of the
// node's configuration, all of them or one named by its scope; a request
// that names a directory is refused with how to configure it, and nothing
// is written there (SPEC §11: no request names a file).
func TestFolderSyncTakesNoPath(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	td := runDaemon(t, DaemonConfig{Memory: Config{Home: t.TempDir(), Create: true}, Folders: []string{dir}, SleepEvery: time.Hour})
	defer td.stop(t)
	m := td.d.Memory()
	if _, err := m.Publish("error", "The integration suite times out when the VPN is down"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(td.d.Handler())
	defer srv.Close()
	post := func(body string) (int, string) {
		resp, err := testutil.BearerClient(m.APIToken()).Post(srv.URL+"/folder/sync", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	own := protocol.OriginFileName(m.Origin())
	for _, body := range []string{`{"dir":"` + other + `"}`, `{"dir":"` + dir + `"}`, `{"path":"` + other + `"}`} {
		if code, data := post(body); code != http.StatusBadRequest || !strings.Contains(data, "configured") || !strings.Contains(data, "remem config set folders") {
			t.Errorf("POST /folder/sync %s: %d %s, want 400 saying the folder must be configured and how", body, code, data)
		}
	}
	if entries, _ := os.ReadDir(other); len(entries) != 0 {
		t.Fatalf("a request naming %s wrote %d files there", other, len(entries))
	}
	if code, data := post(`{"scope":"` + folder.ScopeName(other) + `"}`); code != http.StatusBadRequest || !strings.Contains(data, folder.ScopeName(dir)) {
		t.Errorf("a scope the node does not sync: %d %s, want 400 listing %s", code, data, folder.ScopeName(dir))
	}
	for _, body := range []string{`{}`, `{"scope":"` + folder.ScopeName(dir) + `"}`} {
		code, data := post(body)
		var reps []FolderSync
		if code != http.StatusOK || json.Unmarshal([]byte(data), &reps) != nil || len(reps) != 1 || reps[0].Scope != folder.ScopeName(dir) {
			t.Fatalf("POST /folder/sync %s: %d %s, want the configured folder synced", body, code, data)
		}
		if _, err := os.Stat(filepath.Join(dir, own)); err != nil {
			t.Fatalf("POST /folder/sync %s: the own file: %v", body, err)
		}
	}
	// The client asks for the folder of a directory by its scope: the
	// node's own folder goes, another is refused with how to add it.
	c := &Client{BaseURL: srv.URL, Token: m.APIToken()}
	if rep, err := c.SyncFolder(context.Background(), dir); err != nil || rep.Scope != folder.ScopeName(dir) {
		t.Errorf("the client's sync of the configured folder: %+v %v", rep, err)
	}
	if _, err := c.SyncFolder(context.Background(), other); err == nil || !strings.Contains(err.Error(), "remem config set folders") {
		t.Errorf("the client's sync of a folder the node does not sync: %v", err)
	}
}
