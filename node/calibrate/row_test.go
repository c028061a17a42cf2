package calibrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

const goodRow = `{"id":"r01","domain":"go","events":[{"kind":"error",  "title":"go test ./...","happened":"no space left on device","agent":"claude-code","session":"s1","cwd":"/srv/app","extra":1},{"kind":"note","text":"x"}],"groups":[{"events":[0],"facts":[["ENOSPC","no space left"]],"lesson":"ref","more":true},{"events":[1]}],"private":["dana"],"unknown":{"a":[1]}}`

func TestDecodeRowGood(t *testing.T) {
	r, err := DecodeRow([]byte(goodRow))
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != "r01" || r.Domain != "go" || len(r.Events) != 2 || len(r.events) != 2 || r.events[0].Title != "go test ./..." ||
		len(r.Groups) != 2 || r.Groups[0].Facts[0][1] != "no space left" || r.Groups[0].Lesson != "ref" || r.Private[0] != "dana" {
		t.Errorf("%+v", r)
	}
	if bytes.ContainsAny(r.Events[0], "\n\r") || bytes.Contains(r.Events[0], []byte(`,  "`)) {
		t.Errorf("an event is not one compact line: %s", r.Events[0])
	}
}

// TestDecodeRowHostile: every way a row can be wrong is named, with what
// is wrong and where.
func TestDecodeRowHostile(t *testing.T) {
	ev := `{"kind":"error","title":"t"}`
	row := func(events, groups string) string {
		return fmt.Sprintf(`{"id":"x","events":[%s],"groups":[%s]}`, events, groups)
	}
	for _, tc := range []struct{ name, line, want string }{
		{"not json", `not json`, "not a JSON object"},
		{"an array", `[1,2]`, "not a JSON object"},
		{"cut off", `{"id":"x","events":[`, "bad JSON"},
		{"trailing garbage", `{"id":"x"} {}`, "bad JSON"},
		{"invalid UTF-8", "{\"id\":\"\xff\"}", "not valid UTF-8"},
		{"id a number", `{"id":5,"events":[` + ev + `],"groups":[{"events":[0]}]}`, `field "id" is a JSON number, want string`},
		{"events a string", `{"id":"x","events":"e"}`, `field "events" is a JSON string, want array`},
		{"index a string", row(ev, `{"events":["0"]}`), `is a JSON string, want number`},
		{"index a fraction", row(ev, `{"events":[0.5]}`), `is a JSON number`},
		{"fact a number", row(ev, `{"events":[0],"facts":[[1]]}`), `is a JSON number, want string`},
		{"facts flat", row(ev, `{"events":[0],"facts":["ENOSPC"]}`), `is a JSON string, want array`},
		{"private a string", `{"id":"x","events":[` + ev + `],"groups":[{"events":[0]}],"private":"dana"}`, `field "private" is a JSON string, want array`},
		{"no events", `{"id":"x","groups":[{"events":[0]}]}`, `no "events"`},
		{"null event", row(`null`, `{"events":[0]}`), "event 0: the line is not a JSON object"},
		{"event without kind", row(ev+`,{"title":"t"}`, `{"events":[0,1]}`), `event 1: the event has no "kind"`},
		{"event field a number", row(`{"kind":"error","title":5}`, `{"events":[0]}`), `event 0: field "title" must be a string`},
		{"error without title", row(`{"kind":"error"}`, `{"events":[0]}`), `event 0: an error needs "title"`},
		{"no groups", row(ev, ``), `no "groups"`},
		{"group without events", row(ev, `{"events":[0]},{"events":[]}`), "group 1 has no events"},
		{"index out of range", row(ev, `{"events":[0,1]}`), "group 0: event index 1 is out of range (the row has 1 events, 0 to 0)"},
		{"negative index", row(ev, `{"events":[-1]}`), "event index -1 is out of range"},
		{"huge index", row(ev, `{"events":[99999999999999999999]}`), "is a JSON number"},
		{"in two groups", row(ev+","+ev, `{"events":[0,1]},{"events":[1]}`), "event 1 is in two groups, 0 and 1"},
		{"twice in one group", row(ev, `{"events":[0,0]}`), "event 0 is in two groups, 0 and 0"},
		{"in no group", row(ev+","+ev, `{"events":[1]}`), "event 0 is in no group"},
		{"fact without alternatives", row(ev, `{"events":[0],"facts":[[]]}`), "group 0: fact 0 has no alternatives"},
		{"empty alternative", row(ev, `{"events":[0],"facts":[["a"," "]]}`), "fact 0 has an empty alternative"},
		{"empty private", `{"id":"x","events":[` + ev + `],"groups":[{"events":[0]}],"private":[""]}`, `"private" holds an empty string`},
		{"huge event", row(`{"kind":"error","title":"`+strings.Repeat("a", 70<<10)+`"}`, `{"events":[0]}`), "event 0: the event is"},
		{"too many events", row(strings.Repeat(ev+",", MaxRowEvents)+ev, `{"events":[0]}`), "the row has 1001 events, the limit is 1000"},
		{"huge row", `{"id":"` + strings.Repeat("a", MaxRowBytes) + `"}`, "the row is"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeRow([]byte(tc.line))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// TestReadRowsGoesOn: bad lines, a line past MaxRowBytes among them, are
// named with their numbers and the good lines after them are still read;
// blank lines and comments are skipped; the last line needs no newline.
func TestReadRowsGoesOn(t *testing.T) {
	good := `{"id":"%s","events":[{"kind":"note","text":"x"}],"groups":[{"events":[0]}]}`
	lines := []string{
		"# a comment",
		fmt.Sprintf(good, "a"),
		"",
		`{"id":"b","events":[{"kind":"note","text":"x"}],"groups":[{"events":[3]}]}`,
		`{"id":` + strings.Repeat(" ", MaxRowBytes+10) + `"c"}`,
		"not json",
		fmt.Sprintf(good, "d"),
		"   ",
		fmt.Sprintf(good, "e"),
	}
	rows, bad, err := ReadRows(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rows {
		ids = append(ids, fmt.Sprintf("%s@%d", r.ID, r.Line))
	}
	if got := strings.Join(ids, " "); got != "a@2 d@7 e@9" {
		t.Errorf("rows %s", got)
	}
	var got []string
	for _, b := range bad {
		got = append(got, b.String())
	}
	want := []string{
		`line 4 (row "b"): group 0: event index 3 is out of range (the row has 1 events, 0 to 0)`,
		fmt.Sprintf("line 5: the line is more than %d bytes", MaxRowBytes),
		"line 6: the row is not a JSON object; each line is {\"id\": \"...\", \"events\": [...], \"groups\": [...]}",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("bad:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func FuzzDecodeRow(f *testing.F) {
	f.Add([]byte(goodRow))
	f.Add([]byte(`{"id":"x","events":[{"kind":"error","title":"t"},{"kind":"error","title":"t"}],"groups":[{"events":[1,0],"facts":[["a"]]}]}`))
	f.Add([]byte(`{"id":"x","events":[{"kind":"note","text":"x"}],"groups":[{"events":[0]},{"events":[0]}]}`))
	f.Add([]byte(`{"id":5}`))
	f.Add([]byte(`{"events":[null],"groups":[{"events":[-1]}]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := DecodeRow(line)
		if err != nil {
			return
		}
		// A row taken has events, each in exactly one group, decoded as
		// ingest decodes them, and reads back the same once written.
		if len(r.Events) == 0 || len(r.events) != len(r.Events) {
			t.Fatalf("%d events, %d decoded", len(r.Events), len(r.events))
		}
		seen := make([]int, len(r.Events))
		for _, g := range r.Groups {
			if len(g.Events) == 0 {
				t.Fatal("a group without events")
			}
			for _, i := range g.Events {
				seen[i]++
			}
		}
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("event %d is in %d groups", i, n)
			}
		}
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := DecodeRow(again)
		if err != nil {
			t.Fatalf("a row taken does not read back: %v\n%s", err, again)
		}
		if len(r2.Events) != len(r.Events) || len(r2.Groups) != len(r.Groups) || r2.ID != r.ID {
			t.Fatalf("read back differs: %+v %+v", r, r2)
		}
	})
}
