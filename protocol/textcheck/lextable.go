package textcheck

// lexTable is the lexicon: word -> entry (classes, and a phrase number in
// the top bits). Every word of every check is looked up, so it is an open
// addressing table keyed by the FNV-1a hash the tokenizer computes for the
// model anyway (token.h), not a map that hashes the word again.
type lexTable struct {
	keys []string
	hs   []uint32
	vals []uint64
	n    int
}

// wordHash is a word's hash, as token.h holds it.
func wordHash(w string) uint32 { return uint32(newHash(0).str(w)) }

func newLexTable(m map[string]uint64) *lexTable {
	t := &lexTable{}
	t.resize(max(64, 4*len(m)))
	for w, v := range m {
		t.or(w, v)
	}
	return t
}

// resize makes room for at least size slots, a power of two, and puts the
// entries back.
func (t *lexTable) resize(size int) {
	n := 64
	for n < size {
		n <<= 1
	}
	keys, vals := t.keys, t.vals
	t.keys, t.hs, t.vals, t.n = make([]string, n), make([]uint32, n), make([]uint64, n), 0
	for i, k := range keys {
		if k != "" {
			t.or(k, vals[i])
		}
	}
}

// get is w's entry, 0 when the lexicon lacks it.
func (t *lexTable) get(w string) uint64 { return t.getHash(w, wordHash(w)) }

// getHash is get with w's hash already computed.
func (t *lexTable) getHash(w string, h uint32) uint64 {
	mask := uint32(len(t.keys) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		k := t.keys[i]
		if k == "" {
			return 0
		}
		if t.hs[i] == h && k == w {
			return t.vals[i]
		}
	}
}

// or adds bits to w's entry, adding w when it is new (at init only: the
// table is read without a lock).
func (t *lexTable) or(w string, bits uint64) {
	if w == "" {
		return // no word; an empty slot marks the end of a probe
	}
	if 2*(t.n+1) > len(t.keys) {
		t.resize(4 * (t.n + 1))
	}
	h := wordHash(w)
	mask := uint32(len(t.keys) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch {
		case t.keys[i] == "":
			t.keys[i], t.hs[i], t.vals[i] = w, h, bits
			t.n++
			return
		case t.hs[i] == h && t.keys[i] == w:
			t.vals[i] |= bits
			return
		}
	}
}

// A wordList is a small list of words that rules look for among every
// token. Its filter has one bit per value of a word hash's low byte, set
// for the list's words, so a token whose bit is clear (most) is passed
// over with one test instead of a map look-up.
type wordList struct {
	filter [4]uint64
	words  map[string]bool
}

func newWordList(words ...string) *wordList {
	l := &wordList{words: make(map[string]bool, len(words))}
	for _, w := range words {
		h := wordHash(w)
		l.filter[h>>6&3] |= 1 << (h & 63)
		l.words[w] = true
	}
	return l
}

// has reports whether t's word is in the list (t.h is its hash).
func (l *wordList) has(t *token) bool {
	return l.filter[t.h>>6&3]&(1<<(t.h&63)) != 0 && l.words[t.w]
}
