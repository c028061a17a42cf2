package web_test

// A small client of the Chrome DevTools Protocol, enough to drive Debian's
// headless Chromium from a test: start the browser, open a page, evaluate
// JavaScript, take a screenshot, and collect the page's errors. It speaks
// CDP over the WebSocket library already in go.mod.

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// chromiumPath finds the browser, or "" when it is absent.
func chromiumPath() string {
	if p := os.Getenv("REMEM_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

type browser struct {
	cmd  *exec.Cmd
	conn *websocket.Conn

	wmu  sync.Mutex // serialises writes
	mu   sync.Mutex // guards the fields below
	next int64
	wait map[int64]chan cdpReply
	errs []string // exceptions and error-level log entries of the page
	done chan struct{}
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

type cdpMessage struct {
	ID     int64           `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	cdpReply
}

var devtoolsRE = regexp.MustCompile(`DevTools listening on (ws://\S+)`)

// startBrowser starts headless Chromium and attaches to its first page.
func startBrowser(t *testing.T, path string) *browser {
	t.Helper()
	profile := t.TempDir()
	cmd := exec.Command(path, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--disable-dev-shm-usage", "--no-default-browser-check", "--mute-audio", "--hide-scrollbars",
		"--window-size=1360,900", "--user-data-dir="+profile, "--remote-debugging-address=127.0.0.1",
		"--remote-debugging-port=0", "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers end with it
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	b := &browser{cmd: cmd, wait: map[int64]chan cdpReply{}, done: make(chan struct{})}
	t.Cleanup(b.close)

	found := make(chan string, 1)
	var logMu sync.Mutex
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			logMu.Lock()
			log.WriteString(line + "\n")
			logMu.Unlock()
			if m := devtoolsRE.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	var wsURL string
	select {
	case wsURL = <-found:
	case <-time.After(60 * time.Second):
		logMu.Lock()
		defer logMu.Unlock()
		t.Fatalf("chromium did not open its DevTools port in 60s; stderr:\n%s", log.String())
	}

	// The page target: GET /json/list on the same port.
	host := strings.TrimPrefix(wsURL, "ws://")
	host = host[:strings.Index(host, "/")]
	var targets []struct {
		Type string `json:"type"`
		URL  string `json:"url"`
		WS   string `json:"webSocketDebuggerUrl"`
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + host + "/json/list")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&targets)
			resp.Body.Close()
		}
		pageWS := ""
		for _, tg := range targets {
			if tg.Type == "page" && tg.WS != "" {
				pageWS = tg.WS
				break
			}
		}
		if pageWS != "" {
			conn, _, err := websocket.DefaultDialer.Dial(pageWS, nil)
			if err != nil {
				t.Fatalf("connecting to the page's DevTools socket: %v", err)
			}
			b.conn = conn
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no page target in chromium: %v %+v", err, targets)
		}
		time.Sleep(100 * time.Millisecond)
	}
	go b.read()
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable"} {
		b.call(t, m, nil, nil)
	}
	b.call(t, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1360, "height": 900, "deviceScaleFactor": 1, "mobile": false}, nil)
	return b
}

func (b *browser) read() {
	defer close(b.done)
	for {
		_, data, err := b.conn.ReadMessage()
		if err != nil {
			return
		}
		var msg cdpMessage
		if json.Unmarshal(data, &msg) != nil {
			continue
		}
		if msg.ID != 0 {
			b.mu.Lock()
			ch := b.wait[msg.ID]
			delete(b.wait, msg.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- msg.cdpReply
			}
			continue
		}
		switch msg.Method {
		case "Runtime.exceptionThrown":
			var p struct {
				Details struct {
					Text      string `json:"text"`
					Exception struct {
						Description string `json:"description"`
					} `json:"exception"`
				} `json:"exceptionDetails"`
			}
			json.Unmarshal(msg.Params, &p)
			b.addErr("exception: " + p.Details.Text + " " + p.Details.Exception.Description)
		case "Log.entryAdded":
			var p struct {
				Entry struct {
					Level  string `json:"level"`
					Source string `json:"source"`
					Text   string `json:"text"`
					URL    string `json:"url"`
				} `json:"entry"`
			}
			json.Unmarshal(msg.Params, &p)
			if p.Entry.Level == "error" {
				b.addErr(fmt.Sprintf("log (%s): %s %s", p.Entry.Source, p.Entry.Text, p.Entry.URL))
			}
		case "Runtime.consoleAPICalled":
			var p struct {
				Type string `json:"type"`
			}
			json.Unmarshal(msg.Params, &p)
			if p.Type == "error" {
				b.addErr("console.error: " + string(msg.Params))
			}
		}
	}
}

func (b *browser) addErr(s string) {
	b.mu.Lock()
	b.errs = append(b.errs, s)
	b.mu.Unlock()
}

// errors returns the page's exceptions and error log entries so far.
func (b *browser) errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errs...)
}

