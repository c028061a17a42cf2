package textcheck

import (
	"strings"
	"testing"
)

func TestFindRawData(t *testing.T) {
	cases := []struct {
		text  string
		kind  string // "" for clean
		match string // the finding, when kind is set
	}{
		// Paths.
		{"The cache lives in /home/alice/.cache/remem", "path", "/home/alice/.cache/remem"},
		{"Config is read from ~/.config/remem/config.toml.", "path", "~/.config/remem/config.toml"},
		{"The script calls ./scripts/build.sh twice", "path", "./scripts/build.sh"},
		{"The import ../internal breaks", "path", "../internal"},
		{`The log is in C:\Users\bob\AppData\log.txt`, "path", `C:\Users\bob\AppData\log.txt`},
		{"It writes to C:/Users/bob/out", "path", "C:/Users/bob/out"},
		{`The share \\fileserver\builds is slow`, "path", `\\fileserver\builds`},
		{"GOPATH=/opt/go/work is set", "path", "/opt/go/work"},
		{"The handler in src/server/handlers/auth.go panics", "path", "src/server/handlers/auth.go"},
		{"It reads $HOME/.netrc first", "path", "$HOME/.netrc"},
		{"See file:///etc/hosts for the override", "path", "file:///etc/hosts"},
		// E-mail.
		{"Mail alice.smith+ci@example.co.uk about it", "email", "alice.smith+ci@example.co.uk"},
		{"The remote git@github.com:org/repo is private", "email", "git@github.com"},
		// URLs.
		{"Clone https://bob:hunter2@git.example.com/repo.git", "url", "https://bob:hunter2@git.example.com/repo.git"},
		{"The hook posts to https://hooks.example.com/x?token=abc123.", "url", "https://hooks.example.com/x?token=abc123"},
		{"It connects to postgres://app:pw@db:5432/app", "url", "postgres://app:pw@db:5432/app"},
		{"The callback https://app.example.com/cb#access_token=xyz fails", "url", "https://app.example.com/cb#access_token=xyz"},
		// IP addresses.
		{"The runner at 10.0.0.12 is slow", "ip", "10.0.0.12"},
		{"It binds 192.168.1.20:8080 by default", "ip", "192.168.1.20:8080"},
		{"The subnet 172.16.0.0/12 is blocked", "ip", "172.16.0.0/12"},
		{"IPv6 fe80::1ff:fe23:4567:890a is used", "ip", "fe80::1ff:fe23:4567:890a"},
		{"It listens on ::1 only", "", ""}, // loopback names no machine
		{"Binding to 0.0.0.0 exposed the service", "", ""},
		{"The 1.0.0.0 assembly version confused NuGet", "", ""},
		{"The runner at 10.0.03.017 ran out of disk", "ip", "10.0.03.017"},
		{"The host build07.home ran out of disk", "host", "build07.home"},
		{"The log at var/log/syslog filled up", "path", "var/log/syslog"},
		{"The PR from @jdoe broke the tests", "name", "@jdoe"},
		{"The @babel/core update broke the build", "", ""},
		{"Mail to alice@localhost bounced", "email", "alice@localhost"},
		{"The key sk_live_51H8abcdefghijklmnopqrstuv leaked", "secret", "sk_live_51H8abcdefghijklmnopqrstuv"},
		{"The token glpat-abcdefghij1234567890 leaked", "secret", "glpat-abcdefghij1234567890"},
		{"It maps to ::ffff:10.1.2.3 on Linux", "ip", "::ffff:10.1.2.3"},
		// Secrets.
		{"The key AKIAIOSFODNN7EXAMPLE leaked", "secret", "AKIAIOSFODNN7EXAMPLE"},
		{"It used sk-proj-abcdEFGH1234ijklMNOP", "secret", "sk-proj-abcdEFGH1234ijklMNOP"},
		{"A token ghp_abcdefghijklmnopqrstuvwxyz0123456789 was pasted", "secret", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"},
		{"Slack xoxb-1234-5678-abcdefgh failed", "secret", "xoxb-1234-5678-abcdefgh"},
		{"-----BEGIN OPENSSH PRIVATE KEY----- was in the log", "secret", "-----BEGIN OPENSSH PRIVATE KEY-----"},
		{"The JWT eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc_DEF-123 expired", "secret", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc_DEF-123"},
		{"Commit 3f786850e387550fdab836ed7e6dc881de23001b broke it", "secret", "3f786850e387550fdab836ed7e6dc881de23001b"},
		{"The blob Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MEFCQ0RFRkdISUpL decodes", "secret", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MEFCQ0RFRkdISUpL"},
		{"It sets password=hunter22 in the env", "secret", "password=hunter22"},
		{"Authorization: Bearer abcdef0123456789ABCDEF.xyz fails", "secret", "Bearer abcdef0123456789ABCDEF.xyz"},

		// Clean sentences.
		{"go 1.26 needs GOTOOLCHAIN", "", ""},
		{"TCP/IP", "", ""},
		{"The TCP/IP stack and/or the I/O layer", "", ""},
		{"version 1.2.3 fixes it", "", ""},
		{"version 1.2.3.4.5 is odd", "", ""},
		{"the v1 endpoint times out", "", ""},
		{"error 404 instead of 403", "", ""},
		{"go/ast and go/parser disagree", "", ""},
		{"The module github.com/remem/remem builds", "", ""},
		{"The docs at https://go.dev/doc/modules help", "", ""},
		{"At 12:30:45 the job restarts", "", ""},
		{"std::vector grows by doubling", "", ""},
		{"TestCheckObservationHandlesUnicodeInput2 is flaky", "", ""},
		{"The ratio is 1/2 and runs 24/7", "", ""},
		{"x86_64 builds use -mod=vendor", "", ""},
		{"The @types/node package is stale", "", ""},
		{"Le café build breaks when TZ is unset", "", ""},
		{"The sk-learn wrapper is slow", "", ""},
		{"client/server/peer roles swap", "", ""},
		{"It takes 2024/01/15 as a date", "", ""},
		{"", "", ""},
	}
	for _, c := range cases {
		got := FindRawData(c.text)
		if c.kind == "" {
			if got != nil {
				t.Errorf("FindRawData(%q) = %+v, want nil", c.text, got)
			}
			continue
		}
		if len(got) != 1 || got[0].Kind != c.kind || got[0].Match != c.match {
			t.Errorf("FindRawData(%q) = %+v, want one %s %q", c.text, got, c.kind, c.match)
			continue
		}
		if c.text[got[0].Start:got[0].End] != got[0].Match {
			t.Errorf("FindRawData(%q): offsets do not give the match", c.text)
		}
		red := RedactRawData(c.text)
		if want := rawDescription(got[0]); want == "" || !strings.Contains(red, want) && !rawNamedAlready(c.text[:got[0].Start]) || strings.Contains(red, c.match) {
			t.Errorf("RedactRawData(%q) = %q, want %q in place of %q", c.text, red, want, c.match)
		}
		if f := FindRawData(red); f != nil {
			t.Errorf("RedactRawData(%q) = %q still holds %+v", c.text, red, f)
		}
	}
}

func TestRedactRawDataSeveral(t *testing.T) {
	in := "bob@example.com copied /home/bob/key.pem to 10.0.0.1 with AKIAIOSFODNN7EXAMPLE"
	want := "an e-mail address copied a file in the home directory to an internal address with an API key"
	if got := RedactRawData(in); got != want {
		t.Fatalf("RedactRawData = %q, want %q", got, want)
	}
	if got := RedactRawData("nothing raw here"); got != "nothing raw here" {
		t.Fatalf("clean text changed: %q", got)
	}
	f := FindRawData(in)
	for k := 1; k < len(f); k++ {
		if f[k].Start < f[k-1].End {
			t.Fatalf("findings overlap: %+v", f)
		}
	}
}

func FuzzFindRawData(f *testing.F) {
	for _, s := range []string{
		"/home/x/y", "a@b.co", "https://u:p@h/x?y=1", "10.0.0.1:80", "fe80::1", "::ffff:1.2.3.4",
		"-----BEGIN KEY-----", "AKIAIOSFODNN7EXAMPLE", "~/x", "C:\\x", "3f786850e387550fdab836ed7e6dc881de23001b",
		"x/y/z.go", "TCP/IP", "\xff/home/\xfe",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		found := FindRawData(s)
		end := 0
		for _, x := range found {
			if x.Start < end || x.End <= x.Start || x.End > len(s) || s[x.Start:x.End] != x.Match {
				t.Fatalf("bad finding %+v in %q", x, s)
			}
			if rawPlaceholder[x.Kind] == "" {
				t.Fatalf("unknown kind %q", x.Kind)
			}
			end = x.End
		}
		red := RedactRawData(s)
		if f := FindRawData(red); f != nil {
			t.Fatalf("RedactRawData(%q) = %q still holds %+v", s, red, f)
		}
		if again := RedactRawData(red); again != red {
			t.Fatalf("RedactRawData is not idempotent on %q: %q then %q", s, red, again)
		}
		if found == nil && red != s {
			t.Fatalf("clean %q was changed to %q", s, red)
		}
	})
}

func BenchmarkFindRawData(b *testing.B) {
	text := "Running go test without -race hides the data race in the cache on 10.0.0.1"
	b.ReportAllocs()
	for b.Loop() {
		_ = FindRawData(text)
	}
}

func TestRedactRawDataSaysWhatWasThere(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"tests that bind ::1 fail on the CI runners", "tests that bind the IPv6 loopback address fail on the CI runners"},
		{"the server listens on [::1]:8080 only", "the server listens on port 8080 on the IPv6 loopback address only"},
		{"the dev server listens on 127.0.0.1:3000 only", "the dev server listens on port 3000 on the loopback address only"},
		{"it binds 127.0.0.1, not 0.0.0.0", "it binds the loopback address, not 0.0.0.0"},
		{"version 127.0.0.1 of the tool", "version 127.0.0.1 of the tool"},
		{"the CLI reads ~/.config/tool/config.toml", "the CLI reads a file in the home directory"},
		{"permission denied reading /home/ann/app/.env", "permission denied reading a file in the home directory"},
		{"the cache at cache.build.internal is read-only", "the cache at an internal host is read-only"},
		{"mail to ops@example.com bounces", "mail to an e-mail address bounces"},
		{"ssh deploy@build07.corp.internal fails", "ssh an account on an internal host fails"},
		{"the token ghp_abcdefghijklmnopqrstuvwxyz0123 expired", "the token expired"},
		{"Postgres on 10.2.3.4:5432 refuses", "Postgres on port 5432 on an internal address refuses"},
		{"the hosts file /etc/hosts is stale", "the hosts file a system file is stale"},
	} {
		if got := RedactRawData(c.in); got != c.want {
			t.Errorf("RedactRawData(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
