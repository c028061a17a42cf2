package node

import (
	"context"
	"fmt"
	"slices"

	"github.com/remem/remem/protocol"
	"github.com/remem/remem/store"
)

// ReasonNotOwn refuses a record of another origin imported with scope local.
const ReasonNotOwn protocol.Reason = "origin mismatch"

// Import verifies record lines a person hands in (remem import, the API's
// import) and merges the good ones by scope, like Receive. The scope
// "local" holds this memory's own records and is exported as its file: a
// record of another origin imported there would go out under this
// memory's name and be refused by every reader. Such lines are refused;
// own records (a backup being restored) are taken.
func (m *Memory) Import(ctx context.Context, scope string, data []byte) (ReceiveReport, error) {
	lines := protocol.SplitLines(data)
	if scope != store.ScopeLocal {
		return m.Receive(ctx, scope, lines)
	}
	lines, foreign := m.splitForeign(lines)
	rep, err := m.Receive(ctx, scope, lines)
	if len(foreign) == 0 {
		return rep, err
	}
	m.countRefused(map[protocol.Reason]int{ReasonNotOwn: len(foreign)}, 0)
	rep.Refused = append(rep.Refused, foreign...)
	slices.SortFunc(rep.Refused, func(a, b Refused) int { return a.Line - b.Line })
	if rep.ByReason == nil {
		rep.ByReason = map[protocol.Reason]int{}
	}
	rep.ByReason[ReasonNotOwn] += len(foreign)
	return rep, err
}

// splitForeign takes out the lines whose origin is not this memory's. It
// reads the origin with protocol.Decode (no signature check): a line it
// cannot read stays in, and Receive refuses it with its own reason.
func (m *Memory) splitForeign(lines []protocol.Line) (own []protocol.Line, foreign []Refused) {
	for _, l := range lines {
		rec, err := protocol.Decode(l.Bytes)
		if err != nil || rec.Origin == m.Origin() {
			own = append(own, l)
			continue
		}
		foreign = append(foreign, Refused{Line: l.N, Reason: ReasonNotOwn, Detail: fmt.Sprintf(
			"origin mismatch: scope local holds only this memory's records (this line's origin is %s, this memory is %s); "+
				"import it with another scope, such as the default \"import\"", rec.Origin, m.Origin())})
	}
	return own, foreign
}
