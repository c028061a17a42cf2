package protocol

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/remem/remem/protocol/textcheck"
)

// Reason names why a line was refused. The strings are stable: they are
// counted in metrics and printed by `remem verify --json`.
type Reason string

const (
	ReasonTooLarge       Reason = "too large"
	ReasonUTF8           Reason = "utf-8"
	ReasonJSON           Reason = "json"
	ReasonNotObject      Reason = "not an object"
	ReasonDuplicateKey   Reason = "duplicate key"
	ReasonUnknownVersion Reason = "unknown version"
	ReasonType           Reason = "type"
	ReasonMissingField   Reason = "missing field"
	ReasonFieldType      Reason = "field type"
	ReasonHex            Reason = "hex"
	ReasonOrigin         Reason = "origin"
	ReasonSignature      Reason = "signature"
	ReasonHash           Reason = "hash"
	ReasonKind           Reason = "kind"
	ReasonTextTooLong    Reason = "text too long"
	ReasonInstruction    Reason = "instruction"
	ReasonEmptyText      Reason = "empty text"
	ReasonRawData        Reason = "raw data"
	ReasonControl        Reason = "control character"
	ReasonLanguage       Reason = "unsupported language"
	ReasonSeen           Reason = "seen"
	ReasonStrength       Reason = "strength"
	ReasonTimestamp      Reason = "timestamp"
	ReasonFuture         Reason = "future timestamp"
)

// Limits of SPEC §12 that the verifier enforces.
const (
	MaxLineBytes  = 8 << 10
	MaxTextChars  = 1000
	MaxClockSkew  = 10 * time.Minute
	MaxOriginRecs = 1000
	MaxOriginFile = 256 << 10
	MaxGossipMsg  = 1 << 20
)

// Refusal is why a line was not accepted. A refusal with
// ReasonUnknownVersion is a skip, not an error of the sender.
type Refusal struct {
	Reason Reason
	Field  string // the member at fault, when there is one
	Detail string
}

func (r *Refusal) Error() string {
	msg := string(r.Reason)
	if r.Field != "" {
		msg += " (" + r.Field + ")"
	}
	if r.Detail != "" {
		msg += ": " + r.Detail
	}
	return msg
}

// Verdict is the outcome of verifying one line.
type Verdict string

const (
	Accept Verdict = "accept"
	Reject Verdict = "reject"
	Skip   Verdict = "skip"
)

// VerdictOf maps Verify's error to a verdict.
func VerdictOf(err error) Verdict {
	if err == nil {
		return Accept
	}
	var r *Refusal
	if errors.As(err, &r) && r.Reason == ReasonUnknownVersion {
		return Skip
	}
	return Reject
}

// ReasonOf returns the refusal reason of err, or "" when err is nil.
func ReasonOf(err error) Reason {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Reason
	}
	if err != nil {
		return ReasonJSON
	}
	return ""
}

func refuse(reason Reason, field, format string, args ...any) *Refusal {
	return &Refusal{Reason: reason, Field: field, Detail: fmt.Sprintf(format, args...)}
}

// Verify checks one received line by SPEC §5 "Verifying", every step in
// order, and returns the parsed record. It never re-serialises: the
// signature is checked over the received bytes with `sig` cut out. now is
// the receiver's clock, for the future-timestamp check. The returned
// record's Raw aliases line.
func Verify(line []byte, now time.Time) (*Record, error) {
	var arr [20]topMember
	rec, f, err := parse(line, arr[:0])
	if err != nil {
		return nil, err
	}

	// Step 4: origin is the key's fingerprint.
	var pub [ed25519.PublicKeySize]byte
	if !decodeLowerHex(pub[:], rec.Key) { // cannot happen after the hex check
		return nil, refuse(ReasonHex, "key", "%q must be %d lowercase hex characters", "key", 2*len(pub))
	}
	if !isFingerprint(pub[:], rec.Origin) {
		return nil, refuse(ReasonOrigin, "origin", "origin %s is not the fingerprint of key %s…", rec.Origin, rec.Key[:16])
	}

	// Step 5: signature over the line with the top-level sig cut out.
	sigMember, _ := f.get("sig")
	var sig [ed25519.SignatureSize]byte
	if _, err := hex.Decode(sig[:], line[sigMember.valueStart+1:sigMember.valueEnd-1]); err != nil {
		return nil, refuse(ReasonHex, "sig", "%v", err)
	}
	var buf [1 << 10]byte // most lines fit
	signed := cutMember(buf[:0], line, f.members, sigMember)
	if !verifySignature(pub[:], signed, sig[:]) {
		return nil, refuse(ReasonSignature, "sig", "the signature does not match the key and the line")
	}

	// Step 6: lesson content, and the free text of a revocation.
	switch {
	case rec.Type == TypeLesson:
		if err := checkLesson(rec); err != nil {
			return nil, err
		}
	case rec.Type == TypeRevocation && rec.Reason != "":
		if err := checkText("reason", rec.Reason); err != nil {
			return nil, err
		}
	}

	// Step 7: no timestamps from the future.
	if rec.Time.After(now.Add(MaxClockSkew)) {
		field := "at"
		if rec.Type == TypeLesson {
			field = "updated"
		}
		return nil, refuse(ReasonFuture, field, "%s is more than %v ahead of this clock (%s)", FormatTime(rec.Time), MaxClockSkew, FormatTime(now))
	}
	return rec, nil
}

