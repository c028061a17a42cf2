package commons

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/record"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/remem/remem/internal/testutil"
)

// peerKey is the libp2p key of the test identity name: the memory key,
// as a node uses it.
func peerKey(t testing.TB, name string) (origin string, priv crypto.PrivKey) {
	t.Helper()
	id := testutil.Identity(t, name)
	priv, err := crypto.UnmarshalEd25519PrivateKey(id.Private)
	if err != nil {
		t.Fatal(err)
	}
	return id.Origin(), priv
}

// sealPeer is a marshalled envelope of priv's peer record with seq and
// the given addresses.
func sealPeer(t testing.TB, priv crypto.PrivKey, seq uint64, addrs ...string) []byte {
	t.Helper()
	pid, err := peer.IDFromPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	info := peer.AddrInfo{ID: pid}
	for _, a := range addrs {
		info.Addrs = append(info.Addrs, ma.StringCast(a))
	}
	rec := peer.PeerRecordFromAddrInfo(info)
	rec.Seq = seq
	return sealRecord(t, rec, priv)
}

func peerBody(env []byte, topics ...string) []byte {
	b, _ := json.Marshal(PeerPutBody{Envelope: env, Topics: topics})
	return b
}

func (ts *testServer) putPeer(t testing.TB, origin, token string, body []byte) (int, string) {
	t.Helper()
	code, _, b := ts.put(t, "peers/"+origin, token, body)
	return code, b
}

func (ts *testServer) listPeers(t testing.TB, topic string, hdr ...string) []PeerListEntry {
	t.Helper()
	code, _, body := ts.get(t, "/commons/peers?topic="+topic, hdr...)
	if code != 200 {
		t.Fatalf("listing %s: %d %s", topic, code, body)
	}
	var out []PeerListEntry
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("listing %s: %v in %s", topic, err, body)
	}
	return out
}

var (
	teamA = TopicHash("remem/1/team/alpha")
	teamB = TopicHash("remem/1/team/beta")
)

func TestTopicHash(t *testing.T) {
	// The FIPS 180-2 test vector of SHA-256("abc").
	if got := TopicHash("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("TopicHash(abc) = %s", got)
	}
	if !validTopic(teamA) || validTopic(strings.ToUpper(teamA)) || validTopic(teamA[:63]) {
		t.Error("validTopic")
	}
}

// TestTeamTopicHash: HMAC-SHA256 of the topic name under the team key
// (the vector computed with Python's hmac module), never the name's
// SHA-256, and another key gives another hash.
func TestTeamTopicHash(t *testing.T) {
	key := make([]byte, TeamKeySize)
	for i := range key {
		key[i] = byte(i)
	}
	const topic = "remem/1/team/backend"
	got := TeamTopicHash(topic, key)
	if got != "6071a7f0321e487d99e3b56cc6394256405c5b8cc32ad4756f6fda543cfaf295" || !validTopic(got) {
		t.Errorf("TeamTopicHash = %s", got)
	}
	key[0] ^= 1
	if got == TopicHash(topic) || TeamTopicHash(topic, key) == got {
		t.Error("the hash does not depend on the key")
	}
}

