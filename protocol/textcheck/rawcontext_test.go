package textcheck

import (
	"strings"
	"testing"
)

// TestRawContextual: private data known only by its context, and public
// texts that share its look. Written for the rules, not taken from a set.
func TestRawContextual(t *testing.T) {
	private := []string{
		"Ingrida's laptop had the only working copy of the signing key.",
		"The failing migration came from Oluwaseun from the payments team.",
		"Branislava in finance sends the export with a comma as the decimal mark.",
		"The job kept running as svc-tnakamura after the owner left.",
		"CI rebuilt feat/bkim-cache-warmup twice for one push.",
		"The Quillmoor Freight tenant is the one with the unpartitioned table.",
		"The nightly dump lands in s3://harrowgate-ledger-dumps/2026/ and nothing expires it.",
		"In a DM the lead wrote that the old cluster is still serving invoices.",
		"The release notes credit 赵敏 with the fix for the upload race.",
		"The on-call sheet lists דנה כהן for the weekend, and the pager went elsewhere.",
		"The trailer 'Signed-off-by: 刘洋' broke the DCO bot.",
		"The deploy script ran curl -u ops:Wq83mZ1x against the registry.",
		"The agent pulled gcr.io/farrowdale-internal/base:3 and got 403.",
		"Only the internal quillon-auth client failed to resolve from the mirror.",
		"The session had expired, so aws sso login --profile brightwater-ops-admin asked for the browser again.",
		"gcloud compute instances create --project=tallowmere-render-prod hit the CPU quota.",
		"The socket URL was mongodb://%2Fhome%2Fokwame%2Fdb.sock on that machine.",
	}
	public := []string{
		"Kibana's saved-object export leaves out index patterns.",
		"RabbitMQ's guest account only works from localhost.",
		"The HTTP client times out after 30 seconds.",
		"The Unity client pointed at 10.0.2.2 for the local server.",
		"The sample data sits in s3://my-bucket/data and in s3://example-datasets/raw.",
		"The Slack bot cannot DM users without the im:write scope.",
		"The Korean locale (한국어) sorts Hangul before Latin.",
		"The UA string 'Chrome/124.0.0.0 Safari/537.36' came from the headless build.",
		"ssh -T git@github.com answered with the account's name.",
		"The ban-ts-comment rule prefers '@ts-expect-error' to '@ts-ignore'.",
		"On WSL2 the Windows drive mounts at /mnt/c.",
		"The customer table has 40 million rows and no partition key.",
		"The wheel came from pypi.org, not from the mirror.",
		"aws s3 ls --profile default lists nothing once the SSO session expires.",
		"The pom sets maven.compiler.release=21 while JAVA_HOME points at 17.",
		"The private package index rejected the token, and the public one served requests-2.31.0.",
		"Mix could not compile the dependency bcrypt_elixir without make.",
		"Renovate's branch renovate/major-eslint kept rebasing.",
	}
	for _, s := range private {
		if FindRawData(s) == nil {
			t.Errorf("FindRawData(%q) = nil, want a finding", s)
		}
	}
	for _, s := range public {
		if f := FindRawData(s); f != nil {
			t.Errorf("FindRawData(%q) = %v, want none", s, f)
		}
	}
}

// TestRawChannels: a team's chat channel is told by the word before it or
// "channel" after it; issue numbers, colours and directives share its '#'.
func TestRawChannels(t *testing.T) {
	for _, s := range []string{
		"The person wanted the fingerprint checked against the one posted in #infra.",
		"Access requests go to #platform-access and wait a day.",
		"The #deploys-eu channel showed the rollback before the pager did.",
	} {
		if f := FindRawData(s); len(f) != 1 || f[0].Kind != "channel" {
			t.Errorf("FindRawData(%q) = %v, want one channel", s, f)
		}
		if r := RedactRawData(s); !strings.Contains(r, "a team channel") {
			t.Errorf("RedactRawData(%q) = %q, want the channel's placeholder", s, r)
		}
	}
	for _, s := range []string{
		"PR #481 comes from a fork, so its token is read-only.",
		"The header needs #include <stdint.h> on musl.",
		"The theme sets the border to #fff in dark mode.",
		"The comment in the Dockerfile starts with # and a space.",
	} {
		if f := FindRawData(s); f != nil {
			t.Errorf("FindRawData(%q) = %v, want none", s, f)
		}
	}
}