// Decode parses a line that was verified before (a stored record) without
// checking its signature again: steps 1 to 3 of Verify only.
func Decode(line []byte) (*Record, error) {
	rec, _, err := parse(line, nil)
	return rec, err
}

// parse runs steps 1 to 3: size, encoding, JSON, version, type and fields.
func parse(line []byte, members []topMember) (*Record, fields, error) {
	if len(line) > MaxLineBytes {
		return nil, fields{}, refuse(ReasonTooLarge, "", "line is %d bytes, the limit is %d", len(line), MaxLineBytes)
	}
	if !utf8.Valid(line) {
		return nil, fields{}, refuse(ReasonUTF8, "", "line is not valid UTF-8")
	}
	s := scanner{data: line}
	members = s.scanTop(members)
	if s.err != nil {
		return nil, fields{}, &Refusal{Reason: s.err.reason, Detail: s.err.detail}
	}
	f := fields{line: line, members: members}
	v, ok := f.get("v")
	if !ok {
		return nil, f, refuse(ReasonMissingField, "v", "the record has no version")
	}
	if !isNumber(line[v.valueStart]) {
		return nil, f, refuse(ReasonFieldType, "v", "version must be a number")
	}
	if !isVersion1(line[v.valueStart:v.valueEnd]) {
		return nil, f, refuse(ReasonUnknownVersion, "v", "version %s is not 1", clip(line[v.valueStart:v.valueEnd]))
	}
	rec := &Record{Raw: line}
	if err := f.readType(rec); err != nil {
		return nil, f, err
	}
	return rec, f, nil
}

func checkLesson(rec *Record) error {
	if !ValidKind(rec.Kind) {
		return refuse(ReasonKind, "kind", "%q is not a lesson kind (error, correction, surprise)", rec.Kind)
	}
	norm := Norm(rec.Text)
	if h := lessonHashOfNorm(rec.Kind, norm); string(h[:]) != rec.Hash {
		return refuse(ReasonHash, "hash", "hash %s does not match kind and text (%s)", rec.Hash, string(h[:]))
	}
	if n := utf8.RuneCountInString(rec.Text); n > MaxTextChars {
		return refuse(ReasonTextTooLong, "text", "text has %d characters, the limit is %d", n, MaxTextChars)
	}
	if norm == "" || !textcheck.HasWords(rec.Text) {
		return refuse(ReasonEmptyText, "text", "the text holds no word")
	}
	if err := checkText("text", rec.Text); err != nil {
		return err
	}
	if rec.Seen < 0 {
		return refuse(ReasonSeen, "seen", "seen is negative, it must be a non-negative integer")
	}
	if !(rec.Strength >= 0 && rec.Strength <= 1) {
		return refuse(ReasonStrength, "strength", "strength %v is outside [0, 1]", rec.Strength)
	}
	return nil
}

// isVersion1 reports whether the JSON number num is 1, as a Python
// verifier's `v == 1` reads it (README, "Choices where the SPEC is
// silent"): an integer is 1 only as "1"; a number with a fraction or an
// exponent is a float, 1 when it reads as the binary64 1.0 ("1.0", "1e0").
// The signature covers the bytes as sent, so a line signed with 1.0
// verifies as such.
func isVersion1(num []byte) bool {
	if string(num) == "1" {
		return true
	}
	if !bytes.ContainsAny(num, ".eE") {
		return false
	}
	f, err := strconv.ParseFloat(string(num), 64)
	return err == nil && f == 1
}

// MaxSeenDigits is the longest `seen` taken: CPython's json refuses an
// integer of more digits (sys.int_info.default_max_str_digits), so a
// Python verifier refuses such a line too.
const MaxSeenDigits = 4300

