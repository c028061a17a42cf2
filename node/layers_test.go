package node

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// layerLine is one lessons.jsonl line. extra members claim a state and
// provenance, which a layer may not bring.
func layerLine(kind, text string, strength float64) string {
	line, _ := json.Marshal(map[string]any{"id": "x", "kind": kind, "text": text, "seen": 40, "strength": strength,
		"updated": "2026-11-01T00:00:00Z", "state": "common", "origins": []string{"00000000000000aa", "00000000000000bb"}})
	return string(line)
}

// testLayer parses lines as the layer name, as ReadLayer would read them.
func testLayer(t *testing.T, name string, lines ...string) Layer {
	t.Helper()
	l, err := ParseLayer(name, []byte(strings.Join(lines, "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func viewOf(t *testing.T, views []LessonView, hash string) (LessonView, bool) {
	t.Helper()
	var found []LessonView
	for _, v := range views {
		if v.Hash == hash {
			found = append(found, v)
		}
	}
	if len(found) > 1 {
		t.Fatalf("hash %s shown %d times: %+v", hash, len(found), found)
	}
	if len(found) == 0 {
		return LessonView{}, false
	}
	return found[0], true
}

func lessons(t *testing.T, m *Memory, f Filter) []LessonView {
	t.Helper()
	views, err := m.Lessons(f)
	if err != nil {
		t.Fatal(err)
	}
	return views
}

func receiveRecords(t *testing.T, m *Memory, scope string, recs ...*protocol.Record) {
	t.Helper()
	var lines [][]byte
	for _, r := range recs {
		lines = append(lines, r.Raw)
	}
	rep, err := m.Receive(context.Background(), scope, protocol.SplitLines(testutil.JoinLines(lines...)))
	if err != nil || len(rep.Refused) > 0 {
		t.Fatalf("receive: %+v %v", rep, err)
	}
}

// revokedSetup: b holds a's lesson and a's revocation of it, and the
// revocation only of another origin's lesson. Both are revoked in b.
func revokedSetup(t *testing.T) (b *Memory, revoked, revokedOnly LessonView) {
	clk := newClock()
	a, projA := openTest(t, clk)
	b, _ = openTest(t, clk)
	a.Remember([]protocol.Event{failure(projA, "s1", "the integration suite times out when the VPN is down")})
	sleep(t, a)
	revoked = ownLesson(t, a)
	transfer(t, a, b, "team:x")
	clk.Add(time.Minute)
	if _, err := a.Revoke(revoked.Hash, "fixed"); err != nil {
		t.Fatal(err)
	}
	transfer(t, a, b, "team:x")
	other := testutil.Identity(t, "layers-other")
	gone, err := protocol.SignLesson(other, protocol.LessonDraft{Kind: "error", Text: "The nightly backup job skips the audit tables.",
		Seen: 1, Strength: 0.5, Updated: clk.Now().Add(-time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	rev, err := protocol.SignRevocation(other, gone.Hash, clk.Now(), "fixed")
	if err != nil {
		t.Fatal(err)
	}
	receiveRecords(t, b, "team:x", rev)
	return b, revoked, LessonView{Hash: gone.Hash, Kind: gone.Kind, Text: gone.Text}
}

// A layer can never bring back a revoked lesson: not one whose lesson is
// held, nor one of which only the revocation is held.
func TestLayerNeverBringsBackARevokedLesson(t *testing.T) {
	b, revoked, revokedOnly := revokedSetup(t)
	team := testLayer(t, "team", layerLine(revoked.Kind, revoked.Text, 0.99), layerLine(revokedOnly.Kind, revokedOnly.Text, 0.99))
	for _, hash := range []string{revoked.Hash, revokedOnly.Hash} {
		if v, ok := viewOf(t, lessons(t, b, Filter{Layers: []Layer{team}}), hash); ok {
			t.Errorf("a layer brought a revoked lesson back into the active view: %+v", v)
		}
		v, ok := viewOf(t, lessons(t, b, Filter{All: true, Layers: []Layer{team}}), hash)
		if !ok || v.State != protocol.StateRevoked || !slices.Contains(v.Layers, "team") {
			t.Errorf("--all with the layer: %+v (found %v), want revoked and in layer team", v, ok)
		}
		if v, ok := viewOf(t, lessons(t, b, Filter{State: protocol.StateCandidate, Layers: []Layer{team}}), hash); ok {
			t.Errorf("the revoked lesson shows as a candidate: %+v", v)
		}
	}
	got, err := b.Recall(context.Background(), "integration suite VPN timeout", 10, team)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := viewOf(t, got, revoked.Hash); ok {
		t.Errorf("recall with the layer found the revoked lesson: %+v", v)
	}
}

// A common lesson keeps its state, author, origins and confirmers when a
// layer holds the same hash with another strength.
func TestLayerKeepsStateAndConfirmers(t *testing.T) {
	clk := newClock()
	m, _ := openTest(t, clk)
	author := testutil.Identity(t, "layers-author")
	at := clk.Now().Add(-time.Minute)
	text := "The payments sandbox rejects cards issued in the last hour."
	rec, err := protocol.SignLesson(author, protocol.LessonDraft{Kind: "error", Text: text, Seen: 2, Strength: 0.6, Updated: at})
	if err != nil {
		t.Fatal(err)
	}
	recs := []*protocol.Record{rec}
	for _, who := range []string{"c1", "c2", "c3"} {
		conf, err := protocol.SignConfirmation(testutil.Identity(t, "layers-confirmer-"+who), rec.Hash, at)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, conf)
	}
	receiveRecords(t, m, "team:x", recs...)
	before, ok := viewOf(t, lessons(t, m, Filter{}), rec.Hash)
	if !ok || before.State != protocol.StateCommon || len(before.Confirmers) != 3 {
		t.Fatalf("setup: %+v, want common with 3 confirmers", before)
	}
	for _, strength := range []float64{0.99, 0.01} {
		variant := strings.ToUpper(text[:1]) + strings.ToLower(text[1:]) // same hash, another instance
		team := testLayer(t, "team", layerLine("error", variant, strength))
		after, ok := viewOf(t, lessons(t, m, Filter{Layers: []Layer{team}}), rec.Hash)
		if !ok {
			t.Fatalf("strength %v: the lesson left the view", strength)
		}
		if after.State != before.State || after.StateReason != before.StateReason || after.Author != before.Author ||
			!slices.Equal(after.Confirmers, before.Confirmers) || !slices.Equal(after.Origins, before.Origins) ||
			!slices.Equal(after.Scopes, before.Scopes) || after.Seen != before.Seen {
			t.Errorf("strength %v: the layer changed state or provenance:\nbefore %+v\nafter  %+v", strength, before, after)
		}
		if want := append(slices.Clone(before.Layers), "team"); !slices.Equal(after.Layers, uniqSorted(want)) {
			t.Errorf("strength %v: layers %v, want %v", strength, after.Layers, uniqSorted(want))
		}
		if strength > before.Strength && (after.Strength != strength || after.Text != variant) {
			t.Errorf("the stronger layer instance is not shown: %+v", after)
		}
		if strength < before.Strength && (after.Strength != before.Strength || after.Text != before.Text) {
			t.Errorf("a weaker layer instance replaced the held one: %+v", after)
		}
	}
}

// For a hash in several layers the strongest instance is shown with every
// layer it is in; at equal strength the lower layer's instance stays. A
// hash only a layer holds is a candidate without provenance.
func TestLayersStrongestInstanceWins(t *testing.T) {
	m, proj := openTest(t, nil)
	m.Remember([]protocol.Event{failure(proj, "s1", "the integration suite times out when the VPN is down")})
	sleep(t, m)
	own := ownLesson(t, m)
	only := "The staging database is reset every night at midnight."
	upper, lower := strings.ToUpper(own.Text), strings.ToLower(own.Text)
	team := testLayer(t, "team", layerLine(own.Kind, own.Text, 0.7), layerLine("surprise", only, 0.4))
	ops := testLayer(t, "ops", layerLine(own.Kind, upper, 0.9), layerLine("surprise", only, 0.8))
	low := testLayer(t, "low", layerLine(own.Kind, lower, 0.9), layerLine("surprise", strings.ToLower(only), 0.1))
	views := lessons(t, m, Filter{Layers: []Layer{team, ops, low}})
	v, ok := viewOf(t, views, own.Hash)
	if !ok || v.Strength != 0.9 || v.Text != upper || !v.Own || v.State != own.State {
		t.Errorf("own lesson: %+v, want the ops instance (0.9, upper case) with its own state", v)
	}
	if want := uniqSorted(append(slices.Clone(own.Layers), "team", "ops", "low")); !slices.Equal(v.Layers, want) {
		t.Errorf("own lesson layers %v, want %v", v.Layers, want)
	}
	onlyHash := protocol.LessonHash("surprise", only)
	l, ok := viewOf(t, views, onlyHash)
	if !ok || l.Strength != 0.8 || l.Text != only || l.State != protocol.StateCandidate || len(l.Origins) != 0 ||
		len(l.Confirmers) != 0 || l.Author != "" || l.Own || l.Seen != 0 || !slices.Equal(l.Layers, []string{"low", "ops", "team"}) ||
		!strings.Contains(l.StateReason, "layer") {
		t.Errorf("layer-only lesson: %+v", l)
	}
	if len(views) != 2 {
		t.Errorf("%d lessons, want 2: %+v", len(views), views)
	}
	// The strongest first.
	if views[0].Hash != own.Hash {
		t.Errorf("not sorted by strength: %+v", views)
	}
}

func TestParseLayer(t *testing.T) {
	good := layerLine("error", "go vet reports a copied lock in the cache package", 1.5)
	l, err := ParseLayer("team", []byte(good+"\n"+layerLine("error", "Always run make clean first", 0.5)+"\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Lessons) != 1 || l.Lessons[0].Strength != 1 || l.Name != "team" {
		t.Errorf("layer %+v: want the observation only, its strength within [0, 1]", l)
	}
	for name, data := range map[string]string{
		"broken":  "{broken\n",
		"no kind": `{"text":"go vet reports a copied lock"}` + "\n",
	} {
		if _, err := ParseLayer("team", []byte(data)); err == nil || !strings.Contains(err.Error(), "team") {
			t.Errorf("%s: %v, want an error naming the layer", name, err)
		}
	}
	for _, name := range []string{"", "a b", "personal", "common", "domain", "a=b", strings.Repeat("x", 65)} {
		if _, err := ParseLayer(name, []byte(good)); err == nil {
			t.Errorf("layer name %q accepted", name)
		}
	}
	for spec, ok := range map[string]bool{"team=/x/l.jsonl": true, "team=l.jsonl": true, "team": false, "=x": false, "team=": false, "a b=/x": false} {
		lf, err := ParseLayerFile(spec)
		if (err == nil) != ok {
			t.Errorf("ParseLayerFile(%q) = %+v, %v", spec, lf, err)
		}
	}
}

// writeLayer writes lines as a lessons.jsonl at path, its mtime moved on so
// that a rewrite within the same second is seen as a change.
func writeLayer(t *testing.T, path string, lines ...string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err == nil {
		future := fi.ModTime().Add(time.Duration(len(lines)+1) * time.Second)
		os.Chtimes(path, future, future)
	}
}

// The layers named in the configuration reach every reader: the lesson
// view, recall, show and the local API (the web page reads GET /lessons);
// a changed file is read again, a broken one is left out.
func TestConfiguredLayersReachEveryReader(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "team.jsonl")
	text := "The staging database is reset every night at midnight."
	hash := protocol.LessonHash("surprise", text)
	writeLayer(t, path, layerLine("surprise", text, 0.75))
	m, err := Open(Config{Home: t.TempDir(), Create: true, Layers: []LayerFile{{Name: "team", Path: path}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	check := func(what string, views []LessonView, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if v, ok := viewOf(t, views, hash); !ok || !slices.Equal(v.Layers, []string{"team"}) || v.State != protocol.StateCandidate {
			t.Errorf("%s does not show the layer's lesson: %+v", what, views)
		}
	}
	views, err := m.Lessons(Filter{})
	check("Lessons", views, err)
	views, err = m.Recall(context.Background(), "is the staging database reset at night", 5)
	check("Recall", views, err)
	p, err := m.Show(hash)
	check("Show", []LessonView{p.LessonView}, err)
	if p.Records == nil || len(p.Records) != 0 {
		t.Errorf("show of a layer-only lesson: records %v, want []", p.Records)
	}
	srv := httptest.NewServer(NewAPI(m, APIOptions{}))
	defer srv.Close()
	for _, path := range []string{"/lessons", "/lessons?all=1", "/lessons?q=staging+database+reset"} {
		var views []LessonView
		err := getJSON(m.APIToken(), srv.URL+path, &views)
		check("GET "+path, views, err)
	}
	var pv Provenance
	if err := getJSON(m.APIToken(), srv.URL+"/lessons/"+hash, &pv); err != nil || pv.Hash != hash {
		t.Errorf("GET /lessons/<hash> of a layer-only lesson: %+v %v", pv, err)
	}

	// A changed file is read again.
	text2 := "The staging database keeps no data over the weekend."
	writeLayer(t, path, layerLine("surprise", text2, 0.5), layerLine("surprise", "Another observation about the staging queue.", 0.5))
	views = lessons(t, m, Filter{})
	if _, ok := viewOf(t, views, hash); ok {
		t.Errorf("the old content is still shown after the file changed")
	}
	if _, ok := viewOf(t, views, protocol.LessonHash("surprise", text2)); !ok {
		t.Errorf("the new content is not shown: %+v", views)
	}
	// A broken or missing file is left out; the view still answers.
	writeLayer(t, path, "{broken")
	if views := lessons(t, m, Filter{}); len(views) != 0 {
		t.Errorf("a broken layer file: %+v", views)
	}
	os.Remove(path)
	if views := lessons(t, m, Filter{}); len(views) != 0 {
		t.Errorf("a missing layer file: %+v", views)
	}
	writeLayer(t, path, layerLine("surprise", text, 0.75))
	check("Lessons after the file came back", lessons(t, m, Filter{}), nil)
}

// getJSON GETs url with the API token and decodes its JSON into v.
func getJSON(token, url string, v any) error {
	resp, err := testutil.BearerClient(token).Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return &httpError{resp.StatusCode, string(data)}
	}
	return json.Unmarshal(data, v)
}

type httpError struct {
	code int
	body string
}

func (e *httpError) Error() string { return http.StatusText(e.code) + ": " + e.body }

// A layer the CLI names while a node runs is composed by the CLI on top of
// what the node's API answers, with the same result: a revoked lesson stays
// revoked, a layer-only lesson is recalled.
func TestClientComposesLayersOverTheAPI(t *testing.T) {
	b, revoked, revokedOnly := revokedSetup(t)
	srv := httptest.NewServer(NewAPI(b, APIOptions{}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, Token: b.APIToken()}
	ctx := context.Background()
	only := "The integration suite needs the VPN to reach the staging database."
	team := testLayer(t, "team", layerLine(revoked.Kind, revoked.Text, 0.99), layerLine(revokedOnly.Kind, revokedOnly.Text, 0.99),
		layerLine("surprise", only, 0.6))
	for _, f := range []Filter{{Layers: []Layer{team}}, {All: true, Layers: []Layer{team}}, {State: protocol.StateRevoked, Layers: []Layer{team}}} {
		want := lessons(t, b, f)
		got, err := c.Lessons(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("filter %+v: the client composed %+v, the memory %+v", f, got, want)
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.Hash != w.Hash || g.State != w.State || g.Strength != w.Strength || !slices.Equal(g.Layers, w.Layers) {
				t.Errorf("filter %+v, lesson %d: client %+v, memory %+v", f, i, g, w)
			}
		}
	}
	got, err := c.Recall(ctx, "does the integration suite need the VPN", 5, team)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := viewOf(t, got, protocol.LessonHash("surprise", only)); !ok {
		t.Errorf("recall through the client does not find the layer's lesson: %+v", got)
	}
	if _, ok := viewOf(t, got, revoked.Hash); ok {
		t.Errorf("recall through the client found the revoked lesson: %+v", got)
	}
}

// The local API takes no layer in any form: layers are named in the
// configuration, never in a request (SPEC §9).
func TestAPITakesNoLayers(t *testing.T) {
	m, _ := openTest(t, nil)
	srv := httptest.NewServer(NewAPI(m, APIOptions{}))
	defer srv.Close()
	line, _ := json.Marshal(layerLine("surprise", "The staging database is reset every night at midnight.", 0.75) + "\n")
	resp, err := http.Post(srv.URL+"/lessons/layered", "application/json", strings.NewReader(`{"layers":[{"name":"team","lines":`+string(line)+`}]}`))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if (resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed) || strings.Contains(string(data), "staging") {
		t.Errorf("POST /lessons/layered: %d %s, want no such endpoint (404 or 405)", resp.StatusCode, data)
	}
}
