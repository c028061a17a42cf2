package gossip

import (
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// newOriginWindow is how long a peer's count of new strangers runs.
const newOriginWindow = time.Minute

// maxOriginWindows bounds the peers newOrigins remembers: past it, windows
// that ended are dropped, and if none has, all are.
const maxOriginWindows = 4096

// newOrigins counts, per forwarding peer, the new strangers its messages
// brought in its current window.
type newOrigins struct {
	mu sync.Mutex
	by map[peer.ID]*originWindow
}

type originWindow struct {
	start time.Time
	n     int
}

// take counts one new stranger brought by from at now, and reports
// whether it is within limit for from's window.
func (o *newOrigins) take(from peer.ID, now time.Time, limit int) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	w := o.by[from]
	if w == nil || now.Sub(w.start) >= newOriginWindow || now.Before(w.start) {
		if o.by == nil || len(o.by) >= maxOriginWindows {
			o.prune(now)
		}
		w = &originWindow{start: now}
		o.by[from] = w
	}
	if w.n >= limit {
		return false
	}
	w.n++
	return true
}

func (o *newOrigins) prune(now time.Time) {
	for p, w := range o.by {
		if now.Sub(w.start) >= newOriginWindow {
			delete(o.by, p)
		}
	}
	if o.by == nil || len(o.by) >= maxOriginWindows {
		o.by = map[peer.ID]*originWindow{}
	}
}

// tooManyNewOrigins reports whether a message of origin forwarded by from
// is past from's allowance of new strangers (and counts it if not).
func (n *Node) tooManyNewOrigins(origin string, from peer.ID) bool {
	if !n.holder.NewStranger(origin) {
		return false
	}
	return !n.newOrigins.take(from, n.now(), n.p.NewOriginsPerPeer)
}
