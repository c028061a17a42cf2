package protocol

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Identity is one memory's Ed25519 key pair.
type Identity struct {
	Private ed25519.PrivateKey
	Public  ed25519.PublicKey
	origin  string
	key     string
}

// NewIdentity derives the identity from a 32-byte Ed25519 seed.
func NewIdentity(seed []byte) (Identity, error) {
	if len(seed) != ed25519.SeedSize {
		return Identity{}, fmt.Errorf("identity seed is %d bytes, want %d", len(seed), ed25519.SeedSize)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	return Identity{Private: priv, Public: pub, origin: Fingerprint(pub), key: hex.EncodeToString(pub)}, nil
}

// GenerateIdentity makes a fresh random identity.
func GenerateIdentity() (Identity, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return Identity{}, fmt.Errorf("generating key: %w", err)
	}
	return NewIdentity(seed)
}

// Seed returns the 32-byte private seed, the form the key file stores.
func (id Identity) Seed() []byte { return id.Private.Seed() }

// Origin is the memory's id: hex of the first 8 bytes of SHA-256(public key).
func (id Identity) Origin() string { return id.origin }

// Key is the lowercase hex of the public key.
func (id Identity) Key() string { return id.key }

// Fingerprint computes the origin of a public key.
func Fingerprint(pub []byte) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// isFingerprint reports whether origin is Fingerprint(pub).
func isFingerprint(pub []byte, origin string) bool {
	sum := sha256.Sum256(pub)
	var h [16]byte
	hex.Encode(h[:], sum[:8])
	return string(h[:]) == origin
}

// ParseOrigin reads an entry of a members or trust list: a 64-hex public
// key (its fingerprint is the origin) or a 16-hex origin, case-insensitive,
// surrounding spaces ignored.
func ParseOrigin(entry string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(entry))
	b, err := hex.DecodeString(e)
	switch {
	case err != nil:
		return "", fmt.Errorf("%q is not hex: want a 64-hex key or a 16-hex origin", entry)
	case len(b) == 32:
		return Fingerprint(b), nil
	case len(b) == 8:
		return e, nil
	default:
		return "", fmt.Errorf("%q has %d hex digits: want a 64-hex key or a 16-hex origin", entry, len(e))
	}
}
