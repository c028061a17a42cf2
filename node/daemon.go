package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"golang.org/x/sync/errgroup"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/folder"
	"github.com/remem/remem/gossip"
	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/protocol"
)

// DaemonConfig configures `remem node`: one memory with its transports. A
// zero field takes the default its comment names (DefaultDaemonConfig is
// what `remem node` runs with); NewDaemon fills them in and calls Validate.
type DaemonConfig struct {
	Memory Config

	// Gossip configures the libp2p host and the team topics. No team: no
	// host is started unless MDNS or Bootstrap asks for one. Its Identity,
	// Logger, Registry and Now are set by NewDaemon: the memory's key and
	// clock, and the daemon's logger and registry.
	Gossip gossip.Config

	Folders      []string      // shared folders to sync
	Commons      []string      // commons URLs: pulled at start and every PullEvery, pushed after each sleep
	CommonsToken string        // bearer token for the commons
	PullEvery    time.Duration // zero: 10m
	// NoDirectory turns the commons' peer directory off: the node neither
	// registers there nor dials the peers it lists, nor takes its relays.
	NoDirectory bool
	// TeamKeys are the teams' directory keys (32 bytes each), shared by a
	// team's members the way its members list is: the peer directory
	// knows a team with a key by commons.TeamTopicHash, which nobody
	// without the key can compute. A team without a key is never named in
	// the directory (a SHA-256 of a name is no secret: anyone who guesses
	// the name would find its members): the node registers under its keyed
	// teams only, under no topic when none has one, and its keyless teams'
	// members find each other by bootstrap, mDNS and peer exchange.
	TeamKeys map[string][]byte

	SleepEvery time.Duration // zero: 10m
	API        string        // local HTTP API address; "" = none (`remem node`: DefaultAPI)
	APILimits  APILimits     // timeouts and connection cap of the API; zero fields: DefaultAPILimits
	Web        http.Handler  // the page at /, when built in
	Registry   *prometheus.Registry
	Logger     *slog.Logger // nil: discard
	// Ready, when set, is called once the daemon serves (API bound, host up).
	Ready func(*Daemon)
}

// Daemon runs one memory: the sleep loop, the transports and the local API.
type Daemon struct {
	cfg    DaemonConfig
	m      *Memory
	gossip *gossip.Node
	log    *slog.Logger
	reg    *prometheus.Registry

	apiAddr  string
	started  time.Time
	nextMu   sync.Mutex
	next     time.Time
	commons  []*commons.Client
	sleepNow chan chan sleepResult
	signed   chan struct{}  // a request signed a record: send it now
	news     chan struct{}  // records new to this memory arrived by sync
	heard    chan struct{}  // records new to this memory arrived by gossip
	syncing  atomic.Bool    // a catch-up round runs
	dirWake  chan struct{}  // run a peer directory round now
	tally    sleepTally     // the counters at the last sleep (the loop's)
	rounds   sync.WaitGroup // the catch-up rounds, waited for at close

	closeOnce sync.Once
	closeErr  error
}

type sleepResult struct {
	rep SleepReport
	err error
}

// NewDaemon opens the memory (taking its home's lock) and builds the
// transports (the gossip host listens from here on); Run starts them and
// releases everything when it returns. A daemon that is never run is
// released by Close.
func NewDaemon(cfg DaemonConfig) (*Daemon, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("node config: %w", err)
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
		cfg.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	cfg.Memory.Logger = cfg.Logger
	cfg.Memory.Registry = cfg.Registry
	cfg.Memory.Admission = cfg.Admission()
	m, err := Open(cfg.Memory)
	if err != nil {
		return nil, err
	}
	d := &Daemon{cfg: cfg, m: m, log: cfg.Logger.With("origin", m.Origin()), reg: cfg.Registry, sleepNow: make(chan chan sleepResult), signed: make(chan struct{}, 1), news: make(chan struct{}, 1), heard: make(chan struct{}, 1), dirWake: make(chan struct{}, 1)}
	for _, dir := range cfg.Folders {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, errors.Join(fmt.Errorf("folder %s: %w", dir, err), m.Close())
		}
	}
	for _, url := range cfg.Commons {
		d.commons = append(d.commons, m.CommonsClient(url, cfg.CommonsToken))
	}
	if gc := cfg.Gossip; len(gc.Teams) > 0 || gc.MDNS || len(gc.Bootstrap) > 0 {
		gc.Identity, gc.Logger, gc.Registry, gc.Now = m.Identity(), cfg.Logger, cfg.Registry, m.Now
		gc.Relays = append(slices.Clone(gc.Relays), d.commonsRelays()...)
		g, err := gossip.New(gc, holder{d})
		if err != nil {
			return nil, errors.Join(fmt.Errorf("starting the gossip host: %w", err), m.Close())
		}
		d.gossip = g
	}
	return d, nil
}

