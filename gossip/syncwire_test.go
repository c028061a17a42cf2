package gossip

// Tests of the sync wire format alone: no libp2p host, no node.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/remem/remem/protocol"
)

// pureSnapshot is the snapshot of recs, built without a node.
func pureSnapshot(recs []*protocol.Record) *snapshot {
	s := newSnapshot(raws(recs), nil)
	return s
}

func TestSummaryAndDiffRoundTrip(t *testing.T) {
	a, _ := protocol.GenerateIdentity()
	b, _ := protocol.GenerateIdentity()
	c, _ := protocol.GenerateIdentity()
	ra, rb, rc := lessons(t, a, 0, 5), lessons(t, b, 10, 4), lessons(t, c, 20, 3)
	// mine: a (all), b (3 of 4); theirs: a (all), b (all), c.
	mine := pureSnapshot(append(slices.Clone(ra), rb[:3]...))
	theirs := pureSnapshot(append(append(slices.Clone(ra), rb...), rc...))

	body := encodeSummary(theirs.summaryMsg("t", true))
	sum, err := decodeSummary(body)
	if err != nil || sum.team != "t" || !sum.full || len(sum.entries) != 3 || sum.whole != theirs.whole {
		t.Fatalf("decodeSummary: %+v %v", sum, err)
	}
	if wholeDigest(sum.entries) != sum.whole {
		t.Error("the whole digest is not the digest of the entries sent")
	}
	// The whole digest alone: different sets, different digests; equal sets, equal.
	lite, err := decodeSummary(encodeSummary(theirs.summaryMsg("t", false)))
	if err != nil || lite.full || lite.entries != nil || lite.whole != theirs.whole || lite.whole == mine.whole {
		t.Fatalf("whole-digest summary: %+v %v", lite, err)
	}
	if again := pureSnapshot(append(append(slices.Clone(rc), rb...), ra...)); again.whole != theirs.whole {
		t.Fatal("equal record sets gave different whole digests")
	}
	diff := diffAgainst(mine, sum.entries)
	// a is equal and left out; b differs (my 3 ids); c I lack (0 ids).
	if len(diff) != 2 {
		t.Fatalf("diff has %d origins, want 2", len(diff))
	}
	got := map[string]int{}
	for _, e := range diff {
		got[e.origin.String()] = len(e.ids)
	}
	if got[b.Origin()] != 3 || got[c.Origin()] != 0 {
		t.Errorf("diff %v", got)
	}
	dm, err := decodeDiff(encodeDiff(diff))
	status, back := dm.status, dm.entries
	if err != nil || status != statusOK || len(back) != 2 {
		t.Fatalf("decodeDiff: %d %d %v", status, len(back), err)
	}
	for i := range diff {
		if back[i].origin != diff[i].origin || !slices.Equal(back[i].ids, diff[i].ids) {
			t.Errorf("entry %d changed in the round trip", i)
		}
	}
	for _, s := range []byte{statusNoTeam, statusRefused, statusBusy, statusInternal, statusNeedFull} {
		m, err := decodeDiff([]byte{s})
		if err != nil || m.status != s || m.entries != nil {
			t.Errorf("status %d alone: %d %v %v", s, m.status, m.entries, err)
		}
	}
}

func TestRequestAndAcceptRoundTrip(t *testing.T) {
	ids := func(n int, seed byte) []recID {
		out := make([]recID, n)
		for i := range out {
			out[i][0], out[i][1] = seed, byte(i)
		}
		return out
	}
	cases := []struct {
		name        string
		want, offer []recID
	}{
		{"empty", nil, nil},
		{"want only", ids(3, 1), nil},
		{"offer only", nil, ids(2, 2)},
		{"both, unsorted", []recID{ids(2, 9)[1], ids(2, 9)[0]}, ids(4, 3)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, offer, err := decodeRequest(encodeRequest(c.want, c.offer))
			if err != nil || !slices.Equal(want, c.want) || !slices.Equal(offer, c.offer) {
				t.Errorf("request: %v %v %v", want, offer, err)
			}
			acc, err := decodeAccept(encodeAccept(c.offer))
			if err != nil || !slices.Equal(acc, c.offer) {
				t.Errorf("accept: %v %v", acc, err)
			}
		})
	}
}

