package node

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/remem/remem/protocol"
)

// Files under a memory's home.
const (
	KeyFile     = "key"
	InboxFile   = "inbox.jsonl"
	LessonsFile = "lessons.jsonl"
	RejectsFile = "rejects.jsonl"
	NodeFile    = "node.json" // address of the running node's API
	ConfigFile  = "config.toml"
)

// MaxRejectsBytes bounds the rejects file: past it, rejects.jsonl is
// rotated to rejects.jsonl.1 (replacing the older copy, whose lines are
// counted in RejectsDroppedFile), so an agent that keeps sending garbage
// costs at most about twice this much disk.
const MaxRejectsBytes = 1 << 20

// RejectsDroppedFile counts the rejected lines the bound dropped, so the
// bound never loses a line silently.
const RejectsDroppedFile = "rejects.dropped"

// DefaultHome is $REMEM_HOME, or ~/.remem.
func DefaultHome() string {
	if h := os.Getenv("REMEM_HOME"); h != "" {
		return h
	}
	if dir, err := os.UserHomeDir(); err == nil {
		return filepath.Join(dir, ".remem")
	}
	return ".remem"
}

// ErrNoHome says the home has no key yet: only `remem init` and `remem
// node` make one, so a mistyped home is never a new memory.
var ErrNoHome = errors.New("no memory")

// InitHome creates the home, its key and its API token if they do not
// exist. It returns the identity and whether the key was created now.
func InitHome(home string) (protocol.Identity, bool, error) {
	id, err := LoadIdentity(home)
	if err == nil {
		return id, false, makeAPIToken(home)
	}
	if !errors.Is(err, ErrNoHome) {
		return protocol.Identity{}, false, err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return protocol.Identity{}, false, fmt.Errorf("creating home %s: %w", home, err)
	}
	id, err = protocol.GenerateIdentity()
	if err != nil {
		return protocol.Identity{}, false, err
	}
	path := filepath.Join(home, KeyFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return protocol.Identity{}, false, fmt.Errorf("writing key %s: %w", path, err)
	}
	_, werr := f.WriteString(hex.EncodeToString(id.Seed()) + "\n")
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return protocol.Identity{}, false, fmt.Errorf("writing key %s: %w", path, err)
	}
	return id, true, makeAPIToken(home)
}

// LoadIdentity reads the key of home, refusing a key file others can read.
func LoadIdentity(home string) (protocol.Identity, error) {
	path := filepath.Join(home, KeyFile)
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return protocol.Identity{}, fmt.Errorf("%w at %s; run `remem init` (or set REMEM_HOME to an existing memory)", ErrNoHome, home)
	}
	if err != nil {
		return protocol.Identity{}, fmt.Errorf("reading key: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return protocol.Identity{}, fmt.Errorf("key file %s has mode %04o and others can read it; run `chmod 600 %s`", path, info.Mode().Perm(), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return protocol.Identity{}, fmt.Errorf("reading key: %w", err)
	}
	seed, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(seed) != 32 {
		return protocol.Identity{}, fmt.Errorf("key file %s is damaged: it must hold the 32-byte seed as 64 hex characters", path)
	}
	return protocol.NewIdentity(seed)
}