// Memory is the daemon's memory.
func (d *Daemon) Memory() *Memory { return d.m }

// Gossip is the daemon's libp2p node, nil when it runs without one.
func (d *Daemon) Gossip() *gossip.Node { return d.gossip }

// APIAddr is the address the local API listens on.
func (d *Daemon) APIAddr() string { return d.apiAddr }

// Run serves until ctx ends, then finishes the current step, flushes and
// closes the store. It returns nil on a clean stop, and the first error of
// any of its parts (the API, gossip, the loop) otherwise, which stops the
// others.
func (d *Daemon) Run(ctx context.Context) (err error) {
	d.started = time.Now()
	defer func() {
		err = errors.Join(err, d.Close())
		// A line of its own when it ends as asked (Ctrl-C, SIGTERM), so a
		// log says when; an error is the caller's to say, once.
		if err == nil || errors.Is(err, context.Canceled) {
			d.log.Info("node stopped", "after", time.Since(d.started).Round(time.Second))
		}
	}()
	g, ctx := errgroup.WithContext(ctx)
	if d.cfg.API != "" {
		ln, err := net.Listen("tcp", d.cfg.API)
		if err != nil {
			var op *net.OpError // it names the address again
			if errors.As(err, &op) && op.Err != nil {
				err = op.Err
			}
			return fmt.Errorf("the local API cannot listen on %s: %w (is another node running? use --api to pick another address)", d.cfg.API, err)
		}
		d.apiAddr = ln.Addr().String()
		if err := WriteNodeInfo(d.m.Home(), NodeInfo{API: d.apiAddr, PID: os.Getpid(), Origin: d.m.Origin()}); err != nil {
			return errors.Join(err, ln.Close())
		}
		defer func() {
			if rerr := RemoveNodeInfo(d.m.Home()); rerr != nil {
				d.log.Warn("removing the node's address file", "err", rerr)
			}
		}()
		g.Go(func() error {
			if err := ServeAPI(ctx, ln, d.Handler(), d.cfg.APILimits); err != nil {
				return fmt.Errorf("the local API: %w", err)
			}
			return nil
		})
	}
	if d.gossip != nil {
		g.Go(func() error {
			if err := d.gossip.Run(ctx); err != nil && ctx.Err() == nil {
				return fmt.Errorf("gossip: %w", err)
			}
			return nil
		})
		g.Go(func() error { d.relayNews(ctx); return nil })
		d.sayKeyless()
		if d.usesDirectory() {
			g.Go(func() error { d.directoryLoop(ctx); return nil })
		}
	}
	for _, dir := range d.cfg.Folders {
		w, err := folder.NewWatcher(dir, 2*time.Second, func() { d.readFolder(ctx, dir) })
		if err != nil {
			// The folder is read on every sleep anyway; only the watch is lost.
			d.log.Error("watching the folder; it is read on each sleep only", "scope", folder.ScopeName(dir), "err", err)
			continue
		}
		g.Go(func() error { return w.Run(ctx) })
	}
	g.Go(func() error {
		d.pullCommons(ctx) // bootstrap from the commons
		if d.cfg.Ready != nil {
			d.cfg.Ready(d)
		}
		d.log.Info("node running", "api", d.apiAddr, "teams", d.cfg.Gossip.Teams, "sleep", d.cfg.SleepEvery)
		d.sayWhatIsShared()
		return d.loop(ctx)
	})
	return g.Wait()
}

// loop sleeps every SleepEvery (or when asked), pulls the commons every
// PullEvery, and stops when ctx ends.
func (d *Daemon) loop(ctx context.Context) error {
	sleepT := time.NewTimer(d.cfg.SleepEvery)
	pullT := time.NewTicker(d.cfg.PullEvery)
	defer sleepT.Stop()
	defer pullT.Stop()
	d.setNext(time.Now().Add(d.cfg.SleepEvery))
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-pullT.C:
			d.pullCommons(ctx)
		case <-sleepT.C:
			if _, err := d.sleepAndShare(ctx); err != nil && ctx.Err() == nil {
				d.log.Error("sleep failed", "err", err)
			}
			sleepT.Reset(d.cfg.SleepEvery)
			d.setNext(time.Now().Add(d.cfg.SleepEvery))
		case reply := <-d.sleepNow:
			rep, err := d.sleepAndShare(ctx)
			reply <- sleepResult{rep, err}
		case <-d.signed:
			d.share(ctx)
		}
	}
}

