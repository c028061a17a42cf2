package node

import (
	"context"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/gossip"
)

// The commons as a rendezvous (SPEC §10 [ext]): a node with a team and a
// commons registers its fresh peer record for its team topics, dials the
// peers listed for them, and takes the relays the commons offers. The
// directory is a convenience: failures are logged and retried, never fatal.

const (
	// directoryTimeout bounds one round with the commons' directories.
	directoryTimeout = 30 * time.Second
	// relaysTimeout bounds the read of the commons' relays at start.
	relaysTimeout = 3 * time.Second
	// directoryRetry is the first wait after a failed round; it doubles up
	// to PullEvery.
	directoryRetry = 15 * time.Second
	// directoryConfirm is when the round after the first registration
	// runs: a listing ranks entries by how long they have stayed alive, so
	// a new node's entry outranks every entry registered only once (a
	// flood's) from its first renewal on; waiting for the next sleep or
	// pull would leave it unlisted under a flood for up to 10 minutes.
	// It costs one PUT and one listing per commons per start.
	directoryConfirm = 15 * time.Second
	// addrsSettle gathers the address changes of one moment (a relay slot
	// reserved brings several) into one registration.
	addrsSettle = 300 * time.Millisecond
)

// usesDirectory: a gossip host, a team, a commons, and the directory not
// turned off. A node whose teams have no key still registers, under no
// topic (directoryTopics): its record is then listed nowhere, and a
// commons' relay takes it as a registered peer.
func (d *Daemon) usesDirectory() bool {
	return d.gossip != nil && len(d.commons) > 0 && len(d.cfg.Gossip.Teams) > 0 && !d.cfg.NoDirectory
}

// directoryTopics are what the directory knows this node's teams by: the
// TeamTopicHash of each team with a key (at most PeerMaxTopics), and the
// teams without one, which the directory never hears of.
func directoryTopics(teams []string, keys map[string][]byte) (topics, keyless []string) {
	topics = []string{} // sent as [], not null, when no team has a key
	for _, team := range teams {
		key, ok := keys[team]
		switch {
		case !ok:
			keyless = append(keyless, team)
		case len(topics) < commons.PeerMaxTopics:
			topics = append(topics, commons.TeamTopicHash(gossip.TopicName(team), key))
		}
	}
	return topics, keyless
}

// sayKeyless logs, once at start, the teams the directory does not list
// and why, when the node has a commons and its directory is on.
func (d *Daemon) sayKeyless() {
	if d.gossip == nil || len(d.commons) == 0 || d.cfg.NoDirectory {
		return
	}
	if _, keyless := directoryTopics(d.cfg.Gossip.Teams, d.cfg.TeamKeys); len(keyless) > 0 {
		d.log.Info("directory: teams without a team key are not listed (a hash of a name is guessable); give each a key with `remem team-key TEAM`", "teams", keyless)
	}
}

// directorySoon asks for a round now (after a sleep): the peers listed may
// have changed, and a registration is refreshed.
func (d *Daemon) directorySoon() {
	select {
	case d.dirWake <- struct{}{}:
	default:
	}
}

// directoryLoop runs a round at start, directoryConfirm after the first
// that succeeded, after each sleep, when the host's addresses change (a
// relay slot reserved), every PullEvery, and after a failed round with a
// growing wait, until ctx ends.
func (d *Daemon) directoryLoop(ctx context.Context) {
	wait := directoryRetry
	confirmed := false // the round after the first registration has been planned
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-d.dirWake:
		case <-d.gossip.AddrsChanged():
			select {
			case <-ctx.Done():
				return
			case <-time.After(addrsSettle):
			}
		}
		rctx, cancel := context.WithTimeout(ctx, directoryTimeout)
		ok := d.directory(rctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		next := d.cfg.PullEvery
		if ok {
			wait = directoryRetry
			if !confirmed {
				next, confirmed = min(directoryConfirm, next), true
			}
		} else {
			next, wait = wait, min(2*wait, d.cfg.PullEvery)
			d.log.Info("directory: trying again later", "in", next)
		}
		timer.Reset(next)
	}
}

// directory runs one round with every commons: it registers, lists the
// team topics, and dials the peers listed, bounded as gossip.DialListed
// says (addresses public or on this node's networks, a few per peer, a
// cap per round, a backoff per address), over the listings of every
// commons at once; ok is false when one of them could not be reached.
func (d *Daemon) directory(ctx context.Context) (ok bool) {
	ok = true
	topics, _ := directoryTopics(d.cfg.Gossip.Teams, d.cfg.TeamKeys)
	var found []peer.AddrInfo
	seen := map[peer.ID]bool{}
	for _, c := range d.commons {
		listed, reached := d.directoryWith(ctx, c, topics)
		ok = ok && reached
		if ctx.Err() != nil {
			return false
		}
		for _, ai := range listed {
			if !seen[ai.ID] {
				seen[ai.ID] = true
				found = append(found, ai)
			}
		}
	}
	if len(found) == 0 {
		return ok
	}
	plan, connected := d.gossip.DialListed(ctx, found)
	if len(plan.Dials) > 0 || len(plan.Skipped) > 0 {
		d.log.Info(fmt.Sprintf("directory: dialed %d peers", len(plan.Dials)), "listed", len(found), "connected", connected, "skipped", plan.Skipped)
	}
	return ok
}

// directoryWith registers with one commons and lists its topics; reached
// is false when it could not be.
func (d *Daemon) directoryWith(ctx context.Context, c *commons.Client, topics []string) (listed []peer.AddrInfo, reached bool) {
	if l, err := c.Relays(ctx); err == nil {
		d.gossip.AddRelays(l.Relays...)
	}
	env, err := d.gossip.SignedPeerRecord()
	if err != nil {
		d.log.Warn("directory: sealing the peer record", "err", err)
		return nil, false
	}
	reached = true
	if err := c.PutPeer(ctx, env, topics); err != nil {
		d.log.Warn("directory unreachable", "commons", c.Scope(), "err", err)
		reached = false
		if ctx.Err() != nil {
			return nil, false
		}
	} else {
		d.log.Info("directory: registered", "commons", c.Scope(), "topics", len(topics), "addrs", len(d.gossip.Addrs()))
	}
	self := d.gossip.PeerID()
	for _, topic := range topics {
		ais, err := c.Peers(ctx, topic)
		if err != nil {
			d.log.Warn("directory unreachable", "commons", c.Scope(), "err", err)
			return listed, false
		}
		for _, ai := range ais {
			if ai.ID != self {
				listed = append(listed, ai)
			}
		}
	}
	return listed, reached
}

// commonsRelays reads the relays the commons offer (their libp2p hosts),
// within relaysTimeout, so that a node behind NAT reserves a slot from
// its start; a commons that does not answer now is asked again on each
// directory round.
func (d *Daemon) commonsRelays() []string {
	if len(d.commons) == 0 || d.cfg.NoDirectory || len(d.cfg.Gossip.Teams) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), relaysTimeout)
	defer cancel()
	var out []string
	for _, c := range d.commons {
		l, err := c.Relays(ctx)
		if err != nil {
			d.log.Info("the commons offers no relay now", "commons", c.Scope(), "err", err)
			continue
		}
		for _, ai := range l.Relays {
			addrs, err := peer.AddrInfoToP2pAddrs(&ai)
			if err != nil {
				continue
			}
			for _, a := range addrs {
				out = append(out, a.String())
			}
		}
	}
	return out
}
