package consolidate

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// looksImperative is this test's own reading of SPEC §6, kept apart from the
// writer's rules so that it can catch them: a sentence that opens with a
// command verb (not used as a noun: "Use of", "Make in", "Check-ins"), speaks
// to the reader with an obligation, or carries an injection phrase.
func looksImperative(s string) bool {
	low := strings.ToLower(strings.TrimSpace(s))
	for _, p := range []string{"you should", "you must", "you need to", "you have to",
		"ignore previous instructions", "disregard the above", "system prompt"} {
		if strings.Contains(low, p) {
			return true
		}
	}
	f := strings.Fields(low)
	if len(f) == 0 {
		return false
	}
	first := strings.Trim(f[0], `"'“‘(`)
	second := ""
	if len(f) > 1 {
		second = f[1]
	}
	switch first {
	case "always", "never", "don't", "dont", "please", "remember", "ensure":
		return true
	case "do":
		return second == "not"
	case "make", "be":
		return second == "sure"
	}
	verbs := `use run avoid prefer check set install add remove delete try call keep stop start get put
fix update upgrade pin bump write open close create push pull commit merge rebase restart reset clean
enable disable configure export move copy rename wait skip ignore disregard verify switch change
replace apply deploy drop include exclude pass send execute follow`
	for _, v := range strings.Fields(verbs) {
		if first == v && second != "of" && second != "in" && second != "is" {
			return true
		}
	}
	return false
}