func (d *Daemon) setNext(t time.Time) {
	d.nextMu.Lock()
	d.next = t
	d.nextMu.Unlock()
}

// SleepNow runs a sleep and the publishing that follows it, now.
func (d *Daemon) SleepNow(ctx context.Context) (SleepReport, error) {
	reply := make(chan sleepResult, 1)
	select {
	case d.sleepNow <- reply:
	case <-ctx.Done():
		return SleepReport{}, ctx.Err()
	}
	select {
	case r := <-reply:
		return r.rep, r.err
	case <-ctx.Done():
		return SleepReport{}, ctx.Err()
	}
}

// sleepAndShare sleeps, then publishes the outbox into every scope.
func (d *Daemon) sleepAndShare(ctx context.Context) (SleepReport, error) {
	rep, err := d.m.Sleep(ctx)
	if err != nil {
		return rep, err
	}
	published := d.share(ctx)
	d.directorySoon()
	d.tallySleep(published)
	return rep, nil
}

// sleepTally is what the counters said at the last sleep.
type sleepTally struct {
	mem Stats
	g   gossip.Stats
}

// tallySleep logs the records that came in and went out since the last
// sleep: a line per sleep, so a log shows what the node exchanges.
func (d *Daemon) tallySleep(published int) {
	mem, _ := d.m.Stats()
	var g gossip.Stats
	if d.gossip != nil {
		g = d.gossip.Stats()
	}
	last := d.tally
	d.tally = sleepTally{mem: mem, g: g}
	d.log.Info("since the last sleep",
		"records_in", mem.Accepted-last.mem.Accepted, "duplicates_in", mem.Duplicate-last.mem.Duplicate,
		"messages_in", g.Received-last.g.Received, "sync_records_in", g.SyncRecordsIn-last.g.SyncRecordsIn,
		"published", published, "sync_records_out", g.SyncRecordsOut-last.g.SyncRecordsOut,
		"peers", d.peerCount())
}

func (d *Daemon) peerCount() int {
	if d.gossip == nil {
		return 0
	}
	return len(d.gossip.Peers())
}

// share publishes the outbox into every scope: each team topic gets the
// records it has not had, each folder and commons this memory's file; then
// a catch-up round with a few peers.
func (d *Daemon) share(ctx context.Context) (published int) {
	if d.gossip != nil {
		for _, team := range d.cfg.Gossip.Teams {
			scope := scopes.Team(team)
			cursorName := "gossip:" + team
			cursor, err := d.m.store.Cursor(cursorName)
			if err != nil {
				d.log.Error("outbox cursor", "scope", scope, "err", err)
				continue
			}
			lines, next, err := d.m.OutboxSince(scope, cursor)
			if err != nil {
				d.log.Error("outbox", "scope", scope, "err", err)
				continue
			}
			if len(lines) > 0 {
				if err := d.gossip.Publish(ctx, team, lines); err != nil {
					d.log.Warn("publish failed; sync will carry the records", "scope", scope, "err", err)
				} else {
					published += len(lines)
					d.log.Info("published", "scope", scope, "records", len(lines))
				}
			}
			if next != cursor {
				if err := d.m.store.SetCursor(cursorName, next); err != nil {
					// The records go out again next time; sync drops the duplicates.
					d.log.Error("saving the outbox cursor", "scope", scope, "err", err)
				}
			}
		}
		// The round runs beside the loop: a slow peer must not hold up
		// the next publication (a SleepNow waits for the loop).
		if d.syncing.CompareAndSwap(false, true) {
			d.rounds.Go(func() {
				defer d.syncing.Store(false)
				d.gossip.SyncNow(ctx)
			})
		}
	}
	for _, dir := range d.cfg.Folders {
		rep, err := d.m.SyncFolder(ctx, dir)
		d.logFolder(dir, rep.Report, err)
	}
	for _, c := range d.commons {
		if res, err := d.m.PushCommons(ctx, c); err != nil {
			d.log.Warn("commons push failed", "scope", c.Scope(), "err", err)
		} else {
			d.log.Info("commons pushed", "scope", c.Scope(), "records", res.Records)
		}
	}
	return published
}

func (d *Daemon) readFolder(ctx context.Context, dir string) {
	var rep folder.Report
	err := d.m.ReadFolder(ctx, dir, &rep)
	d.logFolder(dir, rep, err)
}

func (d *Daemon) logFolder(dir string, rep folder.Report, err error) {
	if err != nil {
		d.log.Error("folder sync failed", "scope", folder.ScopeName(dir), "err", err)
	}
	for _, r := range rep.Refused {
		d.log.Warn("folder line refused", "scope", folder.ScopeName(dir), "detail", r.String())
	}
}

