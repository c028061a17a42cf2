package testnet

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"

	"github.com/remem/remem/gossip"
	"github.com/remem/remem/protocol"
)

// The floods' messages are ones an honest validator accepts: valid records
// of their signer, each fresh key's lesson padded with an unknown member to
// the line size asked, the revocations of distinct hashes no lesson has,
// dealt to the flooders with every count met. A flood an honest validator
// refused would measure the validator, not what a node comes to hold.
func TestFloodMessagesAreAccepted(t *testing.T) {
	f := DefaultFloods()
	f.FreshKeys, f.Revocations, f.RevocationsPerMsg = 3, 7, 3
	revoker, err := protocol.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := floodJobs(f, revoker)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != f.Flooders {
		t.Fatalf("%d flooders dealt messages, want %d", len(jobs), f.Flooders)
	}
	validate := gossip.MessageValidator(nil)
	keys := map[string]bool{}
	revoked := map[string]bool{}
	lessons := 0
	for i, js := range jobs {
		for _, j := range js {
			signer := revoker
			if j.as != nil {
				signer = *j.as
			}
			pid, err := gossip.PeerIDOf(signer)
			if err != nil {
				t.Fatal(err)
			}
			data, err := j.data()
			if err != nil {
				t.Fatal(err)
			}
			msg := &pubsub.Message{Message: &pb.Message{From: []byte(pid), Data: data}}
			if v := validate(context.Background(), pid, msg); v != pubsub.ValidationAccept {
				t.Errorf("flooder %d: a %s message is not accepted (%v)", i, j.kind, v)
			}
			lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
			if len(lines) != j.recs {
				t.Errorf("a %s message has %d lines, says %d", j.kind, len(lines), j.recs)
			}
			for _, line := range lines {
				rec, err := protocol.Verify(line, time.Now())
				if err != nil {
					t.Fatalf("a %s line is refused: %v", j.kind, err)
				}
				if rec.Origin != signer.Origin() {
					t.Errorf("a %s line of %s in a message signed by %s", j.kind, rec.Origin, signer.Origin())
				}
				switch j.kind {
				case "fresh":
					lessons++
					keys[rec.Origin] = true
					if rec.Type != protocol.TypeLesson || len(line) != f.LineBytes {
						t.Errorf("a fresh key's line is a %s of %d bytes, want a lesson of %d", rec.Type, len(line), f.LineBytes)
					}
					if _, ok := protocol.UnknownMembers(line)["padding"]; !ok {
						t.Errorf("a fresh key's line has no unknown member: %.80s…", line)
					}
				case "revocations":
					if i != 0 || j.as != nil || rec.Type != protocol.TypeRevocation || revoked[rec.Hash] {
						t.Errorf("flooder %d sent a revocation line %s of %s (again: %v); want only the first flooder's own revocations of distinct hashes", i, rec.Type, rec.Hash, revoked[rec.Hash])
					}
					revoked[rec.Hash] = true
				default:
					t.Errorf("a message of kind %q", j.kind)
				}
			}
		}
	}
	if len(keys) != f.FreshKeys || lessons != f.FreshKeys*f.LinesPerKey || len(revoked) != f.Revocations {
		t.Errorf("%d fresh keys sent %d lessons and %d hashes were revoked; want %d, %d and %d",
			len(keys), lessons, len(revoked), f.FreshKeys, f.FreshKeys*f.LinesPerKey, f.Revocations)
	}
	for k := range f.FreshKeys {
		for i := range f.LinesPerKey {
			if revoked[protocol.LessonHash(protocol.KindError, floodText(k, i))] {
				t.Errorf("a revocation is of a flood lesson: the flood revokes only hashes never held")
			}
		}
	}
}

// A flood cut short by Hold sends both kinds in proportion: the
// revocation messages are spread through the fresh keys', the first one
// first, every message once and in order.
func TestFloodKindsInterleave(t *testing.T) {
	job := func(kind string, n int) floodJob { return floodJob{kind: kind, recs: n} }
	var revs, fresh []floodJob
	for i := range 3 {
		revs = append(revs, job("revocations", i))
	}
	for i := range 10 {
		fresh = append(fresh, job("fresh", i))
	}
	got := interleave(revs, fresh)
	var kinds strings.Builder
	next := map[string]int{}
	for _, j := range got {
		kinds.WriteByte(j.kind[0])
		if j.recs != next[j.kind] {
			t.Fatalf("%s message %d sent as the %d-th", j.kind, j.recs, next[j.kind])
		}
		next[j.kind]++
	}
	if want := "rfffrfffrffff"; kinds.String() != want {
		t.Errorf("order %s, want %s", kinds.String(), want)
	}
	if got := interleave(revs, nil); len(got) != 3 {
		t.Errorf("revocations alone: %d messages, want 3", len(got))
	}
}
