package protocol

import (
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"testing"

	"filippo.io/edwards25519"
)

// smallOrderEncodings are the canonical encodings of the eight points of
// order dividing 8, and of the "negative zero" forms two of them also
// decode from (sign bit set on x = 0).
var smallOrderEncodings = []string{
	"0100000000000000000000000000000000000000000000000000000000000000", // identity
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // order 2
	"0000000000000000000000000000000000000000000000000000000000000000", // order 4
	"0000000000000000000000000000000000000000000000000000000000000080", // order 4
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", // order 8
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85", // order 8
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", // order 8
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa", // order 8
	"0100000000000000000000000000000000000000000000000000000000000080", // identity, -0
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", // order 2, -0
}

// nonCanonicalEncodings are the encodings with y at or above the field
// prime p = 2^255 - 19, both signs: those whose y - p is a curve point
// decode (non-canonically), the rest do not.
func nonCanonicalEncodings() [][]byte {
	var out [][]byte
	for k := 0; k < 19; k++ {
		for _, sign := range []byte{0, 0x80} {
			e := make([]byte, 32)
			for i := range e {
				e[i] = 0xff
			}
			e[0] = byte(0xed + k) // p + k, k < 19, never carries
			e[31] = 0x7f | sign
			out = append(out, e)
		}
	}
	return out
}

