package node

import (
	"context"
	"fmt"
	"time"

	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/store"
)

// rewriteDrafts writes own draft lessons (SPEC §3: kept and shown
// locally, never signed) again: with the sentences the agents proposed for
// the events it absorbed (their "lesson", SPEC §2), then with the sleep's
// model writer w, within its budget for the sleep (new lessons were
// written first). The first sentence that passes every check of SPEC §6
// and is no draft takes the draft's place (replaceDraft): the draft's seen,
// strength, episodes, projects and events go to it, dirty so that
// signDirty signs it if its projects may share it; nothing was ever signed
// for the draft. A sentence that fails leaves the draft for the next sleep.
//
// Only a budgeted model writer (consolidate.SamplingWriter: the configured
// model or the MCP client's) is asked: the default writer would write the
// same draft again, and an unbudgeted command would be run for every
// draft at every sleep. Without one, only the drafts this sleep raised
// are read, for a proposal their new events brought.
func (m *Memory) rewriteDrafts(ctx context.Context, w consolidate.Writer, now time.Time, rep *SleepReport) error {
	sw, _ := w.(*consolidate.SamplingWriter)
	lessons, err := m.store.OwnLessons()
	if err != nil {
		return err
	}
	var counts WriterCounts
	defer func() { rep.Writers.Add(counts) }()
	modelSpent := false
	for _, l := range lessons {
		if l.Draft == "" || (sw == nil || modelSpent) && !l.Updated.Equal(now) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := m.draftCluster(l)
		if err != nil {
			return err
		}
		if len(c.Episodes) == 0 {
			continue
		}
		var writers []consolidate.Writer
		for _, p := range c.Proposals(maxProposals) {
			writers = append(writers, p)
		}
		if sw != nil && !modelSpent {
			writers = append(writers, sw)
		}
		for _, w := range writers {
			name := consolidate.WriterName(w)
			text, err := w.Write(ctx, c)
			if err != nil {
				if isBudget(err) {
					counts.count(&counts.Skipped, name)
					modelSpent = true // the rest would be over budget too
				} else {
					counts.count(&counts.Failed, name)
					m.log.Warn("a writer gave no sentence for a draft", "writer", name, "hash", l.Hash, "err", err)
				}
				continue
			}
			text, draft, err := vetSentence(text, false, c)
			if err == nil && draft != "" {
				err = fmt.Errorf("it would be a draft again (%s)", draft)
			}
			if err != nil {
				counts.count(&counts.Refused, name)
				m.log.Warn("a writer's sentence for a draft was refused", "writer", name, "hash", l.Hash, "err", err)
				continue
			}
			if _, err := m.replaceDraft(l, text, now); err != nil {
				return err
			}
			counts.count(&counts.Rewritten, name)
			m.changed()
			break
		}
	}
	return m.saveWriterCounts(counts)
}

// draftCluster is the cluster a draft is written again from: the newest
// store.MaxEpisodes events it absorbed (a lesson may have absorbed thousands),
// or its episodes when its events are gone.
func (m *Memory) draftCluster(l store.Lesson) (consolidate.Cluster, error) {
	evs, err := m.store.EventsOf(l.Hash)
	if err != nil {
		return consolidate.Cluster{}, err
	}
	c := consolidate.Cluster{Kind: l.Kind}
	for _, ev := range evs[max(0, len(evs)-store.MaxEpisodes):] {
		c.Episodes = append(c.Episodes, episodeOf(ev.Event))
	}
	if len(c.Episodes) == 0 {
		for _, e := range l.Episodes {
			c.Episodes = append(c.Episodes, consolidate.Episode{Kind: l.Kind, Text: e})
		}
	}
	return c, nil
}
