package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remem/remem/internal/miniotest"
	"github.com/remem/remem/node"
)

var (
	buildOnce sync.Once
	binDir    string // the built binary's directory, removed by TestMain
	binPath   string
	buildErr  error
)

// TestMain removes what the tests of the binary leave for the whole run:
// the binary they built and the MinIO of the S3 tests, if one started.
func TestMain(m *testing.M) {
	code := m.Run()
	miniotest.Stop()
	if binDir != "" {
		_ = os.RemoveAll(binDir) // a temporary directory; nothing to report at exit
	}
	os.Exit(code)
}

// remem builds the binary once per test run.
func remem(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "remem-bin")
		if err != nil {
			buildErr = err
			return
		}
		binDir, binPath = dir, filepath.Join(dir, "remem")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = err
			binPath = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building remem: %v\n%s", buildErr, binPath)
	}
	return binPath
}

// run runs remem with home as REMEM_HOME and returns stdout, stderr and the
// exit code.
func run(t *testing.T, home string, stdin []byte, args ...string) (string, string, int) {
	t.Helper()
	return runWithStdin(t, []string{"REMEM_HOME=" + home}, stdin, args...)
}

// runWithStdin runs remem with env added to the test's environment and stdin
// (nil for none), and returns stdout, stderr and the exit code.
func runWithStdin(t *testing.T, env []string, stdin []byte, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(remem(t), args...)
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("remem %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// newHome is a memory's home made as `remem init` makes it: only init and
// node create a memory.
func newHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	if _, _, err := node.InitHome(home); err != nil {
		t.Fatal(err)
	}
	return home
}

// must runs remem and fails the test unless it exits 0.
func must(t *testing.T, home string, stdin []byte, args ...string) string {
	t.Helper()
	out, errOut, code := run(t, home, stdin, args...)
	if code != 0 {
		t.Fatalf("remem %v exited %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
	}
	return out
}

// TestConformanceRecordsThroughBinary runs every record vector through the
// built `remem verify --json`: the conformance copy's and the project's own.
func TestConformanceRecordsThroughBinary(t *testing.T) {
	for _, path := range []string{"../../protocol/testdata/conformance/records.jsonl", "../../protocol/testdata/vectors/records.jsonl"} {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) { recordVectorsThroughBinary(t, path) })
	}
}

func recordVectorsThroughBinary(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type vector struct {
		Name, Verdict string
		Line          *string
		LineB64       string `json:"line_b64"`
	}
	var vectors []vector
	var input bytes.Buffer
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var v vector
		if err := json.Unmarshal(l, &v); err != nil {
			t.Fatal(err)
		}
		raw := []byte(nil)
		if v.Line != nil {
			raw = []byte(*v.Line)
		} else if raw, err = base64.StdEncoding.DecodeString(v.LineB64); err != nil {
			t.Fatal(err)
		}
		vectors = append(vectors, v)
		input.Write(append(raw, '\n'))
	}
	out, _, code := run(t, t.TempDir(), input.Bytes(), "verify", "--json", "--now", "2026-12-01T00:00:00Z", "-")
	if code != 1 {
		t.Errorf("exit code %d, want 1 (some vectors are rejects)", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(vectors) {
		t.Fatalf("%d verdicts for %d vectors:\n%s", len(lines), len(vectors), out)
	}
	for i, l := range lines {
		var got verdictLine
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, l)
		}
		if got.Line != i+1 || string(got.Verdict) != vectors[i].Verdict {
			t.Errorf("%s: line %d verdict %s (%s), want %s", vectors[i].Name, got.Line, got.Verdict, got.Reason, vectors[i].Verdict)
		}
	}
}

func TestCheckExitCodes(t *testing.T) {
	home := t.TempDir()
	if _, _, code := run(t, home, nil, "check", "Running go test without -race hides the data race"); code != 0 {
		t.Errorf("observation: exit %d", code)
	}
	out, _, code := run(t, home, nil, "check", "--json", "Always run make clean first")
	if code != 1 || !strings.Contains(out, `"observation": false`) {
		t.Errorf("instruction: exit %d, %s", code, out)
	}
	out, _, code = run(t, home, nil, "check", "--json", "The token in /home/al/.netrc expired")
	if code != 1 || !strings.Contains(out, `"kind": "path"`) {
		t.Errorf("raw data: exit %d, %s", code, out)
	}
}

