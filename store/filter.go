package store

import (
	"bytes"
	"hash/maphash"
	"math/bits"
	"sync"

	"github.com/dgraph-io/badger/v4"
)

// heldFilter is a Bloom filter, kept in memory, of the record keys held
// (r/<hash>/<type>/<origin>) and of the hashes some record is about
// (entered as h/<hash>). Merging a record whose set key is new (most of
// what gossip delivers) needs no Badger read, and ForHash answers a hash
// no record is about without one: a key the filter never saw is surely
// not held. It may say "maybe" of a key not held (a few % of them; the
// caller then reads Badger), never "no" of a held one: every record key
// is written by putRecords, which adds it and its hash before the change
// commits (a change that then fails leaves only false maybes). Records
// are never deleted, so nothing is ever taken out.
//
// It is built, from a key-only scan of the record keys, by the first
// merge after Open (until then ForHash scans), and grows by layers: when
// the newest layer holds as many keys as it was sized for, one for as many
// keys as the filter holds is added, so nothing is rescanned (100,000 keys:
// six layers, 1.6% false positives). It costs 12 bits a key it is sized
// for, which is 1 to 2 times the keys it holds: 3 to 6 bytes a record
// when every record is about a hash of its own, less when hashes have
// several records.
//
// Writers (putRecords) use it under Store.wmu; mu lets readers (ForHash)
// ask it meanwhile.
type heldFilter struct {
	mu     sync.RWMutex
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
	bloomProbes      = 8 // with 12 bits a key: about 0.5% false positives a full layer
	bloomBitsPerKey  = 12
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

// mayHold reports whether key k (a record key, or h/<hash>) may be held;
// false means it is not. The filter must be built.
func (f *heldFilter) mayHold(k []byte) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.mayHoldLocked(k)
}

func (f *heldFilter) mayHoldLocked(k []byte) bool {
	h1, h2 := f.hash(k)
	for i := range f.layers {
		if f.layers[i].has(h1, h2) {
			return true
		}
	}
	return false
}

// mayHoldHash reports whether some record may be about hash, and whether
// the filter could tell (it is built).
func (f *heldFilter) mayHoldHash(hash string) (maybe, known bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if !f.built {
		return true, false
	}
	k := make([]byte, 0, 2+len(hash))
	return f.mayHoldLocked(append(append(k, "h/"...), hash...)), true
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

// add notes key k (a record key, or h/<hash>) as held.
func (f *heldFilter) add(k []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h1, h2 := f.hash(k)
	f.addHash(h1, h2)
}

// addNew adds k unless the filter may hold it already (its bits are set
// then, and stay so).
func (f *heldFilter) addNew(k []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h1, h2 := f.hash(k)
	for i := range f.layers {
		if f.layers[i].has(h1, h2) {
			return
		}
	}
	f.addHash(h1, h2)
}

func (f *heldFilter) addHash(h1, h2 uint64) {
	if len(f.layers) == 0 || f.layers[len(f.layers)-1].n >= f.layers[len(f.layers)-1].max {
		// A layer for as many keys as the filter holds: the layers stay
		// few (each adds its false positives), and hold at most about
		// twice as many bits as the keys need.
		held := 0
		for _, l := range f.layers {
			held += l.n
		}
		f.layers = append(f.layers, newBloomLayer(max(bloomFirstLayer, held)))
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

// build fills the filter with every record key txn sees and their hashes.
func (f *heldFilter) build(txn *badger.Txn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reset()
	prefix := []byte(recordKeysPrefix)
	o := badger.DefaultIteratorOptions
	o.Prefix, o.PrefetchValues = prefix, false
	it := txn.NewIterator(o)
	defer it.Close()
	var hs []uint64 // the keys' hashes, to size the first layer
	var last, hk []byte
	for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
		k := it.Item().Key()
		hs = append(hs, maphash.Bytes(f.seed, k))
		// Keys sort hash first: a record of a new hash follows the last
		// one of the previous hash.
		if h := hashOfKey(k); !bytes.Equal(h, last) {
			hk = append(append(hk[:0], "h/"...), h...)
			hs = append(hs, maphash.Bytes(f.seed, hk))
			last = append(last[:0], h...)
		}
	}
	f.layers = []bloomLayer{newBloomLayer(max(bloomFirstLayer, len(hs)+len(hs)/2))}
	for _, h := range hs {
		f.addHash(h, h>>32|h<<32|1)
	}
	f.built = true
}

// hashOfKey is the hash of record key k (r/<hash>/<type>/<origin>).
func hashOfKey(k []byte) []byte {
	rest := k[len(recordKeysPrefix):]
	if i := bytes.IndexByte(rest, '/'); i >= 0 {
		return rest[:i]
	}
	return rest
}
