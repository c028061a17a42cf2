package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/node"
)

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// nodeProc is one `remem node` process.
type nodeProc struct {
	home   string
	cmd    *exec.Cmd
	stderr *syncBuffer
	api    string
}

func startNode(t *testing.T, home string, args ...string) *nodeProc {
	t.Helper()
	cmd := exec.Command(remem(t), append([]string{"node", "--mdns=false", "--api", "127.0.0.1:0", "--sleep", "1h"}, args...)...)
	cmd.Env = append(os.Environ(), "REMEM_HOME="+home)
	p := &nodeProc{home: home, cmd: cmd, stderr: &syncBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(filepath.Join(home, "node.json"))
		var info struct{ API string }
		if err == nil && json.Unmarshal(data, &info) == nil && info.API != "" {
			p.api = info.API
			return p
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("node did not start:\n%s", p.stderr)
	return nil
}

// stop sends SIGTERM and expects a clean exit 0.
func (p *nodeProc) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("node exited with %v:\n%s", err, p.stderr)
		}
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
		t.Errorf("node did not stop on SIGTERM:\n%s", p.stderr)
	}
}

// apiToken is the API token of home, as the CLI reads it.
func apiToken(t *testing.T, home string) string {
	t.Helper()
	token, err := node.ReadAPIToken(home)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// post sends body to the node's API with the home's token, as the CLI does.
func (p *nodeProc) post(t *testing.T, path, body string) string {
	t.Helper()
	resp, err := testutil.BearerClient(apiToken(t, p.home)).Post("http://"+p.api+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s %s", path, resp.Status, buf.String())
	}
	return buf.String()
}

// TestThreeNodesOverGossip: an event posted to one node's API becomes a
// lesson that the two others list through `remem lessons --json` while
// their nodes run.
func TestThreeNodesOverGossip(t *testing.T) {
	homes := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	ports := []int{freePort(t), freePort(t), freePort(t)}
	ids := make([]string, 3)
	for i, h := range homes {
		var id struct {
			PeerID string `json:"peer_id"`
		}
		if err := json.Unmarshal([]byte(must(t, h, nil, "init", "--json")), &id); err != nil {
			t.Fatal(err)
		}
		ids[i] = id.PeerID
	}
	project := filepath.Join(homes[0], "project")
	os.MkdirAll(project, 0o755)
	must(t, homes[0], nil, "share", "--project", project)

	addr := func(i int) string { return fmt.Sprintf("/ip4/127.0.0.1/tcp/%d/p2p/%s", ports[i], ids[i]) }
	listen := func(i int) string { return fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", ports[i]) }
	nodes := []*nodeProc{
		startNode(t, homes[0], "--team", "e2e", "--listen", listen(0)),
		startNode(t, homes[1], "--team", "e2e", "--listen", listen(1), "--bootstrap", addr(0)),
		startNode(t, homes[2], "--team", "e2e", "--listen", listen(2), "--bootstrap", addr(1)),
	}
	event := fmt.Sprintf(`{"kind":"error","title":"make release","happened":"the release build fails when the changelog has no entry for the version","cwd":%q}`, project)
	nodes[0].post(t, "/memory/remember", event)
	nodes[0].post(t, "/sleep", "")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, i := range []int{1, 2} {
		for {
			var views []struct{ Text, Author string }
			out, _, code := run(t, homes[i], nil, "lessons", "--json")
			if code == 0 && json.Unmarshal([]byte(out), &views) == nil && len(views) == 1 && strings.Contains(views[0].Text, "changelog") {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("node %d never listed the lesson; last output %s\nnode log:\n%s", i, out, nodes[i].stderr)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// Status and peers answer through the running node.
	var st struct {
		PeerID string `json:"peer_id"`
		Peers  []struct{ Origin string }
	}
	if err := json.Unmarshal([]byte(must(t, homes[1], nil, "status", "--json")), &st); err != nil || st.PeerID != ids[1] || len(st.Peers) == 0 {
		t.Errorf("status of node 1: %+v %v", st, err)
	}
	for _, n := range nodes {
		n.stop(t)
	}
	// State survives the restart.
	var views []struct{ Hash string }
	json.Unmarshal([]byte(must(t, homes[2], nil, "lessons", "--json")), &views)
	if len(views) != 1 {
		t.Fatalf("after restart node 2 holds %d lessons", len(views))
	}
}

// TestNodeSaysWhenNothingIsShared: a node in no team warns at start that
// nothing is shared and how to share.
func TestNodeSaysWhenNothingIsShared(t *testing.T) {
	home := newHome(t)
	p := startNode(t, home)
	defer p.stop(t)
	testutil.Eventually(t, 10*time.Second, "the warning on stderr", func() bool {
		return strings.Contains(p.stderr.String(), "nothing is shared") && strings.Contains(p.stderr.String(), "--team")
	})
}

// TestNodeAPIToken: `remem init` makes the API token in mode 0600; a
// running node refuses a request without it (an agent of another user
// publishing in this memory's name) and takes the CLI's, which reads it
// from the home; the node and `remem web` print the page's link with the
// token after #, and the page itself holds no token.
func TestNodeAPIToken(t *testing.T) {
	home := t.TempDir()
	must(t, home, nil, "init")
	info, err := os.Stat(filepath.Join(home, "api-token"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the API token made by init: %v %v", info, err)
	}
	token := apiToken(t, home)
	p := startNode(t, home)
	defer p.stop(t)
	link := "http://" + p.api + "/#token=" + token
	testutil.Eventually(t, 20*time.Second, "the node to print the page's link", func() bool { return strings.Contains(p.stderr.String(), link) })
	if out := must(t, home, nil, "web"); out != link+"\n" {
		t.Errorf("remem web printed %q, want %q", out, link)
	}
	var web struct{ URL string }
	if err := json.Unmarshal([]byte(must(t, home, nil, "web", "--json")), &web); err != nil || web.URL != link {
		t.Errorf("remem web --json: %+v %v", web, err)
	}

	lesson := `{"kind":"error","text":"The release build fails when the changelog has no entry for the version"}`
	for name, hdr := range map[string]string{"no token": "", "a wrong token": "Bearer " + strings.Repeat("0", len(token))} {
		req, _ := http.NewRequest("POST", "http://"+p.api+"/lessons", strings.NewReader(lesson))
		req.Header.Set("Content-Type", "application/json")
		if hdr != "" {
			req.Header.Set("Authorization", hdr)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("POST /lessons with %s: %d, want 401", name, resp.StatusCode)
		}
	}
	if out := must(t, home, nil, "lessons", "--json"); strings.Contains(out, "changelog") {
		t.Fatalf("a request without the token published: %s", out)
	}
	must(t, home, nil, "publish", "--kind", "error", "The release build fails when the changelog has no entry for the version")
	if out := must(t, home, nil, "lessons", "--json"); !strings.Contains(out, "changelog") {
		t.Fatalf("the CLI's publish through the node: %s", out)
	}
	for _, path := range []string{"/", "/app.js", "/index.html"} {
		resp, err := http.Get("http://" + p.api + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || strings.Contains(string(body), token) {
			t.Errorf("GET %s without the token: %d, holds the token: %v", path, resp.StatusCode, strings.Contains(string(body), token))
		}
	}
}
