package store

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/remem/remem/protocol"
)

// TestHeldFilterNoFalseNegatives adds keys across several layers: every
// key added is "maybe held", and few others are.
func TestHeldFilterNoFalseNegatives(t *testing.T) {
	var f heldFilter
	f.reset()
	const n = 5 * bloomFirstLayer
	for i := 0; i < n; i++ {
		f.add([]byte(fmt.Sprintf("r/%064x/1/%064x", i, i*7)))
	}
	if len(f.layers) < 2 {
		t.Fatalf("%d layers: the test does not test growth", len(f.layers))
	}
	for i := 0; i < n; i++ {
		if !f.mayHold([]byte(fmt.Sprintf("r/%064x/1/%064x", i, i*7))) {
			t.Fatalf("key %d added but not held", i)
		}
	}
	fp := 0
	for i := n; i < 2*n; i++ {
		if f.mayHold([]byte(fmt.Sprintf("r/%064x/1/%064x", i, i*7))) {
			fp++
		}
	}
	if rate := float64(fp) / n; rate > 0.05 {
		t.Fatalf("false positives %.3f", rate)
	}
}

// fakeRecord is a record that passes checkRecord without being signed
// (the store verifies nothing), so tests can hold many cheaply.
func fakeRecord(i int, typ protocol.Type, raw string) *protocol.Record {
	return &protocol.Record{Type: typ, Hash: fmt.Sprintf("%064x", i), Origin: fmt.Sprintf("%064x", i%7),
		Time: t0, Raw: []byte(raw)}
}

// TestHeldFilterAcrossReopen merges records, reopens the store (the
// filter is built from the keys held) and merges them, and more, again:
// held ones are found, across the filter's layers too.
func TestHeldFilterAcrossReopen(t *testing.T) {
	s, home := openTest(t)
	const n = bloomFirstLayer + 500
	var recs []*protocol.Record
	for i := 0; i < n; i++ {
		recs = append(recs, fakeRecord(i, protocol.TypeLesson, fmt.Sprintf(`{"n":%d}`, i)))
	}
	for i := 0; i < n; i += 500 {
		mustPut(t, s, recs[i:min(i+500, n)], "a", t0)
	}
	if len(s.held.layers) < 2 {
		t.Fatalf("%d layers: the test does not test growth", len(s.held.layers))
	}
	// Within the same process: every record is a duplicate now.
	for i := 0; i < n; i += 500 {
		for j, o := range mustPut(t, s, recs[i:min(i+500, n)], "a", t0) {
			if o != Duplicate {
				t.Fatalf("record %d: %v", i+j, o)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(home, Options{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	more := append([]*protocol.Record{}, recs...)
	for i := n; i < n+100; i++ {
		more = append(more, fakeRecord(i, protocol.TypeConfirmation, fmt.Sprintf(`{"c":%d}`, i)))
	}
	added, other := 0, 0
	for i := 0; i < len(more); i += 500 {
		for _, o := range mustPut(t, s2, more[i:min(i+500, len(more))], "b", t0) {
			switch o {
			case Added:
				added++
			case Duplicate:
				other++
			default:
				t.Fatalf("outcome %v", o)
			}
		}
	}
	if added != 100 || other != n {
		t.Fatalf("%d added, %d duplicates; want 100, %d", added, other, n)
	}
	if c, _ := s2.CountRecords(); c != n+100 {
		t.Fatalf("%d records", c)
	}
	// The duplicates noted their new scope (the fake lines do not decode,
	// so the stored values and index are read directly).
	inB := 0
	err = s2.view(func(txn *badger.Txn) error {
		if err := scanPrefix(txn, scopePrefix("b"), false, func(_, _ []byte) error { inB++; return nil }); err != nil {
			return err
		}
		v, ok, err := getIn(txn, recordKey(recs[7].SetKey()))
		if err != nil || !ok {
			return fmt.Errorf("record 7: %v %v", ok, err)
		}
		st, err := decodeStored(v)
		if err != nil {
			return err
		}
		if got := strings.Join(st.Scopes, ","); got != "a,b" {
			return fmt.Errorf("record 7 has scopes %s", got)
		}
		return nil
	})
	if err != nil || inB != n+100 {
		t.Fatalf("%d in scope b, %v", inB, err)
	}
}
