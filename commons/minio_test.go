package commons

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"go/build"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// The S3 tests run against a real MinIO server that the test binary
// starts once, on a free loopback port with its own data folder and
// credentials, and stops at the end (TestMain). The binary is $REMEM_MINIO,
// or `minio` on PATH or in $(go env GOPATH)/bin (`.ci/run` installs it
// there). Without it the S3 tests skip, unless REMEM_REQUIRE_MINIO=1 (CI),
// where they fail.
const (
	minioBinEnv     = "REMEM_MINIO"
	minioRequireEnv = "REMEM_REQUIRE_MINIO"
	minioUser       = "remem-test"
)

type minioServer struct {
	endpoint string // 127.0.0.1:port
	pass     string
	dir      string
	cmd      *exec.Cmd
	exited   chan struct{} // closed when cmd has ended
	stderr   bytes.Buffer
}

// minioVersion is the MinIO that .ci/run installs (TestMinioPinned):
// `go install github.com/minio/minio@latest` of February 2026, the last
// source release, which builds with Go 1.26.
const minioVersion = "v0.0.0-20260212201848-7aac2a2c5b7c"

var (
	minioOnce    sync.Once
	minioSrv     *minioServer
	minioErr     error
	minioMissing string
)

// needMinio returns the package's MinIO server, starting it the first
// time; without a binary it skips the test (fails it under
// REMEM_REQUIRE_MINIO=1).
func needMinio(t testing.TB) *minioServer {
	t.Helper()
	minioOnce.Do(func() { minioSrv, minioErr = startMinio() })
	if minioMissing != "" {
		if os.Getenv(minioRequireEnv) == "1" {
			t.Fatalf("%s, and %s=1 asks for the S3 tests", minioMissing, minioRequireEnv)
		}
		t.Skip(minioMissing)
	}
	if minioErr != nil {
		t.Fatal(minioErr)
	}
	return minioSrv
}

func findMinio() string {
	if p := os.Getenv(minioBinEnv); p != "" {
		return p
	}
	if p, err := exec.LookPath("minio"); err == nil {
		return p
	}
	if p := filepath.Join(build.Default.GOPATH, "bin", "minio"); fileExists(p) {
		return p
	}
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func startMinio() (*minioServer, error) {
	bin := findMinio()
	if bin == "" {
		minioMissing = fmt.Sprintf("no minio binary (set $%s, or `go install github.com/minio/minio@%s`)", minioBinEnv, minioVersion)
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "remem-minio-")
	if err != nil {
		return nil, err
	}
	pass := make([]byte, 16)
	_, _ = rand.Read(pass)
	m := &minioServer{pass: hex.EncodeToString(pass), dir: dir}
	for attempt := 0; attempt < 3; attempt++ { // a free port may be taken between the probe and the start
		if m.endpoint, err = freePort(); err != nil {
			return nil, err
		}
		console, err := freePort()
		if err != nil {
			return nil, err
		}
		m.stderr.Reset()
		m.cmd = exec.Command(bin, "server", filepath.Join(dir, "data"), "--address", m.endpoint, "--console-address", console, "--quiet")
		m.cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+minioUser, "MINIO_ROOT_PASSWORD="+m.pass,
			"MINIO_BROWSER=off", "MINIO_UPDATE=off", "HOME="+dir)
		m.cmd.Stdout, m.cmd.Stderr = &m.stderr, &m.stderr
		if err = m.cmd.Start(); err != nil {
			return nil, fmt.Errorf("starting %s: %w", bin, err)
		}
		m.exited = make(chan struct{})
		go func(cmd *exec.Cmd, exited chan struct{}) { _ = cmd.Wait(); close(exited) }(m.cmd, m.exited)
		if err = m.waitLive(60 * time.Second); err == nil {
			return m, nil
		}
		m.stop()
	}
	return nil, fmt.Errorf("minio did not start: %v\n%s", err, m.stderr.String())
}

func (m *minioServer) waitLive(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	c := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-m.exited:
			return fmt.Errorf("minio exited")
		default:
		}
		if resp, err := c.Get("http://" + m.endpoint + "/minio/health/live"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no answer on %s within %s", m.endpoint, limit)
}

// stop ends the server (SIGTERM, then SIGKILL after 10 s) and removes its
// data folder.
func (m *minioServer) stop() {
	if m == nil || m.exited == nil {
		return
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.exited:
	case <-time.After(10 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.exited
	}
	_ = os.RemoveAll(m.dir)
}

func stopMinio() {
	if minioSrv != nil {
		minioSrv.stop()
	}
}

func (m *minioServer) creds() *credentials.Credentials {
	return credentials.NewStaticV4(minioUser, m.pass, "")
}

// env is what a child process needs to reach the server.
func (m *minioServer) env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + minioUser, "AWS_SECRET_ACCESS_KEY=" + m.pass}
}

// newBucket makes a bucket of its own for one test.
func (m *minioServer) newBucket(t testing.TB) string {
	t.Helper()
	c, err := minio.New(m.endpoint, &minio.Options{Creds: m.creds()})
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "remem-" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.MakeBucket(ctx, name, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

// url is the --storage URL of bucket/prefix on this server.
func (m *minioServer) url(bucket, prefix string) string {
	return "s3://" + bucket + "/" + prefix + "?endpoint=" + m.endpoint + "&insecure=1"
}

// open opens bucket/prefix as a store.
func (m *minioServer) open(t testing.TB, bucket, prefix string) *s3Blobs {
	t.Helper()
	cfg, err := ParseStorageURL(m.url(bucket, prefix))
	if err != nil {
		t.Fatal(err)
	}
	b, err := openS3(context.Background(), cfg, m.creds())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMinioPinned: the tests and .ci/run name the same MinIO.
func TestMinioPinned(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("github.com/minio/minio@"+minioVersion)) {
		t.Errorf(".ci/run does not install github.com/minio/minio@%s", minioVersion)
	}
}

func TestS3Blobs(t *testing.T) {
	m := needMinio(t)
	bucket := m.newBucket(t)
	n := 0
	testBlobs(t, func(t *testing.T) Blobs {
		n++
		return m.open(t, bucket, fmt.Sprintf("suite/%d", n))
	})
}

// TestOpenStorageErrors: a missing bucket, missing or wrong credentials
// and an unreachable endpoint each say what to do.
func TestOpenStorageErrors(t *testing.T) {
	m := needMinio(t)
	bucket := m.newBucket(t)
	ctx := context.Background()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD", "MINIO_ACCESS_KEY", "MINIO_SECRET_KEY"} {
		t.Setenv(k, "")
	}
	if _, err := OpenStorage(ctx, m.url(bucket, "")); err == nil || !bytes.Contains([]byte(err.Error()), []byte("AWS_ACCESS_KEY_ID")) {
		t.Errorf("no credentials: %v", err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", minioUser)
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong-password")
	if _, err := OpenStorage(ctx, m.url(bucket, "")); err == nil {
		t.Error("wrong credentials opened the store")
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", m.pass)
	if _, err := OpenStorage(ctx, m.url("no-such-bucket-here", "")); err == nil || !bytes.Contains([]byte(err.Error()), []byte("does not exist")) {
		t.Errorf("missing bucket: %v", err)
	}
	b, err := OpenStorage(ctx, m.url(bucket, "p"))
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
}
