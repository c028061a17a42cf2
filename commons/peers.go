package commons

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto/pb"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/record"

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

	// PeerAliveGap is how long an entry may go without a renewal and still
	// count as alive (listingOrder): a node renews on every directory round,
	// at least every pull (10 minutes by default) and after each sleep, so
	// an hour is six missed rounds. A node set to pull less often than
	// hourly ranks with the silent entries, and is still listed while
	// fewer than PeerListMax entries are alive.
	PeerAliveGap = time.Hour

	peersDir       = "peers" // peers/<origin>.json in the store
	peerSweepEvery = time.Hour
)

// TopicHash is what the directory knows a topic by: the lowercase hex
// SHA-256 of the topic's name (e.g. "remem/1/team/<name>"), so a commons
// never learns a team's name.
func TopicHash(topic string) string {
	sum := sha256.Sum256([]byte(topic))
	return hex.EncodeToString(sum[:])
}

// TeamKeySize is the size of a team's directory key.
const TeamKeySize = 32

// TeamTopicHash is what the directory knows the topic of a team with a key
// by: the lowercase hex HMAC-SHA256 of the topic's name under the key.
// Unlike TopicHash, someone who guesses the team's name cannot compute it,
// so cannot find the team's members in a listing, nor list decoys under
// it.
func TeamTopicHash(topic string, key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(topic))
	return hex.EncodeToString(m.Sum(nil))
}

// validTopic reports whether s is 64 lowercase hex characters.
func validTopic(s string) bool {
	return validHex(s, 2*sha256.Size)
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

// peerEntry is one origin's directory entry, in memory and in the store
// (peers/<origin>.json). Stored entries are never changed in
// place, only replaced, so a pointer to one may be read without a lock.
type peerEntry struct {
	Origin   string    `json:"origin"`
	Seq      uint64    `json:"seq"`
	Envelope []byte    `json:"envelope"`
	Topics   []string  `json:"topics"`  // sorted
	Updated  time.Time `json:"updated"` // when the server accepted it
	// First is when the entry's current run of renewals began (see
	// renewedFrom); zero in entries stored before it was kept: Updated.
	First time.Time `json:"first,omitzero"`
}

func (e *peerEntry) expired(now time.Time) bool { return !now.Before(e.Updated.Add(PeerTTL)) }

// alive: renewed within PeerAliveGap of now.
func (e *peerEntry) alive(now time.Time) bool { return now.Sub(e.Updated) < PeerAliveGap }

// since is when the entry began to stay alive.
func (e *peerEntry) since() time.Time {
	if e.First.IsZero() || e.First.After(e.Updated) {
		return e.Updated
	}
	return e.First
}

// aliveFor is how long the entry has stayed alive, as of its last renewal.
func (e *peerEntry) aliveFor() time.Duration { return e.Updated.Sub(e.since()) }

// renewedFrom is First for a renewal at now of the stored entry old: old's
// when old was still alive (a renewal keeps the run going, across new
// seals, addresses and topics), else now (a node back after a silence
// starts again).
func renewedFrom(old *peerEntry, now time.Time) time.Time {
	if old != nil && old.alive(now) {
		return old.since()
	}
	return now
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
	Since    time.Time `json:"since"` // when it began to stay alive (the listing's order)
}

// PeerDirectoryInfo is the peer directory as the info document reports it.
type PeerDirectoryInfo struct {
	ExpiresAfterSeconds int `json:"expires_after_seconds"`
	ListedPerTopic      int `json:"listed_per_topic"`
	TopicsPerPeer       int `json:"topics_per_peer"`
	AddrsPerRecord      int `json:"addrs_per_record"`
	BodyBytes           int `json:"body_bytes"`
	// The listing rates (ServerConfig.RateListPerClient, RateListPerToken);
	// absent: no limit.
	ListsPerClient *RateInfo `json:"lists_per_client,omitempty"`
	ListsPerToken  *RateInfo `json:"lists_per_token,omitempty"`
}

func (s *Server) peerDirectoryInfo() *PeerDirectoryInfo {
	return &PeerDirectoryInfo{ExpiresAfterSeconds: int(PeerTTL / time.Second), ListedPerTopic: PeerListMax,
		TopicsPerPeer: PeerMaxTopics, AddrsPerRecord: PeerMaxAddrs, BodyBytes: PeerBodyMax,
		ListsPerClient: s.cfg.RateListPerClient.info(), ListsPerToken: s.cfg.RateListPerToken.info()}
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
	if code, _, ok := s.admitWrite(w, r, remote, origin, "a PUT needs a valid bearer token"); !ok {
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
	e, created, _, err := s.peers.put(r.Context(), origin, pr.Seq, p.Envelope, p.Topics)
	defer s.peers.maybeSweep(r.Context(), s.now())
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
	if code, ok := s.admitListing(w, r); !ok {
		return code
	}
	if code, ok := s.admitRead(w, r); !ok {
		return code
	}
	topic := r.URL.Query().Get("topic")
	if !validTopic(topic) {
		writeJSON(w, http.StatusBadRequest, errorBody{Error: "?topic= must be 64 lowercase hex characters (the SHA-256 of the topic name)"})
		return http.StatusBadRequest
	}
	entries := s.peers.list(r.Context(), topic)
	out := make([]PeerListEntry, len(entries))
	for i, e := range entries {
		out[i] = PeerListEntry{Origin: e.Origin, Envelope: e.Envelope, Updated: e.Updated, Since: e.since()}
	}
	w.Header().Set("Cache-Control", "no-cache")
	writeJSON(w, http.StatusOK, out)
	return http.StatusOK
}

// admitListing takes a listing from the client address's bucket and, when
// the request carries a valid token, from the token's: a name-guesser
// with many addresses and one token is bounded by the token, and one
// without a token by its address. The address is charged first, so
// guessing tokens here costs listings too. When it refuses it has
// answered 429.
func (s *Server) admitListing(w http.ResponseWriter, r *http.Request) (int, bool) {
	if ok, wait := s.lists.allow(clientKey(clientIP(r))); !ok {
		return tooManyRequests(w, wait, "peer listings from this address"), false
	}
	if i, ok := s.tokenOf(r); ok {
		if ok, wait := s.listsTok.allow(s.owners[i]); !ok {
			return tooManyRequests(w, wait, "peer listings with this token"), false
		}
	}
	return 0, true
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
	Peers    []peer.AddrInfo // verified, in the listing's order (the longest alive first), one per peer
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
	data, _, err := c.getSmall(ctx, "/commons/peers?topic="+url.QueryEscape(topicHex), peerListMaxBytes, "the peer listing")
	if err != nil {
		return l, err
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