// groupOrder is L, the order of the prime subgroup, little-endian.
var groupOrder = mustHex("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// addLE returns a + b on 32-byte little-endian numbers, modulo 2^256.
func addLE(a, b []byte) []byte {
	out := make([]byte, 32)
	carry := 0
	for i := range out {
		v := int(a[i]) + int(b[i]) + carry
		out[i], carry = byte(v), v>>8
	}
	return out
}

// scalarOf reduces a SHA-512 digest of parts modulo L.
func scalarOf(parts ...[]byte) *edwards25519.Scalar {
	h := sha512.New()
	for _, p := range parts {
		h.Write(p)
	}
	s, err := edwards25519.NewScalar().SetUniformBytes(h.Sum(nil))
	if err != nil {
		panic(err)
	}
	return s
}

// signatureCase is one (key, message, signature) input to both verifiers.
type signatureCase struct {
	name          string
	pub, msg, sig []byte
}

// torsionCases signs with a key or nonce point that carries a small-order
// component: the inputs on which cofactored and cofactorless Ed25519
// verifiers disagree. The secret scalar a and nonce r are known, so both
// verdicts occur: valid by the cofactorless equation only when the
// challenge k kills the torsion ([k]T = 0), and valid by the cofactored
// one always.
func torsionCases(t testing.TB) []signatureCase {
	a := scalarOf([]byte("secret"))
	A := edwards25519.NewIdentityPoint().ScalarBaseMult(a)
	var out []signatureCase
	for ti, enc := range smallOrderEncodings[:8] {
		T, err := edwards25519.NewIdentityPoint().SetBytes(mustHex(enc))
		if err != nil {
			t.Fatal(err)
		}
		mixedA := edwards25519.NewIdentityPoint().Add(A, T).Bytes()
		for m := 0; m < 24; m++ {
			msg := []byte(fmt.Sprintf("torsion %d message %d", ti, m))
			r := scalarOf([]byte("nonce"), msg)
			R := edwards25519.NewIdentityPoint().ScalarBaseMult(r)
			// Mixed-order key: S = r + k·a with k = H(R || A+T || msg).
			k := scalarOf(R.Bytes(), mixedA, msg)
			S := edwards25519.NewScalar().MultiplyAdd(k, a, r)
			out = append(out, signatureCase{fmt.Sprintf("mixed-order key T%d m%d", ti, m), mixedA, msg, append(R.Bytes(), S.Bytes()...)})
			// Mixed-order nonce point: R+T with the honest key.
			mixedR := edwards25519.NewIdentityPoint().Add(R, T).Bytes()
			k = scalarOf(mixedR, A.Bytes(), msg)
			S = edwards25519.NewScalar().MultiplyAdd(k, a, r)
			out = append(out, signatureCase{fmt.Sprintf("mixed-order nonce T%d m%d", ti, m), A.Bytes(), msg, append(mixedR, S.Bytes()...)})
		}
	}
	return out
}

// encodingCases combine odd encodings of the key and of R with S = 0, an
// honest S, S + L and L: among them the signatures a small-order key makes
// for any message, and keys that decode only non-canonically.
func encodingCases(t testing.TB) []signatureCase {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("the build fails when the cache volume is full")
	honest := ed25519.Sign(priv, msg)
	keys := [][]byte{pub}
	for _, e := range smallOrderEncodings {
		keys = append(keys, mustHex(e))
	}
	keys = append(keys, nonCanonicalEncodings()...)
	Rs := append([][]byte{honest[:32]}, keys[1:]...)
	zero := make([]byte, 32)
	Ss := [][]byte{zero, honest[32:], addLE(honest[32:], groupOrder), groupOrder}
	var out []signatureCase
	for ki, k := range keys {
		for ri, R := range Rs {
			for si, S := range Ss {
				sig := append(append([]byte{}, R...), S...)
				out = append(out, signatureCase{fmt.Sprintf("key %d R %d S %d", ki, ri, si), k, msg, sig})
			}
		}
	}
	return out
}

// TestSignatureVerdictsMatchTheStandardLibrary checks that verifySignature
// gives crypto/ed25519.Verify's verdict on honest signatures, on every bit
// flipped in them, and on the inputs where Ed25519 implementations are
// known to differ (small-order and mixed-order points, non-canonical
// encodings, S at or above the group order), with both verdicts occurring.
func TestSignatureVerdictsMatchTheStandardLibrary(t *testing.T) {
	cases := append(torsionCases(t), encodingCases(t)...)
	pub, priv, _ := ed25519.GenerateKey(nil)
	msg := []byte("a lesson line")
	sig := ed25519.Sign(priv, msg)
	cases = append(cases, signatureCase{"honest", pub, msg, sig})
	for bit := 0; bit < 8*(len(pub)+len(sig)); bit++ {
		p, s := append([]byte{}, pub...), append([]byte{}, sig...)
		if bit < 8*len(p) {
			p[bit/8] ^= 1 << (bit % 8)
		} else {
			s[(bit-8*len(p))/8] ^= 1 << (bit % 8)
		}
		cases = append(cases, signatureCase{fmt.Sprintf("bit %d flipped", bit), p, msg, s})
	}
	valid := map[string]int{}
	for _, c := range cases {
		want := ed25519.Verify(c.pub, c.msg, c.sig)
		if got := verifySignature(c.pub, c.msg, c.sig); got != want {
			t.Errorf("%s: verifySignature says %v, crypto/ed25519 %v (pub %x sig %x)", c.name, got, want, c.pub, c.sig)
		}
		if want {
			valid[c.name[:min(len(c.name), 14)]]++
		}
	}
	// The edge cases must exercise both verdicts, or the test proves little.
	for _, kind := range []string{"mixed-order ke", "key 1 R 1 S 0", "honest"} {
		if valid[kind] == 0 {
			t.Errorf("no %q case is valid by crypto/ed25519: the cases no longer reach the edge (%v)", kind, valid)
		}
	}
	t.Logf("%d cases, %d valid by crypto/ed25519", len(cases), sumValues(valid))
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// FuzzSignatureVerdictsMatchTheStandardLibrary feeds arbitrary keys,
// messages and signatures, seeded with the edge cases, to both verifiers.
func FuzzSignatureVerdictsMatchTheStandardLibrary(f *testing.F) {
	for _, c := range append(torsionCases(f)[:16], encodingCases(f)[:64]...) {
		f.Add(c.pub, c.msg, c.sig)
	}
	f.Fuzz(func(t *testing.T, pub, msg, sig []byte) {
		if len(pub) != ed25519.PublicKeySize {
			return // crypto/ed25519 panics; Verify always passes 32 bytes
		}
		if got, want := verifySignature(pub, msg, sig), ed25519.Verify(pub, msg, sig); got != want {
			t.Fatalf("verifySignature says %v, crypto/ed25519 %v (pub %x msg %x sig %x)", got, want, pub, msg, sig)
		}
	})
}
