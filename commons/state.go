package commons

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/remem/remem/internal/atomicfile"
)

// PullState is what a client remembers between pulls, per commons URL.
type PullState struct {
	Servers map[string]ServerState `json:"servers"`
}

// ServerState is what a client remembers of one commons.
type ServerState struct {
	// Since is the latest `updated` of the index entries seen in the last
	// complete pull: the next pull asks for `?since=` it. It is the
	// server's clock, never the client's.
	Since time.Time `json:"since"`
	// ETags maps each origin to the ETag of the file last delivered.
	ETags map[string]string `json:"etags"`
	// LastPull is when (client clock) the last pull ended.
	LastPull time.Time `json:"last_pull"`
}

// StateStore loads and saves the pull state.
type StateStore interface {
	Load() (PullState, error)
	Save(PullState) error
}

// FileState keeps the pull state in a JSON file, written atomically. A
// missing file is an empty state.
type FileState struct{ Path string }

// Load reads the state file.
func (f FileState) Load() (PullState, error) {
	data, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return PullState{}, nil
	}
	if err != nil {
		return PullState{}, fmt.Errorf("reading pull state: %w", err)
	}
	var s PullState
	if err := json.Unmarshal(data, &s); err != nil {
		return PullState{}, fmt.Errorf("pull state %s is damaged (%v); remove it to pull everything again", f.Path, err)
	}
	return s, nil
}

// Save writes the state file atomically (temp file, fsync, rename).
func (f FileState) Save(s PullState) error {
	data, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return fmt.Errorf("writing pull state: %w", err)
	}
	if err := atomicfile.Write(f.Path, "."+filepath.Base(f.Path)+".tmp-", data, 0o600); err != nil {
		return fmt.Errorf("writing pull state %s: %w", f.Path, err)
	}
	return nil
}

// MemoryState keeps the pull state in memory (tests, one-off pulls).
type MemoryState struct {
	mu sync.Mutex
	s  PullState
}

// Load returns a copy of the state.
func (m *MemoryState) Load() (PullState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.clone(), nil
}

// Save stores a copy of s.
func (m *MemoryState) Save(s PullState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.s = s.clone()
	return nil
}

func (s PullState) clone() PullState {
	out := PullState{Servers: make(map[string]ServerState, len(s.Servers))}
	for k, v := range s.Servers {
		tags := make(map[string]string, len(v.ETags))
		for o, t := range v.ETags {
			tags[o] = t
		}
		v.ETags = tags
		out.Servers[k] = v
	}
	return out
}
