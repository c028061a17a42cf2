//go:build !remem_mdns

package gossip

import (
	"context"
	"errors"
)

func (n *Node) startMDNS(ctx context.Context, run *tracker) (func(), error) {
	return nil, errors.New("this build has no mDNS")
}
