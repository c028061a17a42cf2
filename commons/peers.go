package commons

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto/pb"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/record"

	"github.com/remem/remem/internal/atomicfile"
	"github.com/remem/remem/protocol"
)

// The peer directory (SPEC §10 [ext]) is a rendezvous, never a dependency:
// a node leaves its signed libp2p peer record under its origin with the
// hashed topics it joins, and finds the others of a topic. The server
// checks who signed each record so that nobody can list an address under
// another's origin; clients check again, so a lying server can only leave
// entries out.
const (
	// PeerTTL is how long an entry is listed after the server accepted
	// it: a node that stops renewing drops out within a day.
	PeerTTL = 24 * time.Hour
	// PeerListMax is the most entries one listing returns (SPEC §12).
	PeerListMax = 50
	// PeerBodyMax bounds a PUT's body, and the envelope within it.
	PeerBodyMax = 8 << 10
	// PeerMaxTopics and PeerMaxAddrs bound one entry.
	PeerMaxTopics = 16
	PeerMaxAddrs  = 32

	peersDir       = "peers" // DataDir/peers/<origin>.json
	peerSweepEvery = time.Hour
)

// TopicHash is what the directory knows a topic by: the lowercase hex
// SHA-256 of the topic's name (e.g. "remem/1/team/<name>"), so a commons
// never learns a team's name.
func TopicHash(topic string) string {
	sum := sha256.Sum256([]byte(topic))
	return hex.EncodeToString(sum[:])
}