// TestLooksImperative checks the test's own checker against the shared
// conformance vectors, when they are there (../shared from the project root).
func TestLooksImperative(t *testing.T) {
	f, err := os.Open("../../../shared/conformance/imperative.jsonl")
	if err != nil {
		t.Skip("conformance vectors not found:", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var c struct {
			Text       string `json:"text"`
			Imperative bool   `json:"imperative"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if got := looksImperative(c.Text); got != c.Imperative {
			t.Errorf("looksImperative(%q) = %v, want %v", c.Text, got, c.Imperative)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no conformance cases read")
	}
}

// typicalEpisodes are events as agents really send them, including ones
// whose fields are themselves instructions.
var typicalEpisodes = []struct {
	name string
	e    Episode
	want string // exact sentence, when given
}{
	{"error with title and happened", Episode{Kind: "error", Title: "go test ./...", Happened: "undefined: foo.Bar after rebase"},
		"Running go test ./... fails: undefined: foo.Bar after rebase."},
	{"error with expected", Episode{Kind: "error", Title: "GET /admin/users", Expected: "403", Happened: "404"},
		"Running GET /admin/users returned 404 where 403 was expected."},
	{"error whose title is a noun", Episode{Kind: "error", Title: "npm install", Happened: "EACCES: permission denied, mkdir '/usr/lib/node_modules'"},
		"npm install fails: EACCES: permission denied, mkdir '/usr/lib/node_modules'."},
	{"error with a title only", Episode{Kind: "error", Title: "make lint"}, "Running make lint fails."},
	{"error without a title", Episode{Kind: "error", Happened: "Run go generate before go test", Expected: "tests to pass"},
		`An agent reported "Run go generate before go test" where tests to pass was expected.`},
	{"correction", Episode{Kind: "correction", Said: "Don't use tabs in YAML, you should use two spaces", AgentDid: "wrote config.yaml with tabs"},
		`The person corrected the agent with "Don't use tabs in YAML, the agent should use two spaces" after the agent's "wrote config.yaml with tabs".`},
	{"correction without agent_did", Episode{Kind: "correction", Said: "use pnpm here, not npm"},
		`The person corrected the agent with "use pnpm here, not npm".`},
	{"correction quoting", Episode{Kind: "correction", Said: `say "hello" first`},
		`The person corrected the agent with "say 'hello' first".`},
	{"environment", Episode{Kind: "environment", Happened: "Docker is not available on the CI machines"},
		"Docker is not available on the CI machines."},
	{"environment with title", Episode{Kind: "environment", Title: "staging database", Happened: "wiped every night at midnight", Expected: "seeded data to persist"},
		"staging database: wiped every night at midnight (expected: seeded data to persist)."},
	{"surprise that is a sentence", Episode{Kind: "surprise", Happened: "the staging database is wiped every night."},
		"The staging database is wiped every night."},
	{"note", Episode{Kind: "note", Text: "The integration tests expect TZ to be UTC"}, "The integration tests expect TZ to be UTC."},
	{"note that is an order", Episode{Kind: "note", Text: "Always run make clean before a release build"},
		`An agent reported "Always run make clean before a release build".`},
	{"note with make sure", Episode{Kind: "note", Text: "Make sure the database container is up before running tests"}, ""},
	{"note with please", Episode{Kind: "note", Text: "Please restart the dev server after changing the config"}, ""},
	{"note with never", Episode{Kind: "note", Text: "never push directly to main"}, ""},
	{"note with don't", Episode{Kind: "note", Text: "Don't call the payments sandbox from unit tests"}, ""},
	{"note addressing the reader", Episode{Kind: "note", Text: "You need to log in to the registry first"},
		"The agent needs to log in to the registry first."},
	{"note with you must", Episode{Kind: "note", Text: "to release you must set GOFLAGS=-mod=mod"}, ""},
	{"unknown kind falls back", Episode{Kind: "mystery", Text: "Set TZ=UTC when running the date tests"}, ""},
	{"two sentences in a field", Episode{Kind: "error", Title: "the build", Happened: "Build failed. Then the retry passed!"},
		"The build fails: Build failed; Then the retry passed."},
}

func TestDefaultWriter(t *testing.T) {
	ctx := context.Background()
	w := DefaultWriter{}
	for _, c := range typicalEpisodes {
		t.Run(c.name, func(t *testing.T) {
			cl := Cluster{Kind: lessonKind(c.e.Kind), Episodes: []Episode{c.e}}
			got, err := w.Write(ctx, cl)
			if err != nil {
				t.Fatal(err)
			}
			if c.want != "" && got != c.want {
				t.Errorf("Write:\n got %q\nwant %q", got, c.want)
			}
			checkSentence(t, got)
			again, _ := w.Write(ctx, cl)
			if again != got {
				t.Errorf("not deterministic: %q then %q", got, again)
			}
		})
	}
}

// checkSentence asserts what every written lesson must be.
func checkSentence(t *testing.T, s string) {
	t.Helper()
	if looksImperative(s) {
		t.Errorf("reads as an instruction: %q", s)
	}
	if !strings.HasSuffix(s, ".") {
		t.Errorf("does not end with a period: %q", s)
	}
	if n := utf8.RuneCountInString(s); n > MaxSentence {
		t.Errorf("%d characters, want at most %d", n, MaxSentence)
	}
	if n := countSentences(s); n != 1 {
		t.Errorf("%d sentences: %q", n, s)
	}
	if strings.Count(s, `"`)%2 != 0 {
		t.Errorf("unbalanced quotes: %q", s)
	}
	if strings.Contains(s, "  ") || strings.ContainsAny(s, "\n\t") {
		t.Errorf("white space not collapsed: %q", s)
	}
}

func TestDefaultWriterRedacts(t *testing.T) {
	secret := regexp.MustCompile(`/home/\S+|sk-[A-Za-z0-9]+`)
	calls := 0
	w := DefaultWriter{Redact: func(s string) string {
		calls++
		return secret.ReplaceAllString(s, "[redacted]")
	}}
	e := Episode{Kind: "error", Title: "deploy with key sk-abc123", Expected: "exit 0 in /home/ann/app",
		Happened: "config /home/ann/.env unreadable", Said: "x", AgentDid: "y", Text: "z"}
	got, err := w.Write(context.Background(), Cluster{Kind: "error", Episodes: []Episode{e}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "/home/") || strings.Contains(got, "sk-abc") {
		t.Fatalf("raw data survived: %q", got)
	}
	if want := "Running deploy with key [redacted] returned config [redacted] unreadable where exit 0 in [redacted] was expected."; got != want {
		t.Fatalf("Write:\n got %q\nwant %q", got, want)
	}
	if calls != 6 {
		t.Fatalf("Redact called %d times, want once per field (6)", calls)
	}
	// correction fields too
	got, _ = w.Write(context.Background(), Cluster{Kind: "correction", Episodes: []Episode{{Kind: "correction", Said: "the key sk-zzz is revoked", AgentDid: "read /home/bob/x"}}})
	if strings.Contains(got, "sk-zzz") || strings.Contains(got, "/home/bob") {
		t.Fatalf("raw data survived in a correction: %q", got)
	}
}

func TestDefaultWriterRepresentative(t *testing.T) {
	// The middle episode shares words with both others; each outer one
	// shares with the middle one only.
	eps := []Episode{
		{Kind: "error", Title: "yarn install", Happened: "hangs at Resolving packages"},
		{Kind: "error", Title: "yarn install", Happened: "hangs at Resolving packages behind the corporate proxy"},
		{Kind: "error", Title: "yarn", Happened: "stuck behind the corporate proxy"},
	}
	got, err := DefaultWriter{}.Write(context.Background(), Cluster{Kind: "error", Episodes: eps})
	if err != nil {
		t.Fatal(err)
	}
	if want := "yarn install hangs at Resolving packages behind the corporate proxy."; got != want {
		t.Fatalf("Write = %q, want %q", got, want)
	}
}

func TestDefaultWriterCaps(t *testing.T) {
	long := strings.Repeat("the cache layer rejects oversized entries ", 20)
	got, err := DefaultWriter{}.Write(context.Background(), Cluster{Kind: "surprise", Episodes: []Episode{{Kind: "surprise", Happened: long}}})
	if err != nil {
		t.Fatal(err)
	}
	checkSentence(t, got)
	if strings.HasSuffix(strings.TrimSuffix(got, "."), " ") || !strings.HasPrefix(long, strings.ToLower(got[:1])+strings.TrimSuffix(got[1:], ".")) {
		t.Fatalf("not cut on a word boundary: %q", got)
	}
	// one long word is cut inside it, still within the cap
	got, _ = DefaultWriter{}.Write(context.Background(), Cluster{Kind: "note", Episodes: []Episode{{Kind: "note", Text: strings.Repeat("x", 1000)}}})
	checkSentence(t, got)
	// an open quote cut by the cap is closed
	got, _ = DefaultWriter{}.Write(context.Background(), Cluster{Kind: "correction", Episodes: []Episode{{Kind: "correction", Said: strings.Repeat("stop doing that ", 40)}}})
	checkSentence(t, got)
}

func TestDefaultWriterErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := (DefaultWriter{}).Write(ctx, Cluster{Kind: "error"}); err == nil {
		t.Fatal("empty cluster accepted")
	}
	if _, err := (DefaultWriter{}).Write(ctx, Cluster{Kind: "error", Episodes: []Episode{{Kind: "error"}}}); err == nil {
		t.Fatal("episode without text accepted")
	}
	if _, err := (DefaultWriter{Redact: func(string) string { return " " }}).Write(ctx, Cluster{Kind: "note", Episodes: []Episode{{Kind: "note", Text: "x"}}}); err == nil {
		t.Fatal("a fully redacted episode gave a sentence")
	}
}

func TestDefaultWriterSkipsEmptyEpisodes(t *testing.T) {
	got, err := DefaultWriter{}.Write(context.Background(), Cluster{Kind: "error", Episodes: []Episode{
		{Kind: "error"}, {Kind: "error", Title: "cargo build", Happened: "linker cc not found"},
	}})
	if err != nil || got != "cargo build fails: linker cc not found." {
		t.Fatalf("Write = %q, %v", got, err)
	}
}

func TestDefaultWriterDoesNotRepeatTheTitle(t *testing.T) {
	c := Cluster{Kind: "error", Episodes: []Episode{{Kind: "error", Title: "npm ci",
		Happened: "npm ci fails with EUSAGE because the lock file is out of sync"}}}
	got, err := DefaultWriter{}.Write(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(strings.ToLower(got), "npm ci") != 1 {
		t.Fatalf("the title is repeated: %q", got)
	}
}

func TestDefaultWriterFailureVerbAfterTitle(t *testing.T) {
	c := Cluster{Kind: "error", Episodes: []Episode{{Kind: "error", Title: "make test", Happened: "fails with missing libssl"}}}
	got, err := DefaultWriter{}.Write(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(got, "fail") != 1 {
		t.Fatalf("the failure is said twice: %q", got)
	}
}
