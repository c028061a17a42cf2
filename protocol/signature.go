package protocol

import (
	voi "github.com/oasisprotocol/curve25519-voi/primitives/ed25519"
)

// stdlibRules are the standard library's Ed25519 verification rules, as
// curve25519-voi names them: the cofactorless equation, S below the group
// order, R compared as canonical bytes, and every public key that decodes
// to a curve point accepted (small-order and non-canonical ones too).
var stdlibRules = &voi.Options{Verify: voi.VerifyOptionsStdLib}

// verifySignature reports whether sig is pub's Ed25519 signature of msg,
// with exactly crypto/ed25519.Verify's verdict for every input (SPEC §5
// step 5 names no other rule set, and a node must agree with every other
// implementation on which lines are signed). It runs on curve25519-voi,
// whose vectorised field arithmetic takes about 0.8 of the standard
// library's time: signature checks are most of what receiving costs.
// TestSignatureVerdictsMatchTheStandardLibrary and
// FuzzSignatureVerdictsMatchTheStandardLibrary hold it to the standard
// library on the edge cases where Ed25519 implementations differ.
func verifySignature(pub, msg, sig []byte) bool {
	if len(pub) != voi.PublicKeySize {
		return false
	}
	return voi.VerifyWithOptions(voi.PublicKey(pub), msg, sig, stdlibRules)
}
