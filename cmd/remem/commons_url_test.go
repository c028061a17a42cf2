package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/remem/remem/commons/commonstest"
)

// TestCommonsURLForms: `remem commons push` and `pull` take the seed's
// form https://host/commons/ as well as https://host, https://host/ and
// https://host/commons, as one commons (one pull-state file); another path
// is a usage error that says what to write.
func TestCommonsURLForms(t *testing.T) {
	url := commonstest.Start(t)
	t.Setenv("REMEM_COMMONS_TOKEN", "tok")
	a, b := newHome(t), newHome(t)
	must(t, a, nil, "publish", "--kind", "error", "The mirror build fails after midnight.")
	must(t, a, nil, "commons", "push", url+"/commons/")
	for i, form := range []string{url, url + "/", url + "/commons", url + "/commons/"} {
		out := must(t, b, nil, "commons", "pull", "--json", form)
		if i == 0 && !strings.Contains(out, `"accepted": 1`) || i > 0 && !strings.Contains(out, `"accepted": 0`) {
			t.Errorf("pull %d from %s:\n%s", i, form, out)
		}
	}
	if states, _ := filepath.Glob(filepath.Join(b, "commons-*.json")); len(states) != 1 {
		t.Errorf("pull-state files: %v, want one", states)
	}
	for _, bad := range []string{url + "/remem/", url + "/commons/index"} {
		out, errOut, code := run(t, b, nil, "commons", "pull", bad)
		if code != 2 || !strings.Contains(errOut, "path") || !strings.Contains(errOut, "/commons/") {
			t.Errorf("pull %s: exit %d\n%s%s", bad, code, out, errOut)
		}
	}

}
