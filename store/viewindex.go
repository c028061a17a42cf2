package store

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/remem/remem/protocol"
)

// The view index lets a view with a limit read what it shows, not every
// lesson held: strangers can make a memory hold any number of candidates,
// and a view must not cost what they sent (issue 28).
//
//	v/<rank: 8 bytes, highest first><hash>   every lesson, by protocol.StrengthRank
//	x/<hash> -> the 8 rank bytes               where its v/ key is, to replace it
//	g/<origin>/<hash>                          the hashes an origin holds a record of
//
// The rank folds in the decay window the store was opened with
// (Options.RankWindow); a store opened with another window builds the v/
// index again, once.
const (
	rankPrefix   = "v/"
	rankOfPrefix = "x/"
	originPrefix = "g/"
)

// viewIndexVersion names the index's layout; another one is built again.
const viewIndexVersion = 1

// viewIndexMeta is what the index was built for.
type viewIndexMeta struct {
	Version int           `json:"version"`
	Window  time.Duration `json:"window"`
}

const viewIndexMetaKey = "view_index"

// rankBytes encodes a rank so that higher ranks sort first.
func rankBytes(rank float64) [8]byte {
	bits := math.Float64bits(rank)
	if bits>>63 == 1 {
		bits = ^bits
	} else {
		bits |= 1 << 63
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], ^bits)
	return b
}

// rankOfBytes is the inverse of rankBytes.
func rankOfBytes(b []byte) float64 {
	bits := ^binary.BigEndian.Uint64(b)
	if bits>>63 == 1 {
		bits &^= 1 << 63
	} else {
		bits = ^bits
	}
	return math.Float64frombits(bits)
}

func rankKey(rank [8]byte, hash string) []byte {
	return append(append([]byte(rankPrefix), rank[:]...), hash...)
}

// parseRankKey reads a v/ key; ok is false for anything else.
func parseRankKey(k []byte) (rank float64, hash string, ok bool) {
	if len(k) <= len(rankPrefix)+8 || string(k[:len(rankPrefix)]) != rankPrefix {
		return 0, "", false
	}
	return rankOfBytes(k[len(rankPrefix) : len(rankPrefix)+8]), string(k[len(rankPrefix)+8:]), true
}

func rankOfKey(hash string) []byte { return []byte(rankOfPrefix + hash) }

func originKey(origin, hash string) []byte { return []byte(originPrefix + origin + "/" + hash) }

// indexLesson moves l's v/ entry to its rank now, inside an update.
func (s *Store) indexLesson(w *writer, l *Lesson) error {
	rank := rankBytes(protocol.StrengthRank(l.Strength, l.Updated, s.rankWindow))
	old, found, err := w.get(rankOfKey(l.Hash))
	if err != nil {
		return err
	}
	if found && string(old) == string(rank[:]) {
		return nil
	}
	if found && len(old) == 8 {
		if err := w.del(rankKey([8]byte(old), l.Hash)); err != nil {
			return err
		}
	}
	if err := w.set(rankKey(rank, l.Hash), nil); err != nil {
		return err
	}
	return w.set(rankOfKey(l.Hash), rank[:])
}

// unindexLesson drops hash's v/ entry, inside an update.
func unindexLesson(w *writer, hash string) error {
	old, found, err := w.get(rankOfKey(hash))
	if err != nil || !found {
		return err
	}
	if len(old) == 8 {
		if err := w.del(rankKey([8]byte(old), hash)); err != nil {
			return err
		}
	}
	return w.del(rankOfKey(hash))
}

