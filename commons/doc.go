// Package commons is the HTTP commons of SPEC §10 "Commons": the server
// that stores one file of signed record lines per origin, and the client
// that pushes this memory's file and pulls the others'.
//
// # Server
//
// NewServer opens its storage (DataDir, or a Store such as an S3 bucket)
// and returns an http.Handler:
//
//	PUT  /commons/<origin>.jsonl   replace that origin's file (bearer token)
//	GET  /commons/<origin>.jsonl   the file exactly as stored (ETag, If-None-Match → 304)
//	GET  /commons/index[?since=T]  [{"origin","updated","records","etag"}], sorted by origin
//	PUT  /commons/peers/<origin>   this node's signed libp2p peer record and topics (bearer token)
//	GET  /commons/peers?topic=H    [{"origin","envelope","updated","since"}], 50: the longest alive first
//	GET  /.well-known/remem        protocol version, limits, whether GET needs a token
//	GET  /metrics                  Prometheus metrics (remem_commons_*)
//
// A PUT is accepted only if every line passes protocol.VerifyBatch bound
// to the origin the file is named after (the same code every receiver
// runs), and if it takes nothing back in time (rollback.go); the server
// checks who wrote each line, nothing more. Answers:
// 201 created / 200 replaced with {"origin","records","updated","etag","skipped"};
// 400 with the first bad line's number and reason ({"error","line","reason"},
// also for an empty body, which would prove nothing about its sender);
// 401 without a valid token (exactly one "Authorization: Bearer <token>"
// header, the scheme in that case and no padding; compared in constant
// time); 403 for a line of another origin; 409 for a rollback; 413 over
// 256 KiB or 1,000 records; 429 with Retry-After when the sender's token
// bucket is empty. A PUT of the bytes already stored answers 200 and
// changes nothing, not even `updated`.
//
// Lines of an unknown version (SPEC §5 step 2: "skipped ..., not an
// error, not stored") are skipped, counted in "skipped", and not stored:
// the file stored and served is the PUT's other lines, each byte for byte.
// So a memory whose newer version writes v2 lines still pushes here. They
// are not kept for newer readers because this server cannot check them:
// it cannot tell who wrote such a line nor whether it is sound, and a file
// is served to every puller under its origin's name, so storing them would
// let any token holder add unverified bytes to any origin's file (its
// current records are public, so the rollback rule would not stop it).
// They still count toward the 1,000 lines and 256 KiB a PUT may carry
// (those bound the work done before a line's version is known). A file
// with no line of a known version proves nothing about its sender and is
// refused (400, reason "unknown version"). Client.Push sends the lines it
// is given as they are and reports the server's count in
// PushResult.Skipped, so a commons of a newer version gets them all.
//
// No rollback (SPEC §10): anyone with a token could replay an origin's
// older, validly signed file, so a new file must hold every stored
// revocation, and every stored record at least as new as its own oldest
// record, each with the same or a newer version (protocol.Supersedes). It
// may drop only its oldest records. Otherwise 409 with
// {"error","reason":"rollback","key":{"type","origin","hash"}}, the first
// stored record missing. The check runs against the stored file, and the
// write is conditional on that file's version, so it holds across
// replicas: a PUT that loses the race checks again against the winner's.
//
// Rate limits fall on the client that sends, never on the origin named:
// every PUT counts against its address (an IPv6 address by its /64), and
// an accepted PUT also against the pair of address and origin. A refused
// or replayed PUT from elsewhere never uses up the PUTs of an origin's
// owner.
//
// Addresses are many, so budgets bound what the commons holds in all
// (budget.go): the origins held, the bytes of their files (on a
// directory) and the new origins one token stores. A PUT of a new origin
// beyond one is 507 (403 for the token's) with {"error","reason":"budget",
// "budget"}; a stored origin's file is always replaced. The counts come
// from the storage at open: the files and index keys, and one empty
// owners/<origin>.<owner id> key per origin a token stored.
//
// # Storage
//
// The server keeps its state in a Blobs store (blobs.go): objects under
// keys "<dir>/<name>", replaced whole and atomically, written on a
// condition (the stored version, or none), listed in key order. Two
// backends pass one conformance suite: a directory (blobs_dir.go, the
// default: DataDir/commons/<origin>.jsonl and DataDir/peers/<origin>.json
// as before, each written to a temp file, fsynced and renamed; temp files
// ".tmp-*" are removed at start; one server owns a directory, holding
// DataDir/LOCK flock'd with its pid, and a second is refused at start) and S3-compatible object storage
// (blobs_s3.go, minio-go; OpenStorage of an s3:// URL, storageurl.go).
//
// The files are commons/<origin>.jsonl. The index is one empty object per
// file, its facts in the key (indexkey.go):
// index/<updated, Unix ns, 20 digits>.<origin>.<records>.<etag>, so keys
// sort by acceptance time and `?since` is a listing from a key. The ETag is
// the quoted hex of the first 16 bytes of SHA-256 of the file: from the
// content alone, the same on every replica. `updated` stamps only grow, so
// a client that asks `?since=` the latest stamp it saw never misses a file.
// The server holds the index in memory.
//
// On a directory (one process) the memory is the truth: a PUT is in it at
// once, and at start every file is read and indexed anew where the index
// does not name it (changed while the server was down, stored just before
// a crash); the `updated` of the index.json of earlier versions is kept.
//
// On a shared store (any number of replicas on one bucket, storage.go) the
// store is the truth. A PUT writes pending/<stamp>.<origin>, the file
// (conditional), then its index key, then removes the pending key; a
// replica that dies in between leaves the pending key, and the next sweep
// of any replica (pending keys older than any PUT can run) indexes the
// file. Each replica refreshes its index by listing only the keys of the
// last seconds, and an index answer holds back entries younger than
// IndexSettle (2 s), within which every key is visible to all: a key
// written later than settle/2 after its stamp is stamped again. A GET
// reads the file from the store, so every replica serves the version last
// stored.
//
// # Peer directory
//
// A commons is also a rendezvous for libp2p nodes (SPEC §10 [ext],
// peers.go): a node PUTs {"envelope","topics"}, the marshalled
// record.Envelope of its peer.PeerRecord sealed with the memory key, and
// the topics it joins as 64 hex: a remem node sends TeamTopicHash, the
// HMAC-SHA256 of the topic name under the team's key, so neither the
// commons nor a name-guesser can tell or find a team (TopicHash, the
// name's SHA-256 that SPEC §10 names, stays for other clients). The write gate and body cap are a
// file PUT's (8 KiB here). The server takes only an envelope that opens in
// the peer-record domain, names its own signer, and is signed by the
// Ed25519 key whose fingerprint is the path's origin (403 otherwise), with
// at most 32 addresses and 16 distinct topics (413 over). Like a file, an
// entry never goes back: a lower seq, or the same seq with other bytes or
// topics, is 409 (reason rollback); the same PUT again is 200 and renews
// nothing, so only the node, by sealing a higher seq, keeps itself listed.
// A listing holds PeerListMax entries: those renewed within PeerAliveGap
// first, longest alive first (First, kept across renewals of an origin),
// ties freshest first, then the silent ones (listingOrder), so a flood of
// new entries cannot push out members that stay. Listings are limited per
// client address and per token (RateListPerClient, RateListPerToken).
// Entries are listed for PeerTTL (24 h) after they were accepted, then
// deleted: when a listing meets them, by an hourly sweep, and at start.
// They are stored as peers/<origin>.json (written on the condition of the
// version checked), verified again at start, and kept in memory with an
// index by topic, so a listing reads no object (under 1 KiB per usual
// entry, ~11 KiB at the limits); on a shared store each replica reads the
// directory's keys again at most every 2 s when asked for a listing. Topics are not signed: a token holder can replay a node's
// current envelope only with the topics already stored. So a node seals a
// fresh record for each PUT rather than reuse the one identify shows its
// peers: a peer holding a token could PUT that one first with other topics
// (the node's own PUT would then be 409 until it seals a higher seq).
//
// Client.PutPeer registers; Client.Peers and PeerListing list, verifying
// every envelope and the listed origin against its signer, keeping one
// entry per peer (the highest seq) and counting what they skip: a lying
// commons can leave peers out, never add one.
//
// Serve runs a handler on an address and shuts down gracefully when its
// context ends (the CLI maps SIGINT and SIGTERM to that context).
//
// # Client
//
// Client.Push PUTs this memory's file and maps refusals to *StatusError,
// whose message says what to do. Client.Pull gets the index (with `?since=`
// the last complete pull), fetches only the files whose ETag differs from
// the one remembered (with If-None-Match, at most 8 at once), verifies every
// line itself (the server's word is never trusted: protocol.VerifyBatch,
// bound to the origin the file is named after), and hands each file's records to a Deliver
// callback with the scope "commons:<base URL>". The ETags and the index
// time are kept in a StateStore (FileState: a JSON file written
// atomically).
//
// What a hostile commons can make a pull take is bounded: each request
// (index, file, push) ends after RequestTimeout (one minute), the index is
// read one entry at a time up to MaxOrigins entries (100,000) and 320
// bytes per entry, an origin listed twice is fetched once, a file is read
// to 256 KiB plus 4 KiB at most (a larger one is refused whole), at most
// 1,000 refusals are kept per file and per report (all are counted), and a
// long ETag is not remembered. An index cut at a limit is reported in
// PullReport.Errors; the entries before the cut are pulled.
//
// The package imports protocol, the standard library, the Prometheus
// client, libp2p's core packages (crypto, peer, record: the peer
// directory's envelopes) and minio-go (the S3 backend); it must not import
// node, store, gossip or another transport.
//
// # Limits
//
// SPEC §12 allows 1,000 records and 256 KiB per origin file, but a signed
// record is at least ~320 bytes (a confirmation; lessons ~400+), so at most
// about 820 records fit in 256 KiB: the byte limit binds first.
// ServerConfig.MaxFileBytes and MaxRecords can raise the limits; the
// defaults are the SPEC's.
package commons
