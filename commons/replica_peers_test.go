package commons

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// TestReplicasSharePeerDirectory: a peer entry PUT through one replica is
// listed by the other (within its refresh, 2 s); an older record replayed
// through the other replica is 409, and concurrent PUTs of two seqs
// through both replicas leave the higher one.
func TestReplicasSharePeerDirectory(t *testing.T) {
	m := needMinio(t)
	bucket := m.newBucket(t)
	a, b := newReplica(t, m, bucket, "p"), newReplica(t, m, bucket, "p")
	ao, apriv := peerKey(t, "alice")
	env1 := sealPeer(t, apriv, 1, "/ip4/198.18.0.1/tcp/4001")
	env2 := sealPeer(t, apriv, 2, "/ip4/198.18.0.2/tcp/4001")
	if code, body := a.putPeer(t, ao, testToken, peerBody(env1, teamA)); code != http.StatusCreated {
		t.Fatalf("PUT through A: %d %s", code, body)
	}
	deadline := time.Now().Add(peerRefreshEvery + 5*time.Second)
	for {
		if l := b.listPeers(t, teamA); len(l) == 1 && l[0].Origin == ao {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("B never listed the entry PUT through A")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, body := b.putPeer(t, ao, testToken, peerBody(env2, teamA)); code != http.StatusOK {
		t.Fatalf("PUT seq 2 through B: %d %s", code, body)
	}
	if code, body := a.putPeer(t, ao, testToken, peerBody(env1, teamA)); code != http.StatusConflict {
		t.Fatalf("replay of seq 1 through A: %d %s", code, body)
	}
	// Seq 3 and 4 at once through both replicas, many times: 4 stays.
	for i := range 5 {
		lo, hi := sealPeer(t, apriv, uint64(3+2*i)), sealPeer(t, apriv, uint64(4+2*i))
		done := make(chan int, 2)
		go func() { c, _ := a.putPeer(t, ao, testToken, peerBody(hi, teamA)); done <- c }()
		go func() { c, _ := b.putPeer(t, ao, testToken, peerBody(lo, teamA)); done <- c }()
		<-done
		<-done
		data, _, err := a.peers.b.Get(context.Background(), peerObject(ao))
		if err != nil {
			t.Fatal(err)
		}
		if e, err := decodePeerEntry(data, ao); err != nil || e.Seq != uint64(4+2*i) {
			t.Fatalf("round %d: the store holds %+v %v, not seq %d", i, e, err, 4+2*i)
		}
	}
}
