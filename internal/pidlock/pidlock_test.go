package pidlock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A held directory refuses a second lock naming the holder's pid, Holder
// sees it without taking it, and Release frees it with no pid left behind.
func TestLockHolderRelease(t *testing.T) {
	dir := t.TempDir()
	f, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	var held *HeldError
	if _, err := Lock(dir); !errors.As(err, &held) || held.PID != os.Getpid() || held.Dir != dir {
		t.Fatalf("a second lock: %v, want a HeldError naming pid %d", err, os.Getpid())
	}
	if pid, ok, err := Holder(dir); err != nil || !ok || pid != os.Getpid() {
		t.Fatalf("Holder: %d %v %v", pid, ok, err)
	}
	Release(f)
	if _, ok, err := Holder(dir); err != nil || ok {
		t.Fatalf("Holder after Release: %v %v", ok, err)
	}
	if pid := ReadPID(filepath.Join(dir, Name)); pid != 0 {
		t.Errorf("a released lock still names pid %d", pid)
	}
	g, err := Lock(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	Release(g)
	Release(nil)
	if _, ok, err := Holder(t.TempDir()); err != nil || ok {
		t.Errorf("Holder of a directory never locked: %v %v", ok, err)
	}
}
