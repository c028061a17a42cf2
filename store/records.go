package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/remem/remem/protocol"
)

// MaxScopeBytes bounds a scope name.
const MaxScopeBytes = 512

// Held is one record of the merged set with how it came.
type Held struct {
	Record *protocol.Record
	// Arrived is when the record's set key first arrived here (the earliest
	// arrival of any version), so it never depends on arrival order.
	Arrived time.Time
	// Scopes are every scope any version of the record arrived by, sorted
	// and deduplicated; "local" for own records.
	Scopes []string
}

// Outcome is what PutRecords did with one record.
type Outcome int

const (
	// Added: the set key was not held; the record is now.
	Added Outcome = iota + 1
	// Replaced: the record superseded the held version of its set key.
	Replaced
	// Duplicate: the same bytes were held; at most its scope was added.
	Duplicate
	// Older: the held version supersedes it; it was dropped, but its scope
	// (and arrival) are noted on the held one.
	Older
)

func (o Outcome) String() string {
	switch o {
	case Added:
		return "added"
	case Replaced:
		return "replaced"
	case Duplicate:
		return "duplicate"
	case Older:
		return "older"
	}
	return "unknown"
}

// stored is a record as kept: a small binary header, then the raw line.
//
//	byte      format (1)
//	varint    updated/at of the raw line: seconds, nanoseconds (so merging needs no parse)
//	varint    first arrival: seconds, nanoseconds
//	uvarint   number of scopes, then each as uvarint length and bytes
//	rest      the raw line, byte for byte
type stored struct {
	Time    time.Time
	Arrived time.Time
	Scopes  []string
	Raw     []byte
}

const storedFormat = 1

func encodeStored(s stored) ([]byte, error) {
	return appendStored(make([]byte, 0, storedSize(s)), s), nil
}

// storedSize bounds the encoded size of s.
func storedSize(s stored) int {
	n := 1 + 4*binary.MaxVarintLen64 + binary.MaxVarintLen64 + len(s.Raw)
	for _, sc := range s.Scopes {
		n += binary.MaxVarintLen64 + len(sc)
	}
	return n
}

// appendStored appends the encoding of s to b.
func appendStored(b []byte, s stored) []byte {
	b = appendStoredHeader(b, s.Time, s.Arrived, len(s.Scopes))
	for _, sc := range s.Scopes {
		b = appendScope(b, sc)
	}
	return append(b, s.Raw...)
}

// appendStoredHeader appends the format, the times and the number of
// scopes; the scopes (appendScope) and the raw line follow.
func appendStoredHeader(b []byte, t, arrived time.Time, scopes int) []byte {
	b = append(b, storedFormat)
	b = binary.AppendVarint(b, t.Unix())
	b = binary.AppendVarint(b, int64(t.Nanosecond()))
	b = binary.AppendVarint(b, arrived.Unix())
	b = binary.AppendVarint(b, int64(arrived.Nanosecond()))
	return binary.AppendUvarint(b, uint64(scopes))
}

func appendScope[S ~string | ~[]byte](b []byte, sc S) []byte {
	b = binary.AppendUvarint(b, uint64(len(sc)))
	return append(b, sc...)
}

var errCorrupt = errors.New("a stored record is corrupt")

// decodeStored reads a value written by encodeStored; Raw aliases v.
// heldOf decodes a stored record value into what callers read.
func heldOf(v []byte) (Held, error) {
	st, err := decodeStored(v)
	if err != nil {
		return Held{}, err
	}
	return st.held()
}

func decodeStored(v []byte) (stored, error) {
	sv, err := parseStored(v, nil)
	if err != nil {
		return stored{}, err
	}
	s := stored{Time: sv.Time, Arrived: sv.Arrived, Scopes: make([]string, len(sv.Scopes)), Raw: sv.Raw}
	for i, sc := range sv.Scopes {
		s.Scopes[i] = string(sc)
	}
	return s, nil
}

// storedView is a stored value read in place: Scopes and Raw alias it.
type storedView struct {
	Time    time.Time
	Arrived time.Time
	Scopes  [][]byte
	Raw     []byte
}

