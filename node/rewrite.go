package node

import (
	"context"
	"fmt"
	"time"

	"github.com/remem/remem/node/consolidate"
	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// rewriteDrafts gives each own draft lesson (SPEC §3: kept and shown
// locally, never signed) to the sleep's model writer w again, from the
// events it absorbed, within w's budget for the sleep (new lessons were
// written first). When the model's sentence passes every check of SPEC §6
// and is no draft, it replaces the draft: a lesson of a new hash with the
// draft's seen, strength, episodes, projects and the events it absorbed,
// dirty so that signDirty signs it if its projects may share it; the draft
// is removed, and nothing was ever signed for it. A sentence that fails
// leaves the draft as it is for the next sleep.
//
// Only a budgeted model writer (consolidate.SamplingWriter: the configured
// model or the MCP client's) rewrites: the default writer would write the
// same draft again, and an unbudgeted command would be run for every
// draft at every sleep.
func (m *Memory) rewriteDrafts(ctx context.Context, w consolidate.Writer, now time.Time, rep *SleepReport) error {
	sw, ok := w.(*consolidate.SamplingWriter)
	if !ok || sw == nil {
		return nil
	}
	lessons, err := m.store.OwnLessons()
	if err != nil {
		return err
	}
	name := consolidate.WriterName(sw)
	var counts WriterCounts
	defer func() { rep.Writers.Add(counts) }()
	for _, l := range lessons {
		if l.Draft == "" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		evs, err := m.store.EventsOf(l.Hash)
		if err != nil {
			return err
		}
		c := consolidate.Cluster{Kind: l.Kind}
		seqs := make([]uint64, 0, len(evs))
		for i, ev := range evs {
			// The newest maxEpisodes events are what the model reads (a
			// lesson may have absorbed thousands); all of them move.
			if i >= len(evs)-maxEpisodes {
				c.Episodes = append(c.Episodes, episodeOf(ev.Event))
			}
			seqs = append(seqs, ev.Seq)
		}
		if len(c.Episodes) == 0 {
			for _, e := range l.Episodes {
				c.Episodes = append(c.Episodes, consolidate.Episode{Kind: l.Kind, Text: e})
			}
		}
		if len(c.Episodes) == 0 {
			continue
		}
		text, err := sw.Write(ctx, c)
		if err != nil {
			if isBudget(err) {
				counts.count(&counts.Skipped, name)
				break // the rest would be over budget too
			}
			counts.count(&counts.Failed, name)
			m.log.Warn("a writer gave no sentence for a draft", "writer", name, "hash", l.Hash, "err", err)
			continue
		}
		if err := checkRewrite(text); err != nil {
			counts.count(&counts.Refused, name)
			m.log.Warn("a writer's sentence for a draft was refused", "writer", name, "hash", l.Hash, "err", err)
			continue
		}
		hash := protocol.LessonHash(l.Kind, text)
		if _, exists, err := m.store.GetLesson(hash); err != nil {
			return err
		} else if exists {
			// The sentence is a lesson held already: folding the draft
			// into it is left to a person (`remem lessons`).
			m.log.Info("a draft's new sentence is a lesson held already; the draft stays", "hash", l.Hash, "as", hash)
			continue
		}
		nl := l
		nl.Hash, nl.ID, nl.Text, nl.Draft = hash, lessonID(hash), text, ""
		nl.Updated, nl.Dirty, nl.Published, nl.Confirmed = now, true, false, false
		// The new lesson and the events it takes land together; the draft
		// goes after, so a crash in between leaves both, never neither.
		if err := m.store.Commit(store.Step{Lesson: nl, Absorbed: seqs}); err != nil {
			return err
		}
		if err := m.store.DeleteLesson(l.Hash); err != nil {
			return err
		}
		counts.count(&counts.Rewritten, name)
		m.changed()
	}
	return m.saveWriterCounts(counts)
}

// checkRewrite holds a draft's new sentence to what a lesson written by a
// model must pass (writeLesson's checks): no raw data, nothing a redaction
// would leave a placeholder in, an observation.
func checkRewrite(text string) error {
	if found := protocol.FindRawData(text); len(found) > 0 {
		return fmt.Errorf("it holds raw data (%s)", found[0].Kind)
	}
	if red := protocol.RedactRawDataReport(text); red.Draft || red.Text != text {
		return fmt.Errorf("it would be a draft again (%s)", red.Reason)
	}
	return protocol.CheckLessonText(text)
}
