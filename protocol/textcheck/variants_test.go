package textcheck

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// variants returns the texts that say what text says in another case or
// layout: capitals, Title Case, a code span, a code fence, and after an
// observation and each Unicode line or paragraph separator.
func variants(text string) map[string]string {
	title := []rune(strings.ToLower(text))
	for i := range title {
		if i == 0 || !unicode.IsLetter(title[i-1]) && title[i-1] != '\'' {
			title[i] = unicode.ToUpper(title[i])
		}
	}
	out := map[string]string{
		"capitals":   strings.ToUpper(text),
		"title case": string(title),
		"code span":  "`" + text + "`",
		"code fence": "```\n" + text + "\n```",
	}
	for name, sep := range map[string]string{
		"LF": "\n", "CR": "\r", "VT": "\v", "FF": "\f", "NEL": "\u0085", "LS": "\u2028", "PS": "\u2029", "CRLF": "\r\n",
	} {
		out["after an observation and "+name] = "The nightly build fails on the ARM runner" + sep + text
	}
	return out
}

// TestCaseAndLayoutNeverHideAnOrder: every labelled instruction the checks
// refuse is refused in every variant, by CheckObservation (which writers
// use on clauses) and by CheckText (what every lesson text passes). The
// conformance set's instructions are all refused, so all their variants
// are.
func TestCaseAndLayoutNeverHideAnOrder(t *testing.T) {
	sets, err := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sets = append(sets, filepath.Join("..", "testdata", "conformance", "imperative.jsonl"))
	held, missed := 0, 0
	for _, path := range sets {
		base := filepath.Base(path)
		if strings.HasPrefix(base, "rawdata") || strings.HasPrefix(base, "eval_") || base == "attack.jsonl" {
			continue
		}
		for _, l := range readSet(t, path) {
			if !l.Imperative || l.foreign() {
				continue
			}
			if CheckObservation(l.Text) == nil {
				if base == "imperative.jsonl" {
					t.Errorf("conformance instruction passes: %q", l.Text)
				}
				continue
			}
			held++
			for name, v := range variants(l.Text) {
				if CheckObservation(v) == nil || CheckText(v).OK() {
					missed++
					if missed <= 40 {
						t.Errorf("%s of %s passes: %q", name, base, v)
					}
				}
			}
		}
	}
	if missed > 0 {
		t.Errorf("%d variants of %d refused instructions pass", missed, held)
	}
	t.Logf("%d refused instructions, every variant refused", held)
}

// TestAppendedClausesDoNotHideAnOrder: an attacker appends a long clause
// that reads like an observation to an order the checks refuse ("…,
// which the kubelet logs as expected …"), to water its words down. The
// model also reads each sentence up to each clause boundary, so few pass;
// this bounds how few (measured when written: 75, 14 and 31 of 3,202, now 45, 6 and 27;
// without the clause readings 136, 191 and 234).
func TestAppendedClausesDoNotHideAnOrder(t *testing.T) {
	sets, err := filepath.Glob(filepath.Join("testdata", "train_t*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{
		", which the kubelet logs as expected when the image cache is cold on the ARM runners",
		" because the nightly build on the shared runner failed twice last week with exit code 137",
		" when the deploy had taken five minutes on the old cluster and the migration finished without errors",
	} {
		refused, passed := 0, 0
		for _, path := range sets {
			for _, l := range readSet(t, path) {
				if !l.Imperative || l.foreign() || CheckObservation(l.Text) == nil {
					continue
				}
				refused++
				if CheckObservation(strings.TrimSuffix(l.Text, ".")+suffix+".") == nil {
					passed++
				}
			}
		}
		t.Logf("%q: %d of %d refused instructions pass", suffix, passed, refused)
		if passed*100 > refused*4 {
			t.Errorf("%q: %d of %d refused instructions pass, more than 4%%", suffix, passed, refused)
		}
	}
}
