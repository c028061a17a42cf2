package web_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/node"
	"github.com/remem/remem/node/web"
	"github.com/remem/remem/protocol"
)

const scriptText = "The page shows <script>window.__pwned=1</script> as text"

// fixture is a running node API with lessons from other memories.
type fixture struct {
	m                         *node.Memory
	srv                       *httptest.Server
	author, confirmer, other  protocol.Identity
	received, script, revoked string // hashes
	common, own, draft        string
}

func identity(t *testing.T, b byte) protocol.Identity {
	t.Helper()
	id, err := protocol.NewIdentity(bytes.Repeat([]byte{b}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	// Every origin admitted: the confirmers are keys made for the test.
	m, err := node.Open(node.Config{Home: t.TempDir(), Create: true, Admission: node.Admission{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	f := &fixture{m: m, author: identity(t, 1), confirmer: identity(t, 2), other: identity(t, 3)}
	now := time.Now().UTC().Add(-2 * time.Minute)
	var lines []string
	sign := func(id protocol.Identity, kind, text string) string {
		rec, err := protocol.SignLesson(id, protocol.LessonDraft{Kind: kind, Text: text, Seen: 2, Strength: 0.75, Updated: now})
		if err != nil {
			t.Fatalf("signing %q: %v", text, err)
		}
		lines = append(lines, string(rec.Raw))
		return rec.Hash
	}
	confirm := func(id protocol.Identity, hash string) {
		rec, err := protocol.SignConfirmation(id, hash, now)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(rec.Raw))
	}
	f.received = sign(f.author, "error", "Installing packages with pip inside the base conda environment breaks the solver on later updates.")
	confirm(f.confirmer, f.received)
	f.script = sign(f.other, "surprise", scriptText)
	f.common = sign(identity(t, 4), "error", "Docker builds on the shared CI runner run out of disk space after about forty images.")
	for b := byte(5); b <= 7; b++ {
		confirm(identity(t, b), f.common)
	}
	f.revoked = sign(identity(t, 8), "correction", "The team writes commit messages in the imperative mood.")
	rev, err := protocol.SignRevocation(identity(t, 8), f.revoked, now.Add(time.Second), "wrong team")
	if err != nil {
		t.Fatal(err)
	}
	lines = append(lines, string(rev.Raw))
	rep, err := m.Receive(ctx, "team:x", protocol.SplitLines([]byte(strings.Join(lines, "\n"))))
	if err != nil || len(rep.Refused) > 0 {
		t.Fatalf("receive: %+v %v", rep, err)
	}
	// A refused line, so the page has a refusal to show.
	m.Receive(ctx, "team:x", protocol.SplitLines([]byte(`{"v":1,"hash":"00","origin":"x"}`)))
	// And a lesson of this memory's own.
	// And a draft (SPEC §3): its redaction leaves a placeholder in a command.
	if _, err := m.Remember([]protocol.Event{{Kind: "error", Title: "go test -race ./...", Happened: "the race detector needs cgo, and CGO_ENABLED=0 was set", Agent: "a", Session: "s"},
		{Kind: "error", Title: "db migrate", Happened: "the migration job runs mysql -u app --password=hunter2 and fails once the secret rotates", Agent: "a", Session: "s"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Sleep(ctx); err != nil {
		t.Fatal(err)
	}
	views, err := m.Lessons(node.Filter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		switch {
		case v.Own && v.Draft != "":
			f.draft = v.Hash
		case v.Own:
			f.own = v.Hash
		}
	}
	if f.draft == "" || f.own == "" {
		t.Fatalf("no own lesson and draft among %+v", views)
	}
	f.srv = httptest.NewServer(node.NewAPI(m, node.APIOptions{Web: web.Handler()}))
	t.Cleanup(f.srv.Close)
	return f
}

// TestBrowser drives the page in headless Chromium against a running node
// API: opened by the link with the token after #, it keeps the token for
// the tab and out of the address bar; the received lesson is listed, the
// search narrows the list, the provenance page shows the confirmer, a
// lesson holding <script> renders as text, and the page follows the node
// without a reload. Without the token, or with a wrong one, it says which
// command prints the link.
func TestBrowser(t *testing.T) {
	path := chromiumPath()
	if path == "" {
		if os.Getenv("REMEM_REQUIRE_BROWSER") != "" {
			t.Fatal("REMEM_REQUIRE_BROWSER is set but no chromium was found (apt-get install chromium, or set REMEM_CHROMIUM)")
		}
		t.Skip("no chromium on this machine (apt-get install chromium); set REMEM_REQUIRE_BROWSER=1 to make this a failure")
	}
	f := newFixture(t)
	b := startBrowser(t, path)
	shots := filepath.Join(os.TempDir(), "remem-web-screenshots")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}

	token := f.m.APIToken()
	b.navigate(t, f.srv.URL+"/#token="+token)
	b.waitFor(t, "the lessons table", `document.body.dataset.ready === "1" && document.querySelectorAll("#rows tr").length >= 4`)
	// The token left the address bar (and the history entry) for the tab's
	// sessionStorage, and the page still loads after a reload.
	var kept struct {
		Href, Stored string
		History      int
	}
	b.eval(t, `({ href: location.href, stored: sessionStorage.getItem("remem-api-token"), history: history.length })`, &kept)
	if strings.Contains(kept.Href, token) || !strings.HasSuffix(kept.Href, "/#/") || kept.Stored != token {
		t.Errorf("after the link: address %q, stored %q; want the token out of the address and in sessionStorage", kept.Href, kept.Stored)
	}
	b.reload(t)
	b.waitFor(t, "the lessons table after a reload", `document.body.dataset.ready === "1" && document.querySelectorAll("#rows tr").length >= 4 && document.getElementById("need-token").hidden`)

	// The received lesson is listed with its state, kind, origin and confirmer.
	var row struct {
		Text, State, Kind, Origins, Confirmers string
	}
	b.eval(t, fmt.Sprintf(`(() => { const tr = document.querySelector('#rows tr[data-hash=%q]'); if (!tr) return null;
		return { text: tr.querySelector('.text').textContent, state: tr.querySelector('.badge').textContent,
		kind: tr.querySelector('.kind').textContent, origins: tr.querySelector('.c-origins').title,
		confirmers: tr.querySelector('.c-confirmers').title }; })()`, f.received), &row)
	if !strings.Contains(row.Text, "pip inside the base conda environment") || row.State != "candidate" || row.Kind != "error" ||
		row.Origins != f.author.Origin() || row.Confirmers != f.confirmer.Origin() {
		t.Errorf("the received lesson's row: %+v", row)
	}
	var states map[string]string
	b.eval(t, `Object.fromEntries(Array.from(document.querySelectorAll('#rows tr')).map(tr => [tr.dataset.hash, tr.dataset.state]))`, &states)
	if states[f.common] != "common" || states[f.revoked] != "revoked" || states[f.own] != "candidate" {
		t.Errorf("states shown: %v", states)
	}

	// A draft is marked with its reason.
	var chip string
	b.eval(t, fmt.Sprintf(`(() => { const c = document.querySelector('#rows tr[data-hash=%q] .chip.draft'); return c ? c.textContent : ''; })()`, f.draft), &chip)
	if !strings.HasPrefix(chip, "draft: ") {
		t.Errorf("the draft's row shows %q, want its draft chip", chip)
	}

	// The <script> text is text: escaped in the DOM, never run.
	var script struct {
		Text, HTML string
		Pwned      bool
		Scripts    int
	}
	b.eval(t, fmt.Sprintf(`(() => { const a = document.querySelector('#rows tr[data-hash=%q] .text');
		return { text: a.textContent, html: a.innerHTML, pwned: window.__pwned !== undefined, scripts: document.scripts.length }; })()`, f.script), &script)
	if script.Text != scriptText || !strings.Contains(script.HTML, "&lt;script&gt;window.__pwned=1&lt;/script&gt;") || script.Pwned || script.Scripts != 1 {
		t.Errorf("the <script> lesson should render as text: %+v", script)
	}
	var dom string
	b.eval(t, `document.documentElement.outerHTML`, &dom)
	if !strings.Contains(dom, "&lt;script&gt;window.__pwned=1&lt;/script&gt;") || strings.Contains(dom, "<script>window.__pwned") {
		t.Errorf("the dumped DOM should hold the escaped text only")
	}
	b.screenshot(t, filepath.Join(shots, "lessons.png"), true)

	// The search narrows the list: from the URL's #/?q=…
	b.eval(t, `location.hash = "#/?q=conda"`, nil)
	b.waitFor(t, "the search from the URL", `document.querySelectorAll("#rows tr").length === 1 && document.getElementById("q").value === "conda"`)
	var only string
	b.eval(t, `document.querySelector("#rows tr").dataset.hash`, &only)
	if only != f.received {
		t.Errorf("#/?q=conda shows %s, want %s", only, f.received)
	}
	// … and from typing in the box, which writes the URL.
	b.eval(t, `(() => { const q = document.getElementById("q"); q.value = "pwned"; q.dispatchEvent(new Event("input")); })()`, nil)
	b.waitFor(t, "the typed search", fmt.Sprintf(`document.querySelectorAll("#rows tr").length === 1 && document.querySelector("#rows tr").dataset.hash === %q && location.hash === "#/?q=pwned"`, f.script))
	// Several words narrow further; a state filter too.
	b.eval(t, `location.hash = "#/?state=common"`, nil)
	b.waitFor(t, "the state filter", fmt.Sprintf(`document.querySelectorAll("#rows tr").length === 1 && document.querySelector("#rows tr").dataset.hash === %q`, f.common))
	b.eval(t, `location.hash = "#/?q=" + encodeURIComponent("docker nothing-matches-this")`, nil)
	b.waitFor(t, "an empty search", `document.querySelectorAll("#rows tr").length === 0 && !document.getElementById("empty").hidden`)

	// The page follows the node without a reload: a lesson received now
	// shows up within a few polls.
	b.eval(t, `window.__sameDocument = true; location.hash = "#/"`, nil)
	late, err := protocol.SignLesson(identity(t, 9), protocol.LessonDraft{Kind: "surprise", Text: "The staging database refuses new connections during the nightly backup window.",
		Seen: 1, Strength: 0.5, Updated: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.Receive(context.Background(), "team:y", protocol.SplitLines(late.Raw)); err != nil {
		t.Fatal(err)
	}
	b.waitFor(t, "the lesson received after the page loaded", fmt.Sprintf(`window.__sameDocument === true && !!document.querySelector('#rows tr[data-hash=%q]')`, late.Hash))

	// Peers, topics and refusals come from /status.
	var panels string
	b.eval(t, `document.querySelector(".panels").textContent`, &panels)
	for _, want := range []string{"Peers and topics", "No peer connected", "Refused records by reason", f.m.Origin()[:16]} {
		if !strings.Contains(panels, want) {
			t.Errorf("the status panels lack %q:\n%s", want, panels)
		}
	}
	var refusedRows int
	b.eval(t, `document.querySelectorAll("#refused-rows tr").length`, &refusedRows)
	if refusedRows == 0 {
		t.Errorf("the refused line should be counted by reason:\n%s", panels)
	}
	// Events per agent: the fixture's two events came from agent "a".
	var agentRows string
	b.eval(t, `document.getElementById("agent-rows") ? document.getElementById("agent-rows").innerText : ""`, &agentRows)
	if !strings.Contains(agentRows, "a\t2") {
		t.Errorf("the events by agent panel shows %q, want agent a with 2 events", agentRows)
	}

	// The provenance page shows every record, where and when it arrived, and
	// the confirmer.
	b.eval(t, fmt.Sprintf(`location.hash = "#/lesson/%s"`, f.received), nil)
	b.waitFor(t, "the provenance page", fmt.Sprintf(`document.getElementById("view-lesson").dataset.loaded === %q && !document.getElementById("view-lesson").hidden`, f.received))
	var prov struct {
		Text, Confirmers, Records, History string
		RecordRows                         int
	}
	b.eval(t, `({ text: document.getElementById("lesson-text").textContent,
		confirmers: document.getElementById("confirmers").innerText,
		records: document.getElementById("record-rows").innerText,
		recordRows: document.querySelectorAll("#record-rows tr").length,
		history: document.getElementById("history").innerText })`, &prov)
	if !strings.Contains(prov.Confirmers, f.confirmer.Origin()) || !strings.Contains(prov.Confirmers, "team:x") {
		t.Errorf("the provenance page should show the confirmer and the scope it came by:\n%s", prov.Confirmers)
	}
	if prov.RecordRows != 2 || !strings.Contains(prov.Records, "confirmation") || !strings.Contains(prov.Records, f.author.Origin()) || !strings.Contains(prov.Records, "team:x") {
		t.Errorf("records of the received lesson:\n%s", prov.Records)
	}
	if !strings.Contains(prov.History, "candidate") {
		t.Errorf("state history:\n%s", prov.History)
	}
	b.screenshot(t, filepath.Join(shots, "provenance.png"), true)

	// The <script> lesson's own page renders it as text too.
	b.eval(t, fmt.Sprintf(`location.hash = "#/lesson/%s"`, f.script), nil)
	b.waitFor(t, "the <script> lesson's page", fmt.Sprintf(`document.getElementById("view-lesson").dataset.loaded === %q`, f.script))
	b.eval(t, `({ text: document.getElementById("lesson-text").textContent, html: document.getElementById("lesson-text").innerHTML,
		pwned: window.__pwned !== undefined, scripts: document.scripts.length })`, &script)
	if script.Text != scriptText || !strings.Contains(script.HTML, "&lt;script&gt;") || script.Pwned || script.Scripts != 1 {
		t.Errorf("the <script> lesson's page: %+v", script)
	}
	if errs := b.errors(); len(errs) > 0 {
		t.Errorf("the page logged errors (a CSP violation is one):\n%s", strings.Join(errs, "\n"))
	}
	// An unknown hash says so (the browser logs the API's 404).
	b.eval(t, `location.hash = "#/lesson/00000000000000000000000000000000"`, nil)
	b.waitFor(t, "an unknown lesson", `document.getElementById("view-lesson").dataset.loaded === "00000000000000000000000000000000" && document.getElementById("view-lesson").innerText.includes("not found")`)

	// A wrong token (another node's, an old one) is forgotten, and the page
	// says which command prints the link; so it does with none.
	needToken := `document.body.dataset.token === "needed" && !document.getElementById("need-token").hidden &&
		document.getElementById("need-token").textContent.includes("remem web") && sessionStorage.getItem("remem-api-token") === null &&
		!location.href.includes("token")`
	b.navigate(t, f.srv.URL+"/#token="+strings.Repeat("0", len(token)))
	b.waitFor(t, "the page with a wrong token", needToken)
	b.reload(t)
	b.waitFor(t, "the page without a token", needToken)
	b.screenshot(t, filepath.Join(shots, "no-token.png"), false)
	// The right link pasted into the same tab brings the lessons back.
	b.navigate(t, f.srv.URL+"/#token="+token)
	b.waitFor(t, "the page after the right link", `document.body.dataset.token === "sent" && document.getElementById("need-token").hidden && document.querySelectorAll("#rows tr").length >= 4`)
	t.Logf("screenshots: %s, %s and %s", filepath.Join(shots, "lessons.png"), filepath.Join(shots, "provenance.png"), filepath.Join(shots, "no-token.png"))
}