// parseStored reads a value written by encodeStored without copying,
// appending its scopes to scopes.
func parseStored(v []byte, scopes [][]byte) (storedView, error) {
	var s storedView
	if len(v) == 0 || v[0] != storedFormat {
		return s, errCorrupt
	}
	v = v[1:]
	var ints [4]int64
	for i := range ints {
		x, n := binary.Varint(v)
		if n <= 0 {
			return s, errCorrupt
		}
		ints[i], v = x, v[n:]
	}
	s.Time = time.Unix(ints[0], ints[1]).UTC()
	s.Arrived = time.Unix(ints[2], ints[3]).UTC()
	count, n := binary.Uvarint(v)
	if n <= 0 || count > uint64(len(v)) {
		return s, errCorrupt
	}
	v = v[n:]
	s.Scopes = scopes
	for range count {
		l, n := binary.Uvarint(v)
		if n <= 0 || l > uint64(len(v)-n) {
			return s, errCorrupt
		}
		s.Scopes, v = append(s.Scopes, v[n:n+int(l)]), v[n+int(l):]
	}
	s.Raw = v
	return s, nil
}

func (s stored) held() (Held, error) {
	rec, err := protocol.Decode(s.Raw)
	if err != nil {
		return Held{}, fmt.Errorf("decoding a stored record: %w", err)
	}
	return Held{Record: rec, Arrived: s.Arrived, Scopes: s.Scopes}, nil
}

// recordKey is r/<hash>/<type digit>/<origin>.
func recordKey(k protocol.RecordKey) []byte {
	return appendRecordKey(make([]byte, 0, recordKeySize(k)), k)
}

func recordKeySize(k protocol.RecordKey) int { return 2 + len(k.Hash) + 3 + len(k.Origin) }

func appendRecordKey(b []byte, k protocol.RecordKey) []byte {
	b = append(b, "r/"...)
	b = append(b, k.Hash...)
	b = append(b, '/', '0'+byte(k.Type), '/')
	return append(b, k.Origin...)
}

func scopePrefix(scope string) []byte { return []byte("s/" + scope + "\x00") }

func scopeKey(scope string, k protocol.RecordKey) []byte {
	return append(scopePrefix(scope), recordKey(k)[2:]...)
}

func checkScope(scope string) error {
	if scope == "" {
		return fmt.Errorf("the scope is empty")
	}
	if len(scope) > MaxScopeBytes {
		return fmt.Errorf("the scope is %d bytes, the limit is %d", len(scope), MaxScopeBytes)
	}
	if strings.IndexByte(scope, 0) >= 0 {
		return fmt.Errorf("the scope %q holds a NUL byte", scope)
	}
	return nil
}

func checkRecord(r *protocol.Record) error {
	if r == nil {
		return fmt.Errorf("nil record")
	}
	if len(r.Raw) == 0 {
		return fmt.Errorf("the record has no raw line")
	}
	if r.Type < protocol.TypeLesson || r.Type > protocol.TypeRevocation {
		return fmt.Errorf("the record has no type")
	}
	if !isHexID(r.Hash) || !isHexID(r.Origin) {
		return fmt.Errorf("the record's hash %q or origin %q is not lowercase hex", r.Hash, r.Origin)
	}
	return nil
}

func isHexID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// PutRecords merges recs, all arrived by scope at arrived, into the set
// (SPEC §5 "Merging"): for each set key the record that protocol.Supersedes
// every other wins; scopes are the union of all arrivals' scopes and
// Arrived the earliest arrival, so the same records in any order give the
// same contents. The batch is one atomic change, however big.
// Records must have been verified (or signed) before.
func (s *Store) PutRecords(recs []*protocol.Record, scope string, arrived time.Time) ([]Outcome, error) {
	if err := checkScope(scope); err != nil {
		return nil, fmt.Errorf("storing records: %w", err)
	}
	return s.Merge(recs, scope, arrived, nil)
}