// unindexOrigins drops the g/ entry of each key's origin and hash of which
// the origin holds no record any more, inside the update that deleted
// keys (Forget).
func unindexOrigins(w *writer, keys []protocol.RecordKey) error {
	for _, k := range keys {
		held := false
		for _, t := range []protocol.Type{protocol.TypeLesson, protocol.TypeConfirmation, protocol.TypeRevocation} {
			_, found, err := w.get(recordKey(protocol.RecordKey{Hash: k.Hash, Type: t, Origin: k.Origin}))
			if err != nil {
				return err
			}
			held = held || found
		}
		if !held {
			if err := w.del(originKey(k.Origin, k.Hash)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Ranked is one entry of the view index: a lesson's hash and its rank.
type Ranked struct {
	Hash string
	Rank float64
}

// rankPage is how many index entries one read transaction takes.
const rankPage = 256

// WalkRanked calls fn with the lessons held, highest rank first (ties by
// hash), until fn returns false or an error. It reads keys only, a page at
// a time, and fn runs outside any transaction.
func (s *Store) WalkRanked(fn func(Ranked) (bool, error)) error {
	var after []byte
	for {
		var page []Ranked
		err := s.view(func(txn *badger.Txn) error {
			prefix := []byte(rankPrefix)
			o := badger.DefaultIteratorOptions
			o.Prefix, o.PrefetchValues = prefix, false
			it := txn.NewIterator(o)
			defer it.Close()
			start := prefix
			if after != nil {
				start = append(slices.Clone(after), 0)
			}
			for it.Seek(start); it.ValidForPrefix(prefix) && len(page) < rankPage; it.Next() {
				k := it.Item().Key()
				rank, hash, ok := parseRankKey(k)
				if !ok {
					return fmt.Errorf("%w: view index key %q", errCorrupt, k)
				}
				page = append(page, Ranked{Hash: hash, Rank: rank})
				after = append(after[:0], k...)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("reading the view index: %w", err)
		}
		for _, r := range page {
			if more, err := fn(r); err != nil || !more {
				return err
			}
		}
		if len(page) < rankPage {
			return nil
		}
	}
}

// HashesOf returns the hashes origin holds some record of (any type),
// sorted. It reads keys only.
func (s *Store) HashesOf(origin string) ([]string, error) {
	var out []string
	prefix := []byte(originPrefix + origin + "/")
	err := s.view(func(txn *badger.Txn) error {
		return scanPrefix(txn, prefix, false, func(k, _ []byte) error {
			out = append(out, string(k[len(prefix):]))
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading the hashes of origin %s: %w", origin, err)
	}
	return out, nil
}

// OwnHashes returns the hashes of the own lessons, sorted, from memory.
func (s *Store) OwnHashes() []string {
	s.ownMu.Lock()
	defer s.ownMu.Unlock()
	out := make([]string, 0, len(s.own))
	for h := range s.own {
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

// buildViewIndex builds the index at open when it is missing, of another
// layout or of another window; a crash while building builds it again.
func (s *Store) buildViewIndex() error {
	var meta viewIndexMeta
	found, err := s.GetMeta(viewIndexMetaKey, &meta)
	if err != nil {
		return err
	}
	want := viewIndexMeta{Version: viewIndexVersion, Window: s.rankWindow}
	if found && meta == want {
		return nil
	}
	prefixes := [][]byte{[]byte(rankPrefix), []byte(rankOfPrefix)}
	if !found || meta.Version != want.Version {
		prefixes = append(prefixes, []byte(originPrefix))
	}
	if err := s.db.DropPrefix(prefixes...); err != nil {
		return fmt.Errorf("building the view index: %w", err)
	}
	if err := s.indexAllLessons(); err != nil {
		return err
	}
	if len(prefixes) == 3 {
		if err := s.indexAllOrigins(); err != nil {
			return err
		}
	}
	return s.SetMeta(viewIndexMetaKey, want)
}

// indexAllLessons writes the v/ and x/ entries of every lesson held, a
// page of lessons per change.
func (s *Store) indexAllLessons() error {
	decode := func(v []byte) (Lesson, error) {
		var l Lesson
		err := unmarshalLesson(v, &l)
		return l, err
	}
	return eachPage(s, "l/", 1024, decode, func(ls []Lesson) error {
		err := s.update(func(w *writer) error {
			for i := range ls {
				if err := s.indexLesson(w, &ls[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("building the view index of lessons: %w", err)
		}
		return nil
	}, "building the view index of lessons")
}

// indexAllOrigins writes the g/ entry of every record held.
func (s *Store) indexAllOrigins() error {
	var keys [][]byte
	err := s.view(func(txn *badger.Txn) error {
		return scanPrefix(txn, []byte("r/"), false, func(k, _ []byte) error {
			// r/<hash>/<type digit>/<origin>
			hash := hashOfKey(k)
			origin := k[2+len(hash)+3:]
			keys = append(keys, originKey(string(origin), string(hash)))
			return nil
		})
	})
	if err == nil {
		err = s.update(func(w *writer) error {
			for _, k := range keys {
				if err := w.set(k, nil); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("building the view index of origins: %w", err)
	}
	return nil
}
