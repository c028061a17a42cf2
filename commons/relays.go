package commons

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/libp2p/go-libp2p/core/peer"
)

// Relays: a commons may run a libp2p host beside it (`remem commons serve
// --p2p`) that offers a circuit relay v2 and AutoNAT; its info document
// lists the host's addresses under "p2p", and nodes behind NAT reserve a
// relay slot there. A relay sees who talks to whom, never what (the
// relayed connection is encrypted end to end), so a commons that lists a
// hostile relay costs a node a useless reservation, nothing more.

// maxInfoBytes bounds the info document a client reads.
const maxInfoBytes = 64 << 10

// MaxRelayAddrs bounds the relay addresses a client takes from one commons.
const MaxRelayAddrs = 16

// RelayList is what Relays found.
type RelayList struct {
	Relays   []peer.AddrInfo // one per peer, in the document's order
	Problems []string        // addresses not taken, and why
}

// Relays reads the commons' info document (GET /.well-known/remem) and
// returns the relays of its "p2p" list: full multiaddrs with /p2p/<id>.
// A bad address is skipped and said in Problems; an unreachable commons
// or a document that is not one is an error.
func (c *Client) Relays(ctx context.Context) (RelayList, error) {
	wk, err := c.Info(ctx)
	if err != nil {
		return RelayList{}, err
	}
	return parseRelayList(wk.P2P), nil
}

// Info reads the commons' info document (GET /.well-known/remem).
func (c *Client) Info(ctx context.Context) (WellKnown, error) {
	wk, _, err := c.info(ctx)
	return wk, err
}

// info is Info and the answer's header.
func (c *Client) info(ctx context.Context) (WellKnown, http.Header, error) {
	data, h, err := c.getSmall(ctx, "/.well-known/remem", maxInfoBytes, "the info document")
	if err != nil {
		return WellKnown{}, h, err
	}
	var wk WellKnown
	if err := json.Unmarshal(data, &wk); err != nil || wk.Protocol == 0 {
		return WellKnown{}, h, fmt.Errorf("%s/.well-known/remem is not a remem commons' info document (%v)", c.base(), err)
	}
	return wk, h, nil
}

// getSmall GETs path and reads its body of at most max bytes; what names
// the document in errors. Anything but 200 is the server's error. The
// answer's header comes with the error too, once there was an answer.
func (c *Client) getSmall(ctx context.Context, path string, max int, what string) ([]byte, http.Header, error) {
	rctx, cancel := c.requestContext(ctx)
	defer cancel()
	req, err := c.newRequest(rctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s of the commons at %s: %w", what, c.base(), c.explain(ctx, rctx, err))
	}
	defer func() { _ = resp.Body.Close() }() // a read body: its close says nothing
	if resp.StatusCode != http.StatusOK {
		return nil, resp.Header, c.statusError(resp)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(max)+1))
	if err != nil {
		return nil, resp.Header, fmt.Errorf("reading %s of the commons at %s: %w", what, c.base(), c.explain(ctx, rctx, err))
	}
	if len(data) > max {
		return nil, resp.Header, fmt.Errorf("%s of the commons at %s is over %d bytes: the commons is broken or hostile", what, c.base(), max)
	}
	return data, resp.Header, nil
}

// parseRelayList keeps the valid, distinct addresses of list, at most
// MaxRelayAddrs, merged per peer.
func parseRelayList(list []string) RelayList {
	var l RelayList
	byID := map[peer.ID]int{}
	for i, s := range list {
		if i == MaxRelayAddrs {
			l.Problems = append(l.Problems, fmt.Sprintf("%d more addresses not read (at most %d)", len(list)-i, MaxRelayAddrs))
			break
		}
		ai, err := peer.AddrInfoFromString(s)
		if err != nil {
			l.Problems = append(l.Problems, fmt.Sprintf("%.100q: %v", s, err))
			continue
		}
		if k, ok := byID[ai.ID]; ok {
			l.Relays[k].Addrs = append(l.Relays[k].Addrs, ai.Addrs...)
			continue
		}
		byID[ai.ID] = len(l.Relays)
		l.Relays = append(l.Relays, *ai)
	}
	return l
}