// validTopic reports whether s is 64 lowercase hex characters.
func validTopic(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// peerRefusal is a refused peer PUT (or a listed entry a client skips):
// the HTTP status the server answers and what is wrong.
type peerRefusal struct {
	code int
	msg  string
}

func (e *peerRefusal) Error() string { return e.msg }

func refusePeer(code int, format string, args ...any) error {
	return &peerRefusal{code: code, msg: fmt.Sprintf(format, args...)}
}

// PeerPutBody is the JSON of PUT /commons/peers/<origin>. Envelope is the
// marshalled record.Envelope (base64 in JSON).
type PeerPutBody struct {
	Envelope []byte   `json:"envelope"`
	Topics   []string `json:"topics"`
}

// decodePeerPut reads a PUT body strictly (one JSON object, no unknown
// field, nothing after it) and checks the topics: at most PeerMaxTopics,
// each a TopicHash, none twice. The topics come back sorted, so one set of
// topics is one stored form.
func decodePeerPut(body []byte) (PeerPutBody, error) {
	var p PeerPutBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return PeerPutBody{}, refusePeer(http.StatusBadRequest, `the body is not {"envelope": "<base64>", "topics": ["<64 hex>", ...]}: %v`, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return PeerPutBody{}, refusePeer(http.StatusBadRequest, "the body holds more than one JSON object")
	}
	if len(p.Envelope) == 0 {
		return PeerPutBody{}, refusePeer(http.StatusBadRequest, "the body has no envelope")
	}
	if err := checkTopics(p.Topics); err != nil {
		return PeerPutBody{}, err
	}
	p.Topics = slices.Clone(p.Topics)
	slices.Sort(p.Topics)
	return p, nil
}

// checkTopics is the topics rule of a PUT, shared by server and client.
func checkTopics(topics []string) error {
	if len(topics) > PeerMaxTopics {
		return refusePeer(http.StatusRequestEntityTooLarge, "%d topics; the limit is %d", len(topics), PeerMaxTopics)
	}
	seen := make(map[string]bool, len(topics))
	for i, t := range topics {
		if !validTopic(t) {
			return refusePeer(http.StatusBadRequest, "topic %d (%.70q) is not 64 lowercase hex characters (the SHA-256 of the topic name, TopicHash)", i+1, t)
		}
		if seen[t] {
			return refusePeer(http.StatusBadRequest, "topic %d (%s) is listed twice", i+1, t)
		}
		seen[t] = true
	}
	return nil
}

// openPeerEnvelope verifies a marshalled envelope as server and client
// both must: a valid signature in the peer-record domain, a peer.PeerRecord
// payload naming its own signer, an Ed25519 signer (only a memory's key
// has an origin), at most PeerMaxAddrs addresses. It returns the signer's
// origin and the record. Refusals carry 400, 403 (signed by a key that is
// not the peer's, or cannot be a memory's) or 413.
func openPeerEnvelope(data []byte) (string, *peer.PeerRecord, error) {
	if len(data) > PeerBodyMax {
		return "", nil, refusePeer(http.StatusRequestEntityTooLarge, "the envelope is over %d bytes", PeerBodyMax)
	}
	env, rec, err := record.ConsumeEnvelope(data, peer.PeerRecordEnvelopeDomain)
	if err != nil {
		return "", nil, refusePeer(http.StatusBadRequest, "the envelope is not a signed libp2p peer record: %v", err)
	}
	pr, ok := rec.(*peer.PeerRecord)
	if !ok {
		return "", nil, refusePeer(http.StatusBadRequest, "the envelope holds a %T, not a peer record", rec)
	}
	if env.PublicKey.Type() != pb.KeyType_Ed25519 {
		return "", nil, refusePeer(http.StatusForbidden, "the envelope is signed with a %s key; only a memory's Ed25519 key has an origin", env.PublicKey.Type())
	}
	signer, err := peer.IDFromPublicKey(env.PublicKey)
	if err != nil {
		return "", nil, refusePeer(http.StatusBadRequest, "the envelope's key: %v", err)
	}
	if pr.PeerID != signer {
		return "", nil, refusePeer(http.StatusForbidden, "the record names peer %s but is signed by %s", pr.PeerID, signer)
	}
	raw, err := env.PublicKey.Raw()
	if err != nil {
		return "", nil, refusePeer(http.StatusBadRequest, "the envelope's key: %v", err)
	}
	if len(pr.Addrs) > PeerMaxAddrs {
		return "", nil, refusePeer(http.StatusRequestEntityTooLarge, "the record holds %d addresses; the limit is %d", len(pr.Addrs), PeerMaxAddrs)
	}
	return protocol.Fingerprint(raw), pr, nil
}

// peerEntry is one origin's directory entry, in memory and on disk
// (DataDir/peers/<origin>.json). Stored entries are never changed in
// place, only replaced, so a pointer to one may be read without a lock.
type peerEntry struct {
	Origin   string    `json:"origin"`
	Seq      uint64    `json:"seq"`
	Envelope []byte    `json:"envelope"`
	Topics   []string  `json:"topics"`  // sorted
	Updated  time.Time `json:"updated"` // when the server accepted it
}

func (e *peerEntry) expired(now time.Time) bool { return !now.Before(e.Updated.Add(PeerTTL)) }

// peerStore keeps every entry in memory with an index by topic, so a
// listing reads no file and costs the sort of one topic's entries. The
// memory is about the envelope (usually 200–600 bytes, at most 8 KiB),
// 64 bytes per topic twice (entry and index) and ~200 bytes of maps per
// entry: under 1 KiB for a usual node, ~11 KiB at the limits.
type peerStore struct {
	dir string
	now func() time.Time
	log *slog.Logger

	locks [256]sync.Mutex // per-origin (striped): one writer of an origin at a time

	mu        sync.Mutex // guards entries, byTopic, lastSweep
	entries   map[string]*peerEntry
	byTopic   map[string]map[string]*peerEntry
	lastSweep time.Time
}

// openPeerStore loads DataDir/peers, removing temp files a crash left and
// the entries that expired while the server was down. Each entry's
// envelope is verified again (a damaged file is skipped, never served),
// which costs one signature check per entry at start.
func openPeerStore(dataDir string, now func() time.Time, log *slog.Logger) (*peerStore, error) {
	ps := &peerStore{dir: filepath.Join(dataDir, peersDir), now: now, log: log,
		entries: map[string]*peerEntry{}, byTopic: map[string]map[string]*peerEntry{}}
	if err := os.MkdirAll(ps.dir, 0o755); err != nil {
		return nil, fmt.Errorf("commons peer directory: %w", err)
	}
	removeTemps(ps.dir, dataTemp)
	ents, err := os.ReadDir(ps.dir)
	if err != nil {
		return nil, fmt.Errorf("commons peer directory: %w", err)
	}
	t := now()
	for _, de := range ents {
		origin, ok := strings.CutSuffix(de.Name(), ".json")
		if !ok || !protocol.ValidOrigin(origin) || !de.Type().IsRegular() {
			continue
		}
		e, err := loadPeerEntry(ps.path(origin), origin)
		switch {
		case err != nil:
			log.Warn("commons peer entry skipped", "path", ps.path(origin), "err", err)
		case e.expired(t):
			if err := os.Remove(ps.path(origin)); err != nil {
				log.Warn("commons peer entry expired but not removed", "path", ps.path(origin), "err", err)
			}
		default:
			ps.setLocked(e)
		}
	}
	ps.lastSweep = t
	return ps, nil
}

func loadPeerEntry(path, origin string) (*peerEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var e peerEntry
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, err
	}
	signer, pr, err := openPeerEnvelope(e.Envelope)
	switch {
	case err != nil:
		return nil, err
	case e.Origin != origin || signer != origin:
		return nil, fmt.Errorf("the entry is of origin %q, signed by %s", e.Origin, signer)
	case pr.Seq != e.Seq:
		return nil, fmt.Errorf("the entry says seq %d, its record %d", e.Seq, pr.Seq)
	}
	if err := checkTopics(e.Topics); err != nil {
		return nil, err
	}
	return &e, nil
}

