package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/remem/remem/gossip"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// floodFor is how long TestFloodOfFreshKeysStaysWithinBudget floods: the
// issue's 30 s.
const floodFor = 30 * time.Second

// flooder is a bare libp2p host with GossipSub on the team topic that
// signs every message with a key minted for it, as an attacker does.
type flooder struct {
	ps    *pubsub.PubSub
	topic *pubsub.Topic
	close func()
}

func newFlooder(t *testing.T, team string, victim peer.AddrInfo) *flooder {
	t.Helper()
	h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableMetrics())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ps, err := pubsub.NewGossipSub(ctx, h, pubsub.WithMessageIdFn(gossip.MessageID),
		pubsub.WithMessageSignaturePolicy(pubsub.StrictSign), pubsub.WithMaxMessageSize(4<<20))
	if err != nil {
		t.Fatal(err)
	}
	topic, err := ps.Join(gossip.TopicName(team))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Connect(ctx, victim); err != nil {
		t.Fatal(err)
	}
	return &flooder{ps: ps, topic: topic, close: func() { cancel(); _ = h.Close() }}
}

// publishAs publishes lines signed, message and records, by a fresh key.
func (f *flooder) publishAs(ctx context.Context, id protocol.Identity, lines [][]byte) error {
	priv, err := crypto.UnmarshalEd25519PrivateKey(id.Private)
	if err != nil {
		return err
	}
	pid, err := gossip.PeerIDOf(id)
	if err != nil {
		return err
	}
	return f.topic.Publish(ctx, []byte(strings.Join(byteStrings(lines), "\n")), pubsub.WithSecretKeyAndPeerId(priv, pid))
}

func byteStrings(lines [][]byte) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = string(l)
	}
	return out
}

