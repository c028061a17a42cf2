package node_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/internal/forge"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

// TestSeenBeyondInt64IsHeld: a received lesson whose seen is past int64
// (taken, as a Python verifier takes it; README) is stored, read back after
// a restart, shown with its line byte for byte, survives a sleep and the
// lessons file, and never reaches arithmetic: the memory's own view counts
// its own seen (0 for a candidate) and starts it at the candidate strength.
func TestSeenBeyondInt64IsHeld(t *testing.T) {
	home := t.TempDir()
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC) // fixed: no decay
	open := func() *node.Memory {
		m, err := node.Open(node.Config{Home: home, Create: true, Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := open()
	other := testutil.Identity(t, "seen beyond int64")
	texts := map[string]string{ // seen → text
		"9223372036854775808":             "the release job times out when the artifact cache is cold",
		"1000000000000000000000000000000": "the integration suite fails when the VPN is down",
	}
	var lines []string
	hashes := map[string]string{} // hash → line
	for seen, text := range texts {
		l := string(forge.Sign(other, map[string]string{
			"v": "1", "hash": protocol.EncodeString(protocol.LessonHash(protocol.KindError, text)),
			"origin": protocol.EncodeString(other.Origin()), "key": protocol.EncodeString(other.Key()),
			"kind": protocol.EncodeString(protocol.KindError), "text": protocol.EncodeString(text),
			"seen": seen, "strength": "0.5", "updated": protocol.EncodeString(protocol.FormatTime(now.Add(-time.Hour))),
		}))
		lines = append(lines, l)
		hashes[protocol.LessonHash(protocol.KindError, text)] = l
	}
	rep, err := m.Import(context.Background(), "import", []byte(strings.Join(lines, "\n")+"\n"))
	if err != nil || rep.Accepted != 2 {
		t.Fatalf("import: %+v, %v", rep, err)
	}
	if _, err := m.Sleep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = open() // the store decodes the lines again
	defer func() { _ = m.Close() }()
	views, err := m.Lessons(node.Filter{All: true})
	if err != nil || len(views) != 2 {
		t.Fatalf("lessons: %d, %v", len(views), err)
	}
	for _, v := range views {
		if v.Seen != 0 || v.Strength != protocol.CandidateStrength || hashes[v.Hash] == "" {
			t.Errorf("view %+v: want a candidate of its own seen 0 at strength %v", v, protocol.CandidateStrength)
		}
		p, err := m.Show(v.Hash)
		if err != nil || len(p.Records) != 1 || p.Records[0].Line != hashes[v.Hash] {
			t.Fatalf("show %s: %+v, %v", v.Hash, p.Records, err)
		}
		if _, err := json.Marshal(p); err != nil {
			t.Fatal(err)
		}
	}
	file, err := os.ReadFile(filepath.Join(home, node.LessonsFile))
	if err != nil {
		t.Fatal(err)
	}
	for h := range hashes {
		if !strings.Contains(string(file), h) {
			t.Errorf("%s does not hold %s", node.LessonsFile, h)
		}
	}
}
