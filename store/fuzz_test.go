package store

import (
	"bytes"
	"slices"
	"testing"
	"time"
)

func FuzzDecodeStored(f *testing.F) {
	v, _ := encodeStored(stored{Time: t0, Arrived: t0.Add(time.Hour), Scopes: []string{"folder", "team/a"}, Raw: []byte(`{"v":1}`)})
	f.Add(v)
	f.Add([]byte{storedFormat})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, v []byte) {
		s, err := decodeStored(v)
		if err != nil {
			return
		}
		again, err := encodeStored(s)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := decodeStored(again)
		if err != nil || !s2.Time.Equal(s.Time) || !s2.Arrived.Equal(s.Arrived) || !slices.Equal(s2.Scopes, s.Scopes) || !bytes.Equal(s2.Raw, s.Raw) {
			t.Fatalf("round trip changed %+v into %+v (%v)", s, s2, err)
		}
	})
}

func TestStoredRoundTrip(t *testing.T) {
	for _, s := range []stored{
		{Time: t0, Arrived: t0.Add(time.Nanosecond), Scopes: []string{"local"}, Raw: []byte("{}\n")},
		{Time: time.Time{}.UTC(), Arrived: time.Date(9999, 1, 1, 0, 0, 0, 999, time.UTC), Scopes: []string{}, Raw: nil},
	} {
		v, err := encodeStored(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeStored(v)
		if err != nil || !got.Time.Equal(s.Time) || !got.Arrived.Equal(s.Arrived) || !slices.Equal(got.Scopes, s.Scopes) || !bytes.Equal(got.Raw, s.Raw) {
			t.Fatalf("%+v -> %+v, %v", s, got, err)
		}
	}
	for _, bad := range [][]byte{nil, {0}, {storedFormat, 0x80}, {storedFormat, 0, 0, 0, 0, 5, 1}} {
		if _, err := decodeStored(bad); err == nil {
			t.Errorf("decoded %x", bad)
		}
	}
}
