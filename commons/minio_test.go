package commons

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/remem/remem/internal/miniotest"
)

// minioServer is the package's MinIO (internal/miniotest) with what these
// tests open on it.
type minioServer struct{ *miniotest.Server }

// needMinio returns the MinIO server, started once per test binary; without
// the binary the test skips (fails under REMEM_REQUIRE_MINIO=1).
func needMinio(t testing.TB) minioServer { return minioServer{miniotest.Start(t)} }

func (m minioServer) newBucket(t testing.TB) string    { return m.NewBucket(t) }
func (m minioServer) url(bucket, prefix string) string { return m.URL(bucket, prefix) }
func (m minioServer) env() []string                    { return m.Env() }

// open opens bucket/prefix as a store.
func (m minioServer) open(t testing.TB, bucket, prefix string) *s3Blobs {
	t.Helper()
	cfg, err := ParseStorageURL(m.url(bucket, prefix))
	if err != nil {
		t.Fatal(err)
	}
	b, err := openS3(context.Background(), cfg, m.Creds())
	if err != nil {
		t.Fatal(err)
	}
	return b
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
	t.Setenv("AWS_ACCESS_KEY_ID", miniotest.User)
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong-password")
	if _, err := OpenStorage(ctx, m.url(bucket, "")); err == nil {
		t.Error("wrong credentials opened the store")
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", m.Password)
	if _, err := OpenStorage(ctx, m.url("no-such-bucket-here", "")); err == nil || !bytes.Contains([]byte(err.Error()), []byte("does not exist")) {
		t.Errorf("missing bucket: %v", err)
	}
	b, err := OpenStorage(ctx, m.url(bucket, "p"))
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
}

// NewServer's context bounds its opening of the storage: an operator who
// interrupts a start on a bucket gets the interrupt back, not a server.
func TestNewServerOpensWithinItsContext(t *testing.T) {
	m := needMinio(t)
	store := m.open(t, m.newBucket(t), "k")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, err := NewServer(ctx, ServerConfig{Store: store, Tokens: []string{testToken}})
	if err == nil {
		_ = s.Close()
		t.Fatal("a server opened with a context that had ended")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("opening with an ended context: %v, want context.Canceled", err)
	}
}
