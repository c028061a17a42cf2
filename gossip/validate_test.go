package gossip

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"testing"
	"time"

	"github.com/remem/remem/internal/scopes"
	"github.com/remem/remem/protocol"
)

func TestCheckMessage(t *testing.T) {
	n := newNode(t)
	tm := n.teams["t"]
	me := n.PeerID()
	other := newNode(t)
	them := other.PeerID()
	good := lesson(t, other.id, 1)
	good2 := lesson(t, other.id, 2)
	held := lesson(t, other.id, 3)
	n.holder.add(scopes.Team("t"), held)
	mine := lesson(t, n.id, 4)
	n.holder.add(scopes.Team("t"), mine)
	unknownVersion := bytes.Replace(good2.Raw, []byte(`"v":1`), []byte(`"v":2`), 1)
	join := func(lines ...[]byte) []byte { return bytes.Join(lines, []byte("\n")) }
	big := bytes.Repeat([]byte("x"), protocol.MaxGossipMsg+1)

	cases := []struct {
		name    string
		data    []byte
		local   bool
		want    verdict
		recs    int
		reason  string
		skipped int
	}{
		{name: "one good line", data: good.Raw, want: vAccept, recs: 1},
		{name: "two good lines, CRLF and blank lines", data: []byte(string(good.Raw) + "\r\n\n" + string(good2.Raw) + "\n"), want: vAccept, recs: 2},
		{name: "pure duplicate", data: held.Raw, want: vIgnore},
		{name: "duplicate with a new line", data: join(held.Raw, good.Raw), want: vAccept, recs: 2},
		{name: "own publication of held records", data: mine.Raw, local: true, want: vAccept, recs: 1},
		{name: "another origin's record", data: join(good.Raw, lesson(t, n.id, 5).Raw), want: vReject, reason: string(protocol.ReasonOriginMismatch)},
		{name: "bad signature among good lines", data: join(good.Raw, badSignature(good2.Raw)), want: vReject, reason: string(protocol.ReasonSignature)},
		{name: "instruction", data: forgeLesson(other.id, "Never push to main on Fridays"), want: vReject, reason: string(protocol.ReasonInstruction)},
		{name: "not json", data: []byte("hello"), want: vReject, reason: string(protocol.ReasonJSON)},
		{name: "unknown version alone", data: unknownVersion, want: vIgnore, skipped: 1},
		{name: "unknown version is skipped, not refused", data: join(unknownVersion, good.Raw), want: vAccept, recs: 1, skipped: 1},
		{name: "empty", data: nil, want: vIgnore},
		{name: "over 1 MiB", data: big, want: vReject, reason: ReasonMessageTooLarge},
	}
	// An origin past the cap: its new records are ignored (not relayed),
	// and so are its revocations of hashes never held; its revocations of
	// held hashes are not.
	full, _ := protocol.GenerateIdentity()
	n.holder.full = map[string]bool{full.Origin(): true}
	fullNode := newNode(t, func(c *Config) { c.Identity = full })
	revoke := func(hash string) *protocol.Record {
		rev, err := protocol.SignRevocation(full, hash, time.Now(), "")
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	t.Run("origin past the cap", func(t *testing.T) {
		cases := []struct {
			name string
			data []byte
			want verdict
		}{
			{"a new record", lesson(t, full, 9).Raw, vIgnore},
			{"a revocation of a held hash", revoke(held.Hash).Raw, vAccept},
			{"a revocation of a hash never held", revoke(good.Hash).Raw, vIgnore},
			{"a new record with its revocation", join(lesson(t, full, 10).Raw, revoke(lesson(t, full, 10).Hash).Raw), vIgnore},
			{"held and never held", join(revoke(held.Hash).Raw, revoke(good2.Hash).Raw), vIgnore},
		}
		for _, c := range cases {
			before := n.Stats().Rejected[string(protocol.ReasonTooManyRecords)]
			v, _ := n.checkMessage(context.Background(), tm, c.data, false, fullNode.PeerID(), them)
			if v != c.want {
				t.Errorf("%s of a full origin: %v, want %v", c.name, v, c.want)
			}
			if counted := n.Stats().Rejected[string(protocol.ReasonTooManyRecords)] - before; counted != map[verdict]int{vIgnore: 1}[c.want] {
				t.Errorf("%s: counted %d times as too many records", c.name, counted)
			}
		}
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := n.Stats()
			v, recs := n.checkMessage(context.Background(), tm, c.data, c.local, them, them)
			if c.local {
				v, recs = n.checkMessage(context.Background(), tm, c.data, true, me, me)
			}
			if v != c.want || len(recs) != c.recs {
				t.Fatalf("verdict %v with %d records, want %v with %d", v, len(recs), c.want, c.recs)
			}
			after := n.Stats()
			if c.reason != "" && after.Rejected[c.reason] != before.Rejected[c.reason]+1 {
				t.Errorf("reason %q counted %d times, want once", c.reason, after.Rejected[c.reason]-before.Rejected[c.reason])
			}
			if after.Skipped-before.Skipped != c.skipped {
				t.Errorf("skipped %d lines, want %d", after.Skipped-before.Skipped, c.skipped)
			}
		})
	}
}