func TestPeerPutAndList(t *testing.T) {
	ts := newTestServer(t, nil)
	ctx := context.Background()
	c := ts.client(testToken)
	ao, apriv := peerKey(t, "alice")
	bo, bpriv := peerKey(t, "bob")

	env := sealPeer(t, apriv, 10, "/ip4/192.0.2.1/tcp/4001", "/ip4/192.0.2.1/udp/4001/quic-v1")
	code, body := ts.putPeer(t, ao, testToken, peerBody(env, teamA, teamB))
	if code != 201 {
		t.Fatalf("first PUT: %d %s", code, body)
	}
	var a PeerAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil || a.Origin != ao || a.Seq != 10 || a.Topics != 2 || a.Expires.Sub(a.Updated) != PeerTTL {
		t.Errorf("answer %s (%v)", body, err)
	}
	// The same bytes again: 200, nothing changes, not even `updated`.
	code, body = ts.putPeer(t, ao, testToken, peerBody(env, teamB, teamA))
	var again PeerAnswer
	if err := json.Unmarshal([]byte(body), &again); code != 200 || err != nil || !again.Updated.Equal(a.Updated) {
		t.Errorf("same PUT: %d %s", code, body)
	}
	// A newer record replaces it, with other topics.
	if code, body := ts.putPeer(t, ao, testToken, peerBody(sealPeer(t, apriv, 11, "/ip4/192.0.2.2/tcp/4001"), teamA)); code != 200 {
		t.Errorf("newer PUT: %d %s", code, body)
	}
	// Bob through the client.
	benv, err := record.ConsumeTypedEnvelope(sealPeer(t, bpriv, 5, "/ip4/198.51.100.7/tcp/4001"), &peer.PeerRecord{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PutPeer(ctx, benv, []string{teamA}); err != nil {
		t.Fatal(err)
	}

	// Alice renewed once, so she has stayed alive longer than Bob, who
	// registered once: she is listed first (listingOrder).
	l := ts.listPeers(t, teamA)
	if len(l) != 2 || l[0].Origin != ao || l[1].Origin != bo || !l[0].Since.Before(l[0].Updated) {
		t.Fatalf("listing of A: %+v", l)
	}
	if l := ts.listPeers(t, teamB); len(l) != 0 {
		t.Errorf("alice left topic B, still listed: %+v", l)
	}
	if code, _, body := ts.get(t, "/commons/peers?topic="+teamB); strings.TrimSpace(body) != "[]" {
		t.Errorf("empty listing: %d %s", code, body)
	}

	infos, err := c.Peers(ctx, teamA)
	if err != nil {
		t.Fatal(err)
	}
	bid, _ := peer.IDFromPrivateKey(bpriv)
	aid, _ := peer.IDFromPrivateKey(apriv)
	if len(infos) != 2 || infos[1].ID != bid || infos[0].ID != aid || len(infos[0].Addrs) != 1 || infos[0].Addrs[0].String() != "/ip4/192.0.2.2/tcp/4001" {
		t.Errorf("client listing: %v", infos)
	}

	// The info document announces the directory.
	_, _, wk := ts.get(t, "/.well-known/remem")
	var w WellKnown
	if err := json.Unmarshal([]byte(wk), &w); err != nil || w.PeerDirectory == nil || w.PeerDirectory.ListedPerTopic != 50 || w.PeerDirectory.ExpiresAfterSeconds != 86400 {
		t.Errorf("info document: %s", wk)
	}
	// Bad topic in a listing.
	if code, _, _ := ts.get(t, "/commons/peers?topic=alpha"); code != 400 {
		t.Errorf("listing with a bad topic: %d", code)
	}
}

// otherRecord is a record of another payload type in the peer-record
// domain: a signature that verifies over something that is not a peer
// record.
type otherRecord struct{ data []byte }

func (r *otherRecord) Domain() string                 { return peer.PeerRecordEnvelopeDomain }
func (r *otherRecord) Codec() []byte                  { return []byte{0x03, 0x7f} }
func (r *otherRecord) MarshalRecord() ([]byte, error) { return r.data, nil }
func (r *otherRecord) UnmarshalRecord(b []byte) error { r.data = b; return nil }

func init() { record.RegisterType(&otherRecord{}) }

func sealOther(t testing.TB, priv crypto.PrivKey) []byte {
	return sealRecord(t, &otherRecord{[]byte("hello")}, priv)
}

func sealRecord(t testing.TB, rec record.Record, priv crypto.PrivKey) []byte {
	t.Helper()
	env, err := record.Seal(rec, priv)
	if err != nil {
		t.Fatal(err)
	}
	data, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestPeerPutHostile(t *testing.T) {
	ts := newTestServer(t, nil)
	ao, apriv := peerKey(t, "alice")
	_, bpriv := peerKey(t, "bob")
	good := sealPeer(t, apriv, 100, "/ip4/192.0.2.1/tcp/4001")

	// A record of alice's peer id signed by bob's key.
	aid, _ := peer.IDFromPrivateKey(apriv)
	forgedRec := peer.PeerRecordFromAddrInfo(peer.AddrInfo{ID: aid, Addrs: []ma.Multiaddr{ma.StringCast("/ip4/203.0.113.9/tcp/1")}})
	forgedRec.Seq = 1000
	forged := sealRecord(t, forgedRec, bpriv)

	// A secp256k1 key: a valid libp2p peer, but no memory's key.
	kpriv, _, err := crypto.GenerateKeyPair(crypto.Secp256k1, 0)
	if err != nil {
		t.Fatal(err)
	}

	var manyTopics []string
	for i := range PeerMaxTopics + 1 {
		manyTopics = append(manyTopics, TopicHash(fmt.Sprint("t", i)))
	}
	var manyAddrs []string
	for i := range PeerMaxAddrs + 1 {
		manyAddrs = append(manyAddrs, fmt.Sprintf("/ip4/192.0.2.%d/tcp/4001", i+1))
	}
	badSig := bytes.Clone(good)
	badSig[len(badSig)-1] ^= 1

	cases := []struct {
		name   string
		origin string
		token  string
		body   []byte
		code   int
		says   string
	}{
		{"no token", ao, "", peerBody(good, teamA), 401, "token"},
		{"wrong token", ao, "wrong-token", peerBody(good, teamA), 401, "token"},
		{"bad origin in path", "alice", testToken, peerBody(good, teamA), 400, "origin"},
		{"signed by bob for alice's origin", ao, testToken, peerBody(sealPeer(t, bpriv, 1000), teamA), 403, "signed by origin"},
		{"alice's peer id signed by bob", ao, testToken, peerBody(forged, teamA), 403, "signed by"},
		{"a secp256k1 signer", ao, testToken, peerBody(sealPeer(t, kpriv, 1000), teamA), 403, "Ed25519"},
		{"another payload type", ao, testToken, peerBody(sealOther(t, apriv), teamA), 400, "not a peer record"},
		{"a broken signature", ao, testToken, peerBody(badSig, teamA), 400, "signed libp2p peer record"},
		{"garbage envelope", ao, testToken, peerBody([]byte("not an envelope"), teamA), 400, "envelope"},
		{"garbage base64", ao, testToken, []byte(`{"envelope":"!!!","topics":[]}`), 400, "base64"},
		{"garbage JSON", ao, testToken, []byte(`{"envelope":`), 400, "body is not"},
		{"unknown field", ao, testToken, []byte(`{"envelope":"AAAA","topics":[],"name":"alpha"}`), 400, "unknown field"},
		{"two objects", ao, testToken, append(peerBody(good, teamA), peerBody(good, teamA)...), 400, "more than one"},
		{"no envelope", ao, testToken, []byte(`{"topics":[]}`), 400, "no envelope"},
		{"over 8 KiB", ao, testToken, peerBody(good, teamA, strings.Repeat("a", PeerBodyMax)), 413, "over 8192 bytes"},
		{"over 16 topics", ao, testToken, peerBody(good, manyTopics...), 413, "17 topics"},
		{"over 32 addresses", ao, testToken, peerBody(sealPeer(t, apriv, 1000, manyAddrs...), teamA), 413, "33 addresses"},
		{"a topic name, not its hash", ao, testToken, peerBody(good, "remem/1/team/alpha"), 400, "64 lowercase hex"},
		{"an upper-case topic", ao, testToken, peerBody(good, strings.ToUpper(teamA)), 400, "64 lowercase hex"},
		{"a topic twice", ao, testToken, peerBody(good, teamA, teamA), 400, "twice"},
	}
	for _, c := range cases {
		code, body := ts.putPeer(t, c.origin, c.token, c.body)
		if code != c.code || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d %s, want %d saying %q", c.name, code, body, c.code, c.says)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(ts.Dir, peersDir)); len(entries) != 0 {
		t.Fatalf("refused PUTs stored %d files", len(entries))
	}

	// Rollback: once seq 100 is stored, seq 99 and another seq 100 are 409.
	if code, body := ts.putPeer(t, ao, testToken, peerBody(good, teamA)); code != 201 {
		t.Fatalf("good PUT: %d %s", code, body)
	}
	stored := readFile(t, filepath.Join(ts.Dir, peersDir, ao+".json"))
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"lower seq", peerBody(sealPeer(t, apriv, 99, "/ip4/203.0.113.9/tcp/1"), teamA)},
		{"equal seq, other record", peerBody(sealPeer(t, apriv, 100, "/ip4/203.0.113.9/tcp/1"), teamA)},
		{"equal seq, other topics", peerBody(good, teamB)},
	} {
		if code, body := ts.putPeer(t, ao, testToken, c.body); code != 409 || !strings.Contains(body, "rollback") {
			t.Errorf("%s: %d %s, want 409", c.name, code, body)
		}
	}
	if after := readFile(t, filepath.Join(ts.Dir, peersDir, ao+".json")); !bytes.Equal(after, stored) {
		t.Error("a refused PUT changed the stored entry")
	}
	if l := ts.listPeers(t, teamA); len(l) != 1 || !bytes.Equal(l[0].Envelope, good) {
		t.Errorf("listing after the refusals: %+v", l)
	}

	// The client names a 409 as such, and is still a *StatusError.
	env, err := record.ConsumeTypedEnvelope(sealPeer(t, apriv, 50), &peer.PeerRecord{})
	if err != nil {
		t.Fatal(err)
	}
	err = ts.client(testToken).PutPeer(context.Background(), env, []string{teamA})
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 409 || !strings.Contains(err.Error(), "seal a fresh record") {
		t.Errorf("client 409: %v", err)
	}
	err = ts.client("").PutPeer(context.Background(), env, []string{teamA})
	if !errors.As(err, &se) || se.Code != 401 || !strings.Contains(err.Error(), "needs a token") {
		t.Errorf("client 401: %v", err)
	}
	// The client checks topics before sending.
	if err := ts.client(testToken).PutPeer(context.Background(), env, []string{"alpha"}); err == nil || errors.As(err, &se) {
		t.Errorf("client with a bad topic: %v", err)
	}
}

func TestPeerPutRateLimited(t *testing.T) {
	ts := newTestServer(t, func(c *ServerConfig) { c.RatePerClient = Rate{PerMinute: 1, Burst: 2} })
	ao, apriv := peerKey(t, "alice")
	for i, want := range []int{201, 401, 429} {
		tok := testToken
		if i == 1 {
			tok = "wrong-token"
		}
		code, body := ts.putPeer(t, ao, tok, peerBody(sealPeer(t, apriv, uint64(i+1)), teamA))
		if code != want {
			t.Errorf("PUT %d: %d %s, want %d", i+1, code, body, want)
		}
	}
}

func TestPeerReadNeedsToken(t *testing.T) {
	ts := newTestServer(t, func(c *ServerConfig) { c.ReadNeedsToken = true })
	if code, _, _ := ts.get(t, "/commons/peers?topic="+teamA); code != 401 {
		t.Errorf("listing without a token: %d", code)
	}
	ts.listPeers(t, teamA, "Authorization", "Bearer "+testToken)
	_, err := ts.client("").Peers(context.Background(), teamA)
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 401 {
		t.Errorf("client without a token: %v", err)
	}
}

func TestPeerExpiry(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	ts := newTestServer(t, func(c *ServerConfig) { c.Now = clock.Now })
	ao, apriv := peerKey(t, "alice")
	bo, bpriv := peerKey(t, "bob")
	co, cpriv := peerKey(t, "carol")
	ts.putPeer(t, ao, testToken, peerBody(sealPeer(t, apriv, 1), teamA))
	clock.Add(time.Hour)
	ts.putPeer(t, bo, testToken, peerBody(sealPeer(t, bpriv, 1), teamA))
	ts.putPeer(t, co, testToken, peerBody(sealPeer(t, cpriv, 1), teamB)) // a topic nobody lists

	clock.Add(PeerTTL - time.Hour - time.Nanosecond)
	if l := ts.listPeers(t, teamA); len(l) != 2 {
		t.Fatalf("just before alice's expiry: %d entries", len(l))
	}
	clock.Add(time.Nanosecond) // alice is 24 h old
	if l := ts.listPeers(t, teamA); len(l) != 1 || l[0].Origin != bo {
		t.Fatalf("at alice's expiry: %+v", l)
	}
	if _, err := os.Stat(filepath.Join(ts.Dir, peersDir, ao+".json")); !os.IsNotExist(err) {
		t.Errorf("alice's expired entry is still on disk: %v", err)
	}
	// An identical re-PUT does not renew; a fresh seal does.
	if code, body := ts.putPeer(t, bo, testToken, peerBody(sealPeer(t, bpriv, 1), teamA)); code != 200 {
		t.Errorf("bob's identical PUT: %d %s", code, body)
	}
	clock.Add(time.Hour)
	if code, body := ts.putPeer(t, bo, testToken, peerBody(sealPeer(t, bpriv, 1), teamA)); code != 409 || !strings.Contains(body, "expired") {
		t.Errorf("bob's identical PUT after expiry: %d %s", code, body)
	}
	if l := ts.listPeers(t, teamA); len(l) != 0 {
		t.Errorf("bob renewed by replaying the same record: %+v", l)
	}
	// Carol's topic was never listed: the hourly sweep removed her.
	if _, err := os.Stat(filepath.Join(ts.Dir, peersDir, co+".json")); !os.IsNotExist(err) {
		t.Errorf("carol's expired entry is still on disk: %v", err)
	}
	if code, body := ts.putPeer(t, bo, testToken, peerBody(sealPeer(t, bpriv, 2), teamA)); code != 201 {
		t.Errorf("bob after expiry: %d %s", code, body)
	}
	if l := ts.listPeers(t, teamA); len(l) != 1 {
		t.Errorf("bob's fresh record: %+v", l)
	}
}

func TestPeerListFreshest50(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	ts := newTestServer(t, func(c *ServerConfig) { c.Now = clock.Now })
	var origins []string // in the order registered
	for i := range 60 {
		o, priv := peerKey(t, fmt.Sprint("node", i))
		if code, body := ts.putPeer(t, o, testToken, peerBody(sealPeer(t, priv, 1, "/ip4/192.0.2.1/tcp/4001"), teamA)); code != 201 {
			t.Fatalf("node %d: %d %s", i, code, body)
		}
		origins = append(origins, o)
		clock.Add(time.Second)
	}
	l := ts.listPeers(t, teamA)
	if len(l) != PeerListMax {
		t.Fatalf("%d entries, want %d", len(l), PeerListMax)
	}
	for i, e := range l {
		if want := origins[59-i]; e.Origin != want {
			t.Fatalf("entry %d is %s, want %s (newest first)", i, e.Origin, want)
		}
	}
	infos, err := ts.client("").Peers(context.Background(), teamA)
	if err != nil || len(infos) != PeerListMax {
		t.Errorf("client: %d peers, %v", len(infos), err)
	}
}

func TestPeerRestartKeepsEntries(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	dir := t.TempDir()
	ts := newTestServerAt(t, dir, func(c *ServerConfig) { c.Now = clock.Now })
	ao, apriv := peerKey(t, "alice")
	bo, bpriv := peerKey(t, "bob")
	env := sealPeer(t, apriv, 7, "/ip4/192.0.2.1/tcp/4001")
	ts.putPeer(t, ao, testToken, peerBody(env, teamA, teamB))
	clock.Add(23 * time.Hour)
	ts.putPeer(t, bo, testToken, peerBody(sealPeer(t, bpriv, 7), teamA))
	before := ts.listPeers(t, teamA)
	ts.stop()

	// A crash left a temp file and a damaged entry behind.
	pdir := filepath.Join(dir, peersDir)
	if err := os.WriteFile(filepath.Join(pdir, dataTemp+ao+"-123"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	co, _ := peerKey(t, "carol")
	if err := os.WriteFile(filepath.Join(pdir, co+".json"), []byte(`{"origin":`), 0o644); err != nil {
		t.Fatal(err)
	}

	ts = newTestServerAt(t, dir, func(c *ServerConfig) { c.Now = clock.Now })
	after := ts.listPeers(t, teamA)
	if len(after) != 2 || after[0].Origin != before[0].Origin || !after[1].Updated.Equal(before[1].Updated) || !bytes.Equal(after[1].Envelope, env) {
		t.Errorf("after restart %+v, before %+v", after, before)
	}
	if l := ts.listPeers(t, teamB); len(l) != 1 {
		t.Errorf("topic B after restart: %+v", l)
	}
	if _, err := os.Stat(filepath.Join(pdir, dataTemp+ao+"-123")); !os.IsNotExist(err) {
		t.Errorf("temp file kept: %v", err)
	}
	// The stored seq survives too: no rollback across a restart.
	if code, body := ts.putPeer(t, ao, testToken, peerBody(sealPeer(t, apriv, 6), teamA)); code != 409 {
		t.Errorf("older record after restart: %d %s", code, body)
	}
	ts.stop()

	// Alice expires while the server is down: the start removes her.
	clock.Add(2 * time.Hour)
	ts = newTestServerAt(t, dir, func(c *ServerConfig) { c.Now = clock.Now })
	if l := ts.listPeers(t, teamA); len(l) != 1 || l[0].Origin != bo {
		t.Errorf("after an expiry while down: %+v", l)
	}
	if _, err := os.Stat(filepath.Join(pdir, ao+".json")); !os.IsNotExist(err) {
		t.Errorf("expired entry kept at start: %v", err)
	}
}

// TestPeerClientDistrustsServer: a lying server's listing of forged,
// mislabelled, foreign and doubled entries yields only the verified peers.
func TestPeerClientDistrustsServer(t *testing.T) {
	ao, apriv := peerKey(t, "alice")
	bo, bpriv := peerKey(t, "bob")
	_, mpriv := peerKey(t, "mallory")
	aid, _ := peer.IDFromPrivateKey(apriv)
	bid, _ := peer.IDFromPrivateKey(bpriv)

	forgedRec := peer.PeerRecordFromAddrInfo(peer.AddrInfo{ID: aid, Addrs: []ma.Multiaddr{ma.StringCast("/ip4/203.0.113.66/tcp/1")}})
	forgedRec.Seq = 1 << 62
	badSig := sealPeer(t, apriv, 3, "/ip4/192.0.2.1/tcp/4001")
	badSig[len(badSig)-1] ^= 1
	now := time.Now().UTC()
	listing := []PeerListEntry{
		{Origin: ao, Envelope: sealRecord(t, forgedRec, mpriv), Updated: now},                     // alice's id, mallory's key
		{Origin: ao, Envelope: sealPeer(t, mpriv, 9, "/ip4/203.0.113.66/tcp/1"), Updated: now},    // mallory's record as alice
		{Origin: ao, Envelope: badSig, Updated: now},                                              // broken signature
		{Origin: ao, Envelope: sealOther(t, apriv), Updated: now},                                 // not a peer record
		{Origin: ao, Envelope: []byte("junk"), Updated: now},                                      // not an envelope
		{Origin: ao, Envelope: sealPeer(t, apriv, 3, "/ip4/192.0.2.1/tcp/4001"), Updated: now},    // good
		{Origin: bo, Envelope: sealPeer(t, bpriv, 4, "/ip4/198.51.100.7/tcp/4001"), Updated: now}, // good
		{Origin: ao, Envelope: sealPeer(t, apriv, 5, "/ip4/192.0.2.5/tcp/4001"), Updated: now},    // alice again, newer
	}
	data, err := json.Marshal(listing)
	if err != nil {
		t.Fatal(err)
	}
	url := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/commons/peers" || r.URL.Query().Get("topic") != teamA {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	}))
	c := &Client{BaseURL: url}
	l, err := c.PeerListing(context.Background(), teamA)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Peers) != 2 || l.Peers[0].ID != aid || l.Peers[1].ID != bid {
		t.Fatalf("peers %v", l.Peers)
	}
	if got := l.Peers[0].Addrs; len(got) != 1 || got[0].String() != "/ip4/192.0.2.5/tcp/4001" {
		t.Errorf("alice listed twice: kept %v, want the higher seq", got)
	}
	if l.Skipped != 6 || len(l.Problems) != 6 {
		t.Errorf("skipped %d: %q", l.Skipped, l.Problems)
	}
	for _, p := range l.Problems {
		if strings.Contains(p, "203.0.113.66") {
			t.Errorf("a forged address reached a problem text: %s", p)
		}
	}

	// Not JSON, and a bad topic, are errors; no peer is invented.
	junk := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>")) }))
	if infos, err := (&Client{BaseURL: junk}).Peers(context.Background(), teamA); err == nil || len(infos) != 0 {
		t.Errorf("junk listing: %v %v", infos, err)
	}
	if _, err := c.Peers(context.Background(), "alpha"); err == nil {
		t.Error("a bad topic was sent")
	}
}

// FuzzPeerPut sends arbitrary PUT bodies to the peer directory: the server
// never panics nor answers 5xx, only a body that decodes and verifies is
// stored, and a refusal leaves the listing as it was.
func FuzzPeerPut(f *testing.F) {
	ao, apriv := peerKey(f, "alice")
	good := sealPeer(f, apriv, 1, "/ip4/192.0.2.1/tcp/4001")
	f.Add(peerBody(good, teamA))
	f.Add(peerBody(good, teamA, teamB))
	f.Add(peerBody(sealPeer(f, apriv, 2), teamB))
	f.Add(peerBody(sealOther(f, apriv), teamA))
	f.Add([]byte(`{"envelope":"` + base64.StdEncoding.EncodeToString(good[:40]) + `","topics":[]}`))
	f.Add([]byte(`{"envelope":null,"topics":null}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[]`))
	f.Add([]byte("\xff\xfe"))
	s, err := NewServer(context.Background(), ServerConfig{DataDir: f.TempDir(), Tokens: []string{testToken}})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	list := func() string {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/commons/peers?topic="+teamA, nil))
		return w.Body.String()
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		before := list()
		req := httptest.NewRequest(http.MethodPut, "/commons/peers/"+ao, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		switch {
		case w.Code >= 500:
			t.Fatalf("status %d for %q: %s", w.Code, body, w.Body)
		case w.Code == 200 || w.Code == 201:
			p, err := decodePeerPut(body)
			if err != nil {
				t.Fatalf("accepted a body the decoder refuses: %v", err)
			}
			if origin, _, err := openPeerEnvelope(p.Envelope); err != nil || origin != ao {
				t.Fatalf("accepted an envelope of %q: %v", origin, err)
			}
		default:
			if after := list(); after != before {
				t.Fatalf("refused (%d) but the listing changed", w.Code)
			}
		}
	})
}

// TestPeerConcurrentPuts: PUTs of one origin racing with listings end with
// the highest seq stored, whatever their order.
func TestPeerConcurrentPuts(t *testing.T) {
	ts := newTestServer(t, nil)
	ao, apriv := peerKey(t, "alice")
	bodies := make([][]byte, 16)
	for i := range bodies {
		bodies[i] = peerBody(sealPeer(t, apriv, uint64(i+1), fmt.Sprintf("/ip4/192.0.2.%d/tcp/4001", i+1)), teamA)
	}
	var wg sync.WaitGroup
	for i := range bodies {
		wg.Go(func() {
			if code, body := ts.putPeer(t, ao, testToken, bodies[i]); code != 200 && code != 201 && code != 409 {
				t.Errorf("PUT seq %d: %d %s", i+1, code, body)
			}
		})
		wg.Go(func() { ts.listPeers(t, teamA) })
	}
	wg.Wait()
	l := ts.listPeers(t, teamA)
	if len(l) != 1 {
		t.Fatalf("listing %+v", l)
	}
	_, pr, err := openPeerEnvelope(l[0].Envelope)
	if err != nil || pr.Seq != 16 {
		t.Errorf("stored seq %v (%v), want 16", pr, err)
	}
}
