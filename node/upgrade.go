package node

import (
	"fmt"

	"github.com/remem/remem/protocol"
)

// admissionUpgradeKey holds what the first open after admitted verifiers
// (SPEC §8) found: how many lessons held were common or fading only
// through origins this memory does not admit, and whether `remem status`
// has said so.
const admissionUpgradeKey = "admission_upgrade"

// AdmissionUpgrade is that one-time finding.
type AdmissionUpgrade struct {
	Demoted int  `json:"demoted"` // common or fading with every origin counted, candidates now
	Shown   bool `json:"shown"`
}

// noteAdmissionUpgrade runs once per home, at its first open with admitted
// verifiers: it counts the lessons that were common (or fading) with every
// origin counted, as before, and are candidates under the admitted set.
func (m *Memory) noteAdmissionUpgrade() error {
	var up AdmissionUpgrade
	if ok, err := m.store.GetMeta(admissionUpgradeKey, &up); err != nil || ok {
		return err
	}
	lessons, err := m.store.Lessons()
	if err != nil {
		return err
	}
	now := m.Now()
	for _, l := range lessons {
		held, err := m.store.ForHash(l.Hash)
		if err != nil {
			return err
		}
		recs := make([]*protocol.Record, 0, len(held))
		for _, h := range held {
			recs = append(recs, h.Record)
		}
		before := protocol.ComputeState(l.Hash, recs, now, m.cfg.Params.State, protocol.AdmitAll())
		if (before.State == protocol.StateCommon || before.State == protocol.StateFading) &&
			m.state(l.Hash, recs, now).State == protocol.StateCandidate {
			up.Demoted++
		}
	}
	up.Shown = up.Demoted == 0 // nothing to say
	return m.store.SetMeta(admissionUpgradeKey, up)
}

// admissionNotice is the upgrade's notice once: the first call after the
// upgrade returns it and marks it shown, later ones return "".
func (m *Memory) admissionNotice() (string, error) {
	var up AdmissionUpgrade
	if ok, err := m.store.GetMeta(admissionUpgradeKey, &up); err != nil || !ok || up.Shown {
		return "", err
	}
	up.Shown = true
	if err := m.store.SetMeta(admissionUpgradeKey, up); err != nil {
		return "", err
	}
	unit := "lessons that were"
	if up.Demoted == 1 {
		unit = "lesson that was"
	}
	return fmt.Sprintf("since this version only admitted memories make a lesson common (SPEC §8): %d %s common or fading only through memories this one does not admit are candidates now; `remem trust add` admits your other machines and colleagues (README: Whom this memory counts)", up.Demoted, unit), nil
}
