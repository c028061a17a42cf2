package commons

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// Probe reports the statuses a doctor reads: the index and the token's
// write check with the right token, with a wrong one, and with none on a
// commons that needs one to read; and the skew of this machine's clock.
func TestProbe(t *testing.T) {
	ts := newTestServer(t, func(c *ServerConfig) { c.ReadNeedsToken = true })
	ctx := context.Background()
	for _, c := range []struct {
		name        string
		token       string
		read, write int
	}{
		{"the right token", testToken, http.StatusOK, http.StatusNoContent},
		{"a wrong token", "wrong", http.StatusUnauthorized, 0},
		{"no token", "", http.StatusUnauthorized, 0},
	} {
		p, err := ts.client(c.token).Probe(ctx)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.Read != c.read || p.Write != c.write || p.ReadErr != nil || p.WriteErr != nil {
			t.Errorf("%s: read %d (%v), write %d (%v); want %d, %d", c.name, p.Read, p.ReadErr, p.Write, p.WriteErr, c.read, c.write)
		}
		if !p.Info.GetNeedsToken || p.Info.Protocol == 0 {
			t.Errorf("%s: info %+v", c.name, p.Info)
		}
		if p.Skew == nil || p.Skew.Abs() > 2*time.Second {
			t.Errorf("%s: skew %v against a server on this machine", c.name, p.Skew)
		}
	}
	ts.stop()
	if _, err := ts.client(testToken).Probe(ctx); err == nil {
		t.Error("a stopped commons answered a probe")
	}
}
