package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// draftHash is the hash of the one draft `remem lessons --all --json` lists.
func draftHash(t *testing.T, home string) string {
	t.Helper()
	out, errOut, code := run(t, home, nil, "lessons", "--all", "--json")
	if code != 0 {
		t.Fatalf("lessons: %d %s", code, errOut)
	}
	var views []struct{ Hash, Draft, Text string }
	if err := json.Unmarshal([]byte(out), &views); err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		if v.Draft != "" {
			return v.Hash
		}
	}
	t.Fatalf("no draft among %s", out)
	return ""
}

// The agent's sentence and a person's rewrite of a draft, through the
// built binary on a memory and through a running node: a refused sentence
// is noted at once, a draft is marked in remem lessons, and remem lessons
// rewrite puts a sentence in its place.
func TestAgentsSentenceAndDraftRewriteE2E(t *testing.T) {
	const rewritten = "The migration job fails with an access denied error once the database secret rotates, since it reads the password at start."
	for _, viaNode := range []bool{false, true} {
		home := newHome(t)
		var node *nodeProc
		if viaNode {
			node = startNode(t, home)
		}
		out, errOut, code := run(t, home, nil, "remember", "--kind", "error", "--title", "npm ci", "--happened", "EINTEGRITY",
			"--lesson", "Always delete package-lock.json before npm ci.")
		if code != 0 || !strings.Contains(out, "note: event:1: the proposed lesson is not taken") {
			t.Fatalf("node %v: remember with a refused lesson: %d\n%s%s", viaNode, code, out, errOut)
		}
		if _, errOut, code := run(t, home, nil, "remember", "--kind", "error", "--title", "db migrate",
			"--happened", "the migration job runs mysql -u app --password=hunter2 and fails once the secret rotates"); code != 0 {
			t.Fatalf("remember: %s", errOut)
		}
		if _, errOut, code := run(t, home, nil, "sleep"); code != 0 {
			t.Fatalf("sleep: %s", errOut)
		}
		out, errOut, _ = run(t, home, nil, "lessons", "--all")
		if !strings.Contains(out, "[draft: ") || !strings.Contains(errOut, "remem lessons rewrite HASH TEXT") {
			t.Fatalf("node %v: lessons does not mark the draft:\n%s%s", viaNode, out, errOut)
		}
		hash := draftHash(t, home)
		if _, errOut, code := run(t, home, nil, "lessons", "rewrite", hash[:8], "Always rotate secrets first."); code == 0 || !strings.Contains(errOut, "not rewritten") {
			t.Fatalf("node %v: an order was taken as a rewrite: %d %s", viaNode, code, errOut)
		}
		out, errOut, code = run(t, home, nil, "lessons", "rewrite", hash[:8], rewritten)
		if code != 0 || !strings.Contains(out, "draft "+hash+" now lesson ") {
			t.Fatalf("node %v: rewrite: %d\n%s%s", viaNode, code, out, errOut)
		}
		run(t, home, nil, "sleep")
		out, _, _ = run(t, home, nil, "lessons", "--all", "--json")
		if !strings.Contains(out, rewritten) || strings.Contains(out, hash) {
			t.Fatalf("node %v: after the rewrite:\n%s", viaNode, out)
		}
		if node != nil {
			node.stop(t)
		}
	}
}
