package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remem/remem/node"
)

// RevokeInput names one of the memory's own lessons.
type RevokeInput struct {
	Hash   string `json:"hash" jsonschema:"the hash of a lesson this memory wrote (own: true in lessons or recall)"`
	Reason string `json:"reason,omitempty" jsonschema:"why it no longer holds, e.g. fixed in v2.3"`
}

// RevokeOutput is the signed withdrawal.
type RevokeOutput struct {
	Hash    string `json:"hash"`
	Origin  string `json:"origin"`
	Message string `json:"message"`
}

// revokeDescription says what the tool may do and why it stops there: a
// memory's revocation of a lesson it did not write is only one vote toward
// a quorum of revokers (SPEC §8), which an agent would read as done.
const revokeDescription = `Withdraw a lesson this memory wrote (own: true in lessons or recall), when it turned out wrong or no longer holds. ` +
	`The memory signs a revocation; other memories drop the lesson when it reaches them. ` +
	`Only the memory's own lessons can be revoked here: revoking another memory's lesson does not withdraw it, it only counts toward a quorum of revokers, ` +
	`so this tool refuses it (a person can still sign such a vote with remem revoke).`

func (t *tools) addRevoke(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{
		Name:        "revoke",
		Title:       "Withdraw one of this memory's lessons",
		Description: revokeDescription,
		Annotations: &sdk.ToolAnnotations{Title: "Withdraw one of this memory's lessons", DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(true)},
	}, t.revoke)
}

func (t *tools) revoke(ctx context.Context, _ *sdk.CallToolRequest, in RevokeInput) (*sdk.CallToolResult, RevokeOutput, error) {
	hash := strings.ToLower(strings.TrimSpace(in.Hash))
	if hash == "" {
		return nil, RevokeOutput{}, errors.New(`revoke needs "hash": the hash of a lesson this memory wrote, as lessons or recall give it`)
	}
	var rep node.RevokeReport
	err := t.with(ctx, func(svc node.Service) error {
		p, err := svc.Show(ctx, hash)
		if err != nil {
			return err
		}
		if !p.Own && p.Author != svc.Origin() {
			return fmt.Errorf("lesson %s was written by %s, not by this memory (%s): revoking it here would only count toward a quorum of revokers, so this tool refuses; "+
				"report what you saw with remember instead", hash, p.Author, svc.Origin())
		}
		rep, err = svc.Revoke(ctx, hash, strings.TrimSpace(in.Reason))
		return err
	})
	if err != nil {
		return nil, RevokeOutput{}, err
	}
	// The same words as remem revoke and the API (node.RevokeReport).
	out := RevokeOutput{Hash: rep.Hash, Origin: rep.Origin, Message: rep.Message}
	return text(out.Message), out, nil
}