// testOrigins are two origins, o1 after o2.
func testOrigins() (o1, o2 originID) {
	o1[0], o2[0] = 2, 1
	return o1, o2
}

func TestDecodeDiffRefusesBadFrames(t *testing.T) {
	o1, o2 := testOrigins()
	var id recID
	unsorted := binary.AppendUvarint([]byte{statusOK}, 2)
	unsorted = append(unsorted, o1[:]...)
	unsorted = appendIDs(unsorted, []recID{id})
	unsorted = append(unsorted, o2[:]...)
	unsorted = appendIDs(unsorted, nil)

	tooMany := binary.AppendUvarint([]byte{statusOK}, 1)
	tooMany = append(tooMany, o1[:]...)
	tooMany = binary.AppendUvarint(tooMany, maxOriginIDs+1)

	var id2 recID
	id2[0] = 1
	idsDown := binary.AppendUvarint([]byte{statusOK}, 1)
	idsDown = append(idsDown, o1[:]...)
	idsDown = appendIDs(idsDown, []recID{id2, id})

	// 17 origins of 4,096 ids each: over maxIDs in all.
	overTotal := binary.AppendUvarint([]byte{statusOK}, maxIDs/maxOriginIDs+1)
	for i := range maxIDs/maxOriginIDs + 1 {
		var o originID
		o[0] = byte(i)
		overTotal = append(overTotal, o[:]...)
		overTotal = binary.AppendUvarint(overTotal, maxOriginIDs)
		overTotal = append(overTotal, make([]byte, maxOriginIDs*idLen)...)
	}

	diffs := map[string][]byte{
		"origins out of order":    unsorted,
		"too many ids":            tooMany,
		"ids out of order":        idsDown,
		"too many ids in all":     overTotal,
		"truncated":               unsorted[:len(unsorted)-3],
		"trailing bytes":          append(encodeDiff(nil), 0),
		"huge count, short frame": binary.AppendUvarint([]byte{statusOK}, maxOrigins),
		"bad varint":              {statusOK, 0xff},
		"empty":                   {},
	}
	for name, body := range diffs {
		if _, err := decodeDiff(body); !errors.Is(err, errProtocol) {
			t.Errorf("diff, %s: err %v, want a protocol violation", name, err)
		}
	}
}

func TestDecodeSummaryRefusesBadFrames(t *testing.T) {
	o1, o2 := testOrigins()

	summary := func(entries ...summaryEntry) []byte {
		return encodeSummary(summaryMsg{team: "t", full: true, entries: entries})
	}
	team := func(b ...byte) []byte { return append(binary.AppendUvarint(nil, 1), append([]byte{'t'}, b...)...) }
	summaries := map[string][]byte{
		"long team name":          binary.AppendUvarint(nil, maxTeamLen+1),
		"unknown summary mode":    team(7),
		"short whole digest":      team(summaryWhole, 1, 2),
		"trailing bytes":          append(encodeSummary(summaryMsg{team: "t"}), 0),
		"origins out of order":    summary(summaryEntry{origin: o1}, summaryEntry{origin: o2}),
		"origin twice":            summary(summaryEntry{origin: o1}, summaryEntry{origin: o1}),
		"huge count, short frame": binary.AppendUvarint(team(append([]byte{summaryFull}, make([]byte, idLen)...)...), maxOrigins),
		"too many origins":        binary.AppendUvarint(team(append([]byte{summaryFull}, make([]byte, idLen)...)...), maxOrigins+1),
		"truncated entry":         summary(summaryEntry{origin: o2})[:20],
		"empty":                   {},
	}
	for name, body := range summaries {
		if _, err := decodeSummary(body); !errors.Is(err, errProtocol) {
			t.Errorf("summary, %s: err %v, want a protocol violation", name, err)
		}
	}
}