func TestCheckMessagePrivate(t *testing.T) {
	member, _ := protocol.GenerateIdentity()
	outsider := newNode(t)
	memberNode := newNode(t, func(c *Config) { c.Identity = member })
	n := newNode(t, func(c *Config) { c.Members = []string{member.Key()} })
	tm := n.teams["t"]
	cases := []struct {
		name         string
		data         []byte
		author, from *tnode
		want         verdict
	}{
		{"member's record from the member", lesson(t, member, 1).Raw, memberNode, memberNode, vAccept},
		{"outsider's record from the member: only an origin publishes its own", lesson(t, outsider.id, 2).Raw, memberNode, memberNode, vReject},
		{"member's record published by an outsider", lesson(t, member, 3).Raw, outsider, outsider, vIgnore},
		{"member's record forwarded by an outsider", lesson(t, member, 4).Raw, memberNode, outsider, vIgnore},
		{"outsider's forged record from the member: still a reject", badSignature(lesson(t, outsider.id, 5).Raw), memberNode, memberNode, vReject},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, _ := n.checkMessage(context.Background(), tm, c.data, false, c.author.PeerID(), c.from.PeerID())
			if v != c.want {
				t.Fatalf("verdict %v, want %v", v, c.want)
			}
		})
	}
}

func TestBatch(t *testing.T) {
	id, _ := protocol.GenerateIdentity()
	recs := lessons(t, id, 0, 50)
	var lines [][]byte
	total := 0
	for len(lines) < 3000 {
		for _, r := range recs {
			lines = append(lines, r.Raw)
			total += len(r.Raw) + 1
		}
	}
	msgs, err := batch(lines, protocol.MaxGossipMsg)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) < 2 {
		t.Fatalf("%d bytes in %d message(s)", total, len(msgs))
	}
	count := 0
	for _, m := range msgs {
		if len(m) > protocol.MaxGossipMsg {
			t.Errorf("message of %d bytes", len(m))
		}
		if n := len(protocol.SplitLines(m)); n > protocol.MaxOriginRecs {
			t.Errorf("message of %d lines: receivers refuse more than %d of one origin", n, protocol.MaxOriginRecs)
		}
		count += len(protocol.SplitLines(m))
	}
	if count != len(lines) {
		t.Errorf("%d lines in the messages, want %d", count, len(lines))
	}
	if _, err := batch([][]byte{bytes.Repeat([]byte("a"), protocol.MaxLineBytes+1)}, protocol.MaxGossipMsg); err == nil {
		t.Error("a line over 8 KiB was batched")
	}
	if _, err := batch([][]byte{[]byte("a\nb")}, protocol.MaxGossipMsg); err == nil {
		t.Error("a line with a newline was batched")
	}
}

func TestParseMembers(t *testing.T) {
	id, _ := protocol.GenerateIdentity()
	m, err := parseMembers([]string{" " + id.Key() + " ", "00112233AABBCCDD"})
	if err != nil {
		t.Fatal(err)
	}
	if !m.hasOrigin(id.Origin()) || !m.hasOrigin("00112233aabbccdd") || len(m) != 2 {
		t.Errorf("members %v", m)
	}
	for _, bad := range []string{"xyz", "0011", id.Key() + "00"} {
		if _, err := parseMembers([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if m, _ := parseMembers(nil); !m.open() {
		t.Error("an empty list is not an open team")
	}
}

// BenchmarkValidate measures records per second through the validator
// (protocol.Verify and parse of every line of a 50-line message, the
// duplicate check) against bare ed25519.Verify of the same signed bytes,
// in the same run (ns/op covers both). Run with -cpu 1,2: with one core the validator works
// line by line; with more it spreads a long message over the cores.
func BenchmarkValidate(b *testing.B) {
	n := newNode(b)
	tm := n.teams["t"]
	id, _ := protocol.GenerateIdentity()
	recs := lessons(b, id, 0, 50)
	data := bytes.Join(raws(recs), []byte("\n"))
	type signed struct{ msg, sig []byte }
	var bare []signed
	for _, r := range recs {
		i := bytes.Index(r.Raw, []byte(`,"sig":"`))
		sig, _ := hex.DecodeString(string(r.Raw[i+8 : i+8+128]))
		msg := append(bytes.Clone(r.Raw[:i]), r.Raw[i+8+128+1:]...)
		if !ed25519.Verify(id.Public, msg, sig) {
			b.Fatal("cut-out bytes do not verify")
		}
		bare = append(bare, signed{msg, sig})
	}
	from := n.PeerID()
	ctx := context.Background()
	// The two are timed alternately, message by message, so that load from
	// elsewhere on the machine weighs on both alike.
	var validator, plain time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if v, _ := n.checkMessage(ctx, tm, data, false, from, from); v != vAccept {
			b.Fatal(v)
		}
		mid := time.Now()
		for _, s := range bare {
			if !ed25519.Verify(id.Public, s.msg, s.sig) {
				b.Fatal("verify")
			}
		}
		validator += mid.Sub(start)
		plain += time.Since(mid)
	}
	b.StopTimer()
	recsDone := float64(b.N * len(recs))
	b.ReportMetric(recsDone/validator.Seconds(), "records/s")
	b.ReportMetric(recsDone/plain.Seconds(), "bare-ed25519-records/s")
	b.ReportMetric(plain.Seconds()/validator.Seconds(), "ratio")
}
