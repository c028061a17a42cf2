package node

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/record"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/commons/commonstest"
	"github.com/remem/remem/internal/testutil"
)

// flooded counts the decoys flood registered.
var flooded atomic.Int64

// flood registers batches of 50 one-shot entries under topic until ctx
// ends, as the attacker did (there every 10 s; here faster, so
// that every listing a node reads is full of them). Their addresses are
// TEST-NET ones, which no node dials.
func flood(ctx context.Context, t *testing.T, url, topic string, every time.Duration) *sync.WaitGroup {
	t.Helper()
	cl := &commons.Client{BaseURL: url, Token: commonstest.Token}
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			for range 50 {
				priv, _, err := crypto.GenerateEd25519Key(nil)
				if err != nil {
					t.Error(err)
					return
				}
				id, _ := peer.IDFromPrivateKey(priv)
				rec := peer.PeerRecordFromAddrInfo(peer.AddrInfo{ID: id, Addrs: []ma.Multiaddr{ma.StringCast("/ip4/192.0.2.1/tcp/4001")}})
				env, err := record.Seal(rec, priv)
				if err != nil {
					t.Error(err)
					return
				}
				if err := cl.PutPeer(ctx, env, []string{topic}); err != nil {
					if ctx.Err() == nil {
						t.Error(err)
					}
					return
				}
				flooded.Add(1)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	return &wg
}

// renewedEntry reports whether origin's entry is in the listing of topic
// and has been renewed since it was first registered (its since is
// before its updated).
func renewedEntry(ctx context.Context, url, topic, origin string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/commons/peers?topic="+topic, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	var l []commons.PeerListEntry
	if json.NewDecoder(resp.Body).Decode(&l) != nil {
		return false
	}
	return slices.ContainsFunc(l, func(e commons.PeerListEntry) bool { return e.Origin == origin && e.Since.Before(e.Updated) })
}

// TestNewMembersMeetThroughAFlood reruns the flood of 50 fresh
// entries at a time, which kept two new members apart for 80 s while a
// listing was the freshest 50. A starts amid the flood and renews its
// entry directoryConfirm after its first one at the latest; then 200 more
// one-shot entries arrive (fresher than A's, so under the old order A
// was out of the listing); then B starts, and its first round finds A,
// who has stayed alive longer than any of them.
func TestNewMembersMeetThroughAFlood(t *testing.T) {
	url := commonstest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	wg := flood(ctx, t, url, dirTopic, 250*time.Millisecond)
	defer wg.Wait()
	defer cancel()
	a := startDirDaemon(t, url)
	defer a.stop(t)
	testutil.Eventually(t, directoryConfirm+10*time.Second, "A listed and renewed", func() bool {
		return renewedEntry(ctx, url, dirTopic, a.d.Memory().Origin())
	})
	before := flooded.Load()
	testutil.Eventually(t, 20*time.Second, "200 more decoys", func() bool { return flooded.Load() >= before+200 })
	b := startDirDaemon(t, url)
	defer b.stop(t)
	start := time.Now()
	testutil.Eventually(t, 10*time.Second, "B connected to A through the flooded listing", func() bool {
		return b.d.Gossip().Connected(a.d.Gossip().PeerID())
	})
	t.Logf("B connected to A %v after its start, amid the flood", time.Since(start).Round(time.Millisecond))
}
