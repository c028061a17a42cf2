// Package miniotest starts a real MinIO server on loopback for the tests
// of the commons' S3 storage (commons, cmd/remem), once per test binary,
// the way net/http/httptest starts an HTTP server.
//
// The binary is $REMEM_MINIO, or `minio` on PATH or in $(go env
// GOPATH)/bin, where .ci/run installs Version. Without it Start skips the
// test, unless REMEM_REQUIRE_MINIO=1 (CI), where it fails it. The server
// listens on a free 127.0.0.1 port with its own temp data folder and
// random credentials; Stop (from TestMain) ends it, and it ends with the
// test binary anyway (Pdeathsig).
package miniotest

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

// Version is the MinIO that .ci/run installs (TestPinned): `go install
// github.com/minio/minio@latest` of February 2026, the last source
// release, which builds with Go 1.26.
const Version = "v0.0.0-20260212201848-7aac2a2c5b7c"

const (
	binEnv     = "REMEM_MINIO"
	requireEnv = "REMEM_REQUIRE_MINIO"
	// User is the root user of the server; its password is random.
	User = "remem-test"
)

// Server is a running MinIO.
type Server struct {
	Endpoint string // 127.0.0.1:port
	Password string
	dir      string
	cmd      *exec.Cmd
	exited   chan struct{} // closed when cmd has ended
	log      bytes.Buffer
}

var (
	once    sync.Once
	srv     *Server
	srvErr  error
	missing string
)

// Start returns the binary's MinIO server, starting it the first time.
func Start(t testing.TB) *Server {
	t.Helper()
	once.Do(func() { srv, srvErr = start() })
	if missing != "" {
		if os.Getenv(requireEnv) == "1" {
			t.Fatalf("%s, and %s=1 asks for the S3 tests", missing, requireEnv)
		}
		t.Skip(missing)
	}
	if srvErr != nil {
		t.Fatal(srvErr)
	}
	return srv
}

// Stop ends the server if one was started (SIGTERM, then SIGKILL after
// 10 s) and removes its data folder. Call it from TestMain after m.Run.
func Stop() {
	if srv != nil {
		srv.stop()
	}
}

func find() string {
	if p := os.Getenv(binEnv); p != "" {
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

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String(), nil
}

func start() (*Server, error) {
	bin := find()
	if bin == "" {
		missing = fmt.Sprintf("no minio binary (set $%s, or `go install github.com/minio/minio@%s`)", binEnv, Version)
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "remem-minio-")
	if err != nil {
		return nil, err
	}
	pass := make([]byte, 16)
	_, _ = rand.Read(pass)
	s := &Server{Password: hex.EncodeToString(pass), dir: dir}
	for range 3 { // a free port may be taken between the probe and the start
		if s.Endpoint, err = freeAddr(); err != nil {
			return nil, err
		}
		console, err := freeAddr()
		if err != nil {
			return nil, err
		}
		s.log.Reset()
		s.cmd = exec.Command(bin, "server", filepath.Join(dir, "data"), "--address", s.Endpoint, "--console-address", console, "--quiet")
		s.cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+User, "MINIO_ROOT_PASSWORD="+s.Password,
			"MINIO_BROWSER=off", "MINIO_UPDATE=off", "HOME="+dir)
		s.cmd.Stdout, s.cmd.Stderr = &s.log, &s.log
		s.cmd.SysProcAttr = procAttr()
		if err = s.cmd.Start(); err != nil {
			return nil, fmt.Errorf("starting %s: %w", bin, err)
		}
		s.exited = make(chan struct{})
		go func(cmd *exec.Cmd, exited chan struct{}) { _ = cmd.Wait(); close(exited) }(s.cmd, s.exited)
		if err = s.waitLive(60 * time.Second); err == nil {
			return s, nil
		}
		s.stop()
	}
	return nil, fmt.Errorf("minio did not start: %v\n%s", err, s.log.String())
}

func (s *Server) waitLive(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	c := &http.Client{Timeout: time.Second}
	defer c.CloseIdleConnections()
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("minio exited")
		default:
		}
		if resp, err := c.Get("http://" + s.Endpoint + "/minio/health/live"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no answer on %s within %s", s.Endpoint, limit)
}

func (s *Server) stop() {
	if s.exited == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	_ = os.RemoveAll(s.dir)
}

// Creds are the server's root credentials.
func (s *Server) Creds() *credentials.Credentials {
	return credentials.NewStaticV4(User, s.Password, "")
}

// Env is what a process needs in its environment to reach the server.
func (s *Server) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + User, "AWS_SECRET_ACCESS_KEY=" + s.Password}
}

// NewBucket makes a bucket of its own for one test.
func (s *Server) NewBucket(t testing.TB) string {
	t.Helper()
	c, err := minio.New(s.Endpoint, &minio.Options{Creds: s.Creds()})
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

// URL is the --storage URL of bucket/prefix on this server.
func (s *Server) URL(bucket, prefix string) string {
	return "s3://" + bucket + "/" + prefix + "?endpoint=" + s.Endpoint + "&insecure=1"
}
