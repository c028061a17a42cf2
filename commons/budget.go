package commons

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/remem/remem/protocol"
)

// Budgets bound what the commons holds in all, whoever sends: rate limits
// count per client address, which many addresses defeat, so a PUT of a
// new origin beyond a budget is refused. Replacing a stored origin's file
// needs no budget (only the per-file limits): the owner of an origin is
// never locked out of it.
const (
	// DefaultMaxOrigins bounds the origins held. Every origin is an entry
	// in memory (about 200 bytes) and a file a start reads once, so
	// 100,000 costs a small VPS some 20 MB of memory and a start of seconds.
	DefaultMaxOrigins = 100_000
	// DefaultMaxBytes bounds the bytes of the origins' files held: 2 GiB,
	// a tenth of a small VPS's disk. (100,000 full files would be 25 GiB.)
	DefaultMaxBytes = 2 << 30
	// DefaultMaxOriginsPerToken bounds the new origins one token's holder
	// stores: a token is the unit of cost, not an address, and a team
	// of memories needs far fewer.
	DefaultMaxOriginsPerToken = 1_000
)

// Which budget a refusal names (errorBody.Budget).
const (
	BudgetOrigins         = "origins"
	BudgetBytes           = "bytes"
	BudgetOriginsPerToken = "origins_per_token"
)

// budget is the storage's bound on new origins; a zero field is no bound.
type budget struct {
	origins  int
	bytes    int64
	perToken int
}

// budgetError: a new origin beyond a budget.
type budgetError struct {
	which     string
	held, max int64
	fileBytes int
}

func (e *budgetError) Error() string {
	switch e.which {
	case BudgetBytes:
		return fmt.Sprintf("this commons holds %d bytes of files, and this new origin's %d would pass its budget of %d bytes (--max-bytes): it takes no new origin now, and existing origins' files are still replaced. The operator can raise --max-bytes, or remove origins it no longer serves (their files under DATA/commons)", e.held, e.fileBytes, e.max)
	case BudgetOriginsPerToken:
		return fmt.Sprintf("this token has stored %d new origins here, its budget (--max-origins-per-token) is %d: it stores no new origin, and the files of existing ones are still replaced. The operator can raise --max-origins-per-token, or give each publisher a token of its own", e.held, e.max)
	}
	return fmt.Sprintf("this commons holds %d origins, its budget (--max-origins) is %d: it takes no new origin now, and existing origins' files are still replaced. The operator can raise --max-origins, or remove origins it no longer serves (their files under DATA/commons)", e.held, e.max)
}

// ownersDir holds one empty object per origin stored by a token, its
// facts in the key (listing is reading): owners/<origin>.<owner id>, so the
// per-token counts survive a restart on any backend without a read.
const ownersDir = "owners/"

// ownerID names a token in the store: 16 hex of a hash of its hash, never
// the token, nor the hash the server compares.
func ownerID(tokenHash [sha256.Size]byte) string {
	sum := sha256.Sum256(append([]byte("remem commons owner\x00"), tokenHash[:]...))
	return hex.EncodeToString(sum[:8])
}

func ownerKey(origin, owner string) string { return ownersDir + origin + "." + owner }

func parseOwnerKey(key string) (origin, owner string, ok bool) {
	rest, ok := strings.CutPrefix(key, ownersDir)
	if !ok {
		return "", "", false
	}
	origin, owner, ok = strings.Cut(rest, ".")
	if !ok || !protocol.ValidOrigin(origin) || !validHex(owner, 16) {
		return "", "", false
	}
	return origin, owner, true
}

// loadSizes counts the bytes of a shared store's files from one listing
// (a directory's are counted as reconcile reads them). Replicas count what
// they store themselves after that, so until the next start each counts
// the others' new files as they were at its own.
func (st *storage) loadSizes(ctx context.Context) error {
	err := st.b.ListSizes(ctx, fileDir, func(key string, size int64) error {
		origin, ok := protocol.OriginOfFileName(strings.TrimPrefix(key, fileDir))
		if !ok {
			return nil
		}
		st.mu.Lock()
		st.sizedLocked(origin, size)
		st.mu.Unlock()
		return nil
	})
	if err != nil {
		return fmt.Errorf("counting the bytes of the origins' files on %s: %w", st.b, err)
	}
	return nil
}

