package textcheck

import (
	"math/rand"
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
		{"Config is read from ~/.config/remem/config.toml.", "", ""}, // a tool's path as a pattern
		{"The build runs in ~/src/acme-billing/api.", "path", "~/src/acme-billing/api"},
		{"The script calls ./scripts/build.sh twice", "path", "./scripts/build.sh"},
		{"The import ../internal breaks", "path", "../internal"},
		{`The log is in C:\Users\bob\AppData\log.txt`, "path", `C:\Users\bob\AppData\log.txt`},
		{"It writes to C:/Users/bob/out", "path", "C:/Users/bob/out"},
		{`The share \\fileserver\builds is slow`, "path", `\\fileserver\builds`},
		{"GOPATH=/opt/go/work is set", "path", "/opt/go/work"},
		{"The handler in src/server/handlers/auth.go panics", "path", "src/server/handlers/auth.go"},
		{"It reads $HOME/.netrc first", "", ""},
		{"See file:///etc/hosts for the override", "", ""},
		{"It opened file:///home/kim/notes/todo.txt", "path", "file:///home/kim/notes/todo.txt"},
		{"DOCKER_HOST=unix:///home/kim/.docker/run/docker.sock was set", "path", "unix:///home/kim/.docker/run/docker.sock"},
		// E-mail.
		{"Mail alice.smith+ci@example.co.uk about it", "email", "alice.smith+ci@example.co.uk"},
		{"The remote git@github.com:org/repo.git is cloned", "", ""},
		{"Mail kim at example dot org about it", "email", "kim at example dot org"},
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
		{"The log at var/log/syslog filled up", "", ""},
		{"The log at home/alice/app.log filled up", "path", "home/alice/app.log"},
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
	in := "bob@acme-corp.io copied /home/bob/key.pem to 10.0.0.1 with AKIAIOSFODNN7EXAMPLE"
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
		if found == nil && red != s && red != describeLoopback(s) { // loopback addresses are told in words, found or not
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
		{"the CLI reads ~/projects/tool/config.toml", "the CLI reads a file in the home directory"},
		{"permission denied reading /home/ann/app/.env", "permission denied reading a file in the home directory"},
		{"the cache at cache.build.internal is read-only", "the cache at an internal host is read-only"},
		{"mail to ops@acme-corp.io bounces", "mail to an e-mail address bounces"},
		{"ssh deploy@build07.corp.internal fails", "ssh an account on an internal host fails"},
		{"the token ghp_abcdefghijklmnopqrstuvwxyz0123 expired", "the token expired"},
		{"Postgres on 10.2.3.4:5432 refuses", "Postgres on port 5432 on an internal address refuses"},
		{"the hosts file /etc/hosts is stale", "the hosts file /etc/hosts is stale"},
	} {
		if got := RedactRawData(c.in); got != c.want {
			t.Errorf("RedactRawData(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestRawDataSpec6 holds the examples SPEC §6 gives of what is raw and
// what is public, and the two conformance vectors about raw data
// (conformance/records.jsonl "public-system-path-is-not-raw" and
// "password-on-command-line").
func TestRawDataSpec6(t *testing.T) {
	for _, c := range []struct {
		text string
		raw  bool
	}{
		// conformance/records.jsonl
		{"apt keeps downloaded packages in /var/cache/apt/archives until the cache is cleaned", false},
		{"The migration job connects as mysql -u app --password=hunter2 and fails once the secret rotates", true},

		// Raw: people.
		{"The flaky test was muted by kpatel last week", true},
		{"The fix sits on the branch rnguyen/hotfix-login until review", true},
		{"The branch alice/fix-login rebased cleanly", true},
		{"The alert pinged <@W012ABCDE> at night", true},
		{"The reviewer @mkowalski asked for a benchmark", true},
		{"The cron job mails maria.garcia when it fails", true},
		{"Reports go to kim at example dot org every Monday", true},
		{"Reports go to kim [at] example [dot] org every Monday", true},
		// Raw: paths.
		{"The cache sat in /home/kim/.cache/pip and filled the disk", true},
		{"Xcode writes to /Users/jdoe/Library/Developer and fills the disk", true},
		{`The build wrote C:\Users\kpatel\AppData\Local\Temp\x.log`, true},
		{"The service reads file:///home/kim/app/config.yaml at start", true},
		{"The daemon listens on unix:///home/kim/.run/agent.sock only", true},
		{"The job writes to /srv/acme-billing/exports every night", true},
		// Raw: hosts, images, addresses, ids.
		{"build07.corp.internal ran out of disk", true},
		{"The image artifacts.int.example-corp.net/team/app:1.2 fails to pull", true},
		{"The job on ci-runner-12 keeps timing out", true},
		{"The database at 10.20.30.40 refuses connections", true},
		{"The bucket belongs to account 123456789012 and denies the role", true},
		{"The tenant 7c9e6679-7425-40de-944b-e07fc1f90ae7 has no licence left", true},
		{"The refund for customer 48213 failed twice", true},
		// Raw: secrets.
		{"The script runs psql --password hunter2 against staging", true},
		{"The backup calls mysqldump -u root -P 'x9Fq2!kd' nightly", true},
		{"Cloning https://deploy:s3cretPass@git.example.com/app.git failed", true},
		{"The header carried eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc_DEF-123 in the log", true},

		// Not raw: public and well-known things.
		{"The fonts live in /usr/local/share/fonts on Debian", false},
		{"Edits to /etc/hosts take effect at once", false},
		{"npm keeps its cache in $HOME/.npm by default", false},
		{"GitHub Actions checks out into /home/runner/work on Linux runners", false},
		{"Homebrew installs into /opt/homebrew on Apple silicon", false},
		{"The Docker socket is /var/run/docker.sock on Linux", false},
		{"DOCKER_HOST=unix:///var/run/docker.sock works on Linux hosts", false},
		{"Images pulled from registry.k8s.io are signed", false},
		{"The docs on github.com moved last week", false},
		{"The container reaches the host at 172.17.0.1 by default", false},
		{"host.docker.internal resolves only on Docker Desktop", false},
		{"The metadata endpoint 169.254.169.254 needs a token with IMDSv2", false},
		{"The Android emulator reaches the host at 10.0.2.2", false},
		{"Pods reach the API at kubernetes.default.svc.cluster.local", false},
		{"The postgres image uses postgres:postgres unless POSTGRES_PASSWORD is set", false},
		{"RabbitMQ accepts amqp://guest:guest@localhost:5672 only from loopback", false},
		{"Cloning git@github.com:golang/go.git over SSH needs a key", false},
		{"The fix is in version 2.4.1 and closes CVE-2024-3094", false},
		{"The image golang@sha256:4a3b7c2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b is pinned", false},
		{"Chrome 124.0.6367.91 broke the file picker", false},
		{"Grafana and Ansible both read the same inventory", false},
		{"Jenkins keeps the old workspace after Hugo builds the site", false},
		{"Ruby 3.3 and Julia 1.10 both ship with the image", false},
		{"The --password-stdin flag keeps the secret out of the shell history", false},
		{"The --password flag prompts when no value follows", false},
		{"The tool reads --password=$DB_PASSWORD from the environment", false},
		{"Port mapping -p 8080:80 exposes the app", false},
		{"The db2 client and the web3 library both broke", false},
		{"The Next.js .env.local file overrides .env", false},
		{"The account has 3 users and the tenant has 2 projects", false},
		{"UTF-8 and x86-64 builds differ on ubuntu-22.04 and windows-2022 runners", false},
	} {
		got := FindRawData(c.text)
		if (got != nil) != c.raw {
			t.Errorf("FindRawData(%q) = %+v, want raw=%v", c.text, got, c.raw)
		}
	}
}

// TestRedactRawDataDraft: a redaction whose placeholder would be glued
// into a word, stand in a command or a code span is a draft (SPEC §3); one
// that reads as the writer's words is not.
func TestRedactRawDataDraft(t *testing.T) {
	for _, c := range []struct {
		in, want string
		draft    bool
	}{
		{"build07.corp.internal ran out of disk", "an internal host ran out of disk", false},
		{"The pull of artifacts.int.example-corp.net/team/app:1.2 fails", "The pull of an image on an internal registry fails", false},
		{"Alice Johnson's laptop has no Docker", "a person's laptop has no Docker", false},
		{"The job on ci-runner-12 keeps timing out", "The job on an internal host keeps timing out", false},
		{"nothing raw here", "nothing raw here", false},
		{"GOPATH=/opt/go/work is set", "", true},
		{"The migration job connects as mysql -u app --password=hunter2 and fails", "", true},
		{"The step `ssh 10.0.0.5 uptime` hangs", "", true},
		{"The cache key v2-10.1.2.3 changes on every run", "", true},
	} {
		r := RedactRawDataReport(c.in)
		if r.Draft != c.draft || c.want != "" && r.Text != c.want {
			t.Errorf("RedactRawDataReport(%q) = %+v, want text %q draft %v", c.in, r, c.want, c.draft)
		}
		if r.Draft && r.Reason == "" {
			t.Errorf("RedactRawDataReport(%q): a draft with no reason", c.in)
		}
		if FindRawData(r.Text) != nil {
			t.Errorf("RedactRawDataReport(%q) = %q still holds raw data", c.in, r.Text)
		}
	}
}

// TestRawPrefiltersHoldEveryMatch: the cheap tests that let findRaw skip
// a pattern (a need's pre, rawMayHoldFlag, rawDottedQuad) pass every text
// the pattern matches (rawCLIPasswords: finds a password in), on texts
// pieced from the patterns' own parts.
func TestRawPrefiltersHoldEveryMatch(t *testing.T) {
	var rawPrefiltered []*rawPattern
	for _, ps := range [][]rawPattern{rawSecrets, rawPaths} {
		for i := range ps {
			if ps[i].pre != nil {
				rawPrefiltered = append(rawPrefiltered, &ps[i])
			}
		}
	}
	parts := []string{"password", "PASSWORD", "Passphrase", "passwd", " is ", " -u app ", "Pa55word", " ", "\t", "\f", "\v", "=", "token", "api_key", "API-KEY",
		"client_secret", "auth", "-", "--", "-p", "-P", "p", "secret", "x9", "'abc1'", `"q7"`, "(", "[", "`", "'", "1", ".", "255", "10",
		"/", "etc", "home", "Users", "~", "src/", "app/", "a.go", "src/app/main.go", "ſ", "\u212a", "must", ":", "abcd", "12.3", "10.0.", "192.168.", "0.1", "7", "e", "s", "conn-password", "keypass", "storepass"}
	r := rand.New(rand.NewSource(1))
	checked := map[string]int{}
	for n := 0; n < 200000; n++ {
		var b strings.Builder
		for k := 1 + r.Intn(8); k > 0; k-- {
			b.WriteString(parts[r.Intn(len(parts))])
		}
		text := b.String()
		for _, p := range rawPrefiltered {
			if p.re.MatchString(text) {
				checked[p.re.String()]++
				if !p.pre(text) {
					t.Fatalf("%q matches %s, but its pre test says no", text, p.re)
				}
			}
		}
		found := false
		rawCLIPasswords(text, func(string, int, int) { found = true })
		if found {
			checked["flags"]++
			if !rawMayHoldFlag(text) {
				t.Fatalf("%q gives a password as a flag, but rawMayHoldFlag says no", text)
			}
		}
		if rawSystemPath.MatchString(text) {
			checked["system path"]++
			if !rawSystemDirSlash(text) {
				t.Fatalf("%q holds a system path, but rawSystemDirSlash says no", text)
			}
		}
		if rawIPv4.MatchString(text) {
			checked["ipv4"]++
			if !rawDottedQuad(text) {
				t.Fatalf("%q holds an IPv4 address, but rawDottedQuad says no", text)
			}
		}
	}
	whats := []string{"flags", "ipv4", "system path"}
	for _, p := range rawPrefiltered {
		whats = append(whats, p.re.String())
	}
	for _, what := range whats {
		if checked[what] < 100 {
			t.Errorf("only %d texts matched %s: the test reads too few", checked[what], what)
		}
	}
}

// TestContainsBy compares the rare-byte search with strings.Contains.
func TestContainsBy(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	const alphabet = "asword p-=xX"
	for n := 0; n < 200000; n++ {
		b := make([]byte, r.Intn(24))
		for k := range b {
			b[k] = alphabet[r.Intn(len(alphabet))]
		}
		sub := make([]byte, 1+r.Intn(4))
		for k := range sub {
			sub[k] = alphabet[r.Intn(len(alphabet))]
		}
		text, s := string(b), string(sub)
		if got, want := containsBy(text, s, rarestByte(s)), strings.Contains(text, s); got != want {
			t.Fatalf("containsBy(%q, %q) = %v, want %v", text, s, got, want)
		}
	}
	if k := rarestByte("assword"); k != 3 {
		t.Errorf(`rarestByte("assword") = %d, want 3 (the "w")`, k)
	}
}

// TestScanRawBytes holds findRaw's first pass to the facts' definitions,
// read the slow way, on texts pieced from the bytes that matter.
func TestScanRawBytes(t *testing.T) {
	parts := []string{"a", "d", "o", "t", "dot", " ", "[", "]", "(", ")", "{", "}", ".", ":", "-", "/", "+", "x", "X", "\t", "é", "9",
		"aaaaaaaaaaaaaaaa", "AAAAAAAAAAAAAAAAAAAA"}
	r := rand.New(rand.NewSource(5))
	for n := 0; n < 100000; n++ {
		var b strings.Builder
		for k := r.Intn(14); k > 0; k-- {
			b.WriteString(parts[r.Intn(len(parts))])
		}
		text := b.String()
		var want rawBytes
		want.has = rawLowerLetters
		run, word := 0, 0
		for i := 0; i < len(text); i++ {
			c := text[i]
			want.has.add(c)
			if rawIsWordByte(c) || c == '+' || c == '/' || c == '-' {
				run++
			} else {
				run = 0
			}
			if c == ' ' {
				word = 0
			} else {
				word++
			}
			want.longRun = want.longRun || run >= 32
			want.longWord = want.longWord || word >= 16
			if c == ':' {
				want.colons++
			}
			if c == '.' && i+1 < len(text) && text[i+1] != ' ' {
				want.dots++
			}
			want.spelledDot = want.spelledDot || rawSpelledDotAt(text, i)
		}
		if got := scanRawBytes(text); got != want {
			t.Fatalf("scanRawBytes(%q) = %+v, want %+v", text, got, want)
		}
	}
}
