package commons

import (
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// TestPeerRegistered: the commons' relay serves exactly the peers with a
// live directory entry: registered over HTTP with a token, until the
// entry expires; never a peer refused at PUT, one never registered, or a
// key that cannot be a memory's. Registrations answers nothing until
// Set.
func TestPeerRegistered(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	ts := newTestServer(t, func(c *ServerConfig) { c.Now = clock.Now })
	ao, apriv := peerKey(t, "alice")
	bo, bpriv := peerKey(t, "bob")
	_, cpriv := peerKey(t, "carol")
	idOf := func(priv crypto.PrivKey) peer.ID {
		id, err := peer.IDFromPrivateKey(priv)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	alice, bob, carol := idOf(apriv), idOf(bpriv), idOf(cpriv)
	var reg Registrations
	if code, body := ts.putPeer(t, ao, testToken, peerBody(sealPeer(t, apriv, 1), teamA)); code != 201 {
		t.Fatalf("alice's PUT: %d %s", code, body)
	}
	if reg.Registered(alice) {
		t.Error("Registrations answered before Set")
	}
	reg.Set(ts.Server)
	if code, _ := ts.putPeer(t, bo, "not-a-token", peerBody(sealPeer(t, bpriv, 1), teamA)); code != 401 {
		t.Fatalf("bob's PUT without a token: %d", code)
	}
	rsa, _, err := crypto.GenerateRSAKeyPair(2048, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		p    peer.ID
		want bool
	}{
		{"registered", alice, true},
		{"refused without a token", bob, false},
		{"never registered", carol, false},
		{"not a memory's key", idOf(rsa), false},
		{"not a peer id", peer.ID("garbage"), false},
	} {
		if got := reg.Registered(tc.p); got != tc.want {
			t.Errorf("%s: Registered = %v, want %v", tc.name, got, tc.want)
		}
	}
	clock.Add(PeerTTL)
	if reg.Registered(alice) {
		t.Error("alice's entry expired and she is still registered")
	}
}