func (ps *peerStore) path(origin string) string { return filepath.Join(ps.dir, origin+".json") }

// setLocked indexes e in place of its origin's entry. Call with mu held.
func (ps *peerStore) setLocked(e *peerEntry) {
	ps.dropLocked(e.Origin)
	ps.entries[e.Origin] = e
	for _, t := range e.Topics {
		m := ps.byTopic[t]
		if m == nil {
			m = map[string]*peerEntry{}
			ps.byTopic[t] = m
		}
		m[e.Origin] = e
	}
}

// dropLocked removes origin's entry from the maps. Call with mu held.
func (ps *peerStore) dropLocked(origin string) {
	old := ps.entries[origin]
	if old == nil {
		return
	}
	delete(ps.entries, origin)
	for _, t := range old.Topics {
		delete(ps.byTopic[t], origin)
		if len(ps.byTopic[t]) == 0 {
			delete(ps.byTopic, t)
		}
	}
}

// errPeerConflict: the stored record of the origin is newer, or as new
// and different (the caller answers 409).
type errPeerConflict struct{ msg string }

func (e *errPeerConflict) Error() string { return e.msg }

// put stores origin's entry unless the stored one has a higher Seq, or the
// same Seq with another envelope or other topics: a token holder who
// replays an older record of a node cannot roll its entry back, and only
// a newly sealed record changes it. A PUT of exactly what is stored
// changes nothing, not even `updated` (as a file PUT): to stay listed past
// PeerTTL a node seals a fresh record (an expired one sent again is 409). The check and the write run under
// the origin's lock.
func (ps *peerStore) put(origin string, seq uint64, env []byte, topics []string) (e *peerEntry, created, changed bool, err error) {
	l := &ps.locks[stripe(origin)]
	l.Lock()
	defer l.Unlock()
	ps.mu.Lock()
	old := ps.entries[origin]
	ps.mu.Unlock()
	if old != nil {
		switch {
		case seq < old.Seq:
			return nil, false, false, &errPeerConflict{fmt.Sprintf("the directory holds a newer record of %s (seq %d > %d); an older one is never taken back", origin, old.Seq, seq)}
		case seq == old.Seq && bytes.Equal(env, old.Envelope) && slices.Equal(topics, old.Topics):
			if old.expired(ps.now()) { // not yet deleted; a 200 would say it is listed
				return nil, false, false, &errPeerConflict{fmt.Sprintf("this record of %s expired at %s; seal a new one (a higher seq) to be listed again", origin, old.Updated.Add(PeerTTL).Format(time.RFC3339))}
			}
			return old, false, false, nil
		case seq == old.Seq:
			return nil, false, false, &errPeerConflict{fmt.Sprintf("the directory holds another record (or other topics) of %s with the same seq %d; seal a new record to replace it", origin, seq)}
		}
	}
	e = &peerEntry{Origin: origin, Seq: seq, Envelope: env, Topics: topics, Updated: ps.now().UTC()}
	data, err := json.Marshal(e)
	if err != nil {
		return nil, false, false, err
	}
	if err := atomicfile.Write(ps.path(origin), dataTemp+origin+"-", data, 0o644); err != nil {
		return nil, false, false, fmt.Errorf("storing the peer entry of %s: %w", origin, err)
	}
	ps.mu.Lock()
	ps.setLocked(e)
	ps.mu.Unlock()
	return e, old == nil, true, nil
}