func putRecords(w *writer, recs []*protocol.Record, scope string, arrived time.Time) ([]Outcome, error) {
	arrived = arrived.UTC().Round(0)
	out := make([]Outcome, len(recs))
	// The keys and values the batch writes are cut from one buffer (the
	// transaction keeps them until it commits); a new record needs its
	// record key, value, scope key and origin key.
	size := 0
	for _, r := range recs {
		k := r.SetKey()
		size += 3*recordKeySize(k) + 2*len(scope) + 8*binary.MaxVarintLen64 + len(r.Raw)
	}
	a := arena{size: size}
	added := []string{scope} // the scopes of every new record (read only)
	if !w.held.built {
		w.held.build(w.txn)
	}
	var hk, kb []byte
	var scopes [][]byte // reused by parseStored
	scopeBytes := []byte(scope)
	for i, r := range recs {
		key := r.SetKey()
		kb = appendRecordKey(kb[:0], key)
		var val []byte // the value to write, cut from a; nil: none
		oldSize := 0   // the held value's size
		newScope := true
		found := false
		// A key the filter never saw is not held: no read.
		if w.held.mayHold(kb) {
			var err error
			found, err = w.view(kb, func(v []byte) error {
				oldSize = len(v)
				st, err := parseStored(v, scopes[:0])
				if err != nil {
					return err
				}
				scopes = st.Scopes
				changed := false
				switch {
				case bytes.Equal(st.Raw, r.Raw):
					out[i] = Duplicate
				case protocol.Supersedes(r, &protocol.Record{Time: st.Time, Raw: st.Raw}):
					out[i] = Replaced
					st.Time, st.Raw = r.Time.UTC(), r.Raw
					changed = true
				default:
					out[i] = Older
				}
				if arrived.Before(st.Arrived) {
					st.Arrived = arrived
					changed = true
				}
				j, has := slices.BinarySearchFunc(st.Scopes, scopeBytes, bytes.Compare)
				newScope = !has
				if !changed && has {
					return nil
				}
				// The value is rebuilt in a, since v is Badger's.
				n := len(st.Scopes)
				if newScope {
					n++
				}
				b := appendStoredHeader(a.start(), st.Time, st.Arrived, n)
				for x, sc := range st.Scopes {
					if newScope && x == j {
						b = appendScope(b, scope)
					}
					b = appendScope(b, sc)
				}
				if newScope && j == len(st.Scopes) {
					b = appendScope(b, scope)
				}
				val = a.cut(append(b, st.Raw...))
				return nil
			})
			if err != nil {
				return nil, err
			}
		} else {
			w.held.add(kb) // (a false maybe has its bits set already)
		}
		if !found {
			out[i] = Added
			val = a.cut(appendStored(a.start(), stored{Time: r.Time.UTC(), Arrived: arrived, Scopes: added, Raw: r.Raw}))
		}
		if val == nil {
			continue
		}
		if found {
			w.noteDelta(r.Origin, Use{0, int64(len(val) - oldSize)})
		} else {
			w.noteDelta(r.Origin, Use{1, int64(len(val))})
		}
		rk := a.cut(append(a.start(), kb...))
		if err := w.set(rk, val); err != nil {
			return nil, err
		}
		if newScope {
			b := append(a.start(), "s/"...)
			b = append(append(b, scope...), 0)
			if err := w.set(a.cut(append(b, rk[2:]...)), nil); err != nil {
				return nil, err
			}
		}
		if out[i] == Added {
			// The hash is held now: ForHash asks the filter.
			hk = append(append(hk[:0], "h/"...), key.Hash...)
			w.held.addNew(hk)
			// And the origin holds a record of it (the view index).
			ok := append(append(append(append(a.start(), originPrefix...), key.Origin...), '/'), key.Hash...)
			if err := w.set(a.cut(ok), nil); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// arena hands out the keys and values of one change from a shared buffer:
// append to start(), then cut() the result. A piece that does not fit the
// buffer's capacity moves to a new buffer; pieces cut before stay valid.
type arena struct {
	buf  []byte
	size int // what the first buffer is made for (0: a default)
}

// start returns the empty tail of the buffer to append one piece to. The
// first buffer is made when first asked for, so a change that writes
// nothing allocates none.
func (a *arena) start() []byte {
	if a.buf == nil {
		a.buf = make([]byte, 0, max(a.size, 256))
	}
	return a.buf[len(a.buf):]
}

// cut takes piece, appended to start(), out of the buffer.
func (a *arena) cut(piece []byte) []byte {
	piece = piece[:len(piece):len(piece)]
	if len(a.buf) < cap(a.buf) && len(piece) > 0 && &a.buf[:len(a.buf)+1][len(a.buf)] == &piece[0] {
		a.buf = a.buf[:len(a.buf)+len(piece)]
	}
	return piece
}

// NoteScope adds scope to the scopes of the held records keys (unknown keys
// are skipped): a transport calls it after publishing own records into a
// scope, so InScope(scope) offers them to that scope's peers.
func (s *Store) NoteScope(scope string, keys []protocol.RecordKey) error {
	if err := checkScope(scope); err != nil {
		return fmt.Errorf("noting a scope: %w", err)
	}
	err := s.update(func(w *writer) error {
		for _, key := range keys {
			rk := recordKey(key)
			v, ok, err := w.get(rk)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			st, err := decodeStored(v)
			if err != nil {
				return err
			}
			j, found := slices.BinarySearch(st.Scopes, scope)
			if found {
				continue
			}
			st.Scopes = slices.Insert(st.Scopes, j, scope)
			val, err := encodeStored(st)
			if err != nil {
				return err
			}
			if err := w.set(rk, val); err != nil {
				return err
			}
			if err := w.set(scopeKey(scope, key), nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("noting scope %s: %w", scope, err)
	}
	return nil
}

// Get returns the held record of key.
func (s *Store) Get(key protocol.RecordKey) (Held, bool, error) {
	var h Held
	var ok bool
	err := s.view(func(txn *badger.Txn) error {
		v, found, err := getIn(txn, recordKey(key))
		if err != nil || !found {
			return err
		}
		st, err := decodeStored(v)
		if err != nil {
			return err
		}
		h, err = st.held()
		ok = err == nil
		return err
	})
	if err != nil {
		return Held{}, false, fmt.Errorf("reading record %s %s %s: %w", key.Type, key.Origin, key.Hash, err)
	}
	return h, ok, nil
}

// ForHash returns every record about hash (lessons, confirmations,
// revocations), ordered by type then origin.
func (s *Store) ForHash(hash string) ([]Held, error) {
	var out []Held
	// Most hashes a delivery asks about are new: the filter of what is
	// held answers that without reading Badger. (A "hash" with a slash is
	// no hash; the scan answers for it as it always did.)
	if !strings.Contains(hash, "/") && s.open() {
		if maybe, known := s.held.mayHoldHash(hash); known && !maybe {
			return nil, nil
		}
	}
	err := s.view(func(txn *badger.Txn) error {
		return scanPrefix(txn, []byte("r/"+hash+"/"), true, func(_, v []byte) error {
			h, err := heldOf(v)
			if err != nil {
				return err
			}
			out = append(out, h)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading records of %s: %w", hash, err)
	}
	return out, nil
}

// Hashes returns every hash some record is about, sorted. It reads keys
// only.
func (s *Store) Hashes() ([]string, error) {
	var out []string
	err := s.view(func(txn *badger.Txn) error {
		prefix := []byte(recordKeysPrefix)
		o := badger.DefaultIteratorOptions
		o.Prefix, o.PrefetchValues = prefix, false
		it := txn.NewIterator(o)
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			// Keys sort hash first: a new hash follows the last record of
			// the one before.
			if h := hashOfKey(it.Item().Key()); len(out) == 0 || string(h) != out[len(out)-1] {
				out = append(out, string(h))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing hashes: %w", err)
	}
	return out, nil
}

// Each calls fn for every held record in key order (hash, type, origin).
// fn runs outside any transaction and may use the store; an error from fn
// stops the walk and is returned as is.
func (s *Store) Each(fn func(Held) error) error {
	return eachPage(s, "r/", 512, func(v []byte) (Held, error) { return heldOf(v) }, func(batch []Held) error {
		for _, h := range batch {
			if err := fn(h); err != nil {
				return err
			}
		}
		return nil
	}, "reading records")
}

// eachPage decodes the values under prefix in key order, a page of them per
// read transaction, and hands each page to fn outside the transaction (so
// fn may write). An error of decode is wrapped with what; fn's is returned
// as is.
func eachPage[T any](s *Store, prefix string, page int, decode func(v []byte) (T, error), fn func([]T) error, what string) error {
	var after []byte
	for {
		var batch []T
		err := s.view(func(txn *badger.Txn) error {
			p := []byte(prefix)
			o := badger.DefaultIteratorOptions
			o.Prefix, o.PrefetchSize = p, 64
			it := txn.NewIterator(o)
			defer it.Close()
			start := p
			if after != nil {
				start = append(slices.Clone(after), 0)
			}
			for it.Seek(start); it.ValidForPrefix(p) && len(batch) < page; it.Next() {
				item := it.Item()
				v, err := item.ValueCopy(nil) // what decode keeps may alias it
				if err != nil {
					return err
				}
				x, err := decode(v)
				if err != nil {
					return err
				}
				batch = append(batch, x)
				after = item.KeyCopy(after[:0])
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if err := fn(batch); err != nil {
			return err
		}
		if len(batch) < page {
			return nil
		}
	}
}

// InScope returns the records that arrived by scope, and own records noted
// as published into it (NoteScope), in key order. InScope("local") is every
// own record.
func (s *Store) InScope(scope string) ([]Held, error) {
	var out []Held
	err := s.view(func(txn *badger.Txn) error {
		prefix := scopePrefix(scope)
		var keys [][]byte
		if err := scanPrefix(txn, prefix, false, func(k, _ []byte) error {
			keys = append(keys, append([]byte("r/"), k[len(prefix):]...))
			return nil
		}); err != nil {
			return err
		}
		for _, k := range keys {
			v, ok, err := getIn(txn, k)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			h, err := heldOf(v)
			if err != nil {
				return err
			}
			out = append(out, h)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading records of scope %s: %w", scope, err)
	}
	return out, nil
}

// RevokedHashes returns the hashes of which some revocation is held (in
// any scope). Only those can be revoked (SPEC §8), so a reader that must
// leave revoked lessons out reads the records of these hashes alone. It
// reads keys only.
func (s *Store) RevokedHashes() (map[string]bool, error) {
	out := map[string]bool{}
	err := s.view(func(txn *badger.Txn) error {
		return scanPrefix(txn, []byte("r/"), false, func(k, _ []byte) error {
			// r/<hash>/<type digit>/<origin>
			rest := k[2:]
			i := bytes.IndexByte(rest, '/')
			if i > 0 && i+1 < len(rest) && rest[i+1] == '0'+byte(protocol.TypeRevocation) {
				out[string(rest[:i])] = true
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading the revoked hashes: %w", err)
	}
	return out, nil
}

// CountRecords returns how many records are held.
func (s *Store) CountRecords() (int, error) {
	n := 0
	err := s.view(func(txn *badger.Txn) error {
		return scanPrefix(txn, []byte("r/"), false, func(_, _ []byte) error { n++; return nil })
	})
	if err != nil {
		return 0, fmt.Errorf("counting records: %w", err)
	}
	return n, nil
}

// HashesWithPrefix returns up to limit hashes, sorted, that start with
// prefix and that a local lesson or a held record is about. It reads keys
// only.
func (s *Store) HashesWithPrefix(prefix string, limit int) ([]string, error) {
	found := map[string]bool{}
	err := s.view(func(txn *badger.Txn) error {
		for _, space := range []string{"l/", recordKeysPrefix} {
			p := []byte(space + prefix)
			o := badger.DefaultIteratorOptions
			o.Prefix, o.PrefetchValues = p, false
			it := txn.NewIterator(o)
			for it.Seek(p); it.ValidForPrefix(p) && len(found) < limit; it.Next() {
				h, _, _ := strings.Cut(string(it.Item().Key()[len(space):]), "/")
				found[h] = true
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing hashes starting with %s: %w", prefix, err)
	}
	return slices.Sorted(maps.Keys(found)), nil
}

// Lines returns the raw lines held under keys, read in one transaction
// (nil where none is held): what a sync session sends needs no decoding.
func (s *Store) Lines(keys []protocol.RecordKey) ([][]byte, error) {
	out := make([][]byte, len(keys))
	var kb []byte
	err := s.view(func(txn *badger.Txn) error {
		for i, k := range keys {
			kb = appendRecordKey(kb[:0], k)
			item, err := txn.Get(kb)
			if errors.Is(err, badger.ErrKeyNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			err = item.Value(func(v []byte) error {
				sv, err := parseStored(v, nil)
				if err == nil {
					out[i] = slices.Clone(sv.Raw)
				}
				return err
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %d record lines: %w", len(keys), err)
	}
	return out, nil
}

// errStopKeys ends EachKeyOfHash's scan early.
var errStopKeys = errors.New("stop")

// EachKeyOfHash calls fn with the key of every record held about hash,
// ordered by type (lessons, confirmations, revocations) then origin,
// until fn returns false. It reads keys only: a hash that many origins
// hold records of (free keys cost nothing) is walked without decoding a
// single record, and most callers stop at the first that answers them.
func (s *Store) EachKeyOfHash(hash string, fn func(protocol.RecordKey) bool) error {
	if !strings.Contains(hash, "/") && s.open() {
		if maybe, known := s.held.mayHoldHash(hash); known && !maybe {
			return nil
		}
	}
	prefix := []byte("r/" + hash + "/")
	err := s.view(func(txn *badger.Txn) error {
		o := badger.DefaultIteratorOptions
		o.Prefix, o.PrefetchValues = prefix, false
		it := txn.NewIterator(o)
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			rest := it.Item().Key()[len(prefix):] // <type>/<origin>
			if len(rest) < 3 || rest[1] != '/' || rest[0] < '0'+byte(protocol.TypeLesson) || rest[0] > '0'+byte(protocol.TypeRevocation) {
				continue
			}
			k := protocol.RecordKey{Type: protocol.Type(rest[0] - '0'), Origin: string(rest[2:]), Hash: hash}
			if !fn(k) {
				return errStopKeys
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopKeys) {
		return fmt.Errorf("reading the records of %s: %w", hash, err)
	}
	return nil
}
