package textcheck

import (
	"strings"
	"testing"
)

// pastedCases read like a log: tool output carried into a lesson instead
// of a sentence about it. Each names the reason Pasted must give (a prefix
// of it is enough). Written from the real output formats of the tools.
var pastedCases = []struct{ text, reason string }{
	// stack frames
	{"java.lang.NullPointerException at com.acme.billing.InvoiceService.total(InvoiceService.java:88) when the invoice has no lines.", "a stack frame"},
	{"The test fails at Object.<anonymous> (src/api/client.test.ts:14:23) with TypeError: fetch is not a function.", "a stack frame"},
	{"pytest fails: File \"app/models.py\", line 42, in save raises IntegrityError.", "a stack frame"},
	{"panic: runtime error: invalid memory address goroutine 1 [running]: main.main() main.go:17 +0x1d.", "a stack frame"},
	{"The server crashes with thread 'main' panicked at src/main.rs:12:5 and then at src/lib.rs:40:9.", "a stack frame"},
	{"Traceback (most recent call last): File \"manage.py\", line 22, in <module> execute_from_command_line(sys.argv).", "a stack frame"},
	{"cargo build fails with error[E0425]: cannot find value `x` in this scope --> src/main.rs:4:13.", "a stack frame"},
	{"go test fails in github.com/acme/api/internal/store.(*DB).Get(0xc000123456) at store.go:88.", "a stack frame"},
	{"The job fails with Caused by: java.io.IOException at org.apache.hadoop.fs.FileSystem.get(FileSystem.java:512).", "a stack frame"},
	{"node crashes with at processTicksAndRejections (node:internal/process/task_queues:95:5).", "a stack frame"},
	// tables
	{"kubectl get pods shows NAME READY STATUS RESTARTS AGE api-7d9f8b6c4-xk2lp 0/1 CrashLoopBackOff 5 3m.", "table columns"},
	{"df -h shows Filesystem Size Used Avail Use% Mounted on /dev/sda1 50G 48G 2.0G 96% /.", "table columns"},
	{"docker ps prints CONTAINER ID IMAGE COMMAND CREATED STATUS for the stopped containers.", "table columns"},
	{"The disk is full: overlay 59G 57G 0 100% /var/lib/docker.", "table columns"},
	{"terraform plan shows | aws_instance.web | 2 | 0 | 1 | for the stack.", "table columns"},
	{"kubectl top nodes gives node-1 1950m 97% 7412Mi 94% for the worker.", "table columns"},
	{"psql prints id | name | created_at followed by ----+------+----------- and no rows.", "table columns"},
	// box drawing
	{"terraform apply fails with ╷ │ Error: creating S3 Bucket: BucketAlreadyExists │ ╵.", "box-drawing characters"},
	{"vercel deploy fails with ┌ Error ─ Build failed with exit code 1 └.", "box-drawing characters"},
	{"npm install prints ╭──────╮ │ Update available 9.6.7 → 10.2.3 │ ╰──────╯.", "box-drawing characters"},
	// log lines
	{"The deploy fails at 2024-05-01T12:03:44Z with level=error msg=\"connection refused\".", "a log line"},
	{"The worker logs [ERROR] 12:03:44.512 Failed to connect to Redis.", "a log line"},
	{"docker compose up prints WARN[0000] the attribute version is obsolete.", "a log line"},
	{"kubelet logs E1203 10:14:07.123456 1 pod_workers.go:1298 Error syncing pod.", "a log line"},
	{"The pipeline shows ::error file=app.js,line=10::Missing semicolon in the build.", "a log line"},
	{"The service logs ts=2024-05-01 level=warn caller=server.go:88 msg=slow.", "a log line"},
	{"The job log shows 2024-05-01 12:03:44,512 ERROR celery.worker Task failed.", "a log line"},
	// stitched fragments
	{"npm install fails: npm ERR! code ERESOLVE; npm ERR! ERESOLVE unable to resolve dependency tree; npm ERR! Found: react@18.2.0.", "stitched fragments"},
	{"The build fails with error: linker cc not found; note: the msvc targets depend on the msvc linker; error: could not compile app.", "stitched fragments"},
	{"pip install fails; ERROR: Could not build wheels for numpy; ERROR: Failed building wheel for numpy.", "stitched fragments"},
	{"go vet fails; vet: ./main.go:12:2: unreachable code; exit status 1.", "stitched fragments"},
	{"The apply fails with Error: Error acquiring the state lock. Error: ConditionalCheckFailedException.", "stitched fragments"},
	{"The job fails with FATAL ERROR: Reached heap limit FATAL ERROR: Ineffective mark-compacts near heap limit.", "stitched fragments"},
	{"mvn package fails with [ERROR] Failed to execute goal [ERROR] BUILD FAILURE.", "a log line"},
	{"git push is rejected: ! [rejected] main -> main (fetch first); error: failed to push some refs; hint: Updates were rejected.", "stitched fragments"},
	// runs of identifiers
	{"The pods api-7d9f8 web-55c6d worker-2x9kq cron-1a2b3 are pending.", "a run of identifiers"},
	{"The tests TestParse_Empty TestParse_Unicode TestParse_Long TestParse_Nested fail on ARM.", "a run of identifiers"},
	{"go test -race -count=1 -run=TestSync -timeout=30s -tags=integration ./... fails.", "a run of identifiers"},
	{"The images sha256:4f2a sha256:9b1c sha256:77de sha256:0a3f are dangling.", "a run of identifiers"},
	// placeholders where raw data was
	{"ssh fails to reach build07.an internal host on port 22.", "a placeholder standing for raw data"},
	{"psql cannot connect to an internal host:5432 since the migration.", "a placeholder standing for raw data"},
	{"The clone of git@an internal host:team/app.git fails with Permission denied.", "a placeholder standing for raw data"},
	{"docker login fails for an internal host-registry after the rotation.", "a placeholder standing for raw data"},
	{"The upload fails with --password=a password on the command line.", "a placeholder standing for raw data"},
	{"ls shows an internal host 4.0K drwxr-xr-x 2 root root for the mount.", "a placeholder standing for raw data"},
	{"The test reads a file in the home directory/config.yaml and fails.", "a placeholder standing for raw data"},
	// cut off
	{"The migration fails because the connection to.", "cut off after 'to'"},
	{"npm ci fails with EUSAGE because package-lock.json is out of sync with.", "cut off after 'with'"},
	{"The build fails when the cache is restored from the.", "cut off after 'the'"},
	{"The deploy times out because the health check waits for.", "cut off after 'for'"},
	{"The job fails and.", "cut off after 'and'"},
	{"The download does not match go.sum, or an attacker may.", "cut off after 'may'"},
	{"The tests fail because the fixture loads the config (which is missing.", "cut off inside a parenthesis"},
	{"The cluster is unreachable because kubectl reads the context from...", "cut off"},
	// Title-Case and two-word headers, spaced fields, stitched sentences
	{"free -h prints Total Used Free Shared Of Cache for the host.", "table columns"},
	{"Quota Used Limit Use% Grace on the share.", "table columns"},
	{"Kind Name Status From Reason.", "table columns"},
	{"PID COMMAND.", "table columns"},
	{"The call fails with status: code = DeadlineExceeded desc = context deadline exceeded.", "key = value fields"},
	{"The pod reports exit = 1 signal = 9 after the probe.", "key = value fields"},
	{"The lint step passes locally; The CI runner uses an older eslint.", "stitched fragments"},
	{"The token expired at noon; It was issued for one hour.", "stitched fragments"},
	{"The bucket policy denies the role 'a person' from writing.", "a placeholder standing for raw data"},
	{"Running curl an internal host fails with a timeout.", "a placeholder standing for raw data"},
	{"The proxy answers with <html><body>502 Bad Gateway</body></html> for every call.", "markup tags"},
	{"The hook fails with build.sh: line 7: jq: command not found.", "a log line"},
	{"make fails with Makefile:9: *** recipe commences before first target.", "an underline or progress bar"},
	{"The socket is missing; Is the daemon running.", "stitched fragments"},
	// cut off: quotes, determiners, relatives, flags
	{"The step runs `make check and stops.", "cut off inside a quote"},
	{"The lookup fails for 'billing-db because the name is wrong.", "cut off inside a quote"},
	{"The cache lives outside the volume mounted into this.", "cut off after 'this'"},
	{"The job still reads the config of the current.", "cut off after 'current'"},
	{"The proxy drops the header, which does.", "cut off after 'does'"},
	{"The deploy fails when run as gcloud run deploy api --region us-east1 --image.", "cut off after a flag"},
	{"The plan is saved with terraform plan -out=.", "cut off after a flag"},
	{"The config sets the paths to [\"a\".", "cut off inside brackets"},
	{"The schema check fails for table users\"\".", "cut off inside a quote"},
	{"The lookup returns no.", "cut off after 'no'"},
	{"The runner sets max-retries = 3 and fail-fast = true.", "key = value fields"},
	{"kubectl fails with not found for kind: \"Job\" name: \"seed\" in the chart.", "key = value fields"},
	{"The client calls GET http://localhost/%2Fvar%2Frun%2Fapp.sock/v1 and fails.", "an encoded URL"},
	{"The socket is gone; Restarting the daemon did not help.", "stitched fragments"},
	{"cat shows `[core]` / `bare = false` / `filemode = true` for the repo.", "stitched fragments"},
	// output lines
	{"The build fails.\nerror: linker not found", "several lines"},
	{"make fails with \x1b[31merror\x1b[0m in the linker step.", "terminal escapes"},
	{"cargo test shows ^^^^^^^^ expected `u32`, found `i64` under the call.", "an underline or progress bar"},
	{"docker pull shows [=========>         ] 45.2MB/100MB and then stalls.", "an underline or progress bar"},
	{"$ kubectl apply -f deploy.yaml error: unable to recognize deploy.yaml: no matches for kind Deployment.", "a shell prompt"},
	{"The build fails with a long output \"error: failed to run custom build command for openssl-sys v0.9.93 Caused by: process didn't exit successfully: exit status: 101 --- stdout cargo:rerun-if-env-changed\".", "a long quoted output"},
}

