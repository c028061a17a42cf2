package node

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
)

// TestImportLocalRefusesOtherOrigins: the scope "local" is this memory's own
// records, exported as its file; another origin's record imported there
// would go out under this memory's name and be refused by every reader. It
// is refused at import, with a reason that says so.
func TestImportLocalRefusesOtherOrigins(t *testing.T) {
	a, _ := openTest(t, nil)
	b, _ := openTest(t, nil)
	if _, err := a.Publish(protocol.KindError, "The integration suite times out when the VPN is down"); err != nil {
		t.Fatal(err)
	}
	own, err := b.Publish(protocol.KindSurprise, "The staging database is reset every night at midnight")
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := a.OwnLines("")
	if err != nil {
		t.Fatal(err)
	}
	data := string(testutil.JoinLines(foreign...)) + "garbage\n" + string(own.Raw) + "\n"
	for _, svc := range []Service{Local{M: b}} {
		rep, err := svc.Import(context.Background(), scopes.Local, []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Refused) != 2 || rep.Refused[0].Line != 1 || rep.Refused[1].Line != 2 {
			t.Fatalf("refused %+v, want lines 1 (foreign) and 2 (garbage)", rep.Refused)
		}
		r := rep.Refused[0]
		if r.Reason != protocol.ReasonOriginMismatch || !strings.Contains(r.Detail, "scope local holds only records of") {
			t.Fatalf("refusal %+v does not say why", r)
		}
		if rep.ByReason[protocol.ReasonOriginMismatch] != 1 || rep.Duplicate != 1 {
			t.Fatalf("report %+v", rep)
		}
	}
	exported, err := b.OwnLines("")
	if err != nil {
		t.Fatal(err)
	}
	if joined := string(testutil.JoinLines(exported...)); strings.Contains(joined, a.Origin()) {
		t.Fatalf("B exports A's record as its own:\n%s", joined)
	}
	// Any other scope takes A's record as it always did.
	rep, err := b.Import(context.Background(), "import", testutil.JoinLines(foreign...))
	if err != nil || rep.Accepted != 1 || len(rep.Refused) != 0 {
		t.Fatalf("import by scope import: %+v, %v", rep, err)
	}
}

// TestImportLocalRestoresOwnBackup: a memory's own export imported with scope
// local into a home with the same key (a restore) is taken, and exported as
// its own again.
func TestImportLocalRestoresOwnBackup(t *testing.T) {
	a, _ := openTest(t, nil)
	rec, err := a.Publish(protocol.KindError, "The integration suite times out when the VPN is down")
	if err != nil {
		t.Fatal(err)
	}
	backup, err := a.OwnLines("")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	key, err := os.ReadFile(filepath.Join(a.Home(), KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, KeyFile), key, 0o600); err != nil {
		t.Fatal(err)
	}
	restored, err := Open(Config{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	rep, err := restored.Import(context.Background(), scopes.Local, testutil.JoinLines(backup...))
	if err != nil || rep.Accepted != 1 || len(rep.Refused) != 0 {
		t.Fatalf("restore: %+v, %v", rep, err)
	}
	lines, err := restored.OwnLines("")
	if err != nil || len(lines) != 1 || !strings.Contains(string(lines[0]), rec.Hash) {
		t.Fatalf("own lines after the restore: %q, %v", lines, err)
	}
}

// TestOwnLinesOnlyOwnOrigin: a store that took another origin's record into
// scope local before imports checked it (or by any other path) still never
// exports it as this memory's own.
func TestOwnLinesOnlyOwnOrigin(t *testing.T) {
	a, _ := openTest(t, nil)
	b, _ := openTest(t, nil)
	if _, err := a.Publish(protocol.KindError, "The integration suite times out when the VPN is down"); err != nil {
		t.Fatal(err)
	}
	foreign, err := a.OwnLines("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Receive(context.Background(), scopes.Local, protocol.SplitLines(testutil.JoinLines(foreign...))); err != nil {
		t.Fatal(err)
	}
	lines, err := b.OwnLines("")
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 0 {
		t.Fatalf("B exports another origin's record as its own: %q", lines)
	}
}
