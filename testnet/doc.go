// Package testnet runs a whole remem network on one machine and measures it.
//
// Run starts many real nodes in one process: each is a node.Daemon with its
// own libp2p host and its own Badger home (store.Options.Small) in a
// directory of its own. The hosts talk over one of two networks
// (Config.Network, the hostNet interface):
//
//   - NetworkTCP: real TCP sockets on 127.0.0.1. It measures real CPU time
//     and real bytes, but on one machine its latencies are mostly the
//     queues of a busy CPU.
//   - NetworkSim: go-libp2p's QUIC over marcopolo/simnet's in-process
//     links (SimLinks: latency with jitter, bandwidth, loss), inside a
//     testing/synctest bubble (RunVirtual), where time moves only when
//     every goroutine waits. Latencies are then those of the links and the
//     protocol, whatever the CPU, and a thousand nodes fit on two cores.
//     Nodes run with the gossip parameters of real networks, sleep every
//     SimSleep and keep Tiny stores; the local API's attack goes over
//     in-process pipes, since a real socket would stop virtual time.
//
// The nodes form a random sparse graph drawn from a seed (NewTopology: a
// ring through a random permutation for connectivity, plus random edges
// until every node dials Degree others), so a run is reproducible up to the
// timing of the machine (on the simulated network, up to the scheduling of
// goroutines).
//
// The scenarios are phases of one run, in this order: propagate (random
// nodes publish lessons), confirm (other nodes meet the surprises and sign
// confirmations until every node computes "common"), revoke (origins
// withdraw lessons), churn (a fifth of the nodes stop, lessons are
// published, they come back on the same homes), partition (a connection
// gater cuts the graph in two, both sides publish, the cut heals), latejoin
// (a new node joins) and byzantine (a tenth as many raw libp2p hosts publish
// forged, imperative and oversized records on the team topic). After every
// phase the run checks, never assumes, that every live node holds the same
// record set and computes the same state for every hash: it reads every
// node's store and compares SHA-256 digests over the records in key order
// and each hash's state at one common instant. The records compared are
// those in circulation: a lesson record its origin has revoked stays with
// the nodes that hold it but is never sent on (SPEC §8), so a node that
// joins later never gets it; the revocation is compared instead.
//
// What is measured, and how:
//
//   - Arrival times come from node.Config.OnAccept; states are recomputed
//     with protocol.ComputeState from the records each node accepted, so the
//     time a node first computes "common" or "revoked" is exact.
//   - duplicates_per_record counts every copy of a gossip message the
//     GossipSub router received, per message, at a few probe hosts that join
//     the topic with the same router parameters (pubsub's RawTracer). The
//     nodes' own gossip.Stats only see first copies, because pubsub drops
//     duplicates before the validator; their count is reported beside it as
//     validated_per_record.
//   - bytes_per_node are the TCP bytes sent and received by each node's
//     sockets (Linux TCP_INFO on the process's own sockets, told apart by
//     local port), or on the simulated network the bytes of each node's
//     link; the catch-up protocol's own bytes come from gossip.Stats.
//   - On the simulated network, Report.Targets holds the protocol's
//     bounds (propagation p50 against the graph's median hops times the
//     link latency, p99 against p50, duplicates, catch-up bytes), and a
//     sweep (ParseSizes, PointOf, NewScaling) shows how CPU, bytes, RSS
//     and latency grow with the number of nodes.
//   - rss_bytes is the process's peak VmRSS while the nodes run.
//
// The package imports node, gossip, store and protocol, and libp2p directly
// only for the probe and byzantine hosts and the partition gater. Nothing in
// the project imports it but cmd/remem.
package testnet
