package node

import (
	"fmt"

	"github.com/remem/remem/protocol"
)

// RevokeReport is what a revocation did and what it means. Message says it
// in the one wording the CLI, the API and the MCP server all show: a
// confirmer's revocation is not a withdrawal, only a vote toward a quorum
// (SPEC §8), and a person must not be told otherwise.
type RevokeReport struct {
	Signed
	// Author: this memory published the lesson, so its revocation
	// withdraws it. Otherwise this memory only confirmed it.
	Author bool `json:"author"`
	// Revokers are the admitted confirmers (the author aside) whose
	// revocation of the lesson is held, this memory's included; Quorum is
	// how many it takes (N) to revoke a lesson its author keeps.
	Revokers int `json:"revokers"`
	Quorum   int `json:"quorum"`
	// Revoked: the lesson is revoked here now.
	Revoked bool `json:"revoked"`
	// Sending: a running node is sending the revocation now; otherwise it
	// leaves with this memory's next exchange.
	Sending bool   `json:"sending"`
	Message string `json:"message"`
}

// revokeReport describes rec, a revocation this memory just signed, from
// every record held of its hash.
func (m *Memory) revokeReport(rec *protocol.Record) (RevokeReport, error) {
	rep := RevokeReport{Signed: Signed{Hash: rec.Hash, Origin: rec.Origin, Line: string(rec.Raw)}, Quorum: m.cfg.Params.State.N}
	held, err := m.store.ForHash(rec.Hash)
	if err != nil {
		return rep, err
	}
	all := make([]*protocol.Record, len(held))
	for i, h := range held {
		all[i] = h.Record
		rep.Author = rep.Author || (h.Record.Type == protocol.TypeLesson && h.Record.Origin == m.Origin())
	}
	st := m.state(rec.Hash, all, m.Now())
	rep.Revokers = st.Quorum // admitted confirmers only: a stranger's vote moves nothing
	rep.Revoked = st.State == protocol.StateRevoked
	rep.explain()
	return rep, nil
}

// explain writes Message from the other fields.
func (r *RevokeReport) explain() {
	var what string
	switch {
	case r.Author && r.Revoked:
		what = fmt.Sprintf("revoked %s: this memory withdrew its lesson, and every memory drops it when the revocation reaches it", r.Hash)
	case r.Author:
		what = fmt.Sprintf("revoked %s: this memory withdrew its lesson; other memories published the same lesson, and it stays until they revoke it too", r.Hash)
	case r.Revoked:
		what = fmt.Sprintf("revocation of %s signed: this memory only confirmed the lesson, and with this one %d of the %d confirmers needed (SPEC §8) have revoked it, so it is revoked", r.Hash, r.Revokers, r.Quorum)
	default:
		what = fmt.Sprintf("revocation of %s signed, but this is not a withdrawal: this memory only confirmed the lesson, so it counts toward a revocation quorum (%d of the %d confirmers needed, SPEC §8); the lesson stays until the quorum is reached or its author revokes it", r.Hash, r.Revokers, r.Quorum)
	}
	if r.Sending {
		r.Message = what + "\nthe running node is sending the revocation now"
		return
	}
	r.Message = what + "\nit leaves with this memory's next exchange: `remem folder sync`, `remem commons push`, or a node running on this home (`remem node`)"
}
