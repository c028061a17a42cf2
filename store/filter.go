package store

import (
	"hash/maphash"
	"math/bits"

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
// it was sized for, one for half as many keys as the filter holds is
// added, so nothing is rescanned. It costs 10 bits a key it is sized for,
// about 2 bytes a record held.
//
// It is used only under Store.wmu (inside update).
type heldFilter struct {
	built  bool
	seed   maphash.Seed
	layers []bloomLayer
}

type bloomLayer struct {
	bits  []uint64
	nbits uint64 // len(bits)*64
	n     int    // keys added
	max   int    // keys it is sized for
}

const (
	bloomProbes      = 7 // with 10 bits a key: about 1% false positives
	bloomBitsPerKey  = 10
	bloomFirstLayer  = 4096
	recordKeysPrefix = "r/"
)

func newBloomLayer(keys int) bloomLayer {
	words := (keys*bloomBitsPerKey + 63) / 64
	return bloomLayer{bits: make([]uint64, words), nbits: uint64(words) * 64, max: keys}
}

// hash gives the two hashes the bit positions of k derive from (double
// hashing).
func (f *heldFilter) hash(k []byte) (h1, h2 uint64) {
	h := maphash.Bytes(f.seed, k)
	return h, h>>32 | h<<32 | 1
}

// bit is the i-th probe's bit position in l: h1 + i*h2 scaled to the
// layer's size.
func (l *bloomLayer) bit(h1, h2, i uint64) uint64 {
	hi, _ := bits.Mul64(h1+i*h2, l.nbits)
	return hi
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
		b := l.bit(h1, h2, i)
		if l.bits[b>>6]&(1<<(b&63)) == 0 {
			return false
		}
	}
	return true
}

// add notes record key k as held.
func (f *heldFilter) add(k []byte) {
	h1, h2 := f.hash(k)
	f.addHash(h1, h2)
}

func (f *heldFilter) addHash(h1, h2 uint64) {
	if len(f.layers) == 0 || f.layers[len(f.layers)-1].n >= f.layers[len(f.layers)-1].max {
		// A layer for half as many keys as the filter holds: the layers
		// stay few, and hold at most about 1.5 times as many bits as
		// the keys need.
		held := 0
		for _, l := range f.layers {
			held += l.n
		}
		f.layers = append(f.layers, newBloomLayer(max(bloomFirstLayer, held/2)))
	}
	l := &f.layers[len(f.layers)-1]
	for i := uint64(0); i < bloomProbes; i++ {
		b := l.bit(h1, h2, i)
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
	var hs []uint64 // the keys' hashes, to size the first layer
	for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
		hs = append(hs, maphash.Bytes(f.seed, it.Item().Key()))
	}
	f.layers = []bloomLayer{newBloomLayer(max(bloomFirstLayer, len(hs)+len(hs)/2))}
	for _, h := range hs {
		f.addHash(h, h>>32|h<<32|1)
	}
	f.built = true
}
