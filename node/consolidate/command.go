package consolidate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// CommandWriter is a Writer that runs an external command: Command is run
// with "sh -c", gets the cluster as JSON (see Cluster) on stdin, and must
// print the lesson as one sentence on one line of stdout. Timeout bounds the
// run (0 means DefaultCommandTimeout); on timeout or cancellation the command
// and the processes it started are killed. What the command prints is
// trimmed and returned as it is: the node runs the same checks on it as on
// any lesson (SPEC §6).
//
// Errors say what failed: the exit status with an excerpt of stderr, a
// timeout, empty output, more than one line, or more than one sentence.
type CommandWriter struct {
	Command string
	Timeout time.Duration
}

// DefaultCommandTimeout bounds a CommandWriter whose Timeout is 0.
const DefaultCommandTimeout = 30 * time.Second

const (
	commandMaxOutput = 64 << 10 // stdout kept; more is an error
	commandMaxStderr = 4 << 10  // stderr kept for the error message
	commandExcerpt   = 300      // bytes of stderr quoted in an error
)

// Write implements Writer.
func (w CommandWriter) Write(ctx context.Context, c Cluster) (string, error) {
	if strings.TrimSpace(w.Command) == "" {
		return "", errors.New("writer command: no command configured")
	}
	input, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("writer command: encoding the cluster: %w", err)
	}
	timeout := w.Timeout
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	stdout, stderr, err := runCapped(exec.CommandContext(ctx, "sh", "-c", w.Command), bytes.NewReader(input), commandMaxOutput, commandMaxStderr)
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return "", fmt.Errorf("writer command %q: timed out after %s%s", w.Command, timeout, stderrNote(stderr))
	case ctx.Err() != nil:
		return "", fmt.Errorf("writer command %q: %w", w.Command, ctx.Err())
	case err != nil:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("writer command %q: %s%s", w.Command, ee.ProcessState, stderrNote(stderr))
		}
		return "", fmt.Errorf("writer command %q: %w%s", w.Command, err, stderrNote(stderr))
	case stdout.over:
		return "", fmt.Errorf("writer command %q: more than %d bytes of output", w.Command, commandMaxOutput)
	}

	out := stdout.b.String()
	if len(nonBlankLines(out)) == 0 {
		return "", fmt.Errorf("writer command %q: empty output%s", w.Command, stderrNote(stderr))
	}
	return oneLine(fmt.Sprintf("writer command %q", w.Command), out)
}

// runCapped runs cmd (made with a context that bounds it) with stdin, its
// output and errors kept up to maxOut and maxErr bytes; at the context's
// end its whole process group is killed (killGroup), and pipes a
// grandchild still holds are waited for at most a second.
func runCapped(cmd *exec.Cmd, stdin io.Reader, maxOut, maxErr int) (stdout, stderr *capped, err error) {
	cmd.Stdin = stdin
	stdout, stderr = &capped{max: maxOut}, &capped{max: maxErr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second
	killGroup(cmd)
	return stdout, stderr, cmd.Run()
}

// countSentences counts the sentences of one line: a sentence ends at . ! or
// ? after a letter, digit, closing bracket or quote, followed by space and a
// capital letter, or at the end of the line. "go test ./..." and "e.g. this"
// do not end one.
func countSentences(s string) int {
	breaks := regexp.MustCompile(`[\p{L}\p{N})\]"'’][.!?]+\s+\p{Lu}`)
	return len(breaks.FindAllStringIndex(s, -1)) + 1
}

// stderrNote is ": stderr: <excerpt>" when the command wrote to stderr.
func stderrNote(c *capped) string {
	if strings.TrimSpace(c.b.String()) == "" {
		return ""
	}
	return ": stderr: " + excerpt(c.b.Bytes(), commandExcerpt)
}

// capped is an io.Writer that keeps the first max bytes and notes whether
// more came. It never fails, so the command is not killed by a full pipe.
type capped struct {
	b    bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - c.b.Len()
	if len(p) > room {
		c.over = true
	}
	if room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
