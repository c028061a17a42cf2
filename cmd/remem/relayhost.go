package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/remem/remem/gossip"
)

// startRelayHost starts the libp2p host of `remem commons serve --p2p`
// with the key in keyFile (made when missing: the relay's peer id must
// outlive a restart, or the nodes' relayed addresses go stale); its relay
// carries the peers serves names without limits.
func startRelayHost(keyFile string, listen []string, serves func(peer.ID) bool, logger *slog.Logger) (host.Host, error) {
	key, err := relayKey(keyFile)
	if err != nil {
		return nil, err
	}
	h, err := gossip.NewRelayHost(gossip.RelayHostConfig{Key: key, Listen: listen, Serves: serves, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("--p2p: %w", err)
	}
	return h, nil
}

// relayKey reads the host key in path, or makes one there (mode 0600).
func relayKey(path string) (crypto.PrivKey, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		key, err := crypto.UnmarshalPrivateKey(data)
		if err != nil {
			return nil, fmt.Errorf("--p2p-key %s is not a libp2p private key (%v): move it away and a new one is made", path, err)
		}
		return key, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--p2p-key: %w", err)
	}
	key, _, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		return nil, fmt.Errorf("--p2p-key: making a key: %w", err)
	}
	data, err = crypto.MarshalPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("--p2p-key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("--p2p-key: %w", err)
	}
	// Written whole to a temporary file, then linked into place: a crash
	// leaves no half key, and of two commons starting on one directory
	// the second takes the first one's key.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".p2p-key-*")
	if err != nil {
		return nil, fmt.Errorf("--p2p-key: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // linked or not, the temporary name goes
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("--p2p-key: writing %s: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return relayKey(path)
		}
		return nil, fmt.Errorf("--p2p-key: %w", err)
	}
	return key, nil
}
