// Package forge signs record lines the way an attacker would: canonical
// and validly signed, but checked for nothing, so it signs what
// protocol.SignLesson refuses (instructions, raw data, bad times) and
// breaks signatures on purpose. The testnet's offenders and the hostile
// transport suite use it; no honest path does.
package forge

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"maps"
	"slices"

	"github.com/remem/remem/protocol"
)

// Sign signs a record from its members (name → canonical JSON value) the
// way protocol does: canonical bytes without sig, Ed25519, then sig in its
// sorted place.
func Sign(id protocol.Identity, members map[string]string) []byte {
	sig := ed25519.Sign(id.Private, encode(members))
	signed := maps.Clone(members)
	signed["sig"] = protocol.EncodeString(hex.EncodeToString(sig))
	return encode(signed)
}

func encode(members map[string]string) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(members)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(protocol.EncodeString(k))
		b.WriteByte(':')
		b.WriteString(members[k])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Lesson signs an error lesson of id with any text, updated as written
// (normally protocol.FormatTime of a time; anything else to test times).
func Lesson(id protocol.Identity, text, updated string) []byte {
	return Sign(id, LessonMembers(id, text, updated))
}

// LessonMembers are the members of Lesson's line, each as JSON, for a
// caller that changes some (another v, seen or member) before Sign.
func LessonMembers(id protocol.Identity, text, updated string) map[string]string {
	return map[string]string{
		"v":        "1",
		"hash":     protocol.EncodeString(protocol.LessonHash(protocol.KindError, text)),
		"origin":   protocol.EncodeString(id.Origin()),
		"key":      protocol.EncodeString(id.Key()),
		"kind":     protocol.EncodeString(protocol.KindError),
		"text":     protocol.EncodeString(text),
		"seen":     "1",
		"strength": protocol.EncodeFloat(0.5),
		"updated":  protocol.EncodeString(updated),
	}
}

// BadSignature returns a copy of line with one hex digit of its signature
// changed.
func BadSignature(line []byte) []byte {
	out := bytes.Clone(line)
	i := bytes.Index(out, []byte(`"sig":"`)) + len(`"sig":"`)
	if out[i] == '0' {
		out[i] = '1'
	} else {
		out[i] = '0'
	}
	return out
}