// loadOwners counts the origins each token stored. On a directory an
// owner key without its file (a PUT that died, a file removed by the
// operator) is removed; on a shared store it may be a PUT in progress at
// another replica, and counts.
func (st *storage) loadOwners(ctx context.Context) error {
	var stale []string
	err := st.b.List(ctx, ownersDir, "", func(key, _ string) error {
		origin, owner, ok := parseOwnerKey(key)
		if !ok {
			return nil
		}
		st.mu.Lock()
		defer st.mu.Unlock()
		_, held := st.entries[origin]
		if _, dup := st.owners[origin]; dup || (!st.shared && !held) {
			stale = append(stale, key)
			return nil
		}
		st.owners[origin] = owner
		st.perToken[owner]++
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading the owners of the origins from %s: %w", st.b, err)
	}
	if !st.shared {
		for _, k := range stale {
			st.dropKey(ctx, k)
		}
	}
	return nil
}

// reservation is a new origin's claim on the budgets while its PUT
// writes; release ends it.
type reservation struct {
	origin, owner string
	bytes         int64
	ownerKey      string // written for this PUT; removed if it fails
}

// reserve claims room for a new origin of n bytes stored by owner ("":
// nobody's), or returns a *budgetError. It writes the owner key before the
// file, so a crash between them leaves a key the next start removes.
func (st *storage) reserve(ctx context.Context, origin, owner string, n int64) (*reservation, error) {
	st.mu.Lock()
	b := st.budget
	if held := st.originsHeld(); b.origins > 0 && held >= b.origins {
		st.mu.Unlock()
		return nil, &budgetError{which: BudgetOrigins, held: int64(held), max: int64(b.origins)}
	}
	if b.bytes > 0 && st.bytes+st.resBytes+n > b.bytes {
		held := st.bytes + st.resBytes
		st.mu.Unlock()
		return nil, &budgetError{which: BudgetBytes, held: held, max: b.bytes, fileBytes: int(n)}
	}
	_, owned := st.owners[origin]
	if owner != "" && !owned && b.perToken > 0 && st.perToken[owner]+st.resToken[owner] >= b.perToken {
		held := st.perToken[owner] + st.resToken[owner]
		st.mu.Unlock()
		return nil, &budgetError{which: BudgetOriginsPerToken, held: int64(held), max: int64(b.perToken)}
	}
	r := &reservation{origin: origin, bytes: n}
	st.resOrigins[origin]++
	st.resBytes += n
	if owner != "" && !owned {
		r.owner = owner
		st.resToken[owner]++
	}
	st.mu.Unlock()
	if r.owner != "" {
		r.ownerKey = ownerKey(origin, owner)
		if _, err := st.b.Put(ctx, r.ownerKey, nil, Cond{}); err != nil {
			st.release(ctx, r, false)
			return nil, fmt.Errorf("recording who stores %s: %w", origin, err)
		}
	}
	return r, nil
}

// originsHeld counts the origins held and being written, each once (a
// new origin's entry is in memory before its claim ends). Call with mu
// held.
func (st *storage) originsHeld() int {
	n := len(st.entries)
	for o := range st.resOrigins {
		if _, ok := st.entries[o]; !ok {
			n++
		}
	}
	return n
}

// release ends r: the new origin is stored (ok) and counted, its size
// with it in one step, or its claim and owner key go.
func (st *storage) release(ctx context.Context, r *reservation, ok bool) {
	st.mu.Lock()
	if st.resOrigins[r.origin]--; st.resOrigins[r.origin] == 0 {
		delete(st.resOrigins, r.origin)
	}
	st.resBytes -= r.bytes
	if ok {
		st.sizedLocked(r.origin, r.bytes)
	}
	if r.owner != "" {
		st.resToken[r.owner]--
		if ok {
			st.owners[r.origin] = r.owner
			st.perToken[r.owner]++
		}
	}
	st.mu.Unlock()
	if !ok && r.ownerKey != "" {
		st.dropKey(ctx, r.ownerKey)
	}
}

// sized records that origin's stored file is now n bytes.
func (st *storage) sized(origin string, n int64) {
	st.mu.Lock()
	st.sizedLocked(origin, n)
	st.mu.Unlock()
}

func (st *storage) sizedLocked(origin string, n int64) {
	st.bytes += n - st.sizes[origin]
	st.sizes[origin] = n
}
