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
	} {
		got := Essential(c.out)
		if !strings.Contains(got, c.want) || c.not != "" && strings.Contains(got, c.not) {
			t.Errorf("Essential(%q) = %q, want it to hold %q and not %q", c.out, got, c.want, c.not)
		}
	}
}
