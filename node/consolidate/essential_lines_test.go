package consolidate

import (
	"strings"
	"testing"
)

// Lines Essential reads from tool output formats: each output below is
// made up, in the format of a real tool, and the line it must give holds
// the named words.
func TestEssentialPicksTheFailure(t *testing.T) {
	for _, c := range []struct{ out, want, not string }{
		// a code in words after "error:" beats the advice that follows
		{"error: resolution-impossible\n\n  The solver found no version that fits.\n  Make sure you have the index configured.\n  If you wish to retry, pass --refresh.", "resolution-impossible", "sure"},
		// a verdict in words is not the code: the message under it is
		{"  Error: libxml2 headers not found.\n  note: the build ran in a subprocess\nerror: wheel-build-failed", "libxml2 headers not found", "wheel-build-failed"},
		// the package-qualified exception under a generic wrapper
		{"Error: could not start the worker\n\tcom.acme.jobs.QueueClosedException: the queue was drained", "QueueClosedException", ""},
		// Python's [Errno N] label goes, its message stays
		{"Traceback (most recent call last):\nPermissionError: [Errno 13] Permission denied: 'out.log'", "PermissionError: Permission denied", "Errno"},
		// make's "File:N: ***" and bash's "script: line N:" prefixes go
		{"Makefile:7: *** recipe commences before first target.  Stop.", "recipe commences before first target", "***"},
		{"/tmp/job/step.sh: line 3: ./deploy: No such file or directory\nError: exit code 127", "No such file or directory", "line 3"},
		// gRPC's status fields go; a chain ends on its short last message
		{"Warning  Failed  2m  kubelet  Failed to pull image \"registry.example/app:2\": rpc error: code = NotFound desc = failed to resolve reference \"registry.example/app:2\": unexpected status: 403 Forbidden and more words to make it long", "403 Forbidden", "code ="},
		// kubectl's event reason names the event
		{"Events:\n  Warning  FailedMount  10s  kubelet  MountVolume.SetUp failed for volume \"data\": configmap not found", "FailedMount:", ""},
		// git's remote: prefix and the forge's name go; a refusal to "you" is the server's
		{"remote: Gitea: You are not allowed to force-push to this branch.\nerror: failed to push some refs", "the server refuses force-pushing", "remote:"},
		// botocore's error format
		{"Completed 0 Bytes/1.2 MiB\ndownload failed: s3://b/k to ./k An error occurred (SlowDown) when calling the GetObject operation: Please reduce your request rate.", "SlowDown from GetObject", "An error occurred"},
		// output that is only a warning: the warning is what happened
		{"WARN[0001] the volume driver \"local\" is deprecated", "is deprecated", "WARN"},
		// Go's empty interface type; an absolute path before a message is told by its file name
		{"Error: template: a.tpl:3:9: executing \"a.tpl\" at <.Values.db>: nil pointer evaluating interface {}.host\nexit status 1", "evaluating .host", "{}"},
		{"/srv/app/conf/site.ini: the key 'workers' is not allowed\nexit 1", "site.ini: the key", "/srv/app"},
		// one long line: its first message, the details after "; " left out
		{"Error: UPGRADE FAILED: cannot patch \"web\" with kind Deployment: the spec is immutable; field selector mismatch on app.kubernetes.io/name; field selector mismatch on app.kubernetes.io/instance; field selector mismatch on pod-template-hash", "immutable", "mismatch"},
	} {
		got := Essential(c.out)
		if !strings.Contains(got, c.want) || c.not != "" && strings.Contains(got, c.not) {
			t.Errorf("Essential(%q) = %q, want it to hold %q and not %q", c.out, got, c.want, c.not)
		}
	}
}

func TestHomeTilde(t *testing.T) {
	for in, want := range map[string]string{
		"Bad owner on /home/lee/.ssh/config":   "Bad owner on ~/.ssh/config",
		"reading '/Users/a.b/work/app/x.toml'": "reading '~/work/app/x.toml'",
		"the tool lives in /opt/home/lee/bin":  "the tool lives in /opt/home/lee/bin",
		"path=/home/ci/cache and /home/ alone": "path=~/cache and /home/ alone",
	} {
		if got := homeTilde(in); got != want {
			t.Errorf("homeTilde(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnquotePlaceholders(t *testing.T) {
	for in, want := range map[string]string{
		`cannot read 'a file in the repository'`:            `cannot read a file in the repository`,
		`connection to server at "an internal host" failed`: `connection to server at an internal host failed`,
		`Repository 'a person' is not defined`:              `Repository 'a person' is not defined`,
	} {
		if got := unquotePlaceholders(in); got != want {
			t.Errorf("unquotePlaceholders(%q) = %q, want %q", in, got, want)
		}
	}
}
