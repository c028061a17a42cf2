package relaysvc

import (
	"fmt"
	"sync"

	"github.com/libp2p/go-libp2p/core/event"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/p2p/host/eventbus"
)

// Manager runs a Relay on a host while the host is publicly reachable,
// as go-libp2p's relay manager does for its own relay: a relay behind a
// NAT would hand out addresses nobody can dial.
type Manager struct {
	h    host.Host
	cfg  Config
	sub  event.Subscription
	done chan struct{}

	mu    sync.Mutex
	relay *Relay
}

// Manage starts a Manager on h; Close stops it and its relay.
func Manage(h host.Host, cfg Config) (*Manager, error) {
	sub, err := h.EventBus().Subscribe(new(event.EvtLocalReachabilityChanged), eventbus.Name("remem-relaysvc"))
	if err != nil {
		return nil, fmt.Errorf("relay service: watching reachability: %w", err)
	}
	m := &Manager{h: h, cfg: cfg, sub: sub, done: make(chan struct{})}
	go m.loop()
	return m, nil
}

func (m *Manager) loop() {
	defer close(m.done)
	for e := range m.sub.Out() {
		m.set(e.(event.EvtLocalReachabilityChanged).Reachability == network.ReachabilityPublic)
	}
}

// set starts the relay (on) or stops it.
func (m *Manager) set(on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case on && m.relay == nil:
		r, err := New(m.h, m.cfg)
		if err != nil && m.cfg.Logger != nil {
			m.cfg.Logger.Error("relay service not started", "err", err)
		}
		m.relay = r // nil when New failed: tried again on the next change
	case !on && m.relay != nil:
		_ = m.relay.Close() // Close always succeeds
		m.relay = nil
	}
}

// Close stops the relay and the watch; it waits for both.
func (m *Manager) Close() error {
	err := m.sub.Close()
	<-m.done
	m.set(false)
	return err
}
