package consolidate

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/remem/remem/protocol"
)

func TestOffer(t *testing.T) {
	for _, c := range []struct {
		in, want string // want "" when the text holds no offer
	}{
		{"Shall I delete the lock file and rerun?", "delete the lock file and rerun"},
		{"Should I go ahead and tag the release?", "tag the release"},
		{"I can delete the stale branches for you.", "delete the stale branches"},
		{"I could also downgrade the compiler.", "downgrade the compiler"},
		{"Want me to open a pull request for this", "open a pull request for this"},
		{"Do you want me to squash these commits before pushing?", "squash these commits before pushing"},
		{"Let me clear the npm cache and try again.", "clear the npm cache and try again"},
		{"I'll go ahead and delete the generated files.", "delete the generated files"},
		{"I’m going to disable the flaky test for now.", "disable the flaky test"},
		{"I will restart the database container now.", "restart the database container"},
		{"How about I move the config into environment variables?", "move the config into environment variables"},
		{"Would you like me to write unit tests for the parser?", "write unit tests for the parser"},
		{"Would it help if I regenerated the lock file?", "regenerate the lock file"},
		{"If you want, I can pin the dependency to 2.3.1.", "pin the dependency to 2.3.1"},
		{"The build is failing on lint. Shall I fix the lint errors?", "fix the lint errors"},
		{"The build is failing on lint; Shall I fix the lint errors", "fix the lint errors"}, // as oneSentence leaves it
		{"Shall I delete the branch, or would you rather keep it?", "delete the branch"},
		{"I'll add a retry, and I can also update the docs.", "add a retry and update the docs"},
		{"The agent offered to reset the database.", "reset the database"},
		{"Shall I proceed?", "proceed"},
		// not offers
		{"I deleted the lock file.", ""},
		{"Deleted the lock file and reran npm install.", ""},
		{"Did the build pass?", ""},
		{"What should I name the new package?", ""},
		{"I can't reproduce it locally.", ""},
		{"I could not install the package.", ""},
		{"I can see the stack trace now.", ""},
		{"I will need your approval for this.", ""},
		{"Let me know if that works.", ""},
		{"I'm going through the test output.", ""},
		{"I was going to delete the cache but left it.", ""},
		{"I won't touch the generated files.", ""},
		{"I'm not going to change the schema.", ""},
		{"You could try clearing the cache.", ""},
		{"If I can reproduce it, the fix is easy.", ""},
		{"Should I be worried about the warning?", ""},
		{"Shall I?", ""},
		{"", ""},
	} {
		got, ok := Offer(c.in)
		if ok != (c.want != "") || got != c.want {
			t.Errorf("Offer(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
}

// An offerCase is one labelled agent_did of testdata/offers_*.jsonl.
type offerCase struct {
	Text    string `json:"text"`
	IsOffer bool   `json:"is_offer"`
	Action  string `json:"action"`
}

func readOfferCases(t *testing.T, path string) []offerCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cs []offerCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		var c offerCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		if c.IsOffer == (c.Action == "") {
			t.Fatalf("%s:%d: an offer needs an action and only an offer has one", path, n)
		}
		cs = append(cs, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cs
}

// offerScore is how Offer fares on a labelled set: precision and recall of
// "is an offer", and the share of the true offers found whose action is the
// labelled one (case and white space aside).
type offerScore struct {
	n, tp, fp, fn, actionOK int
	misses                  []string
}

func (s offerScore) precision() float64 { return share(s.tp, s.tp+s.fp) }
func (s offerScore) recall() float64    { return share(s.tp, s.tp+s.fn) }
func (s offerScore) actions() float64   { return share(s.actionOK, s.tp) }

func share(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func scoreOffers(cs []offerCase) offerScore {
	norm := func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
	s := offerScore{n: len(cs)}
	for _, c := range cs {
		got, ok := Offer(c.Text)
		switch {
		case ok && c.IsOffer:
			s.tp++
			if norm(got) == norm(c.Action) {
				s.actionOK++
			} else {
				s.misses = append(s.misses, "action  "+c.Text+" → "+got+" (want "+c.Action+")")
			}
		case ok:
			s.fp++
			s.misses = append(s.misses, "false + "+c.Text+" → "+got)
		case c.IsOffer:
			s.fn++
			s.misses = append(s.misses, "false - "+c.Text)
		}
	}
	return s
}

// TestOfferCorpus measures Offer on two labelled sets. The tuned set
// (offers_tuned.jsonl) was written alongside the rules and gates the test;
// the blind set (offers_blind.jsonl) was written and committed before the
// recogniser existed and is never edited to fit it: its numbers are logged
// (go test -run OfferCorpus -v), not gated, as an honest estimate of how
// the rules do on phrasings they were not tuned to. The adversarial set
// (offers_adversarial.jsonl) was written after the rules, in other styles
// (terse logs, third person, lowercase chat, hedges), to find their limits;
// it is logged, not gated. Their first measurements (commit d86fd4b), before
// any rule was changed after seeing them: blind P 1.000 R 1.000, actions
// 34/35; adversarial P 1.000 R 0.724, actions 18/21. The misses then led to
// general fixes (condition tails such as "if you'd like", a dash ends the
// action, "offering to", "proposed deleting"), so since then neither set is
// blind any more; both stay as regression sets. The same author wrote all
// three sets, so even the first blind numbers are likely optimistic.
func TestOfferCorpus(t *testing.T) {
	tuned := scoreOffers(readOfferCases(t, "testdata/offers_tuned.jsonl"))
	blind := scoreOffers(readOfferCases(t, "testdata/offers_blind.jsonl"))
	hard := scoreOffers(readOfferCases(t, "testdata/offers_adversarial.jsonl"))
	for _, r := range []struct {
		name string
		s    offerScore
	}{{"tuned", tuned}, {"blind", blind}, {"adversarial", hard}} {
		t.Logf("%s set: %d cases, precision %.3f (%d/%d), recall %.3f (%d/%d), action exact %.3f (%d/%d)",
			r.name, r.s.n, r.s.precision(), r.s.tp, r.s.tp+r.s.fp, r.s.recall(), r.s.tp, r.s.tp+r.s.fn,
			r.s.actions(), r.s.actionOK, r.s.tp)
		for _, m := range r.s.misses {
			t.Logf("  %s: %s", r.name, m)
		}
	}
	if tuned.n < 120 || blind.n < 60 {
		t.Fatalf("the sets are too small: %d tuned, %d blind", tuned.n, blind.n)
	}
	if tuned.precision() < 0.95 || tuned.recall() < 0.95 || tuned.actions() < 0.9 {
		t.Errorf("tuned set below the bar (precision and recall 0.95, actions 0.9)")
	}
}

func TestVerbBase(t *testing.T) {
	for past, want := range map[string]string{"regenerated": "regenerate", "added": "add", "dropped": "drop",
		"tried": "try", "ran": "run", "deleted": "delete", "pushed": "push", "reverted": "revert",
		"edited": "edit", "opened": "open", "merged": "merge", "installed": "install", "moved": "move",
		"renamed": "rename", "disabled": "disable", "parsed": "parse", "filtered": "filter", "fixed": "fix",
		"configured": "configure", "decided": "decide", "committed": "commit", "passed": "pass"} {
		if got := pastToBase(past); got != want {
			t.Errorf("pastToBase(%q) = %q, want %q", past, got, want)
		}
	}
	for ger, want := range map[string]string{"deleting": "delete", "running": "run", "fixing": "fix",
		"adding": "add", "regenerating": "regenerate", "trying": "try", "copying": "copy", "using": "use",
		"pushing": "push", "merging": "merge", "opening": "open", "stopping": "stop", "reverting": "revert"} {
		if got := gerundToBase(ger); got != want {
			t.Errorf("gerundToBase(%q) = %q, want %q", ger, got, want)
		}
	}
}

// TestOfferLessonsPassChecks writes a correction lesson for every agent_did
// of the labelled sets, against several kinds of person's words, and runs
// every sentence through the write-time checks of a lesson
// (protocol.CheckLessonText: observation and raw data). An offer is told
// as one ("The agent offered to ..."), unless its sentence would not pass.
func TestOfferLessonsPassChecks(t *testing.T) {
	saids := []string{"no", "the lock file is generated by CI", "Don't touch the CI config",
		"use pnpm here, not npm", "we never force-push shared branches", "Stop."}
	ctx := context.Background()
	told, offers := 0, 0
	for _, set := range []string{"tuned", "blind", "adversarial"} {
		for _, c := range readOfferCases(t, "testdata/offers_"+set+".jsonl") {
			_, isOffer := Offer(c.Text)
			for _, said := range saids {
				e := Episode{Kind: "correction", Said: said, AgentDid: c.Text}
				got, err := DefaultWriter{}.Write(ctx, Cluster{Kind: "correction", Episodes: []Episode{e}})
				if err != nil {
					if isOffer { // only an offer is sure to give a lesson
						t.Errorf("%q / %q: %v", said, c.Text, err)
					}
					continue
				}
				checkSentence(t, got)
				if err := protocol.CheckLessonText(got); err != nil {
					t.Errorf("%q / %q → %q: %v", said, c.Text, got, err)
				}
				if isOffer {
					offers++
					if strings.HasPrefix(got, "The agent offered to ") {
						told++
					} else {
						t.Logf("offer not told: %q / %q → %q", said, c.Text, got)
					}
				} else if strings.Contains(got, "offered") {
					t.Errorf("no offer, but told as one: %q → %q", c.Text, got)
				}
			}
		}
	}
	t.Logf("%d of %d lessons on an offer tell it", told, offers)
	if told < offers*95/100 {
		t.Errorf("only %d of %d lessons on an offer tell it", told, offers)
	}
}
