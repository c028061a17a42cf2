// Package gossip moves remem records between machines over libp2p
// (SPEC.md §10 "Gossip"): one GossipSub topic per team, a validator that
// verifies every line, discovery, a catch-up sync protocol and private-team
// gating.
//
// # What it owns
//
//   - The libp2p host. Its identity is the memory's Ed25519 key, so a peer id
//     maps to exactly one origin (OriginOf). It listens on TCP and QUIC
//     (DefaultListen: port 4002 on all interfaces; a port another process
//     holds is an error, as TCP listens without SO_REUSEPORT unless
//     Params.TCPReuseport), secures connections with Noise or TLS and
//     multiplexes with yamux (go-libp2p's defaults), runs a resource
//     manager (libp2p's limits scaled for Params.ResourceMemory, with
//     explicit connection, per-peer stream and sync stream limits) and a
//     connection manager that keeps Params.ConnLow..ConnHigh peers
//     (members of private teams, mesh and bootstrap peers protected).
//   - GossipSub with peer scoring on: topic "remem/1/team/<name>"
//     (TopicName), message ids that are the SHA-256 of the data (the same
//     batch is one message whoever sends it), messages signed by the host
//     key (StrictSign), peer exchange on, flood publishing of own messages,
//     a mesh degree tuned for small team networks (Params).
//   - The validator (validate.go), DESIGN.md convention 4: a message over
//     1 MiB or 1,000 lines, or with any line that protocol.VerifyBatch
//     refuses (bound to the message's signer: only an origin publishes its
//     own records), is rejected (the sender loses score: P4 weighs -100 per
//     rejected message squared, below the graylist threshold of -80 after
//     one). Lines of an unknown version are skipped. A message whose
//     records are all held already, whose origin has no room left
//     (Limits.Room; a revocation of a hash never held takes room, one of a
//     held hash does not: Limits.HoldsHash), whose forwarder brought too
//     many new strangers (Limits.NewStranger), or whose author, forwarder
//     or records are outside a private team, is ignored.
//     Otherwise it is accepted and the parsed records ride along in
//     Message.ValidatorData, so the subscription loop hands them to
//     Holder.Deliver without verifying twice. Refusals are counted by reason.
//   - Discovery (discovery.go, mdns.go): bootstrap multiaddrs kept connected
//     with backoff, mDNS on the LAN, GossipSub peer exchange. Any one is
//     enough. What a directory lists is dialed by DialListed (dialpolicy.go):
//     public or own-network IP addresses only, a few per peer and a cap per
//     round, with a backoff per address.
//   - Catch-up sync (protocol /remem/sync/1.0.0): on connect (by the dialing
//     side), on SyncNow (every sleep) and every Params.SyncInterval, with a
//     few random peers of each topic. It sends per-origin counts and
//     digests, then ids only for origins that differ, then only missing
//     lines, so the bytes grow with the difference. The answering side
//     spends slots only on peers that keep the exchange moving, one session
//     per peer, within a byte budget. One file per job:
//     syncwire.go (the wire format: frames and the encoding of each message,
//     pure, tested and fuzzed without a host), syncsnapshot.go (what a team
//     scope holds, from Holder.Held, cached per Limits.HeldVersion: ids
//     and set keys, the lines sent read by Holder.HeldLines),
//     syncsession.go (the stream, records in and out, what both sides
//     share), syncinit.go (the initiator's steps), syncanswer.go (the
//     responder's steps and its capacity rules), synctake.go (what a
//     session and a peer's hour may take of strangers' records, admitted
//     origins first, and the rest after a peer gave records) and
//     syncrounds.go (rounds, intervals, per-peer locks, slots and the ids
//     being fetched).
//   - What a bare GossipSub host must share with a node to sit in a mesh like
//     one (mirror.go, params.go): RouterParams, MessageID and
//     MessageValidator; the testnet's probes use them.
//   - Private teams: Config.Members (keys or origins). When every team of the
//     node is private, a connection gater refuses every peer that is not a
//     member of one of them; the validator and sync refuse non-members per
//     team. Config.PSK makes a libp2p private network (TCP only).
//   - Metrics: remem_gossip_messages_total{verdict},
//     remem_gossip_rejected_lines_total{reason},
//     remem_gossip_sync_bytes_total{direction}; the same counts in Stats.
//
// # How the node plugs in
//
// The memory is behind the Holder interface: Deliver (a Delivery: verified
// records that arrived on a team scope, who sent them and whether by sync,
// with a context that ends when the node closes; its error means they were
// not kept, and sync brings them again), Held and HeldLines (the raw lines
// of a scope, for sync), Known (duplicate fast path) and the Limits (room
// per origin, held hashes, admitted origins, new strangers, the version of
// what is held), which a holder that takes everything gets from NoLimits.
// Records are only ever offered in the scope
// Holder.Held returns them for, so nothing received in one scope is sent
// into another. Publish sends the memory's new records of a team as one
// message per call (split at 1 MiB).
//
// Lifecycle: New builds and starts the host (listening), GossipSub, the
// topics and the sync handler; Run subscribes and starts discovery and
// periodic sync until its context ends; Close (idempotent) stops everything
// and closes the host, leaving no goroutine behind.
//
// # What it must not import
//
// gossip imports protocol and libp2p only: never node, store, folder or
// commons. The node imports gossip and hands it a Holder.
package gossip
