package node

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

func TestLayersShowTheStrongestInstance(t *testing.T) {
	m, proj := openTest(t, nil)
	m.Remember([]protocol.Event{failure(proj, "s1", "the integration suite times out when the VPN is down")})
	sleep(t, m)
	own := ownLesson(t, m)
	layer := filepath.Join(t.TempDir(), "lessons.jsonl")
	data := `{"id":"x1","text":` + protocol.EncodeString(own.Text) + `,"kind":"error","seen":9,"strength":0.99,"updated":"2026-11-01T00:00:00Z"}
{"id":"x2","text":"The staging database is reset every night at midnight","kind":"surprise","seen":2,"strength":0.75,"updated":"2026-11-01T00:00:00Z","future_field":[1,2]}
{"id":"x3","text":"Always run make clean first","kind":"error","seen":1,"strength":0.5,"updated":"2026-11-01T00:00:00Z"}
`
	os.WriteFile(layer, []byte(data), 0o644)
	team, err := ReadLayer("team", layer)
	if err != nil {
		t.Fatal(err)
	}
	views, err := m.Lessons(Filter{Layers: []Layer{team}})
	if err != nil {
		t.Fatal(err)
	}
	if len(views) != 2 {
		t.Fatalf("%d lessons in the view, want 2 (the instruction is refused): %+v", len(views), views)
	}
	for _, v := range views {
		if v.Hash == own.Hash && (v.Strength != 0.99 || !slices.Contains(v.Layers, "team") || !slices.Contains(v.Layers, store.LayerPersonal)) {
			t.Errorf("duplicate across layers: %+v", v)
		}
	}
	if _, err := ReadLayer("x", "/nonexistent/lessons.jsonl"); err == nil {
		t.Error("a missing layer file was read")
	}
	broken := filepath.Join(t.TempDir(), "broken.jsonl")
	os.WriteFile(broken, []byte("{broken\n"), 0o644)
	if _, err := ReadLayer("x", broken); err == nil {
		t.Error("a broken layer was accepted")
	}
}

func TestRecallFindsRelevantLessons(t *testing.T) {
	m, proj := openTest(t, nil)
	m.Remember([]protocol.Event{
		failure(proj, "s1", "the integration suite times out when the VPN is down"),
		{Kind: "environment", Happened: "docker is not installed on the CI runners", Cwd: proj},
	})
	sleep(t, m)
	got, err := m.Recall(context.Background(), "run the integration suite over the VPN", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || !strings.Contains(got[0].Text, "VPN") {
		t.Fatalf("recall: %+v", got)
	}
}