// parseSeen reads `seen`, a non-negative JSON integer of any size up to
// MaxSeenDigits digits (README, "Choices where the SPEC is silent"). The
// line keeps its exact digits and nothing computes with a received seen,
// so one beyond int64 is returned as math.MaxInt64 (a negative one as
// math.MinInt64, which step 6 refuses). A fraction or an exponent makes a
// float, not an integer, as in Python; "-0" is 0.
func parseSeen(num []byte) (int64, error) {
	digits := num
	if digits[0] == '-' {
		digits = digits[1:]
	}
	switch {
	case bytes.ContainsAny(num, ".eE"):
		return 0, refuse(ReasonSeen, "seen", "seen must be a non-negative integer, got %s", clip(num))
	case len(digits) > MaxSeenDigits:
		return 0, refuse(ReasonSeen, "seen", "seen has %d digits, the most a verifier reads is %d", len(digits), MaxSeenDigits)
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	switch {
	case err == nil:
		return n, nil
	case num[0] == '-': // past int64, and negative: step 6 refuses it
		return math.MinInt64, nil
	}
	return math.MaxInt64, nil // past int64
}

// clip cuts a member's value for an error message.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// checkText runs the observation and raw-data checks (SPEC §6) on a text an
// agent may read.
func checkText(field, text string) error {
	v := textcheck.CheckText(text)
	switch {
	case v.Unreadable != nil && v.Unreadable.Rule == textcheck.RuleControl:
		return refuse(ReasonControl, field, "%v", v.Unreadable)
	case v.Unreadable != nil:
		return refuse(ReasonLanguage, field, "%v", v.Unreadable)
	case v.Instruction != nil:
		return refuse(ReasonInstruction, field, "%v", v.Instruction)
	case len(v.Raw) > 0:
		return refuse(ReasonRawData, field, "%s", (&RawDataError{Findings: v.Raw}).Error())
	}
	return nil
}

// cutMember appends to dst line without member m and one adjacent comma:
// the one before it, or the one after it when m is the first member.
func cutMember(dst, line []byte, members []topMember, m topMember) []byte {
	start, end := m.start, m.valueEnd
	if members[0].start == m.start {
		i := end
		for i < len(line) && line[i] != ',' && line[i] != '}' {
			i++
		}
		if i < len(line) && line[i] == ',' {
			end = i + 1
		}
	} else {
		i := start - 1
		for i > 0 && line[i] != ',' {
			i--
		}
		start = i
	}
	out := slices.Grow(dst, len(line)-(end-start))
	out = append(out, line[:start]...)
	return append(out, line[end:]...)
}

// fields reads typed values out of the scanned top-level members.
type fields struct {
	line    []byte
	members []topMember
}

func (f fields) get(name string) (topMember, bool) {
	for _, m := range f.members {
		if m.name == name {
			return m, true
		}
	}
	return topMember{}, false
}

func (f fields) has(name string) bool { _, ok := f.get(name); return ok }

func (f fields) str(name string, required bool) (string, bool, error) {
	m, ok := f.get(name)
	if !ok {
		if required {
			return "", false, refuse(ReasonMissingField, name, "the record has no %q", name)
		}
		return "", false, nil
	}
	if f.line[m.valueStart] != '"' {
		return "", false, refuse(ReasonFieldType, name, "%q must be a string", name)
	}
	raw := f.line[m.valueStart+1 : m.valueEnd-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), true, nil
	}
	s := scanner{data: f.line, pos: m.valueStart}
	v, _ := s.str() // already validated by the scan
	return v, true, nil
}

func (f fields) hex(name string, n int, required bool) (string, error) {
	v, ok, err := f.str(name, required)
	if err != nil || !ok {
		return v, err
	}
	if !isLowerHex(v, n) {
		return "", refuse(ReasonHex, name, "%q must be %d lowercase hex characters", name, n)
	}
	return v, nil
}

// hexOnly checks that the required member name is a string of n
// lowercase hex characters, as hex does, without copying it.
func (f fields) hexOnly(name string, n int) error {
	m, ok := f.get(name)
	if !ok {
		return refuse(ReasonMissingField, name, "the record has no %q", name)
	}
	if f.line[m.valueStart] != '"' {
		return refuse(ReasonFieldType, name, "%q must be a string", name)
	}
	raw := f.line[m.valueStart+1 : m.valueEnd-1]
	if bytes.IndexByte(raw, '\\') >= 0 { // escapes: the rare way, decoded
		_, err := f.hex(name, n, true)
		return err
	}
	if !isLowerHex(raw, n) {
		return refuse(ReasonHex, name, "%q must be %d lowercase hex characters", name, n)
	}
	return nil
}

func (f fields) timestamp(name string) (time.Time, error) {
	if m, ok := f.get(name); ok && f.line[m.valueStart] == '"' {
		// The usual case without a copy: no escapes, and a time that parses.
		raw := f.line[m.valueStart+1 : m.valueEnd-1]
		if bytes.IndexByte(raw, '\\') < 0 && bytes.IndexByte(raw, ',') < 0 && len(raw) > 0 && raw[len(raw)-1] == 'Z' {
			if t, err := time.Parse(time.RFC3339, string(raw)); err == nil {
				return t.UTC(), nil // as parseUTC returns it
			}
		}
	}
	v, _, err := f.str(name, true)
	if err != nil {
		return time.Time{}, err
	}
	t, err := parseUTC(v)
	if err != nil {
		return time.Time{}, refuse(ReasonTimestamp, name, "%q is not an RFC 3339 time in UTC ending in Z: %q", name, v)
	}
	return t, nil
}

