package testnet

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
)

// Lesson texts. Every lesson of a run must read as an observation, hold no
// raw data, and be far enough from every other lesson by the memories' own
// similarity that an event meant to confirm one lesson never confirms (or
// pre-empts, as "met before") another.

var (
	textJobs = []string{"nightly backup", "release build", "schema migration", "canary deploy", "integration suite",
		"search reindex", "image upload", "invoice export", "metrics rollup", "cache warmup", "docs publish",
		"load test", "log rotation", "package mirror", "certificate renewal", "payroll batch", "thumbnail render",
		"audit sweep", "email digest", "feature flag sync", "webhook replay", "ledger close", "map tiling",
		"video transcode", "sitemap crawl", "fraud scoring", "price refresh", "vendor import", "quota report"}
	textFails = []string{"stalls", "times out", "fails", "crashes", "hangs", "aborts", "gives up", "loops forever",
		"returns stale rows", "drops half its work", "runs twice", "silently skips records", "exhausts its retries"}
	textSubjects = []string{"the shared scratch volume", "the runner clock", "the upstream mirror", "the lock service",
		"the vault lease", "the message queue", "the read replica", "the outbound proxy", "the container runtime",
		"the config map", "the disk quota", "the standby region", "the token bucket", "the garbage collector",
		"the schema cache", "the flag service", "the swap partition", "the kernel network stack", "the primary database",
		"the archive tier", "the index rebuild", "the artifact store", "the dns resolver", "the time zone table",
		"the tenant registry", "the rate limiter", "the object storage bucket", "the sidecar agent", "the cron scheduler"}
	textConditions = []string{"is nearly full", "drifts by several minutes", "restarts during the run",
		"was upgraded the night before", "runs out of memory", "answers after several seconds", "sits in another region",
		"loses its network for a moment", "holds more than a million entries", "is rebuilt from scratch",
		"refuses new connections", "rejects anonymous requests", "is still warming up", "returns an empty answer",
		"changes its address", "reaches its connection limit", "switches to read only mode"}
)

// textGen draws lesson texts from a seeded stream.
type textGen struct {
	r    *rand.Rand
	sim  *consolidate.Lexical
	used map[int]bool
	prev []string
}

func newTextGen(seed int64) *textGen {
	return &textGen{r: newRand(seed, 2), sim: consolidate.NewLexical(), used: map[int]bool{}}
}

// maxSimilarity is how alike two lessons of a run may be, well below the
// threshold at which an event is taken for the same surprise.
const maxSimilarity = 0.75 * consolidate.DefaultThreshold

// next returns a fresh lesson text.
func (g *textGen) next() (string, error) {
	ctx := context.Background()
	for range 500 {
		num := 100 + g.r.IntN(9900)
		if g.used[num] {
			continue
		}
		text := fmt.Sprintf("The %s of unit %d %s when %s %s",
			textJobs[g.r.IntN(len(textJobs))], num, textFails[g.r.IntN(len(textFails))],
			textSubjects[g.r.IntN(len(textSubjects))], textConditions[g.r.IntN(len(textConditions))])
		if protocol.CheckLessonText(text) != nil {
			continue
		}
		close := false
		for _, p := range g.prev {
			s, _ := g.sim.Similarity(ctx, text, p)
			if s >= maxSimilarity {
				close = true
				break
			}
		}
		if close {
			continue
		}
		g.used[num] = true
		g.prev = append(g.prev, text)
		return text, nil
	}
	return "", fmt.Errorf("no lesson text far enough from the %d already drawn; publish fewer lessons", len(g.prev))
}
