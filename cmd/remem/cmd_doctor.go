package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/multiformats/go-multiaddr"
	"github.com/urfave/cli/v2"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/gossip"
	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/node"
	"github.com/remem/remem/store"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check the home, key, store, ports, node, teams, commons and clock, and say what to fix",
		UsageText: `remem doctor [--json] [--try-model]

One line per check, each OK, WARN, FAIL or ? (cannot tell), saying what is
wrong and what to do:
  home       the home exists and holds a memory's key
  key        the key file only its owner can read (0600)
  config     config.toml reads and remem node would accept it
  admit      whom this memory counts; a warning when admit_all is on with
             an open scope (a team without members, a commons, mDNS)
  store      the store opens (or the running node's API answers for it)
  drafts     how many own lessons are drafts waiting for a sentence (shown
             only when there are some)
  node       whether a node runs on this home and its API answers
  ports      the API port and the libp2p listen ports are free (or held by
             this home's node)
  reach      whether peers can reach the node: AutoNAT's verdict (public,
             private) and the relayed addresses of a private node
  teams      which team topics the node joins; none: nothing is shared
  commons    each configured commons answers, reads with the token and
             accepts it for writing (GET /commons/token: the commons says
             whether a PUT would take it, and nothing is sent or stored)
  clock      the skew against the first commons' clock (records more than
             10 minutes ahead are refused)
  model      the model configured (model in config.toml) and whether its
             CLI is on PATH, or which model CLIs are there (claude, codex,
             gemini, ollama, llm) and the config line to use one; with
             --try-model, one tiny request to it and the time it took
             (at most a minute)
Exit 1 when a check fails; warnings do not fail.

Examples:
  remem doctor
  remem doctor --json | jq '.checks[] | select(.status != "ok")'
  remem doctor --try-model`,
		Flags: []cli.Flag{jsonFlag,
			&cli.BoolFlag{Name: "try-model", Usage: "send the configured model one tiny request and report the time its answer took"}},
		Action: runDoctor,
	}
}

// Check statuses.
const (
	checkOK      = "ok"
	checkWarn    = "warn"
	checkFail    = "fail"
	checkUnknown = "unknown"
)

// doctorCheck is one line of remem doctor.
type doctorCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

type doctorReport struct {
	OK     bool          `json:"ok"`
	Home   string        `json:"home"`
	Checks []doctorCheck `json:"checks"`
}

func (r *doctorReport) add(name, status, format string, args ...any) {
	r.Checks = append(r.Checks, doctorCheck{Name: name, Status: status, Detail: fmt.Sprintf(format, args...)})
	if status == checkFail {
		r.OK = false
	}
}