// number returns the bytes of the number member name.
func (f fields) number(name string) ([]byte, error) {
	m, ok := f.get(name)
	if !ok {
		return nil, refuse(ReasonMissingField, name, "the record has no %q", name)
	}
	if !isNumber(f.line[m.valueStart]) {
		return nil, refuse(ReasonFieldType, name, "%q must be a number", name)
	}
	return f.line[m.valueStart:m.valueEnd], nil
}

// readType finds the record type and reads its required fields (step 3).
func (f fields) readType(rec *Record) error {
	markers := 0
	if f.has("text") || f.has("kind") {
		markers++
		rec.Type = TypeLesson
	}
	if f.has("confirm") {
		markers++
		rec.Type = TypeConfirmation
	}
	if f.has("revoke") {
		markers++
		rec.Type = TypeRevocation
	}
	if markers != 1 {
		return refuse(ReasonType, "", "a record holds exactly one of text+kind, confirm or revoke (found %d)", markers)
	}
	var err error
	if rec.Origin, err = f.hex("origin", 16, true); err != nil {
		return err
	}
	if rec.Key, err = f.hex("key", 64, true); err != nil {
		return err
	}
	if err = f.hexOnly("sig", 128); err != nil {
		return err
	}
	switch rec.Type {
	case TypeLesson:
		return f.readLesson(rec)
	case TypeConfirmation:
		if rec.Hash, err = f.hex("confirm", 32, true); err != nil {
			return err
		}
	case TypeRevocation:
		if rec.Hash, err = f.hex("revoke", 32, true); err != nil {
			return err
		}
		if rec.Reason, _, err = f.str("reason", false); err != nil {
			return err
		}
	}
	rec.Time, err = f.timestamp("at")
	return err
}

func (f fields) readLesson(rec *Record) error {
	var err error
	if rec.Hash, err = f.hex("hash", 32, true); err != nil {
		return err
	}
	if rec.Kind, _, err = f.str("kind", true); err != nil {
		return err
	}
	if rec.Text, _, err = f.str("text", true); err != nil {
		return err
	}
	if rec.ID, _, err = f.str("id", false); err != nil {
		return err
	}
	seen, err := f.number("seen")
	if err != nil {
		return err
	}
	if rec.Seen, err = parseSeen(seen); err != nil {
		return err
	}
	strength, err := f.number("strength")
	if err != nil {
		return err
	}
	if rec.Strength, err = strconv.ParseFloat(string(strength), 64); err != nil {
		return refuse(ReasonStrength, "strength", "strength %s is not a usable number", string(strength))
	}
	if rec.Time, err = f.timestamp("updated"); err != nil {
		return err
	}
	if m, ok := f.get("parents"); ok {
		if rec.Parents, err = f.parents(m); err != nil {
			return err
		}
	}
	return nil
}

// parents reads the optional array of parent hashes.
func (f fields) parents(m topMember) ([]string, error) {
	if f.line[m.valueStart] != '[' {
		return nil, refuse(ReasonFieldType, "parents", "parents must be an array of hashes")
	}
	s := scanner{data: f.line[:m.valueEnd], pos: m.valueStart + 1}
	var out []string
	for {
		s.skipSpace()
		if s.pos >= len(s.data) || s.data[s.pos] == ']' {
			return out, nil
		}
		if s.data[s.pos] == ',' {
			s.pos++
			continue
		}
		if s.data[s.pos] != '"' {
			return nil, refuse(ReasonFieldType, "parents", "parents must be an array of hashes")
		}
		v, _ := s.str()
		if !isLowerHex(v, 32) {
			return nil, refuse(ReasonHex, "parents", "parent %q is not 32 lowercase hex characters", v)
		}
		out = append(out, v)
	}
}

// decodeLowerHex decodes s, lowercase hex of exactly 2*len(dst) characters,
// into dst.
func decodeLowerHex(dst []byte, s string) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	for i := range dst {
		hi, ok1 := fromLowerHex(s[2*i])
		lo, ok2 := fromLowerHex(s[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func fromLowerHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

func isNumber(c byte) bool { return c == '-' || (c >= '0' && c <= '9') }

func isLowerHex[T string | []byte](s T, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(('0' <= c && c <= '9') || ('a' <= c && c <= 'f')) {
			return false
		}
	}
	return true
}
