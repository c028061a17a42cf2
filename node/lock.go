package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/remem/remem/store"
)

// DefaultLockWait is how long a starting node, or a command, waits for a
// home that another process holds for a moment: a short command such as
// `remem lessons` lets go within a second, and a node that is starting
// answers on its API within a few.
const DefaultLockWait = 5 * time.Second

// Pauses between tries for a held home.
const (
	firstLockPause = 10 * time.Millisecond
	maxLockPause   = 200 * time.Millisecond
)

// openStore opens the store of cfg.Home, waiting up to cfg.LockWait while
// another process holds it, unless that process is the home's running
// node, which will not let go: then it says so at once.
func openStore(cfg Config) (*store.Store, error) {
	var st *store.Store
	opts := cfg.Store
	opts.RankWindow = cfg.Params.State.W // the view index ranks as views decay
	err := retryHeld(context.Background(), cfg.LockWait, func() (bool, error) {
		var err error
		st, err = store.Open(cfg.Home, opts)
		var locked *store.LockedError
		return errors.As(err, &locked) && !heldByNode(cfg.Home, locked.PID), err
	})
	return st, err
}

// OpenOrDial opens the memory of cfg, or, when a running node holds the
// home, returns a Client of that node's local API. While the home is held
// but no node answers yet (a short command holds it, or a node is still
// starting) it tries again for up to wait, then returns the LockedError
// with the reason the API could not be reached. Open is tried more than
// once, so cfg must not carry a Registry (the CLI's never does).
func OpenOrDial(ctx context.Context, cfg Config, wait time.Duration) (Service, error) {
	cfg.LockWait = 0 // the loop below waits, dialing the node in between
	var svc Service
	err := retryHeld(ctx, wait, func() (bool, error) {
		m, err := Open(cfg)
		if err == nil {
			svc = Local{M: m}
			return false, nil
		}
		var locked *store.LockedError
		if !errors.As(err, &locked) {
			return false, err
		}
		client, derr := DialNode(ctx, cfg.Home)
		if derr != nil {
			return true, fmt.Errorf("%w (%v)", err, derr)
		}
		svc = client
		return false, nil
	})
	return svc, err
}

// retryHeld calls try until it says not to retry, wait has passed (one
// last try is made at the deadline) or ctx ends, pausing a little longer
// each time, and returns try's last error.
func retryHeld(ctx context.Context, wait time.Duration, try func() (retry bool, err error)) error {
	deadline := time.Now().Add(wait)
	pause := firstLockPause
	for {
		retry, err := try()
		left := time.Until(deadline)
		if !retry || left <= 0 {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (stopped waiting: %v)", err, ctx.Err())
		case <-time.After(min(pause, left)):
		}
		pause = min(2*pause, maxLockPause)
	}
}

// heldByNode tells whether pid, the holder of home, is the node that wrote
// home's node.json. A stale node.json (its node died) names another pid.
func heldByNode(home string, pid int) bool {
	if pid <= 0 {
		return false
	}
	data, err := os.ReadFile(filepath.Join(home, NodeFile))
	if err != nil {
		return false
	}
	var info NodeInfo
	return json.Unmarshal(data, &info) == nil && info.PID == pid
}
