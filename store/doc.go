// Package store is one memory's persistent state, kept in Badger v4 under
// <home>/db and guarded by an exclusive lock on <home>/LOCK.
//
// It owns:
//   - records: the merged set of signed lesson, confirmation and revocation
//     lines keyed by (type, origin, hash), each with its first arrival time
//     and the scopes it arrived by (SPEC §5 "Merging"). Revocations are held
//     like any record and never deleted, so an older lesson line that arrives
//     again cannot resurrect a revoked hash (SPEC §8);
//   - events: the local surprise reports (SPEC §2), deduplicated, each
//     pending until sleep absorbs it into a lesson;
//   - lessons: this memory's local lessons, its own and received candidates
//     (SPEC §3, §7);
//   - the outbox of this memory's own signed records, in signing order, and
//     one cursor per transport;
//   - small settings and state as JSON (meta).
//
// Key layout (every family is a prefix, so each read is one prefix scan):
//
//	r/<hash>/<type digit>/<origin>        record: binary header (times, scopes), raw line
//	s/<scope>\x00<hash>/<type>/<origin>   scope index (empty value)
//	e/<seq:8>                             event (JSON)
//	d/<sha256(dedupe key)>                event dedupe index -> seq
//	p/<seq:8>                             pending event index
//	a/<lesson hash>/<seq:8>               events absorbed into a lesson
//	t/<received:8>/<seq:8>                events by time received
//	l/<hash>                              lesson (JSON)
//	w/<hash>                              the lesson is this memory's own (empty value)
//	v/<rank:8><hash>                      view index: lessons, highest StrengthRank first (empty value)
//	x/<hash>                              the 8 rank bytes of the lesson's v/ key
//	g/<origin>/<hash>                     the origin holds a record of the hash (empty value)
//	o/<seq:8>                             outbox: raw line of an own record
//	c/<name>                              transport cursor (8 bytes)
//	m/<key>                               meta (JSON)
//	n/<name>                              sequence counters (8 bytes)
//
// Records are keyed hash first, so "every record about a hash" is a prefix
// scan of the primary keys and needs no second index, and the hashes are
// listed by a key-only scan of r/.
//
// The store keeps a Bloom filter of the record keys and of their hashes
// in memory (filter.go: built by the first merge after Open from a
// key-only scan of r/, 3 to 6 bytes a record). A merge reads the held
// version only of a record key the filter may hold, so a new record costs
// no read, and ForHash answers a hash no record is about without reading.
//
// Homes written before the filter also hold h/<hash>, an empty mark for
// every hash some record was about; nothing reads or writes them any more,
// and they are left in place (TestOldHomeWithHashMarks). The older code
// must not open a home this code wrote: its ForHash would miss the hashes
// that have no mark.
//
// All writes are serialised by one mutex, and every one is atomic: a
// change is one Badger transaction, or, when Badger finds it too big, it
// is written to a journal first and applied in several, and Open finishes
// a journal a crash interrupted (atomic.go). Commit writes what sleep does
// to one lesson (the lesson, the events it absorbed, the records signed
// for it) as one such change.
//
// The package imports only protocol and badger (and the standard library).
// It verifies nothing: callers hand it records that protocol.Verify (or a
// signer) produced, and it re-reads them with protocol.Decode.
package store
