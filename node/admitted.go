package node

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"sort"
	"time"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/gossip"
	"github.com/remem/remem/internal/check"
	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/protocol"
)

// Admission says which origins this memory counts as verifiers (SPEC §8,
// "Admitted verifiers"). Keys cost nothing, so a lesson is common, fading
// or removed, and revoked by a quorum, only through origins the memory has
// a reason to count; every other record is held, verified, merged, shown
// and counted, but moves nothing. This memory itself is always admitted.
type Admission struct {
	// Trust are the keys or origins the person admits: their other
	// machines, colleagues (config.toml `trust`, `remem trust add`).
	Trust []string
	// Members are the members of the private teams the node is in (keys
	// or origins); a daemon fills them from its gossip configuration.
	Members []string
	// All admits every origin, as the seed's "counted, not weighted" reads:
	// for a closed network that no stranger can reach (config.toml
	// `admit_all`). Off by default.
	All bool
}

func (a Admission) validate(l *check.List) {
	for i, e := range a.Trust {
		if _, err := protocol.ParseOrigin(e); err != nil {
			l.Add("Admission.Trust", i, err.Error())
		}
	}
	for i, e := range a.Members {
		if _, err := protocol.ParseOrigin(e); err != nil {
			l.Add("Admission.Members", i, err.Error())
		}
	}
}

// Why an origin is admitted, as views say it.
const (
	AdmittedSelf    = "this memory"
	AdmittedTrust   = "in the trust list"
	AdmittedMember  = "a member of a private team"
	AdmittedAll     = "every origin is admitted (admit_all)"
	AdmittedCommons = "publishes on a token-guarded commons: " // + the commons' URL
	NotAdmitted     = "not admitted: not in the trust list, a private team or a token-guarded commons this memory uses"
)

// admittedSet is the admitted set and why each origin is in it.
type admittedSet struct {
	set protocol.Admitted
	why map[string]string
}

// maxCommonsPublishers bounds the publishers one commons admits here: the
// set is read at every open and stored whole.
const maxCommonsPublishers = 10_000

// trustedTransport: url is https, or http to this machine.
func trustedTransport(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if u.Scheme == "https" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return u.Scheme == "http" && (u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback()))
}

// commonsPublishersKey holds, by commons URL, the origins whose files a
// token-guarded commons served this memory.
const commonsPublishersKey = "admitted_commons"

// Admitted is the admitted set every state of this memory is computed
// with: one place, so every reader (lessons, show, context, recall, MCP,
// the web page, what is sent) agrees.
func (m *Memory) Admitted() protocol.Admitted { return m.admission().set }

func (m *Memory) admitted() protocol.Admitted { return m.Admitted() }

// Admits says why origin is admitted here, or NotAdmitted.
func (m *Memory) Admits(origin string) (bool, string) {
	a := m.admission()
	if why, ok := a.why[origin]; ok {
		return true, why
	}
	if a.set.All {
		return true, AdmittedAll
	}
	return false, NotAdmitted
}

func (m *Memory) admission() *admittedSet {
	if a := m.admit.Load(); a != nil {
		return a
	}
	a := m.computeAdmission()
	m.admit.Store(a)
	return a
}

// computeAdmission builds the admitted set from the configuration and the
// commons publishers kept in the store.
func (m *Memory) computeAdmission() *admittedSet {
	a := &admittedSet{why: map[string]string{}}
	add := func(origin, why string) {
		if _, ok := a.why[origin]; !ok {
			a.why[origin] = why
		}
	}
	add(m.Origin(), AdmittedSelf)
	for _, e := range m.cfg.Admission.Trust {
		if o, err := protocol.ParseOrigin(e); err == nil {
			add(o, AdmittedTrust)
		}
	}
	for _, e := range m.cfg.Admission.Members {
		if o, err := protocol.ParseOrigin(e); err == nil {
			add(o, AdmittedMember)
		}
	}
	pubs, err := m.commonsPublishers()
	if err != nil {
		m.log.Warn("reading the publishers of token-guarded commons: they are not admitted until it works", "err", err)
	}
	for _, scope := range slices.Sorted(maps.Keys(pubs)) {
		_, url := scopes.Parse(scope)
		for _, o := range pubs[scope] {
			add(o, AdmittedCommons+url)
		}
	}
	a.set = protocol.Admitted{All: m.cfg.Admission.All, Origins: make(map[string]bool, len(a.why))}
	for o := range a.why {
		a.set.Origins[o] = true
	}
	return a
}

