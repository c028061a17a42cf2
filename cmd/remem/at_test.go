package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRememberAt: `remem remember --at` refuses a time that is not RFC 3339
// or is more than ten minutes ahead of the clock ($REMEM_NOW here) with a
// usage error naming the flag, and an accepted one is the event's time:
// reported after a lesson arrived, but dated before, it does not confirm
// the lesson (the memory met it before).
func TestRememberAt(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Second)
	at := func(minute int) string { return start.Add(time.Duration(minute) * time.Minute).Format(time.RFC3339) }
	a, b := newHome(t), newHome(t)
	t.Setenv(nowEnv, at(0))
	note := []string{"remember", "--kind", "note", "--text", "the docs site builds in four minutes"}
	for _, c := range []struct{ at, want string }{
		{"yesterday", "RFC 3339"},
		{"2026-05-01T10:00:00", "RFC 3339"},
		{at(11), "ahead"},
	} {
		out, errOut, code := run(t, a, nil, append(note, "--at", c.at)...)
		if code != 2 || !strings.Contains(errOut, "--at") || !strings.Contains(errOut, c.want) {
			t.Errorf("--at %s: exit %d\n%s%s", c.at, code, out, errOut)
		}
	}
	must(t, a, nil, append(note, "--at", at(9))...) // within the skew
	// remem ingest: the line is refused with its number and reason
	lines := `{"kind":"note","text":"CI caches expire after a week","at":"` + at(11) + `"}
{"kind":"note","text":"the linter is slow on big files","at":"yesterday"}
{"kind":"note","text":"the registry rate-limits anonymous pulls","at":"` + at(-5) + `"}
`
	out, errOut, code := run(t, a, []byte(lines), "ingest", "-")
	if code != 0 || !strings.Contains(out, "taken 1, duplicates 0, rejected 2") ||
		!strings.Contains(errOut, ":1: \"at\" ") || !strings.Contains(errOut, "ahead") || !strings.Contains(errOut, ":2: ") {
		t.Errorf("ingest: exit %d\n%s%s", code, out, errOut)
	}

	projA, projB := filepath.Join(a, "proj"), filepath.Join(b, "proj")
	os.MkdirAll(projA, 0o755)
	os.MkdirAll(projB, 0o755)
	must(t, a, nil, "share", "--project", projA)
	must(t, b, nil, "share", "--project", projB)
	must(t, a, nil, "remember", "--kind", "error", "--title", "go test", "--cwd", projA,
		"--happened", "undefined: mocks.NewClient on a clean checkout until go generate has run")
	must(t, a, nil, "sleep")
	t.Setenv(nowEnv, at(2))
	must(t, b, []byte(must(t, a, nil, "export")), "import", "-")
	t.Setenv(nowEnv, at(60))
	must(t, b, nil, "remember", "--kind", "error", "--title", "go test", "--cwd", projB, "--at", "2000-01-01T00:00:00+01:00",
		"--happened", "undefined: mocks.NewClient on a clean checkout, go generate not run yet")
	var rep struct {
		Confirmations int `json:"confirmations"`
		MetBefore     int `json:"met_before"`
	}
	if out := must(t, b, nil, "sleep", "--json"); json.Unmarshal([]byte(out), &rep) != nil || rep.MetBefore != 1 || rep.Confirmations != 0 {
		t.Fatalf("an event dated before the lesson arrived: %s", out)
	}
	if out := must(t, b, nil, "export"); strings.Contains(out, `"confirm"`) {
		t.Fatalf("B confirmed a lesson it had met before:\n%s", out)
	}
}
