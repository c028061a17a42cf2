package store

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// codecStrings are texts that go both ways: plain ones and ones
// encoding/json escapes or replaces.
var codecStrings = []string{
	"", "a", "team:alpha", "go test fails on a clean checkout", "İstanbul ΟΔΟΣ", "0123456789abcdef", "quote \" inside", `back\slash`, "tab\there", "new\nline", "<b> & </b>",
	"bad \xff utf-8", "del \x7f", "line\u2028sep", "para\u2029sep", "\x00\x1f", "emoji 🙂", "é",
}

var codecFloats = []float64{0, math.Copysign(0, -1), 0.5, 1, 0.75, 0.9999990463256836, 1e-7, 1e-6, 123456789, 1e21, 1e20, -3.25, math.SmallestNonzeroFloat64}

var codecTimes = []time.Time{
	{}, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC),
	time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
	time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
	time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)),
	time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("y", 0)),
}

func randomLesson(r *rand.Rand) Lesson {
	str := func() string {
		if r.IntN(30) == 0 { // now and then one encoding/json escapes
			return codecStrings[r.IntN(len(codecStrings))]
		}
		return codecStrings[r.IntN(5)]
	}
	strs := func() []string {
		switch n := r.IntN(5); n {
		case 0:
			return nil
		case 1:
			return []string{}
		default:
			out := make([]string, n)
			for i := range out {
				out[i] = str()
			}
			return out
		}
	}
	return Lesson{
		Hash: str(), ID: str(), Kind: str(), Text: str(), Seen: r.Int64N(1000) - 10,
		Strength: codecFloats[r.IntN(len(codecFloats))], Updated: codecTimes[r.IntN(len(codecTimes))].UTC(),
		Own: r.IntN(2) == 0, Arrived: codecTimes[r.IntN(len(codecTimes))], Scopes: strs(), Projects: strs(), WrittenFrom: strs(),
		Episodes: strs(), MetBefore: r.IntN(2) == 0, Confirmed: r.IntN(2) == 0, Published: r.IntN(2) == 0,
		Layer: str(), Corroborators: strs(), Dirty: r.IntN(2) == 0,
	}
}

// TestLessonCodec: marshalLesson writes what json.Marshal writes, and
// unmarshalLesson reads it as json.Unmarshal does, errors included.
func TestLessonCodec(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fast := 0
	for i := 0; i < 20000; i++ {
		l := randomLesson(r)
		want, werr := json.Marshal(&l)
		got, gerr := marshalLesson(&l)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("lesson %+v:\nmarshalLesson %s (%v)\njson.Marshal  %s (%v)", l, got, gerr, want, werr)
		}
		if _, ok := appendLesson(nil, &l); ok {
			fast++
		}
		if werr != nil {
			continue
		}
		checkDecode(t, want)
	}
	if fast < 1000 {
		t.Fatalf("only %d of 20000 lessons took the fast path", fast)
	}
}

// checkDecode compares unmarshalLesson with json.Unmarshal on data.
func checkDecode(t *testing.T, data []byte) {
	t.Helper()
	var want, got Lesson
	werr := json.Unmarshal(data, &want)
	gerr := unmarshalLesson(data, &got)
	if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
		t.Fatalf("%q: unmarshalLesson error %v, json.Unmarshal %v", data, gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\nunmarshalLesson %#v\njson.Unmarshal  %#v", data, got, want)
	}
}

// TestLessonDecodeOddForms: forms json.Marshal does not write are read as
// json.Unmarshal reads them.
func TestLessonDecodeOddForms(t *testing.T) {
	for _, s := range []string{
		`{}`, `{"hash":"a"}`, `{"hash":"a","hash":"b"}`, `{"HASH":"a"}`, `{"hash":"a","extra":1}`,
		`{ "hash":"a"}`, `{"hash":"a"} `, `{"hash":"a"}x`, `{"hash":null}`, `{"scopes":null}`, `{"scopes":[]}`,
		`{"scopes":["a","b"]}`, `{"scopes":["a",]}`, `{"seen":1.0}`, `{"seen":-0}`, `{"seen":01}`, `{"seen":1e2}`,
		`{"seen":99999999999999999999}`, `{"strength":-}`, `{"strength":.5}`, `{"strength":5.}`, `{"strength":1.2.3}`,
		`{"strength":1-2}`, `{"strength":0.5}`, `{"strength":1e400}`, `{"own":true}`, `{"own":truex}`, `{"own":"true"}`,
		`{"updated":"2026-01-02T03:04:05Z"}`, `{"updated":"2026-01-02T03:04:05+01:00"}`, `{"updated":"2026-01-02"}`,
		`{"updated":"2026-01-02T03:04:05.123Z","arrived":"0001-01-01T00:00:00Z"}`, `{"text":"a\u0041"}`,
		"{\"text\":\"tab\there\"}", "{\"text\":\"bad \xff\"}", `{"text":"<&>"}`, "{\"text\":\"sep\u2028\"}",
		`{"hash":"a",}`, `{"hash" :"a"}`, `[]`, ``, `{"hash":"a"`, `{"text":"unterminated}`,
	} {
		checkDecode(t, []byte(s))
	}
}

// FuzzLessonDecode: whatever the bytes, unmarshalLesson agrees with
// json.Unmarshal.
func FuzzLessonDecode(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 50; i++ {
		l := randomLesson(r)
		if b, err := json.Marshal(&l); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkDecode(t, data) })
}
