package textcheck

import "testing"

func TestCutOut(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"deno test fails with ERRORS.", "an empty message"},
		{"node build.js fails with Error.", "an empty message"},
		{"the job fails with during connect.", "a message that opens on a function word"},
		{"migrate fails because an internal host: Migration 0001 is applied before.", "a placeholder read as a label"},
		{"npm run build fails with + CategoryInfo : SecurityError: (:) [], PSSecurityException.", "output markers"},
		{"gh run view fails with deploy ##[error]Input required and not supplied.", "output markers"},
		{"flutter build fails with [!] CocoaPods could not find compatible versions.", "output markers"},
		{"composer install fails to download a package from dist: The.", "a cut-off end"},
		{`dotnet build fails with C:\Program.`, "a cut-off end"},
		{"The image was built for arm64 and the nodes are amd64. .dockerignore lists the keys.", "two sentences"},
		{"web2 was rebuilt; its a private name for the deploy user only has the new key.", "a placeholder where a name was"},
		{"bazel build fails because Repository 'a person' is not defined.", "a placeholder where a name was"},
		{"kustomize build fails with accumulating resources: accumulation err='accumulating resources from the overlay.", "an unclosed quote"},
		{"Settings lists the group runner an internal host as online.", "a placeholder where the events named something"},
		{"The import says a file in the repository; APFS is case-insensitive.", "a placeholder where the events named something"},
		{`journalctl fails with {"level":"error","msg":"could not get certificate from issuer".`, "an unclosed bracket"},
		{"The job (the deploy step fails.", "an unclosed bracket"},
		{"It has no CA bundle until the installer is run. curl to the same URL works.", "two sentences"},
		{"php8.3-fpm listens on php8.3-fpm.sock. sites-enabled/shop still points at 8.1.", "two sentences"},
		{"kubectl get pods: version difference between client and server exceeds the skew.", "a label for output"},
		{"This is a fresh Ubuntu 24.04 VM: and openssl-sys needs both to locate the system OpenSSL.", "a clause left out"},
		{"bazel build could not download Bazel: failed to download bazel: failed to download bazel: HTTP GET.", "a message said twice"},
		{"Nothing in docker ps uses 6379; enabled at boot.", "a clause left out"},
		{"The cache was cold; rebuilt images took ten minutes.", ""},
		{"printed: warning: in the working copy LF will be replaced by CRLF.", "a label for output"},
		{"`kustomize build overlays/staging` succeeded but printed.", "a cut-off end"},
		{"The dashboard says.", "a cut-off end"},
		{"The person objected because it's baseline for exactly.", "a cut-off end"},
		// written
		{"The person's commit said nothing about the key.", ""},
		{"pip install fails with a personal token missing.", ""},
		{"A flag x='a b' was set.", ""},
		{"My fix had no effect: npm run start runs the old build.", "someone's own words"},
		{"Tools (e.g. npm, pip, etc. and more) read the proxy variables.", ""},
		{"The map (from `{` to the end) stays empty (as it [the cache] should).", ""},
		{"docker build fails with ENOSPC because the build cache filled the disk.", ""},
		{"bash train.sh fails with CondaError.", ""},
		{"npm install fails with code E404.", ""},
		{"the request fails with timeout.", ""},
		{"go test -race fails because the race detector needs cgo, and CGO_ENABLED=0 was set.", ""},
		{"the upload fails because of the proxy's 1m body limit.", ""},
		{"ruff check fails with E501: Line too long (97 > 88).", ""},
		{"The person objected to the agent adding `ignore_missing_imports = true` to silence the errors.", ""},
		{"The person wanted the agent to put `/* /index.html 200` in public/_redirects.", ""},
		{"go test fails with undefined: mocks.NewClient until go generate has run.", ""},
		{"Running git push is rejected because the remote has commits that the local branch lacks.", ""},
		{"psql fails with 'must be owner of table invoices' because the migrator role is not the owner.", ""},
		{"The lock was left by an earlier terraform apply that was interrupted with Ctrl-C.", ""},
		{"kubectl apply -f k8s/ fails with ImagePullBackOff -> 401 from the registry.", ""},
		// stitched rather than cut (unfinished)
		{"terraform apply fails.", "a failure with no message"},
		{"The upload failed because the proxy caps bodies at 1 MB.", ""},
		{"The GPU is full, so even loading a small model onto it fails.", ""},
		{"cargo build is unable to link: cannot find -lssl: no such file.", "a chain of messages"},
		{`The plan printed "Error: x: y" and stopped.`, ""},
		{"The disk was full; Removed the old images and the build passed.", "no subject"},
		{"Deleted the cache and the tests passed.", "no subject"},
		{"Rebuilt images are larger on arm64.", ""},
		{"The build uses JDK 17; Since 21 the flag is gone.", "a new sentence glued on"},
		{"The job fails because Test discovery found nothing.", "a new sentence glued on"},
		{"npm publish fails because UNAUTHORIZED ACCESS: the token expired.", "a new sentence glued on"},
		{"pod fails with Status: Evicted after the node ran out of memory.", "a new sentence glued on"},
		{"The image builds on Linux, Docker Desktop on macOS caches it.", ""},
		{"docker build fails with ENOSPC; GitHub's runners have 14 GB of disk.", ""},
		{"The person wanted the agent to keep it because I still need the logs.", "someone's own words"},
		{"The plugin printed 'I/O error' when the disk filled.", ""},
		{"The check needs a RoleBinding there too (or drop that check).", "an aside that orders"},
		{"The person wanted the agent to pin it — the SDK only ships 1.70.", "a person's words spliced"},
		{"ssh fails because the agent've no key loaded.", "a person's words spliced"},
		{"The flag is invisible. `git mv` records the rename.", "two sentences"},
		{"Tools (e.g. The Silver Searcher) skip it.", ""},
		{"But the disk has 40% free, so it is not full.", "a clause left out"},
		{"The person wanted the agent to or just call the wrapper.", "a clause left out"},
		{"mysql fails with ERROR 1045: Access denied.", "a new sentence glued on"},
		{"Butane configs are YAML.", ""},
		{"x86_64.", "no statement"},
		{"composer install fails with error.", "an empty message"},
		{"bundle exec fails with rbenv.", "an empty message"},
		{"bash setup.sh fails with invalid option.", "an empty message"},
		{"podman run fails with permission denied.", ""},
		{"cargo test fails with [command timed out after 600s].", "output markers"},
		{"A `vite` server the agent started yesterday and never stopped.", "no statement"},
		{"A stale lock the agent left behind blocks every later apply.", ""},
		{"The lock file only has the h1: the runner is linux_amd64.", "a cut-off end"},
		{"BSD sed takes a suffix after -i; GNU sed syntax doesn't.", "a cut-off end"},
		{"Exit code 137 from the container.", "no statement"},
		{"So this shell runs under Rosetta.", "a clause left out"},
		{"Because the image copies the prod ini; the cache never rechecks.", "a clause left out"},
		{"The person said it is not in the bashrc, and That flag is global.", "a new sentence glued on"},
	} {
		if got := CutOut(c.text); got != c.want {
			t.Errorf("CutOut(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func FuzzCutOut(f *testing.F) {
	f.Add("deno test fails with ERRORS.")
	f.Add("fails with")
	f.Add(". . .")
	f.Fuzz(func(t *testing.T, s string) { CutOut(s) })
}
