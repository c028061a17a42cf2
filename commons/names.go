package commons

import "github.com/remem/remem/protocol"

// Deliver receives the verified records of one origin's file. scope is
// "commons:" + the client's BaseURL. The records are parsed and verified;
// their Raw bytes are owned by the callee. Pull never calls it
// concurrently.
type Deliver func(scope string, recs []*protocol.Record) error

// ReasonEmpty: a PUT with no record line (it would prove nothing about who
// sent it).
const ReasonEmpty protocol.Reason = "empty"

// ReasonBudget: a new origin beyond one of the commons' budgets (budget.go).
const ReasonBudget protocol.Reason = "budget"

// stripe picks one of the per-origin locks: writers of one origin are
// serialised, writers of different origins rarely share a lock.
func stripe(origin string) int {
	return int(unhex(origin[0]))<<4 | int(unhex(origin[1]))
}

func unhex(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}
