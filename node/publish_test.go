package node

import (
	"fmt"
	"strings"
	"testing"

	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

func TestOwnLinesLeaveOutRevokedLessons(t *testing.T) {
	m, _ := openTest(t, nil)
	rec, err := m.Publish(protocol.KindError, "The integration suite times out when the VPN is down")
	if err != nil {
		t.Fatal(err)
	}
	m.Publish(protocol.KindSurprise, "The staging database is reset every night at midnight")
	if _, err := m.Revoke(rec.Hash, "fixed"); err != nil {
		t.Fatal(err)
	}
	lines, err := m.OwnLines("")
	if err != nil {
		t.Fatal(err)
	}
	joined := string(testutil.JoinLines(lines...))
	if strings.Contains(joined, "VPN") || !strings.Contains(joined, `"revoke":"`+rec.Hash) || !strings.Contains(joined, "staging") {
		t.Fatalf("own lines after a revocation:\n%s", joined)
	}
}

func TestFileLinesFitTheLimits(t *testing.T) {
	m, _ := openTest(t, nil)
	var first string
	for i := 0; i < 1100; i++ {
		rec, err := m.Publish(protocol.KindError, fmt.Sprintf("The build of service %d fails when its cache volume is full", i))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = rec.Hash
		}
	}
	if _, err := m.Revoke(first, ""); err != nil {
		t.Fatal(err)
	}
	lines, left, err := m.FileLines("folder:/x")
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	for _, l := range lines {
		size += len(l) + 1
	}
	if len(lines) > protocol.MaxOriginRecs || size > protocol.MaxOriginFile || left == 0 {
		t.Fatalf("%d lines, %d bytes, %d left out", len(lines), size, left)
	}
	if !strings.Contains(string(testutil.JoinLines(lines...)), `"revoke":"`+first) {
		t.Fatal("the revocation did not make it into the file")
	}
}
