package commons

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/remem/remem/internal/testutil"
)

// fromAddr is an HTTP client whose connections come from the loopback
// address local (127.0.0.0/8 is all loopback on Linux), so one test can
// be two client addresses.
func fromAddr(local string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 10 * time.Second}
}

func (ts *testServer) listFrom(t *testing.T, c *http.Client, topic, token string) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.URL+"/commons/peers?topic="+topic, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	code, hdr, _ := do(t, c, req)
	return code, hdr
}

// TestPeerListRateLimited: the name-guesser tried 1,484 topic
// hashes in 0.2 s. Listings are counted per client address (a bad topic
// too, and before the token is checked), and per token when one is
// given, and answered 429 with Retry-After beyond the burst; the clock
// stands still, so nothing refills.
func TestPeerListRateLimited(t *testing.T) {
	clock := testutil.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	perClient := Rate{PerMinute: 6, Burst: 4}
	perToken := Rate{PerMinute: 6, Burst: 6}
	ts := newTestServer(t, func(c *ServerConfig) {
		c.Now = clock.Now
		c.RateListPerClient, c.RateListPerToken = perClient, perToken
	})
	a, b, c := fromAddr("127.0.0.1"), fromAddr("127.0.0.2"), fromAddr("127.0.0.3")

	ok, refused := 0, 0
	for i := range 1484 {
		topic := TopicHash(fmt.Sprintf("remem/1/team/guess%d", i))
		if i == 1 {
			topic = "not-a-topic" // counts as well
		}
		code, hdr := ts.listFrom(t, a, topic, "")
		switch code {
		case http.StatusOK, http.StatusBadRequest:
			ok++
		case http.StatusTooManyRequests:
			refused++
			if s, err := strconv.Atoi(hdr.Get("Retry-After")); err != nil || s < 1 {
				t.Fatalf("429 with Retry-After %q", hdr.Get("Retry-After"))
			}
		default:
			t.Fatalf("guess %d: %d", i, code)
		}
	}
	if ok != perClient.Burst || refused != 1484-perClient.Burst {
		t.Errorf("one address: %d answered, %d refused; want %d answered", ok, refused, perClient.Burst)
	}

	// A token is counted wherever it comes from: 4 from b, then 2 from c
	// use the token's 6; c's third is refused though c's address has more.
	for i := range perClient.Burst {
		if code, _ := ts.listFrom(t, b, teamA, testToken); code != 200 {
			t.Fatalf("b's listing %d with the token: %d", i+1, code)
		}
	}
	for i := range 2 {
		if code, _ := ts.listFrom(t, c, teamA, testToken); code != 200 {
			t.Fatalf("c's listing %d with the token: %d", i+1, code)
		}
	}
	if code, _ := ts.listFrom(t, c, teamA, testToken); code != http.StatusTooManyRequests {
		t.Errorf("c's listing past the token's burst: %d, want 429", code)
	}
	if code, _ := ts.listFrom(t, c, teamA, ""); code != 200 {
		t.Errorf("c without the token, its address not spent: %d", code)
	}

	// The client reports the 429 as a StatusError naming the wait.
	cl := &Client{BaseURL: ts.URL, HTTP: a}
	_, err := cl.Peers(context.Background(), teamA)
	var se *StatusError
	if !errors.As(err, &se) || se.Code != http.StatusTooManyRequests {
		t.Errorf("client past the rate: %v", err)
	}
	clock.Add(time.Minute / 6 * time.Duration(perClient.Burst))
	if code, _ := ts.listFrom(t, a, teamA, ""); code != 200 {
		t.Errorf("after the refill: %d", code)
	}
}

// TestDefaultServerConfigLimitsListings: `commons serve` limits listings
// unless told otherwise.
func TestDefaultServerConfigLimitsListings(t *testing.T) {
	c := DefaultServerConfig()
	if c.RateListPerClient != DefaultListClientRate || c.RateListPerToken != DefaultListTokenRate || DefaultListClientRate.unlimited() || DefaultListTokenRate.unlimited() {
		t.Errorf("default listing rates %+v %+v", c.RateListPerClient, c.RateListPerToken)
	}
}
