package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/folder"
	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

// TestFreshKeysChangeNoState (SPEC §8, admitted verifiers), through the
// binary: three, thirty and three thousand keys made a moment ago each
// confirm a lesson that came by a shared folder and this memory's own
// lesson, then revoke both. `remem folder sync` takes every record, and
// `remem lessons` still shows both as candidates at the strength they had,
// with every stranger's confirmation held; three of them trusted (`remem
// trust add`) revoke the own lesson by quorum, as the seed counts.
func TestFreshKeysChangeNoState(t *testing.T) {
	for _, n := range []int{3, 30, 3000} {
		t.Run(fmt.Sprintf("%d keys", n), func(t *testing.T) {
			if n == 3000 && testing.Short() {
				t.Skip("3,000 keys in -short")
			}
			home, dir := newHome(t), t.TempDir()
			own := strings.TrimSpace(strings.TrimPrefix(must(t, home, nil, "publish", "--kind", "error", "The release build fails when the changelog lacks the version"), "published "))
			at := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
			author, err := protocol.GenerateIdentity()
			if err != nil {
				t.Fatal(err)
			}
			lesson, err := protocol.SignLesson(author, protocol.LessonDraft{Kind: protocol.KindError, Text: "The mirror drops uploads over two gigabytes", Seen: 1, Strength: 0.5, Updated: at})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := folder.Write(dir, author.Origin(), [][]byte{lesson.Raw}); err != nil {
				t.Fatal(err)
			}
			keys := make([]protocol.Identity, n)
			for i := range keys {
				if keys[i], err = protocol.GenerateIdentity(); err != nil {
					t.Fatal(err)
				}
				var lines [][]byte
				for _, h := range []string{lesson.Hash, own} {
					c, err := protocol.SignConfirmation(keys[i], h, at)
					if err != nil {
						t.Fatal(err)
					}
					r, err := protocol.SignRevocation(keys[i], h, at.Add(time.Second), "")
					if err != nil {
						t.Fatal(err)
					}
					lines = append(lines, c.Raw, r.Raw)
				}
				if _, err := folder.Write(dir, keys[i].Origin(), lines); err != nil {
					t.Fatal(err)
				}
			}
			must(t, home, nil, "folder", "sync", dir)
			views := lessonViews(t, home)
			for _, h := range []string{lesson.Hash, own} {
				v, ok := views[h]
				if !ok || v.State != protocol.StateCandidate || len(v.Confirmers) != n {
					t.Fatalf("%s after %d strangers confirmed and revoked it: %+v", h, n, v)
				}
			}
			if s := views[lesson.Hash].Strength; s > 0.5 {
				t.Errorf("the received lesson rose to %.3f on strangers' word", s)
			}
			// Three of them admitted: their revocations are a quorum.
			for _, k := range keys[:3] {
				must(t, home, nil, "trust", "add", k.Origin())
			}
			if v := lessonViews(t, home)[own]; v.State != protocol.StateRevoked {
				t.Errorf("three trusted confirmers revoked the own lesson, and it is %s (%s)", v.State, v.StateReason)
			}
		})
	}
}

// lessonViews are `remem lessons --all --json` by hash.
func lessonViews(t *testing.T, home string) map[string]node.LessonView {
	t.Helper()
	var views []node.LessonView
	if err := json.Unmarshal([]byte(must(t, home, nil, "lessons", "--all", "--json")), &views); err != nil {
		t.Fatal(err)
	}
	out := map[string]node.LessonView{}
	for _, v := range views {
		out[v.Hash] = v
	}
	return out
}