func TestHashAndIdentity(t *testing.T) {
	home := t.TempDir()
	if out := must(t, home, nil, "hash", "--kind", "error", "  Go  test\tFAILS "); strings.TrimSpace(out) != "70e27c5e4a0cd6ab0657b9bdf8d0aeb7" {
		t.Errorf("hash %q", out)
	}
	must(t, home, nil, "init")
	info, err := os.Stat(filepath.Join(home, "key"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", err, info)
	}
	var id struct{ Origin, Key string }
	if err := json.Unmarshal([]byte(must(t, home, nil, "id", "--json")), &id); err != nil || len(id.Origin) != 16 || len(id.Key) != 64 {
		t.Fatalf("id: %+v %v", id, err)
	}
	os.Chmod(filepath.Join(home, "key"), 0o644)
	if _, errOut, code := run(t, home, nil, "id"); code == 0 || !strings.Contains(errOut, "chmod 600") {
		t.Errorf("a readable key was accepted: %d %s", code, errOut)
	}
}

// TestImportMixedFile: every good line is taken and every bad one named.
func TestImportMixedFile(t *testing.T) {
	a, b := newHome(t), newHome(t)
	must(t, a, nil, "publish", "--kind", "error", "The integration suite times out when the VPN is down")
	must(t, a, nil, "publish", "--kind", "surprise", "The staging database is reset every night at midnight")
	good := strings.Split(strings.TrimSpace(must(t, a, nil, "export")), "\n")
	if len(good) != 2 {
		t.Fatalf("export: %v", good)
	}
	if !strings.Contains(good[1], "night") {
		good[0], good[1] = good[1], good[0]
	}
	mixed := strings.Join([]string{"garbage", good[0], `{"v":2}`, strings.Replace(good[1], "night", "day", 1), good[1], ""}, "\n")
	out := must(t, b, []byte(mixed), "import", "-")
	for _, want := range []string{"stdin:1: refused", "stdin:4: refused", "accepted 2", "skipped 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}
	var views []struct{ Hash string }
	json.Unmarshal([]byte(must(t, b, nil, "lessons", "--json")), &views)
	if len(views) != 2 {
		t.Fatalf("B holds %d lessons, want 2", len(views))
	}
	if _, errOut, code := run(t, a, nil, "publish", "--kind", "error", "Always run make clean before a release"); code == 0 || !strings.Contains(errOut, "instruction") {
		t.Errorf("an instruction was published: %d %s", code, errOut)
	}
}

// TestImportScopeLocalRefusesOtherOrigins: `remem import --scope local`
// does not make another memory's records this memory's own (they would be
// exported under its name and refused by every reader); own records are
// still restored.
func TestImportScopeLocalRefusesOtherOrigins(t *testing.T) {
	a, b := newHome(t), newHome(t)
	must(t, a, nil, "publish", "--kind", "error", "The integration suite times out when the VPN is down")
	must(t, b, nil, "publish", "--kind", "surprise", "The staging database is reset every night at midnight")
	exportA, exportB := must(t, a, nil, "export"), must(t, b, nil, "export")
	out := must(t, b, []byte(exportA+exportB), "import", "--scope", "local", "-")
	for _, want := range []string{"stdin:1: refused: origin mismatch: the line is signed by origin", "but scope local holds only records of", "duplicate 1", "refused 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}
	if again := must(t, b, nil, "export"); again != exportB {
		t.Fatalf("B's export changed:\n%s", again)
	}
}

// TestNowEnvSetsTheClock: $REMEM_NOW is the time of what a command signs,
// and a malformed value is a usage error of every command.
func TestNowEnvSetsTheClock(t *testing.T) {
	home := newHome(t)
	t.Setenv(nowEnv, "2026-05-04T03:02:01Z")
	must(t, home, nil, "publish", "--kind", "error", "The integration suite times out when the VPN is down")
	if out := must(t, home, nil, "export"); !strings.Contains(out, `"updated":"2026-05-04T03:02:01Z"`) {
		t.Errorf("the lesson is not signed at $%s:\n%s", nowEnv, out)
	}
	t.Setenv(nowEnv, "yesterday")
	if _, errOut, code := run(t, home, nil, "lessons"); code != 2 || !strings.Contains(errOut, nowEnv) {
		t.Errorf("a malformed $%s: exit %d, %s", nowEnv, code, errOut)
	}
}

// TestTwoHomesConfirmation is issue 3's end-to-end test with the binary.
// $REMEM_NOW puts B's surprises a minute before and after the lesson's
// arrival without waiting.
func TestTwoHomesConfirmation(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Second)
	for _, metBefore := range []bool{false, true} {
		name := map[bool]string{false: "new surprise confirms", true: "surprise met before does not"}[metBefore]
		t.Run(name, func(t *testing.T) {
			at := func(minute int) {
				t.Setenv(nowEnv, start.Add(time.Duration(minute)*time.Minute).Format(time.RFC3339))
			}
			at(0)
			a, b := newHome(t), newHome(t)
			projA, projB := filepath.Join(a, "proj"), filepath.Join(b, "proj")
			os.MkdirAll(projA, 0o755)
			os.MkdirAll(projB, 0o755)
			must(t, a, nil, "share", "--project", projA)
			must(t, b, nil, "share", "--project", projB)
			events := `{"kind":"error","title":"go test","happened":"undefined: mocks.NewClient on a clean checkout until go generate has run","session":"1","cwd":"` + projA + `"}
{"kind":"error","title":"go test","happened":"undefined: mocks.NewClient after a fresh clone, go generate had not run","session":"2","cwd":"` + projA + `"}
`
			must(t, a, []byte(events), "ingest", "-")
			must(t, a, nil, "sleep")
			var lessons []struct{ Hash string }
			json.Unmarshal([]byte(must(t, a, nil, "lessons", "--json")), &lessons)
			if len(lessons) != 1 {
				t.Fatalf("A has %d lessons", len(lessons))
			}
			hash := lessons[0].Hash
			surprise := func(session string) {
				must(t, b, nil, "remember", "--kind", "error", "--title", "go test", "--session", session, "--cwd", projB,
					"--happened", "undefined: mocks.NewClient on a clean checkout, go generate not run yet")
			}
			if metBefore {
				at(1)
				surprise("early")
			}
			at(2)
			must(t, b, []byte(must(t, a, nil, "export")), "import", "-")
			at(3)
			surprise("late")
			at(4)
			must(t, b, nil, "sleep")
			exportB := must(t, b, nil, "export")
			confirmed := strings.Contains(exportB, `"confirm":"`+hash+`"`)
			if confirmed == metBefore {
				t.Fatalf("B's export confirms=%v (met before=%v):\n%s", confirmed, metBefore, exportB)
			}
			if metBefore {
				return
			}
			must(t, a, []byte(exportB), "import", "-")
			var show struct{ Confirmers []string }
			json.Unmarshal([]byte(must(t, a, nil, "show", "--json", hash)), &show)
			var idB struct{ Origin string }
			json.Unmarshal([]byte(must(t, b, nil, "id", "--json")), &idB)
			if len(show.Confirmers) != 1 || show.Confirmers[0] != idB.Origin {
				t.Fatalf("A's show lists confirmers %v, want [%s]", show.Confirmers, idB.Origin)
			}
		})
	}
}

// serveAPI serves m's local API on a free loopback port until the test
// ends and writes node.json in home, as a running node does, so commands
// on home go through it. It returns the API's address and a stop that
// ends serving early (a node that died and left its node.json).
func serveAPI(t *testing.T, home string, m *node.Memory) (string, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: node.NewAPI(m, node.APIOptions{})}
	go srv.Serve(ln)
	stop := func() { srv.Close() }
	t.Cleanup(stop)
	if err := node.WriteNodeInfo(home, node.NodeInfo{API: ln.Addr().String(), PID: os.Getpid(), Origin: m.Origin()}); err != nil {
		t.Fatal(err)
	}
	return ln.Addr().String(), stop
}
