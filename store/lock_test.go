package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// openWithin runs Open and fails the test if it takes longer than d.
func openWithin(t *testing.T, home string, d time.Duration) (*Store, error) {
	t.Helper()
	type result struct {
		s   *Store
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := Open(home, Options{Small: true})
		ch <- result{s, err}
	}()
	select {
	case r := <-ch:
		return r.s, r.err
	case <-time.After(d):
		t.Fatalf("Open of a held home did not return within %v", d)
		return nil, nil
	}
}

func TestLockSameProcess(t *testing.T) {
	s, home := openTest(t)
	_, err := openWithin(t, home, 5*time.Second)
	var le *LockedError
	if !errors.As(err, &le) {
		t.Fatalf("second Open: %v, want *LockedError", err)
	}
	if le.Home != home || le.PID != os.Getpid() {
		t.Fatalf("LockedError = %+v, want home %s pid %d", le, home, os.Getpid())
	}
	msg := err.Error()
	for _, want := range []string{home, strconv.Itoa(os.Getpid()), "remem node", "REMEM_HOME"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not name %q", msg, want)
		}
	}
	// Closing releases the home; Close is idempotent.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	s2, err := openWithin(t, home, 5*time.Second)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s2.Close()
}

// Badger's own directory lock (someone opened <home>/db directly) gives the
// same error, not Badger's message.
func TestBadgerLockTranslated(t *testing.T) {
	home := t.TempDir()
	db, err := badger.Open(badger.DefaultOptions(filepath.Join(home, "db")).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = openWithin(t, home, 5*time.Second)
	var le *LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() {
		t.Fatalf("Open = %v, want *LockedError naming pid %d", err, os.Getpid())
	}
	// The home lock was released again: once Badger lets go, Open works.
	db.Close()
	s, err := openWithin(t, home, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

const helperEnv = "REMEM_STORE_TEST_HELPER_HOME"

// TestHelperProcess is not a test: TestLockOtherProcess runs the test
// binary as a child that holds a home until its stdin closes.
func TestHelperProcess(t *testing.T) {
	home := os.Getenv(helperEnv)
	if home == "" {
		t.Skip("helper process only")
	}
	s, err := Open(home, Options{Small: true})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	fmt.Println("ready", os.Getpid())
	io.Copy(io.Discard, os.Stdin)
	s.Close()
	os.Exit(0)
}

func TestLockOtherProcess(t *testing.T) {
	home := filepath.Join(t.TempDir(), ".remem")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+home)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
		io.Copy(io.Discard, stdout)
	}()
	select {
	case line := <-ready:
		if !strings.HasPrefix(line, "ready ") {
			t.Fatalf("child: %q", line)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the child did not open the store")
	}

	start := time.Now()
	_, err = openWithin(t, home, 5*time.Second)
	var le *LockedError
	if !errors.As(err, &le) {
		t.Fatalf("Open of a home held by another process: %v", err)
	}
	if le.PID != cmd.Process.Pid {
		t.Fatalf("LockedError names pid %d, the child is %d", le.PID, cmd.Process.Pid)
	}
	if !strings.Contains(err.Error(), strconv.Itoa(cmd.Process.Pid)) {
		t.Fatalf("message %q lacks the pid", err)
	}
	t.Logf("refused in %v: %v", time.Since(start), err)

	// When the child lets go, the home opens.
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	s, err := openWithin(t, home, 5*time.Second)
	if err != nil {
		t.Fatalf("Open after the child exited: %v", err)
	}
	s.Close()
}
