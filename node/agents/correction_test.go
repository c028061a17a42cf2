package agents

import "testing"

// Examples written with the rules, before any measured set was read; the
// measured figures come from node/agents/testdata/prompts_*.jsonl.
func TestCorrectionCues(t *testing.T) {
	for _, p := range []string{
		"no, the other file",
		"nope",
		"Wait, why did you delete the migration?",
		"you broke the login page",
		"I said staging, not prod",
		"undo that",
		"please revert your changes to main.go",
		"that's not what I asked for",
		"the tests were passing before your change",
		"still failing",
		"you're editing the wrong file",
		"why did you add a new dependency?",
		"actually, use pnpm instead",
		"this is way too complicated",
		"stop",
		"put it back the way it was",
		"no no no, don't touch the lockfile",
		"不对，改回去",
		"das ist falsch",
		"eso no es lo que pedí",
	} {
		if ok, _ := Correction(p); !ok {
			t.Errorf("%q: not read as a correction", p)
		}
	}
	for _, p := range []string{
		"fix the failing test in utils_test.go",
		"make sure we don't log secrets",
		"add an undo button to the editor",
		"revert commit 3f2a1c on the release branch",
		"actually, one more thing: update the changelog too",
		"no rush, but can you look at the flaky CI job",
		"what's wrong with this regex? ^[a-z]+$",
		"stop the dev server and restart it",
		"looks good, commit it",
		"yes",
		"use postgres",
		"wait for the build to finish, then deploy",
		"write a function that returns the nth prime",
		"",
		"```\nyou broke everything\n```",
	} {
		if ok, cue := Correction(p); ok {
			t.Errorf("%q: read as a correction (cue %s)", p, cue)
		}
	}
}