func runDoctor(c *cli.Context) error {
	rep := diagnose(c.Context, home(c), c.Bool("try-model"))
	if c.Bool("json") {
		if err := printJSON(c.App.Writer, rep); err != nil {
			return err
		}
	} else {
		w := table(c.App.Writer)
		for _, ch := range rep.Checks {
			mark := map[string]string{checkOK: "OK", checkWarn: "WARN", checkFail: "FAIL", checkUnknown: "?"}[ch.Status]
			fmt.Fprintf(w, "%s\t%s\t%s\n", mark, ch.Name, ch.Detail)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if !rep.OK {
		return cli.Exit("", 1)
	}
	return nil
}

// doctorTimeout bounds each network check.
const doctorTimeout = 5 * time.Second

// diagnose runs every check on home; a check that needs what an earlier
// one found missing says so instead of failing again.
func diagnose(ctx context.Context, h string, tryModel bool) doctorReport {
	rep := doctorReport{OK: true, Home: h}
	if fi, err := os.Stat(h); err != nil || !fi.IsDir() {
		rep.add("home", checkFail, "no memory at %s: run `remem init`, or set --home or REMEM_HOME to an existing memory", h)
		return rep
	}
	id, keyErr := node.LoadIdentity(h)
	keyFile := filepath.Join(h, node.KeyFile)
	switch fi, serr := os.Stat(keyFile); {
	case errors.Is(serr, fs.ErrNotExist):
		rep.add("home", checkFail, "%s has no key, so it is no memory yet: run `remem init`, or set --home to an existing memory", h)
		return rep
	case serr != nil:
		rep.add("home", checkFail, "cannot read %s: %v", keyFile, serr)
		return rep
	case fi.Mode().Perm()&0o077 != 0:
		rep.add("home", checkOK, "%s holds a memory's key", h)
		rep.add("key", checkFail, "%s has mode %04o, so others can read the private key: run `chmod 600 %s`", keyFile, fi.Mode().Perm(), keyFile)
	case keyErr != nil:
		rep.add("home", checkFail, "%v", keyErr)
		return rep
	default:
		rep.add("home", checkOK, "%s is the memory of origin %s", h, id.Origin())
		rep.add("key", checkOK, "%s has mode %04o: only its owner reads it", keyFile, fi.Mode().Perm())
	}

	s, src, err := loadNodeSettings(h)
	if err == nil {
		err = checkSettingsText(h, src.file, configTextOf(src.file))
	}
	if err != nil {
		rep.add("config", checkFail, "%s; fix it with `remem config set` or by hand", oneLine(err))
		s = defaultNodeSettings()
	} else if _, serr := os.Stat(src.file); errors.Is(serr, fs.ErrNotExist) {
		rep.add("config", checkOK, "no %s: remem node starts with its defaults and its flags (`remem config set` writes one)", src.file)
	} else {
		rep.add("config", checkOK, "%s reads, and remem node would start with it", src.file)
	}

	checkAdmission(&rep, s)

	client, nodeErr := dialNode(ctx, h)
	var st node.Status
	if client != nil {
		st, nodeErr = client.Status(ctx)
	}
	running := client != nil && nodeErr == nil
	if keyErr == nil || running {
		checkStore(&rep, h, running, st)
	} else {
		rep.add("store", checkUnknown, "not opened: the memory does not open while its key is refused (see key)")
	}
	switch {
	case running:
		rep.add("node", checkOK, "a node runs on this home; its API answers at %s", strings.TrimPrefix(client.BaseURL, "http://"))
	case errors.Is(nodeErr, fs.ErrNotExist):
		rep.add("node", checkWarn, "no node runs on this home: nothing is exchanged until `remem node` runs")
	default:
		rep.add("node", checkFail, "%s; if the node stopped, start it again with `remem node`", oneLine(nodeErr))
	}
	if running {
		// The node's own addresses: it may run with flags config.toml lacks.
		rep.add("ports", checkOK, "held by this home's node (API %s; libp2p %s)", strings.TrimPrefix(client.BaseURL, "http://"), orNone(strings.Join(st.Addrs, ", ")))
	} else {
		checkPorts(&rep, s)
	}
	switch {
	case !running:
		rep.add("reach", checkUnknown, "no node runs, so nothing listens for peers")
	case len(st.Addrs) == 0:
		rep.add("reach", checkWarn, "the node listens on no libp2p address: peers cannot reach it (is gossip off?)")
	case st.Reachability == "public":
		rep.add("reach", checkOK, "AutoNAT: peers beyond a NAT reach the node at %s (%d peers connected)", strings.Join(st.Addrs, ", "), len(st.Peers))
	case st.Reachability == "private" && slices.ContainsFunc(st.Addrs, isRelayed):
		rep.add("reach", checkOK, "private (behind NAT), reachable through a relay: %s", strings.Join(slices.DeleteFunc(slices.Clone(st.Addrs), func(a string) bool { return !isRelayed(a) }), ", "))
	case st.Reachability == "private":
		rep.add("reach", checkWarn, "private (behind NAT) and no relay slot: peers cannot dial it, it can only dial out; give it a relay (--commons of a commons with --p2p, or --relay MULTIADDR)")
	default:
		rep.add("reach", checkUnknown, "the node listens on %s with %d peers connected; AutoNAT has not decided yet whether peers beyond a NAT reach it (it asks connected peers; run doctor again later)",
			strings.Join(st.Addrs, ", "), len(st.Peers))
	}
	// What the node joined and exchanges by, flags included, when it runs.
	teams, others := s.Teams, len(s.Commons)+len(s.Folders)
	if running {
		teams = nil
		for _, t := range st.Topics {
			teams = append(teams, strings.TrimPrefix(t, gossip.TopicName("")))
		}
		for _, sc := range st.Scopes {
			if k := scopes.Of(sc); k == scopes.KindCommons || k == scopes.KindFolder {
				others++
			}
		}
	}
	switch {
	case len(teams) > 0:
		rep.add("teams", checkOK, "the node joins %s", strings.Join(teams, ", "))
	case others > 0:
		rep.add("teams", checkWarn, "no team: lessons go only to the commons and folders; add one with `remem config set teams NAME` (or remem node --team NAME)")
	default:
		rep.add("teams", checkWarn, "no team, folder or commons: nothing is shared; add --team NAME to remem node (or `remem config set teams NAME`)")
	}
	checkCommons(ctx, &rep, s)
	checkDirectory(&rep, s)
	checkModel(ctx, &rep, s, tryModel)
	if cwd, err := os.Getwd(); err == nil {
		checkAgents(&rep, h, cwd, time.Now())
	}
	return rep
}

// checkDirectory says which teams a commons' peer directory lists: only
// those with a team key (a team without one is left out, since a hash of
// its name is guessable), when the node has a commons and a team and the
// directory is on.
func checkDirectory(rep *doctorReport, s nodeSettings) {
	if len(s.Commons) == 0 || len(s.Teams) == 0 || !s.Directory {
		return
	}
	keys, err := readTeamKeys(s.TeamKeys)
	if err != nil {
		rep.add("directory", checkFail, "team_keys: %s", oneLine(err))
		return
	}
	var keyed, keyless []string
	for _, t := range s.Teams {
		if keys[t] != nil {
			keyed = append(keyed, t)
		} else {
			keyless = append(keyless, t)
		}
	}
	if len(keyless) > 0 {
		rep.add("directory", checkWarn, "no peer directory lists %s: a team without a team key is left out, since anyone who guesses its name could find its members; their members meet only by bootstrap, mDNS or peer exchange. Make a key with `remem team-key %s` and share it with the team",
			strings.Join(keyless, ", "), keyless[0])
		return
	}
	rep.add("directory", checkOK, "the commons' peer directories list %s under their team keys", strings.Join(keyed, ", "))
}

// checkAdmission warns when admit_all counts every origin while the node
// takes records from where strangers reach it: a team with no members
// list, a commons, mDNS (SPEC §8: keys cost nothing).
func checkAdmission(rep *doctorReport, s nodeSettings) {
	if !s.AdmitAll {
		rep.add("admit", checkOK, "only admitted memories make a lesson common: this one, %d in the trust list (`remem trust list`), members of private teams", len(s.Trust))
		return
	}
	everyTeam, private := false, map[string]bool{}
	for _, e := range s.Members {
		team, _, ok := strings.Cut(e, "=")
		if ok && gossip.ValidTeamName(team) {
			private[team] = true
		} else {
			everyTeam = true
		}
	}
	var open []string
	for _, t := range s.Teams {
		if !everyTeam && !private[t] {
			open = append(open, "team "+t+" (no members list)")
		}
	}
	for _, c := range s.Commons {
		open = append(open, "commons "+c)
	}
	if s.MDNS {
		open = append(open, "mDNS")
	}
	if len(open) == 0 {
		rep.add("admit", checkOK, "admit_all = true counts every origin; every scope configured is closed (private teams only)")
		return
	}
	rep.add("admit", checkWarn, "admit_all = true counts every origin, and %s let strangers in: their fresh keys then make lessons common; turn it off (`remem config unset admit_all`) and admit whom you mean with `remem trust add`", strings.Join(open, ", "))
}

// configTextOf is config.toml's text, "" when there is none.
func configTextOf(file string) string {
	data, _ := os.ReadFile(file)
	return string(data)
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// dialNode asks home's node.json for a running node; fs.ErrNotExist when
// there is none.
func dialNode(ctx context.Context, h string) (*node.Client, error) {
	if _, err := os.Stat(filepath.Join(h, node.NodeFile)); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	return node.DialNode(ctx, h)
}

// checkStore opens the store, or, while the running node holds it, takes
// the node's count of records.
func checkStore(rep *doctorReport, h string, running bool, st node.Status) {
	if running {
		rep.add("store", checkOK, "held by the running node: %d records, %d lessons", st.Records, st.Lessons)
		checkDrafts(rep, st.Drafts)
		return
	}
	m, err := node.Open(node.Config{Home: h})
	var locked *store.LockedError
	switch {
	case errors.As(err, &locked):
		rep.add("store", checkWarn, "%s; run doctor again when it is done", oneLine(err))
	case err != nil:
		rep.add("store", checkFail, "the store does not open: %s", oneLine(err))
	default:
		mst, serr := m.Status()
		cerr := m.Close()
		if err := errors.Join(serr, cerr); err != nil {
			rep.add("store", checkFail, "the store opens but does not answer: %s", oneLine(err))
			return
		}
		rep.add("store", checkOK, "opens: %d records, %d lessons", mst.Records, mst.Lessons)
		checkDrafts(rep, mst.Drafts)
	}
}

// checkDrafts says how many own lessons wait as drafts for a sentence,
// and who writes one.
func checkDrafts(rep *doctorReport, n int) {
	if n == 0 {
		return
	}
	rep.add("drafts", checkWarn, "%d of this memory's lessons are drafts, kept here and never shared until written as a sentence: "+
		"a model writes them at each sleep (`model` in config.toml, see model), the agent's own `lesson` does, or `remem lessons rewrite HASH TEXT` (`remem lessons --all` lists them)", n)
}

// checkPorts tries to bind the API address and each libp2p listen
// address of the configuration, when no node of this home holds them.
func checkPorts(rep *doctorReport, s nodeSettings) {
	var taken []string
	if err := tryListen("tcp", s.API); err != nil {
		taken = append(taken, fmt.Sprintf("the API address %s is taken (%s): stop what holds it or `remem config set api 127.0.0.1:PORT`", s.API, bindReason(err)))
	}
	listen := s.Listen
	if len(listen) == 0 {
		listen = gossip.DefaultListen
	}
	for _, a := range listen {
		network, addr, ok := listenAddr(a)
		if !ok {
			continue // config's check names a bad multiaddr
		}
		if err := tryListen(network, addr); err != nil {
			taken = append(taken, fmt.Sprintf("the listen address %s is taken (%s): stop what holds it or `remem config set listen` with another port", a, bindReason(err)))
		}
	}
	if len(taken) > 0 {
		rep.add("ports", checkFail, "%s", strings.Join(taken, "; "))
		return
	}
	rep.add("ports", checkOK, "free: API %s, listen %s", s.API, strings.Join(listen, ", "))
}

func bindReason(err error) string {
	if errors.Is(err, os.ErrPermission) {
		return "permission denied"
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err.Error()
	}
	return err.Error()
}

func tryListen(network, addr string) error {
	if network == "udp" {
		pc, err := net.ListenPacket("udp", addr)
		if err == nil {
			_ = pc.Close() // only probing
		}
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		_ = ln.Close() // only probing
	}
	return err
}

// listenAddr turns a libp2p multiaddr into the network and host:port to
// probe.
func listenAddr(a string) (network, addr string, ok bool) {
	ma, err := multiaddr.NewMultiaddr(a)
	if err != nil {
		return "", "", false
	}
	host, err := ma.ValueForProtocol(multiaddr.P_IP4)
	if err != nil {
		if host, err = ma.ValueForProtocol(multiaddr.P_IP6); err != nil {
			return "", "", false
		}
	}
	if port, err := ma.ValueForProtocol(multiaddr.P_TCP); err == nil {
		return "tcp", net.JoinHostPort(host, port), true
	}
	if port, err := ma.ValueForProtocol(multiaddr.P_UDP); err == nil {
		return "udp", net.JoinHostPort(host, port), true
	}
	return "", "", false
}

// checkCommons asks each commons for its info, its index (with the token)
// and whether it takes the token for writing, and compares the clocks.
func checkCommons(ctx context.Context, rep *doctorReport, s nodeSettings) {
	if len(s.Commons) == 0 {
		rep.add("commons", checkOK, "none configured (add one with `remem config set commons URL`)")
		rep.add("clock", checkUnknown, "no commons configured to compare the clock with")
		return
	}
	token, err := commonsToken(s.CommonsToken)
	if err != nil {
		rep.add("commons", checkFail, "%s: fix commons_token_file (`remem config set commons_token_file FILE`)", oneLine(err))
	}
	skewDone := false
	for _, raw := range s.Commons {
		base, err := commons.CanonicalURL(raw)
		if err != nil {
			continue // the config check names it
		}
		c := &commons.Client{BaseURL: base, Token: token, RequestTimeout: doctorTimeout}
		p, err := c.Probe(ctx)
		if !skewDone && p.Skew != nil {
			skewDone = true
			checkSkew(rep, base, *p.Skew)
		}
		if err != nil {
			rep.add("commons", checkFail, "%s does not answer as a commons: %s; check the URL and the network", base, oneLine(err))
			continue
		}
		status, detail := authorised(p, token != "")
		rep.add("commons", status, "%s: %s", base, detail)
	}
	if !skewDone {
		rep.add("clock", checkUnknown, "no commons answered with its time")
	}
}

func checkSkew(rep *doctorReport, base string, skew time.Duration) {
	abs := skew.Abs()
	ahead := "ahead of"
	if skew < 0 {
		ahead = "behind"
	}
	switch {
	case abs < 30*time.Second:
		rep.add("clock", checkOK, "%s %s %s's clock (to about a second), well inside the 10 minutes records may be ahead", abs.Round(time.Second), ahead, base)
	case abs < 5*time.Minute:
		rep.add("clock", checkWarn, "%s %s %s's clock: turn on time sync (NTP) before it grows", abs.Round(time.Second), ahead, base)
	default:
		rep.add("clock", checkFail, "%s %s %s's clock: records signed more than 10 minutes ahead are refused and states are computed at the wrong time; turn on time sync (NTP)",
			abs.Round(time.Second), ahead, base)
	}
}

// authorised says what a probe found of reading the commons and of
// pushing with the token (tokened: one is set).
func authorised(p commons.Probe, tokened bool) (string, string) {
	switch {
	case p.ReadErr != nil:
		return checkFail, "the index does not answer: " + oneLine(p.ReadErr)
	case p.Read == http.StatusUnauthorized && !tokened:
		return checkFail, "reading needs a token and none is set: `remem config set commons_token_file FILE` (or REMEM_COMMONS_TOKEN)"
	case p.Read == http.StatusUnauthorized:
		return checkFail, "the token is refused for reading: check the file commons_token_file names (or REMEM_COMMONS_TOKEN)"
	case p.Read != http.StatusOK:
		return checkFail, fmt.Sprintf("GET /commons/index answered %d %s", p.Read, http.StatusText(p.Read))
	case !tokened:
		return checkWarn, "reachable and readable; no token is set, so pulls work and pushes will be refused: `remem config set commons_token_file FILE`"
	case p.WriteErr != nil:
		return checkUnknown, "readable; the token's write check did not answer: " + oneLine(p.WriteErr)
	}
	switch p.Write {
	case http.StatusNoContent:
		return checkOK, "reachable, readable, and it accepts the token for pushing"
	case http.StatusUnauthorized:
		return checkFail, "readable, but the token is refused for pushing: check the file commons_token_file names (or REMEM_COMMONS_TOKEN)"
	case http.StatusTooManyRequests:
		return checkUnknown, "readable; the token's write check was rate-limited, try again in a minute"
	}
	return checkUnknown, fmt.Sprintf("readable; the token's write check answered %d %s", p.Write, http.StatusText(p.Write))
}

// isRelayed: a relayed (circuit) address.
func isRelayed(addr string) bool { return strings.Contains(addr, "/p2p-circuit") }
