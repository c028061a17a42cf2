package commons

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/remem/remem/internal/miniotest"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// childEnv makes the test binary run a commons server (see TestMain)
// instead of the tests: DataDir is the variable's value, or the store
// when it is an s3:// URL (credentials from the environment).
const childEnv = "REMEM_COMMONS_TEST_CHILD_DATA"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		os.Exit(runChild(dir))
	}
	code := m.Run()
	miniotest.Stop()
	if pullDir != "" {
		os.RemoveAll(pullDir) // the benchmark fixture
	}
	if code == 0 {
		// Nothing the package started outlives it: no Pull worker, no
		// Serve loop, no server goroutine.
		defaultHTTP.CloseIdleConnections()
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left behind:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// runChild serves a commons on a free loopback port until it is killed;
// Serve logs the port as JSON on stdout.
func runChild(dir string) int {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	cfg := ServerConfig{DataDir: dir, Tokens: []string{testToken}, Logger: slog.New(slog.DiscardHandler)}
	if strings.HasPrefix(dir, "s3://") {
		b, err := OpenStorage(context.Background(), dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		cfg.DataDir, cfg.Store = "", b
	}
	s, err := NewServer(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := Serve(context.Background(), "127.0.0.1:0", s, log); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startChild starts a commons server process on dir and returns it and
// its base URL.
func startChild(t *testing.T, dir string, env ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), env...), childEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var m struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &m) == nil && m.Msg == "commons listening" {
				addrc <- m.Addr
			}
		}
	}()
	select {
	case addr := <-addrc:
		return cmd, "http://" + addr
	case <-time.After(20 * time.Second):
		t.Fatal("the child server did not start")
	}
	return nil, ""
}

// TestKillMidPut kills (SIGKILL) a server process while it receives PUTs
// in a loop, several times over on the same data directory, and checks
// after each kill that every file is either the old or the new content in
// full, never a mix; then that a restarted server serves them and removed
// any temp file.
func TestKillMidPut(t *testing.T) {
	dir := t.TempDir()

	// Each origin alternates between two versions of different sizes: 60
	// records, and the same 60 after 90 older ones. Either may follow the
	// other without a rollback (SPEC §10): the longer one adds older
	// records, the shorter one drops its oldest.
	const origins = 3
	type versions struct {
		origin string
		v      [2][]byte
	}
	vs := make([]versions, origins)
	for i := range origins {
		name := fmt.Sprintf("kill%d", i)
		newer := confirmLines(t, name, 60, "a")
		older := confirmsAt(t, name, 90, "b", recTime.Add(-time.Minute))
		vs[i] = versions{origin: testutil.Identity(t, name).Origin(), v: [2][]byte{
			testutil.JoinLines(newer...),
			testutil.JoinLines(append(slices.Clone(older), newer...)...),
		}}
	}
	put := putRaw

	cycles := 3
	if testing.Short() || raceEnabled { // a race-built child is slow; one kill is enough there
		cycles = 1
	}
	totalTemps := 0
	for cycle := range cycles {
		cmd, base := startChild(t, dir)
		for _, v := range vs {
			if code, err := put(base, v.origin, v.v[0]); err != nil || (code != 201 && code != 200) {
				t.Fatalf("first PUT: %d %v", code, err)
			}
		}
		var accepted atomic.Int64
		var wg sync.WaitGroup
		for _, v := range vs {
			wg.Go(func() {
				for i := 1; ; i++ {
					code, err := put(base, v.origin, v.v[i%2])
					if err != nil {
						return // the server is gone
					}
					if code != 200 {
						t.Errorf("PUT: %d", code)
						return
					}
					accepted.Add(1)
				}
			})
		}
		deadline := time.Now().Add(10 * time.Second)
		for accepted.Load() < 6 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(time.Duration(7+13*cycle) * time.Millisecond) // land somewhere inside a PUT
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		wg.Wait()

		ents, err := os.ReadDir(filepath.Join(dir, "commons"))
		if err != nil {
			t.Fatal(err)
		}
		seen, temps := 0, 0
		for _, e := range ents {
			origin, ok := protocol.OriginOfFileName(e.Name())
			if !ok {
				if !strings.HasPrefix(e.Name(), dataTemp) {
					t.Errorf("unexpected file %s", e.Name())
				}
				temps++
				continue
			}
			data := readFile(t, filepath.Join(dir, "commons", e.Name()))
			var v *versions
			for i := range vs {
				if vs[i].origin == origin {
					v = &vs[i]
				}
			}
			if v == nil {
				t.Errorf("file of unknown origin %s", origin)
				continue
			}
			if !bytes.Equal(data, v.v[0]) && !bytes.Equal(data, v.v[1]) {
				t.Errorf("%s is neither the old nor the new content (%d bytes)", e.Name(), len(data))
			}
			if n := verifyFileBytes(t, origin, data); n != 60 && n != 150 {
				t.Errorf("%s holds %d records", e.Name(), n)
			}
			seen++
		}
		if seen != origins {
			t.Errorf("%d origin files, want %d", seen, origins)
		}
		totalTemps += temps
		t.Logf("cycle %d: %d PUTs accepted before SIGKILL, %d temp files left (never named as data)", cycle, accepted.Load(), temps)
	}

	// A restarted server removes the temp files and its index agrees with
	// the files.
	ts := newTestServerAt(t, dir, nil)
	var idx []IndexEntry
	_, _, body := ts.get(t, "/commons/index")
	if err := json.Unmarshal([]byte(body), &idx); err != nil || len(idx) != origins {
		t.Fatalf("index after restart: %s", body)
	}
	for _, e := range idx {
		data := readFile(t, ts.filePath(e.Origin))
		if e.ETag != etagOf(data) || e.Records != verifyFileBytes(t, e.Origin, data) {
			t.Errorf("index entry %+v disagrees with the file", e)
		}
		if code, _, got := ts.get(t, "/commons/"+e.Origin+".jsonl"); code != 200 || got != string(data) {
			t.Errorf("GET %s after restart: %d", e.Origin, code)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "commons"))
	if len(ents) != origins {
		t.Errorf("%d entries after restart, want %d (temp files not removed)", len(ents), origins)
	}
}