// list returns the freshest PeerListMax unexpired entries of topic, newest
// first, then deletes the expired ones it met, and once per peerSweepEvery
// every expired entry (so entries of topics nobody asks for go too).
func (ps *peerStore) list(topic string) []*peerEntry {
	now := ps.now()
	var out []*peerEntry
	var expired []string
	ps.mu.Lock()
	for _, e := range ps.byTopic[topic] {
		if e.expired(now) {
			expired = append(expired, e.Origin)
		} else {
			out = append(out, e)
		}
	}
	ps.mu.Unlock()
	slices.SortFunc(out, func(a, b *peerEntry) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(a.Origin, b.Origin)
	})
	for _, o := range expired {
		ps.expire(o, now)
	}
	ps.maybeSweep(now)
	return out[:min(len(out), PeerListMax)]
}

// maybeSweep deletes every expired entry if the last sweep is
// peerSweepEvery old: one pass over the entries in memory per hour.
func (ps *peerStore) maybeSweep(now time.Time) {
	ps.mu.Lock()
	if now.Sub(ps.lastSweep) < peerSweepEvery {
		ps.mu.Unlock()
		return
	}
	ps.lastSweep = now
	var expired []string
	for o, e := range ps.entries {
		if e.expired(now) {
			expired = append(expired, o)
		}
	}
	ps.mu.Unlock()
	for _, o := range expired {
		ps.expire(o, now)
	}
}

// expire deletes origin's entry if it is still expired at now (a PUT may
// have renewed it since it was seen expired).
func (ps *peerStore) expire(origin string, now time.Time) {
	l := &ps.locks[stripe(origin)]
	l.Lock()
	defer l.Unlock()
	ps.mu.Lock()
	e := ps.entries[origin]
	if e == nil || !e.expired(now) {
		ps.mu.Unlock()
		return
	}
	ps.dropLocked(origin)
	ps.mu.Unlock()
	if err := os.Remove(ps.path(origin)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		ps.log.Warn("commons peer entry expired but not removed; the next start removes it", "origin", origin, "err", err)
	}
}

// PeerAnswer is the JSON of an accepted peer PUT.
type PeerAnswer struct {
	Origin  string    `json:"origin"`
	Seq     uint64    `json:"seq"`
	Topics  int       `json:"topics"`
	Updated time.Time `json:"updated"` // when the server accepted this record
	Expires time.Time `json:"expires"` // Updated + PeerTTL
}

// PeerListEntry is one element of GET /commons/peers?topic=.
type PeerListEntry struct {
	Origin   string    `json:"origin"`
	Envelope []byte    `json:"envelope"` // the marshalled record.Envelope, base64
	Updated  time.Time `json:"updated"`
}

// PeerDirectoryInfo is the peer directory as the info document reports it.
type PeerDirectoryInfo struct {
	ExpiresAfterSeconds int `json:"expires_after_seconds"`
	ListedPerTopic      int `json:"listed_per_topic"`
	TopicsPerPeer       int `json:"topics_per_peer"`
	AddrsPerRecord      int `json:"addrs_per_record"`
	BodyBytes           int `json:"body_bytes"`
}

func peerDirectoryInfo() *PeerDirectoryInfo {
	return &PeerDirectoryInfo{ExpiresAfterSeconds: int(PeerTTL / time.Second), ListedPerTopic: PeerListMax,
		TopicsPerPeer: PeerMaxTopics, AddrsPerRecord: PeerMaxAddrs, BodyBytes: PeerBodyMax}
}

func (s *Server) handlePeerPut(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	remote := clientIP(r)
	origin := r.PathValue("origin")
	code, detail := s.putPeer(w, r, origin, remote)
	attrs := []any{"origin", origin, "remote", remote, "status", code, "duration", time.Since(start)}
	if detail != "" {
		attrs = append(attrs, "refused", detail)
	}
	level := slog.LevelInfo
	if code >= 500 {
		level = slog.LevelError
	}
	s.log.Log(r.Context(), level, "commons peer put", attrs...)
}

