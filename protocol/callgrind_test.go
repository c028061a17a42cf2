package protocol

import (
	"crypto/ed25519"
	"os"
	"strconv"
	"testing"
)

// TestCallgrindLoop is the loop testdata/callgrind.sh runs under valgrind
// to count instructions: REMEM_CALLGRIND=check runs the text checks over
// the labelled sentences (REMEM_CALLGRIND_OBS=1: the observations only),
// =verify a bare ed25519.Verify, REMEM_CALLGRIND_N times. Counting two
// values of N and subtracting leaves the cost of one operation.
func TestCallgrindLoop(t *testing.T) {
	what := os.Getenv("REMEM_CALLGRIND")
	if what == "" {
		t.Skip("run by testdata/callgrind.sh")
	}
	n, err := strconv.Atoi(os.Getenv("REMEM_CALLGRIND_N"))
	if err != nil {
		t.Fatal(err)
	}
	switch what {
	case "check":
		texts := benchTexts(nil, os.Getenv("REMEM_CALLGRIND_OBS") != "")
		for i := range n {
			_ = CheckAgentText(texts[i%len(texts)])
		}
	case "verify":
		pub, priv, _ := ed25519.GenerateKey(nil)
		msg := []byte(`{"hash":"…","kind":"error","text":"a lesson line of about two hundred bytes, as a verifier sees one"}`)
		sig := ed25519.Sign(priv, msg)
		for range n {
			ed25519.Verify(pub, msg, sig)
		}
	default:
		t.Fatalf("REMEM_CALLGRIND=%q: want check or verify", what)
	}
}
