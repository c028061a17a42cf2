package testnet

import "sync"

// Wire bytes. libp2p does not count bytes per host unless a bandwidth
// reporter is configured at construction, which the gossip package does
// not do; but every node of a testnet lives in this process, so its TCP
// sockets are ours to read. libp2p's TCP transport dials from its listen
// port (SO_REUSEPORT), so a socket's local port tells which node it belongs
// to. A socket closed between two polls keeps the count of its last poll.

type sockStat struct {
	inode      uint64
	port       int
	sent, rcvd uint64
}

type wireCounter struct {
	mu       sync.Mutex
	ok       bool
	owner    map[int]int         // local port → node
	last     map[uint64]sockStat // by socket inode
	sockNode map[uint64]int      // node of each socket seen
	closed   map[int]uint64      // bytes of sockets gone, per node
	unowned  uint64              // bytes on sockets of no node (probes, byzantine hosts)
}

func newWireCounter() *wireCounter {
	w := &wireCounter{owner: map[int]int{}, last: map[uint64]sockStat{}, sockNode: map[uint64]int{}, closed: map[int]uint64{}}
	_, w.ok = sockets()
	return w
}

// own says that port belongs to node i (-1: to no node).
func (w *wireCounter) own(port, i int) {
	w.mu.Lock()
	w.owner[port] = i
	w.mu.Unlock()
}

// poll reads every socket now.
func (w *wireCounter) poll() {
	if !w.ok {
		return
	}
	socks, ok := sockets()
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	now := make(map[uint64]bool, len(socks))
	for _, s := range socks {
		now[s.inode] = true
		if _, seen := w.sockNode[s.inode]; !seen {
			i, ok := w.owner[s.port]
			if !ok {
				i = -1
			}
			w.sockNode[s.inode] = i
		}
		w.last[s.inode] = s
	}
	for inode, s := range w.last {
		if now[inode] {
			continue
		}
		if i := w.sockNode[inode]; i >= 0 {
			w.closed[i] += s.sent + s.rcvd
		} else {
			w.unowned += s.sent + s.rcvd
		}
		delete(w.last, inode)
		delete(w.sockNode, inode)
	}
}

// totals returns every node's bytes sent and received so far, after a poll.
func (w *wireCounter) totals() map[int]uint64 {
	w.poll()
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[int]uint64, len(w.closed))
	for i, b := range w.closed {
		out[i] += b
	}
	for inode, s := range w.last {
		if i := w.sockNode[inode]; i >= 0 {
			out[i] += s.sent + s.rcvd
		}
	}
	return out
}

// available reports whether sockets can be read on this system.
func (w *wireCounter) available() bool { return w.ok }