func (d *Daemon) pullCommons(ctx context.Context) {
	for _, c := range d.commons {
		// A pull goes on past a failed file; err holds every failure.
		rep, err := d.m.PullCommons(ctx, c)
		if err != nil {
			d.log.Warn("pulling the commons", "scope", c.Scope(), "failed", rep.Failed, "err", err)
		}
		d.log.Info("commons pulled", "scope", c.Scope(), "fetched", rep.Fetched, "accepted", rep.Accepted, "failed", rep.Failed, "bytes", rep.Bytes)
	}
}

// Close releases what NewDaemon took: the gossip host, the store and the
// home's lock. Run calls it on its way out, so it is for a daemon that was
// never run, or never got past an error before Run; it is idempotent, and
// not to be called while Run runs.
func (d *Daemon) Close() error {
	d.closeOnce.Do(func() { d.closeErr = d.close() })
	return d.closeErr
}

func (d *Daemon) close() error {
	d.rounds.Wait() // they end with Run's context
	var errs []error
	if d.gossip != nil {
		errs = append(errs, d.gossip.Close())
	}
	errs = append(errs, d.m.Close())
	return errors.Join(errs...)
}

// Handler is the local HTTP API of this daemon.
func (d *Daemon) Handler() http.Handler {
	return NewAPI(d.m, APIOptions{Gatherer: d.reg, Web: d.cfg.Web, Network: d.network, SleepNow: d.SleepNow, Signed: d.shareSoon,
		Peers: d.peers, Connect: d.connect, Folders: d.cfg.Folders})
}

// shareSoon asks the loop to send what a request just signed (a lesson
// published or revoked by hand), as a sleep sends what it signs. Requests
// that come while a share is asked for already join it.
func (d *Daemon) shareSoon() {
	select {
	case d.signed <- struct{}{}:
	default:
	}
}

// network adds the daemon's view to a status.
func (d *Daemon) network(st *Status) {
	st.Started = d.started
	d.nextMu.Lock()
	st.NextSleep = d.next
	d.nextMu.Unlock()
	for _, dir := range d.cfg.Folders {
		st.Scopes = append(st.Scopes, folder.ScopeName(dir))
	}
	for _, c := range d.commons {
		st.Scopes = append(st.Scopes, c.Scope())
	}
	if d.gossip == nil {
		return
	}
	// Lines the gossip validator refused never reach the memory; count them
	// with the others.
	for reason, n := range d.gossip.Stats().Rejected {
		st.Refused[protocol.Reason(reason)] += n
	}
	st.PeerID = d.gossip.PeerID().String()
	for _, a := range d.gossip.Addrs() {
		st.Addrs = append(st.Addrs, a.String())
	}
	for _, t := range d.cfg.Gossip.Teams {
		st.Topics = append(st.Topics, gossip.TopicName(t))
		st.Scopes = append(st.Scopes, scopes.Team(t))
	}
	st.Reachability = d.gossip.Reachability()
	for _, r := range d.gossip.Relays() {
		addrs, err := peer.AddrInfoToP2pAddrs(&r)
		if err == nil && len(addrs) > 0 {
			st.Relays = append(st.Relays, addrs[0].String())
		}
	}
	for _, p := range d.gossip.Peers() {
		st.Peers = append(st.Peers, peerStatus(p))
	}
}

// newsDelay gathers the records of one burst into one catch-up round, and
// heardEvery spaces the rounds that follow records that came by gossip.
const (
	newsDelay  = 300 * time.Millisecond
	heardEvery = time.Minute
)

// relayNews runs a catch-up round soon after records new to this memory
// arrive. Pubsub forwards a message only along the mesh of the moment, and
// sync alone would wait for its interval, so records that came by sync
// (a node that joined late) spread to the rest of the team in a few rounds
// instead, and so do messages that went by before the mesh reached every
// node (a publish right after a start). Gossip has mostly spread what it
// brought already, and a busy team brings something every moment, so
// after records that came by gossip a round runs at most every
// heardEvery. The bytes moved stay proportional to what the peers lack.
func (d *Daemon) relayNews(ctx context.Context) {
	var last time.Time
	for {
		wait := newsDelay
		select {
		case <-ctx.Done():
			return
		case <-d.news:
		case <-d.heard:
			wait = max(newsDelay, time.Until(last.Add(heardEvery)))
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-d.news: // news by sync does not wait for the gossip spacing
		case <-timer.C:
		}
		timer.Stop()
		d.gossip.SyncNow(ctx)
		last = time.Now()
	}
}