func TestDecodeRequestAndAcceptRefuseBadFrames(t *testing.T) {
	var id recID

	requests := map[string][]byte{
		"no offer":            appendIDs(nil, []recID{id}),
		"want over the limit": binary.AppendUvarint(nil, maxIDs+1),
		"short want":          append(binary.AppendUvarint(nil, 2), id[:]...),
		"trailing bytes":      append(encodeRequest(nil, nil), 0),
		"empty":               {},
	}
	for name, body := range requests {
		if _, _, err := decodeRequest(body); !errors.Is(err, errProtocol) {
			t.Errorf("request, %s: err %v, want a protocol violation", name, err)
		}
	}
	accepts := map[string][]byte{
		"over the limit": binary.AppendUvarint(nil, maxIDs+1),
		"short":          append(binary.AppendUvarint(nil, 2), id[:]...),
		"trailing bytes": append(encodeAccept([]recID{id}), 0),
		"empty":          {},
	}
	for name, body := range accepts {
		if _, err := decodeAccept(body); !errors.Is(err, errProtocol) {
			t.Errorf("accept, %s: err %v, want a protocol violation", name, err)
		}
	}
}

func TestFrames(t *testing.T) {
	var w bytes.Buffer
	bodies := [][]byte{[]byte("one"), nil, bytes.Repeat([]byte{7}, 300)}
	for _, b := range bodies {
		k, err := writeFrame(&w, b)
		if err != nil || k != len(b)+len(binary.AppendUvarint(nil, uint64(len(b)))) {
			t.Fatalf("writeFrame: %d %v", k, err)
		}
	}
	r := bufio.NewReader(&w)
	var buf []byte
	for i, want := range bodies {
		got, err := readFrame(r, 300, &buf)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("frame %d: %q %v", i, got, err)
		}
	}
	if _, err := readFrame(r, 300, &buf); err != io.EOF {
		t.Errorf("after the last frame: %v, want EOF", err)
	}

	// A frame over its limit is refused from its header: nothing more is read.
	over := binary.AppendUvarint(nil, maxDiffFrame+1)
	r = bufio.NewReader(bytes.NewReader(over))
	if _, err := readFrame(r, maxDiffFrame, &buf); !errors.Is(err, errProtocol) {
		t.Errorf("frame over the limit: %v", err)
	}
	if cap(buf) > 300 {
		t.Errorf("a refused frame grew the buffer to %d bytes", cap(buf))
	}
	// A frame cut short, or a header that never ends, is an I/O error.
	short := append(binary.AppendUvarint(nil, 10), "abc"...)
	if _, err := readFrame(bufio.NewReader(bytes.NewReader(short)), 100, &buf); err != io.ErrUnexpectedEOF {
		t.Errorf("short frame: %v", err)
	}
	endless := bytes.Repeat([]byte{0xff}, 11)
	if _, err := readFrame(bufio.NewReader(bytes.NewReader(endless)), 100, &buf); err == nil {
		t.Error("a header of 11 continuation bytes was read")
	}
}

// fuzzSeeds are bodies of every message kind, for every decoder's corpus.
func fuzzSeeds(f *testing.F) {
	id, _ := protocol.GenerateIdentity()
	snap := pureSnapshot(lessons(f, id, 0, 3))
	f.Add(encodeSummary(snap.summaryMsg("t", true)))
	f.Add(encodeSummary(snap.summaryMsg("t", false)))
	ranged := snap.summaryMsg("t", true)
	ranged.ranged, ranged.hi = true, lastOrigin
	f.Add(encodeSummary(ranged))
	diff := diffAgainst(snap, nil)
	f.Add(encodeDiff(diff))
	f.Add([]byte{statusNeedFull})
	f.Add(encodeSummary(snap.bucketsMsg("t")))
	var b bucketSet
	b.add(3)
	f.Add(encodeBuckets(b))
	f.Add(encodeRequest(diff[0].ids, diff[0].ids[:1]))
	f.Add(encodeAccept(diff[0].ids))
}

// FuzzDecodeSummary: the decoder never panics, what it accepts respects the
// limits and order, and encoding it again gives what it decodes to.
func FuzzDecodeSummary(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		sum, err := decodeSummary(body)
		if err != nil {
			return
		}
		if len(sum.team) > maxTeamLen || len(sum.entries) > maxOrigins || (!sum.full && sum.entries != nil) {
			t.Fatalf("accepted an out-of-limits summary: %+v", sum)
		}
		for i := 1; i < len(sum.entries); i++ {
			if cmpOrigin(sum.entries[i-1].origin, sum.entries[i].origin) >= 0 {
				t.Fatal("accepted origins out of order")
			}
		}
		sp := sum.span(allBuckets())
		for _, e := range sum.entries {
			if !sp.has(e.origin) {
				t.Fatalf("accepted origin %s out of the range %s..%s", e.origin, sum.lo, sum.hi)
			}
		}
		again, err := decodeSummary(encodeSummary(sum))
		if err != nil || again.team != sum.team || again.full != sum.full || again.whole != sum.whole || !slices.Equal(again.entries, sum.entries) {
			t.Fatalf("round trip: %+v, want %+v (%v)", again, sum, err)
		}
		if (sum.buckets == nil) != (again.buckets == nil) || (sum.buckets != nil && *sum.buckets != *again.buckets) {
			t.Fatal("round trip changed the bucket digests")
		}
	})
}