// writtenCases are sentences a person writes about what happened: they
// mention commands, flags, error codes, paths, versions and one short
// quoted message, and none is pasted.
var writtenCases = []string{
	// a message in capitals, quoted (blind set b29, r27)
	"ssh to the bastion fails with 'REMOTE HOST IDENTIFICATION HAS CHANGED' because the host was rebuilt with a new host key.",
	"mvn deploy ends with \"BUILD FAILURE\" and \"ERROR 401 UNAUTHORIZED\" when the settings.xml server id does not match the repository id.",
	"go test fails with undefined: NewGeneratedClient because the generated client is missing until go generate runs.",
	"npm ci fails with EUSAGE because package-lock.json is out of sync with package.json.",
	"cargo build fails with error[E0425] because the feature flag `tls` is off by default.",
	"The tests that bind ::1 fail on the CI runners, which have no IPv6.",
	"kubectl apply fails with 'no matches for kind Deployment' because the manifest uses apps/v1beta1, removed in Kubernetes 1.16.",
	"terraform apply fails with BucketAlreadyExists because S3 bucket names are global across accounts.",
	"pytest fails with an IntegrityError in save when the fixture reuses the same primary key.",
	"The Java service throws a NullPointerException in InvoiceService.total when an invoice has no lines.",
	"docker build fails with 'no space left on device' once /var/lib/docker fills the root disk.",
	"pip install numpy==1.26.4 fails on Python 3.13 because no wheel is published for it yet.",
	"git push is rejected as non-fast-forward because the remote main has commits the local branch lacks.",
	"The Node 18 runtime lacks a global fetch in Jest's jsdom environment, so the API client tests fail with TypeError.",
	"go vet reports unreachable code in main.go after the early return.",
	"mvn package fails with BUILD FAILURE because the surefire plugin 3.2.5 needs Java 17.",
	"The pod stays in CrashLoopBackOff because the readiness probe hits /healthz before the cache is warm.",
	"psql cannot connect on port 5432 because the container publishes it only on the loopback address.",
	"The deploy to Vercel fails with exit code 1 when the build script runs next lint.",
	"rustc rejects the call with expected `u32`, found `i64` because the counter type changed in 0.4.0.",
	"The disk of the runner is 96% full after three builds, so docker pull stalls.",
	"GET /api/v2/orders returns 404 instead of 200 because the router mounts v2 under /v2 only.",
	"The Helm upgrade times out after 5m0s because the migration job waits for a lock held by the old release.",
	"aws s3 cp fails with AccessDenied because the role lacks s3:PutObject on the bucket.",
	"The Gradle daemon runs out of memory on builds with -Xmx512m, and the build stops with exit code 137.",
	"gcloud run deploy fails with PERMISSION_DENIED when the service account lacks roles/run.admin.",
	"The staging database is wiped every Sunday night by a cron job.",
	"az login fails in the container because the device code flow needs a browser.",
	"The pipeline's cache key includes the lock file hash, so a changed package-lock.json misses the cache.",
	"The migration fails with SQLSTATE 23505 when two workers insert the same order id.",
	"Redis returns OOM command not allowed when maxmemory is reached and the policy is noeviction.",
	"The person pointed out that the tests use SQLite, and Postgres is only for production.",
	"The agent offered to delete the lock file, and the person declined.",
	"make test fails on macOS because BSD sed needs an argument after -i.",
	"go build ./... fails with 'go: updates to go.mod needed' after the go directive moved to 1.22.",
	"The linter flags TestParse_Empty and TestParse_Long because their names break the convention.",
	"The Python 3.12 image drops distutils, so setup.py builds of old packages fail with ModuleNotFoundError.",
	"Running docker compose up warns that the attribute version is obsolete, and the stack still starts.",
	"The job fails at step 3 because the runner's Node 16 is no longer supported by actions/checkout@v4.",
	"yarn install hangs at the link step when the network drive is the cache folder.",
	"The request to https://registry.npmjs.org times out behind the proxy until HTTPS_PROXY is set.",
	"The panic: assignment to entry in nil map comes from the config loader when the file is empty.",
	"The test suite takes 12 minutes with -race and 3 minutes without it.",
	"The cluster upgrade from 1.27.3 to 1.28.0 removes the flowcontrol v1beta2 API.",
	"curl -sSf exits with code 22 on HTTP 404, which the script reads as a network failure.",
	"The cron job runs at 02:00 UTC, while the backups start at 02:30.",
	"The build runs out of memory when webpack builds source maps for all 40 entry points.",
	"Python 3.11, 3.12 and 3.13 all pass, but 3.10 fails with a SyntaxError on the match statement.",
	"The agent was logged in, but the session cookie was dropped when the proxy was turned on.",
	"The person wanted the agent to keep the old endpoint until the mobile app is updated.",
	"When the cache is cold, the first request takes 9 s; later ones take 40 ms.",
	"The service fails to start because port 8080 on the loopback address is taken by an internal host's agent.",
	"The script writes a file in the repository that the linter then reads as a test fixture.",
	"The API returns a token that expires after 15 minutes, so long uploads fail with 401.",
	"ERROR 1045 (28000) from mysql means the password in the secret is stale.",
	"The CI job prints 'Error: Process completed with exit code 1.' after the lint step fails.",
	"The production bundle fails with FATAL ERROR: Reached heap limit, JavaScript heap out of memory.",
	"The app crashes on startup with panic: runtime error: index out of range [0] with length 0 in cli.Parse.",
	"eslint fails because it cannot find the config eslint-config-airbnb to extend from.",
	"The person said the local compose setup is what the team tests against.",
	"kubectl exec fails with Forbidden (user=ci, verb=create, resource=pods, subresource=exec) for the CI account.",
	"A plain apply in the default workspace has deleted production resources before.",
	"The handler panics at server.go:88 when the request body is empty.",
	"The cache has been stale ever since.",
	"The build takes longer than it should.",
	"Node B is no longer connected to A.",
	"The 401 response does not say where the token is.",
	"The stack is deployed with Google Cloud Build and Cloud Run.",
	"The CLI prints the Used and Free columns for each volume.",
	"The install works with npm ci --legacy-peer-deps.",
	"The tests pass without --race.",
	"The job sets retries = 3 in its config.",
	"The lock is held; Terraform waits for it to be released.",
	"The sentence names the resource group 'shared-services' only.",
	"The team keeps the staging data on purpose and tests against it.",
	"The fix was in the worker, which is where the queue is.",
	"Each service keeps its own.",
	"The matrix runs [linux, macos] on every push.",
	"The disk is 100% full and the cache 40% of it.",
	"The job fails with error: \"no such host\" after the DNS change.",
	"The test uses an empty string \"\" as the key.",
	"The socket is gone; restarting the daemon did not help.",
	"The file lists `a` and `b` / `c` as owners.",
	"The generator wraps each value in a <span> element.",
	"The script fails on line 7 when jq is not installed.",
	"The README marks the flag as **deprecated** in bold.",
	"The runner image is the same.",
	"The record count on node 3 grows from 232 -> 388 records after the sync.",
}

