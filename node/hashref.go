package node

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/remem/remem/protocol"
)

// ErrBadHash says a lesson reference is malformed or names several lessons:
// the caller's mistake, not a lesson missing here.
var ErrBadHash = errors.New("not a lesson hash")

// MinHashPrefix is the shortest prefix a lesson may be named by.
const MinHashPrefix = protocol.MinHashPrefix

// maxCandidates bounds the lessons an ambiguous prefix lists.
const maxCandidates = 5

// ResolveHash turns what a user or an agent typed for a lesson into its
// hash, the one rule for the CLI, the API and MCP: the 32 hex of the hash,
// a prefix of it at least MinHashPrefix long that names one lesson or
// record held (or in a configured layer), or the "l-…" id that `show
// --json` prints. Case and surrounding space do not matter.
func (m *Memory) ResolveHash(ref string) (string, error) {
	if !protocol.IsHashRef(ref) {
		return "", fmt.Errorf("%w: %q; give the 32 hex characters, a unique prefix of at least %d, or the l-… id", ErrBadHash, ref, MinHashPrefix)
	}
	h := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(ref)), "l-")
	if len(h) == 32 {
		return h, nil
	}
	found, err := m.store.HashesWithPrefix(h, maxCandidates+1)
	if err != nil {
		return "", err
	}
	for _, l := range m.layers.current() {
		for _, ll := range l.Lessons {
			if strings.HasPrefix(ll.Hash, h) && !slices.Contains(found, ll.Hash) {
				found = append(found, ll.Hash)
			}
		}
	}
	switch {
	case len(found) == 0:
		return "", fmt.Errorf("%w: none starts with %s (`remem lessons --all` lists the hashes)", ErrUnknownLesson, h)
	case len(found) > 1:
		list := strings.Join(found[:min(len(found), maxCandidates)], ", ")
		if len(found) > maxCandidates {
			list += ", …"
		}
		return "", fmt.Errorf("%w: %s names several lessons (%s); give more of the hash", ErrBadHash, h, list)
	}
	return found[0], nil
}
