package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/node"
	"github.com/remem/remem/protocol"
)

// TestLessonsLimit: `remem lessons` shows the first --limit lessons and
// says so on stderr when there may be more; --limit 0 and --all alone list
// every one; a limit below 0 is a usage error. (Before, there was no
// --limit and the list read and printed every candidate held.)
func TestLessonsLimit(t *testing.T) {
	home := newHome(t)
	m, err := node.Open(node.Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"The staging deploy fails when the release tag is missing",
		"The nightly backup job locks the billing database for an hour",
		"The search index is rebuilt from scratch after every schema change"} {
		if _, err := m.Publish(protocol.KindError, text); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	lessons := func(args ...string) (int, string, error) {
		app := newApp()
		var out, errOut bytes.Buffer
		app.Writer, app.ErrWriter = &out, &errOut
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := app.RunContext(ctx, append([]string{"remem", "--home", home, "lessons", "--json"}, args...))
		var views []node.LessonView
		if err == nil {
			if jerr := json.Unmarshal(out.Bytes(), &views); jerr != nil {
				t.Fatalf("lessons %v: %v\n%s", args, jerr, out.String())
			}
		}
		return len(views), errOut.String(), err
	}
	for _, c := range []struct {
		args []string
		want int
		note bool
	}{{nil, 3, false}, {[]string{"--limit", "2"}, 2, true}, {[]string{"--limit", "0"}, 3, false}, {[]string{"--all"}, 3, false}, {[]string{"--all", "--limit", "1"}, 1, true}} {
		n, stderr, err := lessons(c.args...)
		if err != nil || n != c.want || strings.Contains(stderr, "--limit 0 lists every one") != c.note {
			t.Errorf("lessons %v: %d lessons, stderr %q, %v; want %d, a note: %v", c.args, n, stderr, err, c.want, c.note)
		}
	}
	if _, _, err := lessons("--limit", "-1"); err == nil || !strings.Contains(err.Error(), "--limit -1") {
		t.Errorf("--limit -1 was taken: %v", err)
	}
}
