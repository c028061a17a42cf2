package node

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/commons"
	"github.com/remem/remem/commons/commonstest"
	"github.com/remem/remem/gossip"
	"github.com/remem/remem/internal/testutil"
	"github.com/remem/remem/store"
)

// teamKey is a fixed team key for tests.
func teamKey(b byte) []byte {
	k := make([]byte, commons.TeamKeySize)
	for i := range k {
		k[i] = b + byte(i)
	}
	return k
}

// dirTeamKeys give the tests' team "t" a directory key; dirTopic is what
// the directory knows it by.
var (
	dirTeamKeys = map[string][]byte{"t": teamKey(1)}
	dirTopic    = commons.TeamTopicHash(gossip.TopicName("t"), teamKey(1))
)

// TestGuessingTeamNamesFindsNothing reruns the guess: 1,484 team
// names tried against GET /commons/peers?topic= found a team and its
// member's address, because the directory knew a topic by the SHA-256 of
// its name. A daemon in a team with a key ("backend") and one without
// ("ops") registers in a real commons with no listing rate limit; all
// 1,484 guesses, the two real names among them, find nobody, while a
// listing under the team key finds the daemon.
func TestGuessingTeamNamesFindsNothing(t *testing.T) {
	url := commonstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	key := teamKey(7)
	a := runDaemon(t, DaemonConfig{
		Memory:       Config{Home: t.TempDir(), Create: true, Params: TestnetParams(), Store: store.Options{Small: true}},
		Gossip:       gossip.Config{Teams: []string{"backend", "ops"}, Listen: []string{"/ip4/127.0.0.1/tcp/0"}, Params: gossip.TestnetParams()},
		Commons:      []string{url},
		CommonsToken: commonstest.Token,
		TeamKeys:     map[string][]byte{"backend": key},
		SleepEvery:   time.Hour,
	})
	defer a.stop(t)
	aID := a.d.Gossip().PeerID()
	cl := &commons.Client{BaseURL: url, Token: commonstest.Token}
	testutil.Eventually(t, 10*time.Second, "A listed under the team key", func() bool {
		ais, err := cl.Peers(ctx, commons.TeamTopicHash(gossip.TopicName("backend"), key))
		return err == nil && slices.ContainsFunc(ais, func(ai peer.AddrInfo) bool { return ai.ID == aID })
	})

	guesses := []string{"backend", "ops"}
	for i := len(guesses); i < 1484; i++ {
		guesses = append(guesses, fmt.Sprintf("team%d", i))
	}
	found := 0
	for _, name := range guesses {
		ais, err := cl.Peers(ctx, commons.TopicHash(gossip.TopicName(name)))
		if err != nil {
			t.Fatalf("guessing %q: %v", name, err)
		}
		found += len(ais)
	}
	if found != 0 {
		t.Errorf("1,484 guessed team names found %d entries, want none", found)
	}
}

// TestKeylessTeamsRegisterUnderNoTopic: a node whose teams have no key
// still leaves its signed record in the directory (a commons' relay takes
// a registered peer as one it serves), but under no topic at all, so no
// listing, by any hash, names it.
func TestKeylessTeamsRegisterUnderNoTopic(t *testing.T) {
	var dataDir string
	url := commonstest.StartWith(t, func(c *commons.ServerConfig) { dataDir = c.DataDir })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := runDaemon(t, DaemonConfig{
		Memory:       Config{Home: t.TempDir(), Create: true, Params: TestnetParams(), Store: store.Options{Small: true}},
		Gossip:       gossip.Config{Teams: []string{"ops"}, Listen: []string{"/ip4/127.0.0.1/tcp/0"}, Params: gossip.TestnetParams()},
		Commons:      []string{url},
		CommonsToken: commonstest.Token,
		SleepEvery:   time.Hour,
	})
	defer a.stop(t)
	entry := filepath.Join(dataDir, "peers", a.d.Memory().Origin()+".json")
	testutil.Eventually(t, 10*time.Second, "A's record stored", func() bool {
		_, err := os.Stat(entry)
		return err == nil
	})
	data, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Topics []string }
	if err := json.Unmarshal(data, &e); err != nil || len(e.Topics) != 0 {
		t.Errorf("A's entry names topics %v (%v), want none", e.Topics, err)
	}
	cl := &commons.Client{BaseURL: url, Token: commonstest.Token}
	if ais, err := cl.Peers(ctx, commons.TopicHash(gossip.TopicName("ops"))); err != nil || len(ais) != 0 {
		t.Errorf("listing ops by its name's hash: %v %v", ais, err)
	}
}
