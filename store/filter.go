package store

import (
	"hash/maphash"

	"github.com/dgraph-io/badger/v4"
)

// heldFilter is a Bloom filter of the record keys (r/...) held, kept in
// memory so that merging a record whose set key is new (most of what
// gossip delivers) needs no Badger read: a key the filter has never seen
// is surely not held. It may say "maybe" of a key not held (about 1% of
// them, then the merge reads Badger as before), never "no" of a held one:
// every record key written goes through putRecords, which adds it before
// the change commits (a change that then fails leaves only a false
// "maybe"). Records are never deleted, so nothing is ever taken out.
//
// It is built, from a scan of the record keys, by the first merge after
// Open, and grows by layers: when the newest layer holds as many keys as
// it was sized for, a layer twice its size is added, so nothing is
// rescanned. It costs about 1.2 bytes a record held (10 bits a key in the
// layer being filled, half of it unused on average).
//
// It is used only under Store.wmu (inside update).
type heldFilter struct {
	built  bool
	seed   maphash.Seed
	layers []bloomLayer
}

type bloomLayer struct {
	bits []uint64
	mask uint64 // len(bits)*64 - 1 (a power of two)
	n    int    // keys added
	max  int    // keys it is sized for
}

const (
	bloomProbes      = 7  // with 10 bits a key: about 1% false positives
	bloomBitsPerKey  = 10 // rounded up to a power of two per layer
	bloomFirstLayer  = 4096
	recordKeysPrefix = "r/"
)

func newBloomLayer(keys int) bloomLayer {
	bits := uint64(64)
	for bits < uint64(keys)*bloomBitsPerKey {
		bits <<= 1
	}
	return bloomLayer{bits: make([]uint64, bits/64), mask: bits - 1, max: keys}
}

// hash gives the two hashes the bit positions of k derive from (double
// hashing).
func (f *heldFilter) hash(k []byte) (h1, h2 uint64) {
	h := maphash.Bytes(f.seed, k)
	return h, h>>32 | h<<32 | 1
}

// mayHold reports whether record key k may be held; false means it is not.
func (f *heldFilter) mayHold(k []byte) bool {
	h1, h2 := f.hash(k)
	for i := range f.layers {
		if f.layers[i].has(h1, h2) {
			return true
		}
	}
	return false
}

func (l *bloomLayer) has(h1, h2 uint64) bool {
	for i := uint64(0); i < bloomProbes; i++ {
		b := (h1 + i*h2) & l.mask
		if l.bits[b>>6]&(1<<(b&63)) == 0 {
			return false
		}
	}
	return true
}

// add notes record key k as held.
func (f *heldFilter) add(k []byte) {
	if len(f.layers) == 0 || f.layers[len(f.layers)-1].n >= f.layers[len(f.layers)-1].max {
		size := bloomFirstLayer
		if len(f.layers) > 0 {
			size = 2 * f.layers[len(f.layers)-1].max
		}
		f.layers = append(f.layers, newBloomLayer(size))
	}
	l := &f.layers[len(f.layers)-1]
	h1, h2 := f.hash(k)
	for i := uint64(0); i < bloomProbes; i++ {
		b := (h1 + i*h2) & l.mask
		l.bits[b>>6] |= 1 << (b & 63)
	}
	l.n++
}

// reset empties the filter.
func (f *heldFilter) reset() {
	f.seed = maphash.MakeSeed()
	f.layers = nil
}

// build fills the filter with every record key txn sees.
func (f *heldFilter) build(txn *badger.Txn) {
	f.reset()
	prefix := []byte(recordKeysPrefix)
	o := badger.DefaultIteratorOptions
	o.Prefix, o.PrefetchValues = prefix, false
	it := txn.NewIterator(o)
	defer it.Close()
	for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
		f.add(it.Item().Key())
	}
	f.built = true
}
