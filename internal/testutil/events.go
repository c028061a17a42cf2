package testutil

import (
	"fmt"
	"math/rand/v2"
)

// FailureEvent is one generated error event: the command that failed and
// what happened, and the truth a clustering is scored against: Label names
// the command and the way it failed.
type FailureEvent struct {
	Title, Happened string
	Label           string
}

// FailureEvents generates n error events as an agent reports them over
// weeks: ten commands, each failing in eight shapes, every report worded
// with its own details (a directory, a service, a number of seconds), so
// that events of one command and shape are near-duplicates and most texts
// differ. The same seed gives the same events. The clustering tests and the
// sleep benchmarks run on them.
func FailureEvents(n int, seed uint64) []FailureEvent {
	r := rand.New(rand.NewPCG(seed, 19))
	pick := func(ws []string) string { return ws[r.IntN(len(ws))] }
	out := make([]FailureEvent, n)
	for i := range out {
		cmd := pick(failCommands)
		var happened string
		shape := r.IntN(len(failShapes))
		switch shape {
		case 0:
			happened = fmt.Sprintf("fails with EACCES permission denied writing to the %s %s directory", pick(failAdjectives), pick(failNouns))
		case 1:
			happened = fmt.Sprintf("timed out after %d seconds waiting for the %s %s", 10*(1+r.IntN(12)), pick(failAdjectives), pick(failNouns))
		case 2:
			happened = fmt.Sprintf("cannot find the %s module %s in the %s cache", pick(failAdjectives), pick(failNouns), pick(failAdjectives))
		case 3:
			happened = fmt.Sprintf("ran out of memory while compiling the %s %s", pick(failAdjectives), pick(failNouns))
		case 4:
			happened = fmt.Sprintf("connection refused by the %s %s, retried %d times", pick(failAdjectives), pick(failNouns), 1+r.IntN(5))
		case 5:
			happened = fmt.Sprintf("no space left on device while unpacking the %s %s", pick(failAdjectives), pick(failNouns))
		case 6:
			happened = fmt.Sprintf("certificate verify failed for the %s %s behind the corporate proxy", pick(failAdjectives), pick(failNouns))
		default:
			happened = fmt.Sprintf("rate limited with too many requests to the %s %s registry", pick(failAdjectives), pick(failNouns))
		}
		out[i] = FailureEvent{Title: cmd, Happened: happened, Label: cmd + "/" + failShapes[shape]}
	}
	return out
}

var failCommands = []string{"go test ./...", "npm install", "cargo build --release", "docker compose up", "pytest -x",
	"make release", "terraform apply", "kubectl apply -f deploy.yaml", "git push origin main", "pip install -r requirements.txt"}

// failShapes names the eight ways FailureEvents has a command fail.
var failShapes = []string{"denied", "timeout", "missing", "oom", "refused", "nospace", "tls", "ratelimit"}

var failAdjectives = []string{"shared", "nightly", "local", "staging", "vendored", "cached", "remote", "temporary",
	"generated", "legacy", "internal", "public", "frozen", "mirrored", "pinned", "patched"}

var failNouns = []string{"cache", "volume", "proxy", "cluster", "queue", "scheduler", "runner", "mirror", "registry",
	"index", "migration", "schema", "replica", "backup", "snapshot", "token", "session", "socket", "compiler",
	"linker", "toolchain", "container", "image", "manifest", "lockfile", "vendor", "plugin", "gateway", "webhook",
	"pipeline", "artifact", "bucket", "tunnel", "daemon", "fixture", "bundle", "template", "worker", "sidecar", "ledger"}
