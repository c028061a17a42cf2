package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/internal/miniotest"
	"github.com/remem/remem/internal/testutil"
)

// TestCommonsOnS3ThroughBinary: two `remem commons serve --storage`
// processes on one MinIO bucket are one commons: A pushes to the first, B
// pulls from the second and takes the lesson. Without credentials serve
// says which variables to set.
func TestCommonsOnS3ThroughBinary(t *testing.T) {
	m := miniotest.Start(t)
	bucket := m.NewBucket(t)
	token := filepath.Join(t.TempDir(), "token")
	os.WriteFile(token, []byte("s3cret-token\n"), 0o600)
	storage := m.URL(bucket, "public")
	r1 := startCommonsWith(t, token, m.Env(), "--storage", storage)
	r2 := startCommonsWith(t, token, m.Env(), "--storage", storage)

	a, b := newHome(t), newHome(t)
	must(t, a, nil, "publish", "--kind", "error", "The integration suite times out when the VPN is down")
	must(t, a, nil, "commons", "push", "--token-file", token, r1)
	// A replica holds an acceptance back from its index for the settle
	// time (2 s), so that no replica's earlier one is listed after it.
	testutil.Eventually(t, 15*time.Second, "B to pull the lesson through the other replica", func() bool {
		out, _, code := run(t, b, nil, "commons", "pull", r2)
		return code == 0 && strings.Contains(out, "accepted 1")
	})
	if texts := lessonTexts(t, b); len(texts) != 1 || !strings.Contains(texts[0], "VPN") {
		t.Fatalf("B holds %v", texts)
	}
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD", "MINIO_ACCESS_KEY", "MINIO_SECRET_KEY"} {
		t.Setenv(k, "")
	}
	_, errOut, code := run(t, a, nil, "commons", "serve", "--token-file", token, "--storage", "s3://"+bucket+"?endpoint="+m.Endpoint+"&insecure=1", "--listen", "127.0.0.1:0")
	if code == 0 || !strings.Contains(errOut, "AWS_ACCESS_KEY_ID") {
		t.Fatalf("serve without credentials: %d %s", code, errOut)
	}
}
