package consolidate

import (
	"context"
	"strings"
	"testing"
)

// An error and a note of the same surprise in one cluster: the lesson is
// the error's failure with the note's cause.
func TestDefaultWriterErrorWithNote(t *testing.T) {
	c := Cluster{Kind: "error", Episodes: []Episode{
		{Kind: "note", Text: "The runner image ships an old CA bundle; the corporate proxy's certificate is not in it."},
		{Kind: "error", Title: "curl https://internal.example/api", Happened: "curl: (60) SSL certificate problem: unable to get local issuer certificate"},
	}}
	got, err := DefaultWriter{}.Write(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"curl", "unable to get local issuer certificate", "because", "CA bundle"} {
		if !strings.Contains(got, want) {
			t.Errorf("got %q, want it to hold %q", got, want)
		}
	}
}

func TestCorrectionNoThing(t *testing.T) {
	got := correction("no sudo please, the installer writes into the home directory", "Was about to run `sudo make install`.")
	if !strings.HasPrefix(got, "The person objected to the agent using sudo because the installer writes into the home directory") {
		t.Errorf("got %q", got)
	}
	// a statement with a verb of its own is no order
	got = correction("the cache is per branch, so clearing it won't help", "Cleared the CI cache.")
	if strings.Contains(got, "wanted the agent to") {
		t.Errorf("got %q", got)
	}
}

func TestCorrectionCommandAsVerb(t *testing.T) {
	got := correction("don't kubectl delete the namespace, it holds the shared secrets", "Proposed `kubectl delete ns payments` to start clean.")
	if !strings.Contains(got, "objected to the agent running kubectl delete the namespace") {
		t.Errorf("got %q", got)
	}
	// "not npm test": the command is run, never "npming" (blind set b29e)
	got = correction("Use make test, not npm test. The Makefile sets TZ=UTC for the tests.", "Ran npm test directly.")
	if strings.Contains(got, "npming") || !strings.Contains(got, "running npm test") {
		t.Errorf("got %q", got)
	}
	// "do the same" asks for an act; what to do is not given as a reason
	got = correction("no sudo, the cache dir belongs to the user. pass --user and do the same in CI", "Ran `sudo pip install .`.")
	if strings.Contains(got, "because the cache dir belongs to the user, and pass") || strings.Contains(got, "doing the same") {
		t.Errorf("got %q", got)
	}
}

func TestCallNameDropsEnv(t *testing.T) {
	if got := callName("GOFLAGS=-mod=mod CGO_ENABLED=0 go build ./cmd/x"); got != "go build" {
		t.Errorf("callName = %q, want %q", got, "go build")
	}
}

func TestOneSentenceLowersOpener(t *testing.T) {
	got := oneSentence("The disk is full. The cache holds 40 GB. Docker keeps it.")
	if got != "The disk is full; the cache holds 40 GB; Docker keeps it." {
		t.Errorf("oneSentence = %q", got)
	}
	if got := callName("docker build . (RUN pip install -r reqs.txt)"); got != "docker build" {
		t.Errorf("callName = %q", got)
	}
}

func TestFitStatements(t *testing.T) {
	long := "The image pins Node 18 on the runner; `docker run --rm -v $PWD:/src -w /src node:18 npm ci --ignore-scripts --no-audit --prefer-offline` reproduces it; " +
		"the lock file was written by npm 10, which records the packages in a format that npm 8, shipped with Node 18, reads only partly and rewrites on every install."
	got := fitStatements(long)
	if strings.Contains(got, "docker run") || !strings.Contains(got, "npm 10") || len(got) > MaxSentence-2 || strings.Count(got, "`")%2 != 0 {
		t.Errorf("fitStatements = %q", got)
	}
	if short := "The disk is full; the cache holds it."; fitStatements(short) != short {
		t.Errorf("a short text changed: %q", fitStatements(short))
	}
}

func TestClausesKeepConfigKeys(t *testing.T) {
	cs := clauses("adding pull-requests: write won't help: the token is read-only")
	if len(cs) != 2 || cs[0].text != "adding pull-requests: write won't help" {
		t.Errorf("clauses = %+v", cs)
	}
	if got := failure("psql", "must be owner of table orders", "", "", false); got != "psql fails with 'must be owner of table orders'" {
		t.Errorf("failure = %q", got)
	}
}

// A piece of what the person said with no verb ("For your test") is no
// reason: blind set b29f's "because For the agent's test".
func TestCorrectionReasonHasAVerb(t *testing.T) {
	got := correction("don't change the service default. For your test, reset the dev group with --reset-offsets.", "Changed the default.")
	if strings.Contains(got, "because For") || strings.Contains(got, "because for") {
		t.Errorf("got %q", got)
	}
}

// "Stop the migration": a determiner after the negating word names what
// the person wanted no more of (blind set b29f's "the agent thing
// migration").
func TestCorrectionStopTheThing(t *testing.T) {
	got := correction("Stop the migration. Pin eslint to ^8.57 — we move to flat config when the a11y plugin supports it.", "Started writing an eslint.config.js by hand to migrate.")
	if strings.Contains(got, "thing") || !strings.Contains(got, "going on with the migration") {
		t.Errorf("got %q", got)
	}
}
