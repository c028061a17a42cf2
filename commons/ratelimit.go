package commons

import (
	"math"
	"sync"
	"time"

	"github.com/remem/remem/internal/check"
)

// Rate is a token bucket: PerMinute tokens flow in per minute, at most
// Burst are held. The zero Rate means no limit.
type Rate struct {
	PerMinute float64
	Burst     int
}

// Default rates for a public commons (the CLI's defaults): a memory pushes
// once per sleep, so a few accepted PUTs per minute of one origin from one
// address are plenty; an address gets more PUTs in all, refused ones
// included, for hosts that push several memories.
var (
	DefaultOriginRate = Rate{PerMinute: 6, Burst: 6}
	DefaultClientRate = Rate{PerMinute: 60, Burst: 30}
)

// Default rates of the peer directory's listings. A node lists each of
// its keyed teams once per directory round (at start, 15 s later, after
// a sleep, when its addresses change, every pull), so one with the 16
// teams an entry may name does its first two rounds within the burst,
// and a dozen nodes behind one NAT stay far below 60 a minute. A token
// may be shared by a whole team, so it gets more. A name-guesser gets 40
// tries, then one a second: the 1,484 guesses take 24 minutes
// from one address instead of 0.2 s, and find nothing anyway where teams
// have a key (TeamTopicHash).
var (
	DefaultListClientRate = Rate{PerMinute: 60, Burst: 40}
	DefaultListTokenRate  = Rate{PerMinute: 240, Burst: 120}
)

// Validate checks that r is either the zero Rate (no limit) or a positive
// rate with a positive burst.
func (r Rate) Validate() error {
	var l check.List
	if r != (Rate{}) {
		l.If(!(r.PerMinute > 0), "PerMinute", r.PerMinute, "want a positive rate, or the zero Rate for no limit")
		l.AtLeast("Burst", r.Burst, 1)
	}
	return l.Err()
}

// info is r as the info document reports it; nil for no limit.
func (r Rate) info() *RateInfo {
	if r == (Rate{}) {
		return nil
	}
	return &RateInfo{PerMinute: r.PerMinute, Burst: r.Burst}
}

func (r Rate) unlimited() bool { return r.PerMinute <= 0 || r.Burst <= 0 }

type bucket struct {
	tokens float64
	last   time.Time
}

// limiter holds one bucket per key (a client address, or a client address
// and an origin).
type limiter struct {
	rate Rate
	now  func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

// maxBuckets bounds the memory a flood of client addresses can take: when
// the map is larger, full (idle) buckets are dropped; they hold nothing a
// new bucket would not.
const maxBuckets = 1 << 16

func newLimiter(rate Rate, now func() time.Time) *limiter {
	return &limiter{rate: rate, now: now, buckets: map[string]*bucket{}}
}

// allow takes one token for key. When none is left it returns false and
// how long until one will be.
func (l *limiter) allow(key string) (bool, time.Duration) {
	if l == nil || l.rate.unlimited() {
		return true, 0
	}
	now := l.now()
	perSec := l.rate.PerMinute / 60
	burst := float64(l.rate.Burst)
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= maxBuckets {
			l.prune(now, perSec, burst)
		}
		b = &bucket{tokens: burst, last: now}
		l.buckets[key] = b
	}
	if dt := now.Sub(b.last).Seconds(); dt > 0 {
		b.tokens = math.Min(burst, b.tokens+dt*perSec)
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / perSec * float64(time.Second))
	return false, wait
}

// giveBack returns the token allow took for key, for a request that
// turned out not to count (up to the burst).
func (l *limiter) giveBack(key string) {
	if l == nil || l.rate.unlimited() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets[key]; ok {
		b.tokens = math.Min(float64(l.rate.Burst), b.tokens+1)
	}
}

func (l *limiter) prune(now time.Time, perSec, burst float64) {
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*perSec >= burst {
			delete(l.buckets, k)
		}
	}
}
