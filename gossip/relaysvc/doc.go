// Package relaysvc is remem's circuit relay v2 service: the hop side of
// libp2p's relay protocol, on the wire as go-libp2p's own (its clients,
// AutoRelay and the circuit transport, use it unchanged).
//
// go-libp2p's relay gives every circuit one limit. Remem needs two: with
// a limit, a relayed connection is "limited" and GossipSub opens no stream
// over it, so two members behind NATs that meet only through the relay
// would share nothing by gossip until a hole punch succeeds; without one,
// the relay is a free proxy for anyone (an outsider piped 159 MB/s of
// non-remem bytes through a node, issue 28). So a circuit between two
// peers the relay serves (Config.Serves: members of its teams, peers
// registered in its commons' directory) is unlimited, and every other
// circuit gets go-libp2p's default limits (StrangerLimit). Reservations
// are capped in total, per IP and per subnet, and strangers hold at most
// a share of them, so an outsider with many addresses cannot take the
// slots the relay's own peers need.
//
// It imports go-libp2p only; the gossip package says whom a node serves.
package relaysvc
