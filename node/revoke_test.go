package node

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRevokeReportSaysWhatARevocationIs: a confirmer's revocation is told
// as a vote toward the quorum, never as a withdrawal; the author's as a
// withdrawal. Through the API with a node to send it, the report says it
// is being sent; from a memory opened here, when it will leave.
func TestRevokeReportSaysWhatARevocationIs(t *testing.T) {
	clk := newClock()
	a, projA := openTest(t, clk)
	b, projB := openTest(t, clk)
	hash := confirmedLesson(t, clk, a, projA, b, projB)

	rep, err := Local{M: b}.Revoke(context.Background(), hash, "not here")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Author || rep.Revoked || rep.Revokers != 1 || rep.Quorum != 3 || rep.Sending {
		t.Fatalf("the confirmer's revocation: %+v", rep)
	}
	for _, want := range []string{"not a withdrawal", "only confirmed", "1 of the 3 confirmers needed", "next exchange"} {
		if !strings.Contains(rep.Message, want) {
			t.Errorf("the confirmer is told %q, without %q", rep.Message, want)
		}
	}

	sent := 0
	srv := httptest.NewServer(NewAPI(a, APIOptions{Signed: func() { sent++ }}))
	defer srv.Close()
	rep, err = (&Client{BaseURL: srv.URL, Token: a.APIToken()}).Revoke(context.Background(), hash, "fixed")
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Author || !rep.Revoked || !rep.Sending || sent != 1 {
		t.Fatalf("the author's revocation through the API: %+v (the node told %d times)", rep, sent)
	}
	for _, want := range []string{"revoked " + hash, "withdrew its lesson", "sending the revocation now"} {
		if !strings.Contains(rep.Message, want) {
			t.Errorf("the author is told %q, without %q", rep.Message, want)
		}
	}
	if strings.Contains(rep.Message, "quorum") {
		t.Errorf("the author is told about a quorum: %q", rep.Message)
	}
}
