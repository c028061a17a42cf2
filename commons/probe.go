package commons

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// A Probe is what a commons says of itself and of the client's token, as
// `remem doctor` shows it: its info, the skew of the local clock, and
// whether the token reads and would push.
type Probe struct {
	Info WellKnown
	// Skew is the local clock minus the commons' (its answer's Date, to
	// about a second); nil when the answer had no Date.
	Skew *time.Duration
	// Read is the status GET /commons/index answered with the token (or
	// without, when none is set); ReadErr the error when none came.
	Read    int
	ReadErr error
	// Write is the status GET /commons/token answered, which says whether
	// a PUT would take the token, sending no file; 0 when it was not asked
	// (no token, or the index not readable). WriteErr the error when no
	// answer came.
	Write    int
	WriteErr error
}

// Probe reads the commons' info, then its index and whether it takes the
// token for writing. The error is the info's: the commons did not answer,
// or is no remem commons; Skew may be set even then.
func (c *Client) Probe(ctx context.Context) (Probe, error) {
	var p Probe
	sent := time.Now()
	wk, h, err := c.info(ctx)
	if d, derr := http.ParseTime(h.Get("Date")); derr == nil {
		// Date has whole seconds: take its middle against the middle of
		// the round trip.
		mid := sent.Add(time.Since(sent) / 2)
		s := mid.Sub(d.Add(500 * time.Millisecond))
		p.Skew = &s
	}
	if err != nil {
		return p, err
	}
	p.Info = wk
	p.Read, p.ReadErr = c.statusOf(ctx, "/commons/index")
	if p.Read == http.StatusOK && c.Token != "" {
		p.Write, p.WriteErr = c.statusOf(ctx, "/commons/token")
	}
	return p, nil
}

// statusOf GETs path and returns the status of the answer, whose body is
// not read.
func (c *Client) statusOf(ctx context.Context, path string) (int, error) {
	rctx, cancel := c.requestContext(ctx)
	defer cancel()
	req, err := c.newRequest(rctx, http.MethodGet, path, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", path, c.explain(ctx, rctx, err))
	}
	_ = resp.Body.Close() // the status is the answer
	return resp.StatusCode, nil
}