// call sends one CDP command and decodes its result into out.
func (b *browser) call(t *testing.T, method string, params any, out any) {
	t.Helper()
	if err := b.callErr(method, params, out); err != nil {
		t.Fatal(err)
	}
}

func (b *browser) callErr(method string, params any, out any) error {
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan cdpReply, 1)
	b.wait[id] = ch
	b.mu.Unlock()
	if params == nil {
		params = map[string]any{}
	}
	data, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	b.wmu.Lock()
	err := b.conn.WriteMessage(websocket.TextMessage, data)
	b.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %v", method, err)
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return fmt.Errorf("%s: %s (%d)", method, r.Error.Message, r.Error.Code)
		}
		if out != nil {
			return json.Unmarshal(r.Result, out)
		}
		return nil
	case <-b.done:
		return fmt.Errorf("%s: the browser closed the connection", method)
	case <-time.After(30 * time.Second):
		return fmt.Errorf("%s: no answer in 30s", method)
	}
}

// eval evaluates a JavaScript expression in the page and decodes its value.
func (b *browser) eval(t *testing.T, expr string, out any) {
	t.Helper()
	if err := b.evalErr(expr, out); err != nil {
		t.Fatal(err)
	}
}

func (b *browser) evalErr(expr string, out any) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := b.callErr("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r); err != nil {
		return err
	}
	if r.Exception != nil {
		return fmt.Errorf("evaluating %q: %s", expr, r.Exception.Text)
	}
	if out != nil && len(r.Result.Value) > 0 {
		return json.Unmarshal(r.Result.Value, out)
	}
	return nil
}

// waitFor polls a boolean expression until it holds.
func (b *browser) waitFor(t *testing.T, what, expr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		var ok bool
		err := b.evalErr("Boolean("+expr+")", &ok)
		if err == nil && ok {
			return
		}
		select {
		case <-ctx.Done():
			var body string
			b.evalErr("document.body ? document.body.innerText : ''", &body)
			t.Fatalf("waiting for %s (%s): %v; the page shows:\n%s\nerrors: %v", what, expr, err, body, b.errors())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (b *browser) navigate(t *testing.T, url string) {
	t.Helper()
	b.call(t, "Page.navigate", map[string]any{"url": url}, nil)
}

// reload reloads the page and waits for the new document. The old one is
// marked first: it may already show what the caller waits for next, and
// reading it (or taking a screenshot) while the reload swaps documents
// fails with "Not attached to an active page".
func (b *browser) reload(t *testing.T) {
	t.Helper()
	b.eval(t, `window.__beforeReload = true; location.reload()`, nil)
	b.waitFor(t, "the reloaded page", `window.__beforeReload === undefined && document.readyState === "complete"`)
}

// screenshot saves a PNG of the page, the whole page when full.
func (b *browser) screenshot(t *testing.T, path string, full bool) {
	t.Helper()
	var r struct {
		Data string `json:"data"`
	}
	b.call(t, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": full}, &r)
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// close ends the browser: politely over CDP, then its process group.
func (b *browser) close() {
	if b.conn != nil {
		b.callErr("Browser.close", nil, nil)
		b.conn.Close()
	}
	exited := make(chan struct{})
	go func() {
		b.cmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	// Helpers of the browser that outlived it share its process group.
	syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
}