// putPeer handles one peer PUT; it returns the status answered and, for a
// refusal, what was wrong (logged).
func (s *Server) putPeer(w http.ResponseWriter, r *http.Request, origin, remote string) (int, string) {
	if code, ok := s.admitWrite(w, r, remote, "a PUT needs a valid bearer token"); !ok {
		return code, ""
	}
	refuse := func(code int, msg string) (int, string) {
		writeJSON(w, code, errorBody{Error: msg})
		return code, msg
	}
	if !protocol.ValidOrigin(origin) {
		return refuse(http.StatusBadRequest, "the path must be /commons/peers/<16 lowercase hex> (the origin)")
	}
	body, err := readLimited(w, r, PeerBodyMax)
	switch {
	case errors.Is(err, errTooLarge):
		return refuse(http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is over %d bytes", PeerBodyMax))
	case err != nil:
		return refuse(http.StatusBadRequest, "reading the body: "+err.Error())
	}
	p, err := decodePeerPut(body)
	var signer string
	var pr *peer.PeerRecord
	if err == nil {
		signer, pr, err = openPeerEnvelope(p.Envelope)
	}
	if err == nil && signer != origin {
		err = refusePeer(http.StatusForbidden, "the record is signed by origin %s, not %s", signer, origin)
	}
	if err != nil {
		var pe *peerRefusal
		if errors.As(err, &pe) {
			return refuse(pe.code, pe.msg)
		}
		return refuse(http.StatusBadRequest, err.Error())
	}
	e, created, _, err := s.peers.put(origin, pr.Seq, p.Envelope, p.Topics)
	defer s.peers.maybeSweep(s.now())
	var conflict *errPeerConflict
	switch {
	case errors.As(err, &conflict):
		writeJSON(w, http.StatusConflict, errorBody{Error: conflict.msg, Reason: ReasonRollback})
		return http.StatusConflict, conflict.msg
	case err != nil:
		s.log.Error("commons peer storage failed", "origin", origin, "err", err)
		return refuse(http.StatusInternalServerError, "the server could not store the entry; the previous one is unchanged")
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	writeJSON(w, code, PeerAnswer{Origin: origin, Seq: e.Seq, Topics: len(e.Topics), Updated: e.Updated, Expires: e.Updated.Add(PeerTTL)})
	return code, ""
}

func (s *Server) handlePeers(w http.ResponseWriter, r *http.Request) {
	code := s.listPeers(w, r)
	s.log.Debug("commons peers", "remote", clientIP(r), "status", code)
}

func (s *Server) listPeers(w http.ResponseWriter, r *http.Request) int {
	if code, ok := s.admitRead(w, r); !ok {
		return code
	}
	topic := r.URL.Query().Get("topic")
	if !validTopic(topic) {
		writeJSON(w, http.StatusBadRequest, errorBody{Error: "?topic= must be 64 lowercase hex characters (the SHA-256 of the topic name)"})
		return http.StatusBadRequest
	}
	entries := s.peers.list(topic)
	out := make([]PeerListEntry, len(entries))
	for i, e := range entries {
		out[i] = PeerListEntry{Origin: e.Origin, Envelope: e.Envelope, Updated: e.Updated}
	}
	w.Header().Set("Cache-Control", "no-cache")
	writeJSON(w, http.StatusOK, out)
	return http.StatusOK
}

// Client side.

// peerListMaxBytes bounds what a client reads of a listing: PeerListMax
// entries of the largest envelope in base64, with slack.
const peerListMaxBytes = PeerListMax*(PeerBodyMax*4/3+256) + 4<<10

// PutPeer registers env (this node's signed peer record, sealed with the
// memory key) under its signer's origin, for the topics given as
// TopicHash hex. It checks what the server would first, so a mistake is
// named here and not in a 400.
func (c *Client) PutPeer(ctx context.Context, env *record.Envelope, topics []string) error {
	if _, err := CanonicalURL(c.BaseURL); err != nil {
		return err
	}
	data, err := env.Marshal()
	if err != nil {
		return fmt.Errorf("registering with the commons at %s: marshalling the envelope: %w", c.base(), err)
	}
	origin, _, err := openPeerEnvelope(data)
	if err == nil {
		err = checkTopics(topics)
	}
	if err != nil {
		return fmt.Errorf("registering with the commons at %s: %w", c.base(), err)
	}
	body, err := json.Marshal(PeerPutBody{Envelope: data, Topics: topics})
	if err != nil {
		return err
	}
	rctx, cancel := c.requestContext(ctx)
	defer cancel()
	req, err := c.newRequest(rctx, http.MethodPut, "/commons/peers/"+origin, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http().Do(req)
	if err != nil {
		return fmt.Errorf("registering with the commons at %s: %w", c.base(), c.explain(ctx, rctx, err))
	}
	defer func() { _ = resp.Body.Close() }() // a read body: its close says nothing
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		err := c.statusError(resp)
		var se *StatusError
		if errors.As(err, &se) {
			return &peerStatusError{se}
		}
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, clientMaxReply)) // lets the connection be reused
	return nil
}

// peerStatusError is a refused peer PUT: StatusError's words are about
// record files, so the ones that differ are said here. errors.As still
// finds the *StatusError.
type peerStatusError struct{ *StatusError }

func (e *peerStatusError) Unwrap() error { return e.StatusError }

func (e *peerStatusError) Error() string {
	switch e.Code {
	case http.StatusBadRequest, http.StatusForbidden, http.StatusRequestEntityTooLarge:
		return fmt.Sprintf("the commons at %s refused the peer record (%d): %s", e.URL, e.Code, e.Server)
	case http.StatusConflict:
		return fmt.Sprintf("the commons at %s holds a newer or different peer record of this memory (%s); seal a fresh record (a higher seq) to replace it", e.URL, e.Server)
	}
	return e.StatusError.Error()
}

// PeerList is a listing as the client verified it.
type PeerList struct {
	Peers    []peer.AddrInfo // verified, newest first, one per peer
	Skipped  int             // entries not taken: a bad envelope, a wrong origin, a peer listed twice, past PeerListMax
	Problems []string        // why, for the first few skipped
}

const maxPeerProblems = 10

// Peers lists the verified peers of a topic (TopicHash hex); see
// PeerListing for what was skipped.
func (c *Client) Peers(ctx context.Context, topicHex string) ([]peer.AddrInfo, error) {
	l, err := c.PeerListing(ctx, topicHex)
	return l.Peers, err
}

// PeerListing gets the directory's entries of a topic and verifies every
// envelope itself (openPeerEnvelope, and the listed origin against the
// signer's): the server's word is never trusted. Bad entries are skipped
// and counted, never an error: the directory is a convenience.
func (c *Client) PeerListing(ctx context.Context, topicHex string) (PeerList, error) {
	var l PeerList
	if !validTopic(topicHex) {
		return l, fmt.Errorf("listing peers: topic %.70q is not 64 lowercase hex characters (use TopicHash)", topicHex)
	}
	rctx, cancel := c.requestContext(ctx)
	defer cancel()
	req, err := c.newRequest(rctx, http.MethodGet, "/commons/peers?topic="+url.QueryEscape(topicHex), nil)
	if err != nil {
		return l, err
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return l, fmt.Errorf("listing peers at the commons at %s: %w", c.base(), c.explain(ctx, rctx, err))
	}
	defer func() { _ = resp.Body.Close() }() // a read body: its close says nothing
	if resp.StatusCode != http.StatusOK {
		return l, c.statusError(resp)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, peerListMaxBytes+1))
	if err != nil {
		return l, fmt.Errorf("listing peers at the commons at %s: %w", c.base(), c.explain(ctx, rctx, err))
	}
	if len(data) > peerListMaxBytes {
		return l, fmt.Errorf("the peer listing of the commons at %s is over %d bytes: the commons is broken or hostile", c.base(), peerListMaxBytes)
	}
	var entries []PeerListEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		return l, fmt.Errorf("the peer listing of the commons at %s is not valid: %w", c.base(), err)
	}
	l.verify(entries)
	return l, nil
}

