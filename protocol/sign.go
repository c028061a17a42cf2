package protocol

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/remem/remem/protocol/textcheck"
	"strconv"
	"time"
	"unicode/utf8"
)

// LessonDraft is a lesson before it is signed.
type LessonDraft struct {
	Kind     string
	Text     string
	Seen     int64
	Strength float64
	Updated  time.Time
	ID       string
	Parents  []string
}

// RawDataError says a text holds raw data and so may not be signed.
type RawDataError struct{ Findings []RawFinding }

func (e *RawDataError) Error() string {
	f := e.Findings[0]
	return fmt.Sprintf("the text holds raw data (%s %q); lessons never carry paths, addresses, URLs with credentials or secrets", f.Kind, f.Match)
}

// CheckLessonText runs every write-time check on a lesson sentence: length,
// encoding, observation, raw data.
func CheckLessonText(text string) error {
	if !utf8.ValidString(text) {
		return fmt.Errorf("the text is not valid UTF-8")
	}
	if Norm(text) == "" || !textcheck.HasWords(text) {
		return fmt.Errorf("the text is empty: it holds no letter or digit")
	}
	if n := utf8.RuneCountInString(text); n > MaxTextChars {
		return fmt.Errorf("the text has %d characters, the limit is %d", n, MaxTextChars)
	}
	return CheckAgentText(text)
}

// SignLesson checks the draft as every receiver will, and for raw data,
// then signs it.
func SignLesson(id Identity, d LessonDraft) (*Record, error) { return signLesson(id, d, true) }

func signLesson(id Identity, d LessonDraft, rawCheck bool) (*Record, error) {
	if !ValidKind(d.Kind) {
		return nil, fmt.Errorf("kind %q is not a lesson kind (error, correction, surprise)", d.Kind)
	}
	if err := CheckLessonText(d.Text); err != nil {
		var raw *RawDataError
		if rawCheck || !errors.As(err, &raw) {
			return nil, err
		}
	}
	if d.Seen < 0 {
		return nil, fmt.Errorf("seen %d is negative", d.Seen)
	}
	if !(d.Strength >= 0 && d.Strength <= 1) {
		return nil, fmt.Errorf("strength %v is outside [0, 1]", d.Strength)
	}
	if !utf8.ValidString(d.ID) {
		return nil, fmt.Errorf("the id is not valid UTF-8")
	}
	for _, p := range d.Parents {
		if !isLowerHex(p, 32) {
			return nil, fmt.Errorf("parent %q is not a lesson hash", p)
		}
	}
	rec, ms := lessonMembers(id, d)
	return rec, seal(id, rec, ms)
}

// lessonMembers returns the record and the members a checked draft signs.
func lessonMembers(id Identity, d LessonDraft) (*Record, []member) {
	hash := LessonHash(d.Kind, d.Text)
	updated := d.Updated.UTC().Truncate(time.Second)
	ms := []member{
		{"v", "1"},
		{"hash", EncodeString(hash)},
		{"origin", EncodeString(id.Origin())},
		{"key", EncodeString(id.Key())},
		{"kind", EncodeString(d.Kind)},
		{"text", EncodeString(d.Text)},
		{"seen", strconv.FormatInt(d.Seen, 10)},
		{"strength", EncodeFloat(d.Strength)},
		{"updated", EncodeString(FormatTime(updated))},
	}
	if d.ID != "" {
		ms = append(ms, member{"id", EncodeString(d.ID)})
	}
	if len(d.Parents) > 0 {
		ms = append(ms, member{"parents", encodeStrings(d.Parents)})
	}
	rec := &Record{
		Type: TypeLesson, Origin: id.Origin(), Key: id.Key(), Hash: hash, Time: updated,
		Kind: d.Kind, Text: d.Text, Seen: d.Seen, Strength: d.Strength, ID: d.ID, Parents: d.Parents,
	}
	return rec, ms
}

// SignConfirmation signs "lesson hash came true here" at time at.
func SignConfirmation(id Identity, hash string, at time.Time) (*Record, error) {
	return signVerdict(id, TypeConfirmation, hash, at, "")
}

// SignRevocation signs the withdrawal of lesson hash at time at.
func SignRevocation(id Identity, hash string, at time.Time, reason string) (*Record, error) {
	return signVerdict(id, TypeRevocation, hash, at, reason)
}

func signVerdict(id Identity, t Type, hash string, at time.Time, reason string) (*Record, error) {
	if !isLowerHex(hash, 32) {
		return nil, fmt.Errorf("%q is not a lesson hash (32 lowercase hex characters)", hash)
	}
	if !utf8.ValidString(reason) {
		return nil, fmt.Errorf("the reason is not valid UTF-8")
	}
	if reason != "" {
		// Receivers show the reason to agents, so it passes the same checks
		// as a lesson text (SPEC §5 step 6).
		if err := CheckAgentText(reason); err != nil {
			return nil, fmt.Errorf("the reason: %w", err)
		}
	}
	at = at.UTC().Truncate(time.Second)
	name := "confirm"
	if t == TypeRevocation {
		name = "revoke"
	}
	ms := []member{
		{"v", "1"},
		{name, EncodeString(hash)},
		{"origin", EncodeString(id.Origin())},
		{"key", EncodeString(id.Key())},
		{"at", EncodeString(FormatTime(at))},
	}
	if reason != "" {
		ms = append(ms, member{"reason", EncodeString(reason)})
	}
	rec := &Record{Type: t, Origin: id.Origin(), Key: id.Key(), Hash: hash, Time: at, Reason: reason}
	return rec, seal(id, rec, ms)
}

// seal signs the canonical bytes of ms and stores the line with sig in place.
func seal(id Identity, rec *Record, ms []member) error {
	if len(id.Private) != ed25519.PrivateKeySize {
		return fmt.Errorf("the identity has no private key")
	}
	unsigned := encodeObject(ms)
	sig := ed25519.Sign(id.Private, unsigned)
	rec.Raw = encodeObject(append(ms, member{"sig", `"` + hex.EncodeToString(sig) + `"`}))
	if len(rec.Raw) > MaxLineBytes {
		return fmt.Errorf("the signed record is %d bytes, the limit is %d", len(rec.Raw), MaxLineBytes)
	}
	return nil
}