// FuzzDecodeDiff: as FuzzDecodeSummary, for DIFF frames.
func FuzzDecodeDiff(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := decodeDiff(body)
		if err != nil {
			return
		}
		status, diff := m.status, m.entries
		if status == statusBuckets {
			back, err := decodeDiff(encodeBuckets(m.buckets))
			if err != nil || back.buckets != m.buckets {
				t.Fatalf("buckets round trip: %v %v", back.buckets, err)
			}
		}
		if status != statusOK {
			if diff != nil {
				t.Fatal("entries with a status that is not ok")
			}
			return
		}
		total := 0
		for i, e := range diff {
			total += len(e.ids)
			if len(e.ids) > maxOriginIDs || (i > 0 && cmpOrigin(diff[i-1].origin, e.origin) >= 0) {
				t.Fatal("accepted a diff out of limits or order")
			}
			for j := 1; j < len(e.ids); j++ {
				if cmpID(e.ids[j-1], e.ids[j]) >= 0 {
					t.Fatal("accepted ids out of order")
				}
			}
		}
		if total > maxIDs || len(diff) > maxOrigins {
			t.Fatal("accepted too many ids")
		}
		am, err := decodeDiff(encodeDiff(diff))
		again := am.entries
		if err != nil || len(again) != len(diff) {
			t.Fatalf("round trip: %d entries, want %d (%v)", len(again), len(diff), err)
		}
		for i := range diff {
			if again[i].origin != diff[i].origin || !slices.Equal(again[i].ids, diff[i].ids) {
				t.Fatalf("round trip changed entry %d", i)
			}
		}
	})
}

// FuzzDecodeRequest: the decoder never panics, keeps to the limits, and
// round-trips what it accepts.
func FuzzDecodeRequest(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		want, offer, err := decodeRequest(body)
		if err != nil {
			return
		}
		if len(want) > maxIDs || len(offer) > maxIDs {
			t.Fatal("accepted too many ids")
		}
		w2, o2, err := decodeRequest(encodeRequest(want, offer))
		if err != nil || !slices.Equal(w2, want) || !slices.Equal(o2, offer) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzDecodeAccept: as FuzzDecodeRequest, for ACCEPT frames.
func FuzzDecodeAccept(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		ids, err := decodeAccept(body)
		if err != nil {
			return
		}
		if len(ids) > maxIDs {
			t.Fatal("accepted too many ids")
		}
		again, err := decodeAccept(encodeAccept(ids))
		if err != nil || !slices.Equal(again, ids) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzReadFrame: a stream of bytes is read as frames until an error; no
// frame passes its limit, and a refused header allocates nothing.
func FuzzReadFrame(f *testing.F) {
	f.Add(append(binary.AppendUvarint(nil, 3), "abc"...), 16)
	f.Add(binary.AppendUvarint(nil, maxDiffFrame+1), maxDiffFrame)
	f.Add([]byte{0x80, 0x80, 0x80}, 1)
	f.Fuzz(func(t *testing.T, stream []byte, limit int) {
		limit = max(0, limit%(1<<16))
		r := bufio.NewReader(bytes.NewReader(stream))
		var buf []byte
		for range len(stream) + 1 {
			body, err := readFrame(r, limit, &buf)
			if err != nil {
				break
			}
			if len(body) > limit {
				t.Fatalf("a frame of %d bytes passed the limit %d", len(body), limit)
			}
		}
		if cap(buf) > limit {
			t.Fatalf("the buffer grew to %d bytes, past the limit %d", cap(buf), limit)
		}
	})
}