func TestPastedFlagsLogs(t *testing.T) {
	for _, c := range pastedCases {
		got := Pasted(c.text)
		if got == "" || !strings.HasPrefix(got, c.reason) {
			t.Errorf("Pasted(%q) = %q, want %q", c.text, got, c.reason)
		}
	}
}

func TestPastedPassesWritten(t *testing.T) {
	for _, s := range writtenCases {
		if got := Pasted(s); got != "" {
			t.Errorf("Pasted(%q) = %q, want \"\" (a written sentence)", s, got)
		}
	}
}

func TestPastedCasesAreMany(t *testing.T) {
	t.Logf("%d pasted and %d written cases", len(pastedCases), len(writtenCases))
	if len(pastedCases) < 40 || len(writtenCases) < 40 {
		t.Fatalf("%d pasted and %d written cases, want at least 40 each", len(pastedCases), len(writtenCases))
	}
}

func FuzzPasted(f *testing.F) {
	for _, c := range pastedCases {
		f.Add(c.text)
	}
	for _, s := range writtenCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := Pasted(s)
		if r != Pasted(s) {
			t.Fatalf("not deterministic on %q", s)
		}
		// A sentence that is pasted stays pasted with more output after it
		// only for the rules that look at one spot; the reason is short.
		if len(r) > 60 {
			t.Fatalf("reason %q too long", r)
		}
	})
}

func BenchmarkPasted(b *testing.B) {
	all := make([]string, 0, len(pastedCases)+len(writtenCases)+1)
	for _, c := range pastedCases {
		all = append(all, c.text)
	}
	all = append(all, writtenCases...)
	b.Run("sentences", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			_ = Pasted(all[i%len(all)])
			i++
		}
	})
	// Hostile texts of 64 KB: symbols, colons, open quotes and
	// parentheses, and placeholders, none of which ends the scan early.
	long := strings.Repeat("a:b \"x (at f.go a token 'q [== ", 2000)
	b.Run("64KB", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Pasted(long)
		}
	})
}