// holder is the memory as gossip sees it.
type holder struct{ d *Daemon }

// Deliver hands gossip's records to the memory with gossip's context,
// which ends when the node closes: Deliver holds the sleep lock and may
// wait for an embeddings endpoint, and must not hold up Close.
func (h holder) Deliver(ctx context.Context, d gossip.Delivery) error {
	rep, err := h.d.m.Deliver(ctx, d.Scope, d.Records)
	if err != nil {
		return err // gossip counts and logs it, or ends the sync session
	}
	// Records new here are news to pass on: those that came by sync
	// reached this node alone; those that came by gossip went along the
	// mesh, which may not have reached everyone yet (relayNews).
	if rep.Accepted > 0 {
		ch := h.d.heard
		if d.BySync {
			ch = h.d.news
		}
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	return nil
}

// Held is what sync offers in scope: own records that belong there and
// records received by it, never records of another scope, and nothing of
// a revoked lesson but the revocations (Memory.sendable; SPEC §8). Sync
// asks once per HeldVersion and keeps the snapshot it makes of them, so
// nothing is cached here.
func (h holder) Held(scope string) ([][]byte, error) {
	recs, err := h.d.m.ownInScope(scope)
	if err != nil {
		return nil, err
	}
	in, err := h.d.m.store.InScope(scope)
	if err != nil {
		return nil, err
	}
	others := make([]*protocol.Record, 0, len(in))
	for _, r := range in {
		if r.Record.Origin != h.d.m.Origin() {
			others = append(others, r.Record)
		}
	}
	// A lesson its origin withdrew is not sent on; the revocation is.
	others, _ = withoutRevoked(others, nil)
	recs, err = h.d.m.sendable(append(recs, others...))
	if err != nil {
		return nil, err
	}
	return rawLines(recs), nil
}

// HeldLines reads by set key the lines a sync session sends: its
// snapshot keeps ids and keys, not every line of the scope.
func (h holder) HeldLines(_ string, keys []protocol.RecordKey) ([][]byte, error) {
	return h.d.m.store.Lines(keys)
}

// Admits lets sync take admitted origins' records first and outside its
// budgets on what it takes from strangers.
func (h holder) Admits(origin string) bool {
	ok, _ := h.d.m.Admits(origin)
	return ok
}

var _ gossip.Holder = holder{}

// HeldVersion lets sync reuse its snapshot of Held until the memory
// changes.
func (h holder) HeldVersion() (uint64, bool) { return h.d.m.Version(), true }

// Room lets the validator ignore an origin past the cap.
func (h holder) Room(scope, origin string) int { return h.d.m.Room(scope, origin) }

// HoldsHash lets the validator take a revocation of a held hash past the
// cap, and count one of a hash never held.
func (h holder) HoldsHash(hash string) bool { return h.d.m.HoldsHash(hash) }

// NewStranger lets the validator cap the new strangers one peer brings.
func (h holder) NewStranger(origin string) bool { return h.d.m.NewStranger(origin) }

func (h holder) Known(rec *protocol.Record) bool {
	held, ok, err := h.d.m.store.Get(rec.SetKey())
	return err == nil && ok && !protocol.Supersedes(rec, held.Record)
}

func safeName(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || c == '.' || c == '-' {
			out = append(out, c)
		} else {
			out = append(out, '_')
		}
	}
	return string(out)
}

// sayWhatIsShared warns, once at start, of the two set-ups a person most
// often does not mean: a node in no team (its lessons reach nobody by
// gossip) and a node that listens on every interface with mDNS on (every
// machine on the LAN can find and dial it).
func (d *Daemon) sayWhatIsShared() {
	g := d.cfg.Gossip
	if len(g.Teams) == 0 {
		msg := "nothing is shared: this node joined no team; add --team NAME (or `remem config set teams NAME`)"
		if len(d.cfg.Commons) > 0 || len(d.cfg.Folders) > 0 {
			msg = "no team: lessons go only to the commons and folders given; add --team NAME to gossip them"
		}
		d.log.Warn(msg)
	}
	if !g.MDNS || len(g.Teams) == 0 {
		return
	}
	listen := g.Listen
	if len(listen) == 0 {
		listen = gossip.DefaultListen
	}
	for _, a := range listen {
		if strings.Contains(a, "/ip4/0.0.0.0/") || strings.Contains(a, "/ip6/::/") {
			d.log.Warn("listening on every interface with mDNS on: machines on this network can find and dial this node; --listen /ip4/127.0.0.1/tcp/0 or --mdns=false keeps it to this machine", "listen", a)
			return
		}
	}
}
