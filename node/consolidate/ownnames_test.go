package consolidate

import "testing"

func TestDropOwnNames(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`Failed to pull image "quay.io/northwind/orders:2.3": 403 Forbidden`, `Failed to pull image: 403 Forbidden`},
		{`copy failed: out/a.csv to gs://northwind-exports/daily/a.csv AccessDenied`, `copy failed: out/a.csv AccessDenied`},
		{`The agent set NO_PROXY=http://gw.lan.example:8080 and curl worked`, `The agent set NO_PROXY and curl worked`},
		{`GOPRIVATE=gitlab.example.org/northwind/* is missing, so the northwind modules go to the proxy`, `GOPRIVATE is missing, so the modules go to the proxy`},
		{`(NamespaceNotFound) namespace "team-billing-2" was not found.`, `(NamespaceNotFound) namespace was not found.`},
		// kept: words, public API groups, paths in the project
		{`namespace "default" was not found`, `namespace "default" was not found`},
		{`the manifest still uses networking.k8s.io/v1beta1`, `the manifest still uses networking.k8s.io/v1beta1`},
		{`.venv/bin/python -m pytest passes`, `.venv/bin/python -m pytest passes`},
		{`the key 'max_retries' is unknown`, `the key 'max_retries' is unknown`},
	} {
		if got := dropOwnNames(c.in); got != c.want {
			t.Errorf("dropOwnNames(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