func (m *Memory) commonsPublishers() (map[string][]string, error) {
	pubs := map[string][]string{}
	_, err := m.store.GetMeta(commonsPublishersKey, &pubs)
	return pubs, err
}

// noteCommonsPublishers keeps the origins whose records a pull of the
// commons c delivered, when its operator admitted each publisher (SPEC
// §8): it requires a token to publish and every token publishes only for
// the origins named beside it (its info document says publishers_admitted).
// A commons open to anyone, or whose token is shared, admits nobody: one
// holder of a shared token can publish for any number of fresh keys. The
// document must come over https or from this machine (loopback), where no
// one on the path can claim it.
func (m *Memory) noteCommonsPublishers(ctx context.Context, c *commons.Client, origins map[string]bool) error {
	if len(origins) == 0 || !trustedTransport(c.BaseURL) {
		return nil
	}
	info, err := c.Info(ctx)
	if err != nil {
		return fmt.Errorf("reading whether the commons admits its publishers: %w", err)
	}
	if !info.PutNeedsToken || !info.PublishersAdmitted {
		return nil
	}
	scope := c.Scope() // the key: "commons:" and the canonical URL
	pubs, err := m.commonsPublishers()
	if err != nil {
		return err
	}
	before := len(pubs[scope])
	all := append(pubs[scope], slices.Collect(maps.Keys(origins))...)
	sort.Strings(all)
	all = slices.Compact(all)
	if len(all) > maxCommonsPublishers {
		m.log.Warn("a commons admits more publishers than this memory keeps; the rest are not admitted", "commons", scope, "kept", maxCommonsPublishers)
		all = all[:maxCommonsPublishers]
	}
	pubs[scope] = all
	if len(pubs[scope]) == before {
		return nil
	}
	if err := m.store.SetMeta(commonsPublishersKey, pubs); err != nil {
		return err
	}
	m.admit.Store(nil) // computed again at its next use
	m.changed()
	return nil
}

// state is the state of hash from recs, every record held of it, with the
// memory's parameters and admitted set.
func (m *Memory) state(hash string, recs []*protocol.Record, now time.Time) protocol.Status {
	return protocol.ComputeState(hash, recs, now, m.cfg.Params.State, m.admitted())
}

// Admission is the memory's admission as the node of c runs it: the
// configured one, and the members of its private teams (a team is private
// when a members list names who may take part, SPEC §10; its members are
// admitted, SPEC §8). Commands that open the memory themselves take it
// too, so they compute the states the node would.
func (c DaemonConfig) Admission() Admission {
	a := c.Memory.Admission
	a.Members = append(slices.Clone(a.Members), privateMembers(c.Gossip)...)
	return a
}

// privateMembers are the members of the teams the node is in, as gossip
// reads them: a team's own list (TeamMembers) or else the common one
// (Members); an empty list makes a team open. A list no team of the node
// uses (TeamMembers of a team it is not in, which gossip refuses; Members
// that every team overrides, or with no team) admits no one.
func privateMembers(g gossip.Config) []string {
	var out []string
	for _, team := range slices.Sorted(slices.Values(slices.Clone(g.Teams))) {
		list, ok := g.TeamMembers[team]
		if !ok {
			list = g.Members
		}
		out = append(out, list...)
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}
