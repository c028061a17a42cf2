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
//	h/<hash>                              some record is about hash (empty value)
//	e/<seq:8>                             event (JSON)
//	d/<sha256(dedupe key)>                event dedupe index -> seq
//	p/<seq:8>                             pending event index
//	a/<lesson hash>/<seq:8>               events absorbed into a lesson
//	t/<received:8>/<seq:8>                events by time received
//	l/<hash>                              lesson (JSON)
//	w/<hash>                              the lesson is this memory's own (empty value)
//	o/<seq:8>                             outbox: raw line of an own record
//	c/<name>                              transport cursor (8 bytes)
//	m/<key>                               meta (JSON)
//	n/<name>                              sequence counters (8 bytes)
//
// Records are keyed hash first, so "every record about a hash" is a prefix
// scan of the primary keys and needs no second index; h/ lists the hashes
// without reading any record.
//
// A merge reads the held version of each record it is given. To spare
// that read for the new ones, the store keeps a Bloom filter of the record
// keys in memory (filter.go: built by the first merge after Open from a
// scan of the r/ keys, about 2 bytes a record); a key it has never seen
// is not held. It is memory only: the layout on disk is unchanged.
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
