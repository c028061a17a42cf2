package commons

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/remem/remem/protocol"
)

// The index lives in the store as one empty object per accepted file,
// its facts in the key, so that listing the keys is reading the index
// (no object is opened) and keys sort by acceptance time:
//
//	index/<updated, Unix ns, 20 digits>.<origin>.<records>.<etag, 32 hex>
//
// `?since=T` is then a listing from the key of T, and a replica that
// holds the index refreshes it by listing the keys of the last seconds
// only. An origin may have more than one key for a moment (a PUT writes
// the new key before it deletes the old one): the latest wins.
const (
	indexDir   = "index/"
	pendingDir = "pending/" // pending/<updated>.<origin>: a PUT in progress (storage.go)
	stampWidth = 20
)

// stampKey is the fixed-width decimal form of t, which sorts as t does
// (for times after 1970, the only ones a server stamps).
func stampKey(t time.Time) string {
	ns := t.UnixNano()
	if ns < 0 {
		ns = 0
	}
	return fmt.Sprintf("%0*d", stampWidth, ns)
}

func parseStamp(s string) (time.Time, bool) {
	if len(s) != stampWidth {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(s, 10, 64)
	if err != nil || ns < 0 || strings.TrimLeft(s, "0123456789") != "" {
		return time.Time{}, false
	}
	return time.Unix(0, ns).UTC(), true
}

// indexKey is the key of e.
func indexKey(e entry) string {
	return fmt.Sprintf("%s%s.%s.%d.%s", indexDir, stampKey(e.Updated), e.Origin, e.Records, strings.Trim(e.ETag, `"`))
}

// parseIndexKey reads an index key back; ok is false for anything that
// indexKey would not have written (a hostile or damaged store).
func parseIndexKey(key string) (entry, bool) {
	rest, ok := strings.CutPrefix(key, indexDir)
	if !ok {
		return entry{}, false
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 4 {
		return entry{}, false
	}
	t, ok := parseStamp(parts[0])
	if !ok || !protocol.ValidOrigin(parts[1]) || !validHex(parts[3], 32) {
		return entry{}, false
	}
	n, err := strconv.Atoi(parts[2])
	if err != nil || n < 1 || n > 1<<20 || strconv.Itoa(n) != parts[2] {
		return entry{}, false
	}
	return entry{Origin: parts[1], Updated: t, Records: n, ETag: `"` + parts[3] + `"`}, true
}

// pendingKey is the key of a PUT in progress of origin, stamped t.
func pendingKey(origin string, t time.Time) string {
	return pendingDir + stampKey(t) + "." + origin
}

func parsePendingKey(key string) (origin string, t time.Time, ok bool) {
	rest, ok := strings.CutPrefix(key, pendingDir)
	if !ok {
		return "", time.Time{}, false
	}
	stamp, origin, ok := strings.Cut(rest, ".")
	if !ok || !protocol.ValidOrigin(origin) {
		return "", time.Time{}, false
	}
	t, ok = parseStamp(stamp)
	return origin, t, ok
}

func validHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
