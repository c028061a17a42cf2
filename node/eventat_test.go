package node

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remem/remem/protocol"
)

// An entry is one way an event gets into a memory: Remember (the CLI's
// remember, the MCP tool), Ingest (remem ingest), the inbox and POST
// /memory/remember. It returns the report.
type entry struct {
	name string
	put  func(t *testing.T, m *Memory, ev protocol.Event) IngestReport
}

var entries = []entry{
	{"remember", func(t *testing.T, m *Memory, ev protocol.Event) IngestReport {
		rep, err := m.Remember([]protocol.Event{ev})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}},
	{"ingest", func(t *testing.T, m *Memory, ev protocol.Event) IngestReport {
		rep, err := m.Ingest("events.jsonl", strings.NewReader(eventLine(t, ev)))
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}},
	{"inbox", func(t *testing.T, m *Memory, ev protocol.Event) IngestReport {
		if err := os.WriteFile(filepath.Join(m.cfg.Home, InboxFile), []byte(eventLine(t, ev)), 0o600); err != nil {
			t.Fatal(err)
		}
		rep, err := m.DrainInbox()
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}},
	{"POST /memory/remember", func(t *testing.T, m *Memory, ev protocol.Event) IngestReport {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/memory/remember", strings.NewReader(eventLine(t, ev)))
		req.Header.Set("Content-Type", "application/json")
		req.Host = "127.0.0.1:7878"
		req.Header.Set("Authorization", "Bearer "+m.APIToken())
		NewAPI(m, APIOptions{}).ServeHTTP(rec, req)
		var rep IngestReport
		if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
			t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
		}
		if (rec.Code == http.StatusOK) != (len(rep.Rejected) == 0) {
			t.Fatalf("status %d for %+v", rec.Code, rep)
		}
		return rep
	}},
}

func eventLine(t *testing.T, ev protocol.Event) string {
	t.Helper()
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// TestEventAtRefusedOrKept: by every entry, an "at" that is not RFC 3339 or
// is more than ten minutes ahead of the memory's clock is refused with the
// reason; one within the skew, or in the past, is stored as given (in UTC).
func TestEventAtRefusedOrKept(t *testing.T) {
	for _, e := range entries {
		t.Run(e.name, func(t *testing.T) {
			clk := newClock()
			m, proj := openTest(t, clk)
			now := clk.Now()
			for i, c := range []struct {
				at, refused string
			}{
				{"2025-06-01 12:00", "RFC 3339"},
				{"yesterday", "RFC 3339"},
				{protocol.FormatTime(now.Add(11 * time.Minute)), "ahead of this clock"},
				{now.Add(5 * time.Minute).In(time.FixedZone("", 2*3600)).Format(time.RFC3339), ""},
				{protocol.FormatTime(now.Add(-48 * time.Hour)), ""},
			} {
				ev := protocol.Event{Kind: "note", Text: "the docs site builds in four minutes", Session: string(rune('a' + i)), At: c.at, Cwd: proj}
				rep := e.put(t, m, ev)
				if c.refused != "" {
					if rep.Taken != 0 || len(rep.Rejected) != 1 || !strings.Contains(rep.Rejected[0].Reason, c.refused) {
						t.Errorf("at %q: %+v, want refused with %q", c.at, rep, c.refused)
					}
					continue
				}
				if rep.Taken != 1 {
					t.Errorf("at %q: %+v, want taken", c.at, rep)
				}
			}
			evs, err := m.Stored().PendingEvents()
			if err != nil || len(evs) != 2 {
				t.Fatalf("pending: %+v, %v", evs, err)
			}
			for i, want := range []time.Time{now.Add(5 * time.Minute), now.Add(-48 * time.Hour)} {
				got, err := protocol.ParseTime(evs[i].Event.At)
				if err != nil || !got.Equal(want) || !strings.HasSuffix(evs[i].Event.At, "Z") {
					t.Errorf("stored at %q, want %s", evs[i].Event.At, protocol.FormatTime(want))
				}
			}
		})
	}
}

// TestSleepUsesEventAt: sleep reads an event's "at", not the time it
// arrived: an event reported after a lesson arrived, but that happened
// before, does not confirm it (SPEC §7, met before). Without "at" the same
// event confirms it. By every entry.
func TestSleepUsesEventAt(t *testing.T) {
	for _, e := range entries {
		for _, withAt := range []bool{true, false} {
			t.Run(e.name+map[bool]string{true: " with at", false: " without"}[withAt], func(t *testing.T) {
				clk := newClock()
				a, projA := openTest(t, clk)
				b, projB := openTest(t, clk)
				a.Remember([]protocol.Event{failure(projA, "s1", "undefined: mocks.NewClient on a clean checkout until go generate has run")})
				sleep(t, a)
				clk.Add(time.Minute)
				arrived := clk.Now()
				transfer(t, a, b, "team:x")
				clk.Add(time.Hour)
				ev := failure(projB, "s9", "undefined: mocks.NewClient on a clean checkout, go generate not run yet")
				if withAt {
					ev.At = protocol.FormatTime(arrived.Add(-30 * time.Minute))
				}
				if rep := e.put(t, b, ev); rep.Taken != 1 {
					t.Fatalf("not taken: %+v", rep)
				}
				rep := sleep(t, b)
				if withAt && (rep.Confirmations != 0 || rep.MetBefore != 1) {
					t.Fatalf("an event that happened before the lesson arrived confirmed it: %+v", rep)
				}
				if !withAt && rep.Confirmations != 1 {
					t.Fatalf("an event after the lesson arrived did not confirm it: %+v", rep)
				}
			})
		}
	}
}
