package gossip

import (
	"fmt"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/protocol"
)

// PeerIDOf is the libp2p peer id a memory's node has: the id of its
// Ed25519 key, so others can bootstrap to it before it runs.
func PeerIDOf(id protocol.Identity) (peer.ID, error) {
	pub, err := crypto.UnmarshalEd25519PublicKey(id.Public)
	if err != nil {
		return "", fmt.Errorf("reading the memory's key: %w", err)
	}
	return peer.IDFromPublicKey(pub)
}
