package miniotest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestPinned: the tests and .ci/run name the same MinIO.
func TestPinned(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("github.com/minio/minio@"+Version)) {
		t.Errorf(".ci/run does not install github.com/minio/minio@%s", Version)
	}
}