// verify keeps the entries whose envelope is a valid peer record of the
// origin listed, at most PeerListMax, one per peer (the highest seq, at
// the place of the first listed).
func (l *PeerList) verify(entries []PeerListEntry) {
	skip := func(format string, args ...any) {
		l.Skipped++
		if len(l.Problems) < maxPeerProblems {
			l.Problems = append(l.Problems, fmt.Sprintf(format, args...))
		}
	}
	at := map[peer.ID]int{}
	seqs := map[peer.ID]uint64{}
	for i, e := range entries {
		if i >= PeerListMax {
			skip("%d entries past the %d a listing holds", len(entries)-i, PeerListMax)
			l.Skipped += len(entries) - i - 1
			break
		}
		origin, pr, err := openPeerEnvelope(e.Envelope)
		switch {
		case err != nil:
			skip("entry %d (%.20q): %v", i+1, e.Origin, err)
			continue
		case origin != e.Origin:
			skip("entry %d is listed as origin %.20q but signed by %s", i+1, e.Origin, origin)
			continue
		}
		info := peer.AddrInfo{ID: pr.PeerID, Addrs: pr.Addrs}
		if j, ok := at[pr.PeerID]; ok {
			skip("entry %d: peer %s is listed twice", i+1, pr.PeerID)
			if pr.Seq > seqs[pr.PeerID] {
				l.Peers[j], seqs[pr.PeerID] = info, pr.Seq
			}
			continue
		}
		at[pr.PeerID], seqs[pr.PeerID] = len(l.Peers), pr.Seq
		l.Peers = append(l.Peers, info)
	}
}