// homeBytes is the size of every file under home.
func homeBytes(t *testing.T, home string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(home, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if info, err := d.Info(); err == nil {
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// The flood, over real hosts on loopback: for 30 s three hosts
// publish as fast as the victim takes them, each message signed by a fresh
// key, alternately 100 lesson lines padded with an unknown member to 7 KiB
// and 1,000 revocations of hashes never held. Beside it a trusted peer
// publishes a lesson. The victim holds no more strangers' records than its
// budget, its home grows by a bounded multiple of the budget's bytes (the
// store's logs and tables before compaction), its heap stays bounded, and
// the trusted lesson arrives.
func TestFloodOfFreshKeysStaysWithinBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30 s flood")
	}
	budget := StrangerBudget{Records: 3000, Bytes: 4 << 20}
	home, friendHome := t.TempDir(), t.TempDir()
	origins := make([]string, 2)
	for i, h := range []string{home, friendHome} {
		m, err := Open(Config{Home: h, Create: true, Store: store.Options{Small: true}})
		if err != nil {
			t.Fatal(err)
		}
		origins[i] = m.Origin()
		m.Close()
	}
	friendID, err := LoadIdentity(friendHome)
	if err != nil {
		t.Fatal(err)
	}
	// Each trusts the other; strangers are everyone else.
	cfg := func(home, trust string, bootstrap []string) DaemonConfig {
		return DaemonConfig{
			Memory: Config{Home: home, Params: TestnetParams(), Store: store.Options{Small: true},
				Admission: Admission{Trust: []string{trust}}, Strangers: budget},
			Gossip:     gossip.Config{Teams: []string{"t"}, Listen: []string{"/ip4/127.0.0.1/tcp/0"}, Bootstrap: bootstrap, Params: gossip.TestnetParams()},
			SleepEvery: time.Hour,
		}
	}
	victim := runDaemon(t, cfg(home, origins[1], nil))
	defer victim.stop(t)
	friend := runDaemon(t, cfg(friendHome, origins[0], []string{victim.addr()}))
	defer friend.stop(t)

	ai := peer.AddrInfo{ID: victim.d.Gossip().PeerID(), Addrs: []ma.Multiaddr{victim.d.Gossip().Addrs()[0]}}
	homeBefore, heapBefore := homeBytes(t, home), heapInUse()
	ctx, cancel := context.WithTimeout(context.Background(), floodFor)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var sent, sentRecs int
	for f := range 3 {
		fl := newFlooder(t, "t", ai)
		defer fl.close()
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				id, err := protocol.GenerateIdentity()
				if err != nil {
					t.Error(err)
					return
				}
				var lines [][]byte
				if i%2 == 0 {
					for j := range 100 {
						lines = append(lines, paddedLesson(id, fmt.Sprintf("The shard %d of flood %d-%d rebalances after a restart", j, f, i), 7<<10, time.Now().Add(-time.Minute)))
					}
				} else {
					for range protocol.MaxOriginRecs {
						var b [16]byte
						rand.Read(b[:])
						rev, err := protocol.SignRevocation(id, hex.EncodeToString(b[:]), time.Now(), "")
						if err != nil {
							t.Error(err)
							return
						}
						lines = append(lines, rev.Raw)
					}
				}
				if err := fl.publishAs(ctx, id, lines); err != nil {
					return // the flood's time is up
				}
				mu.Lock()
				sent++
				sentRecs += len(lines)
				mu.Unlock()
			}
		})
	}
	// Halfway, the trusted peer's lesson.
	time.AfterFunc(floodFor/2, func() {
		rec, err := protocol.SignLesson(friendID, protocol.LessonDraft{Kind: protocol.KindError, Text: "The staging proxy drops idle connections after a minute", Seen: 1, Strength: 0.6, Updated: time.Now().Add(-time.Minute)})
		if err != nil {
			t.Error(err)
			return
		}
		if err := friend.d.Gossip().Publish(context.Background(), "t", [][]byte{rec.Raw}); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	m := victim.d.Memory()
	testutil.Eventually(t, 30*time.Second, "the trusted peer's lesson arrived during the flood", func() bool {
		n, err := m.store.UseOf(friendID.Origin())
		return err == nil && n.Records > 0
	})
	// Let what was accepted be delivered: no new message for half a second.
	last, changed := -1, time.Now()
	testutil.Eventually(t, 30*time.Second, "the victim's deliveries settled", func() bool {
		s := victim.d.Gossip().Stats()
		if n := s.Received + s.Ignored; n != last {
			last, changed = n, time.Now()
		}
		return time.Since(changed) >= 500*time.Millisecond
	})
	used, _, err := m.StrangerUse()
	if err != nil {
		t.Fatal(err)
	}
	homeGrew, heapGrew := homeBytes(t, home)-homeBefore, int64(heapInUse())-int64(heapBefore)
	s := victim.d.Gossip().Stats()
	mu.Lock()
	t.Logf("flood of %v: %d messages, %d records sent; victim accepted %d messages, ignored %d (%v); strangers' records held %d (%d bytes; budget %d, %d bytes); home grew %.1f MB, heap %.1f MB",
		floodFor, sent, sentRecs, s.Received, s.Ignored, s.Rejected, used.Records, used.Bytes, budget.Records, budget.Bytes, float64(homeGrew)/1e6, float64(heapGrew)/1e6)
	mu.Unlock()
	if used.Records > budget.Records || used.Bytes > budget.Bytes {
		t.Errorf("strangers' records take %+v, the budget is %+v", used, budget)
	}
	// Badger's write-ahead log and level-0 tables hold a change more than
	// once until they are compacted: a few times the budget, plus the
	// files a store opens with.
	if limit := 4*budget.Bytes + 16<<20; homeGrew > limit {
		t.Errorf("the home grew %d bytes, want at most %d (4× the budget's bytes and 16 MiB)", homeGrew, limit)
	}
	if limit := int64(128 << 20); heapGrew > limit {
		t.Errorf("the heap grew %d bytes, want at most %d", heapGrew, limit)
	}
}
