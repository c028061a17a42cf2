package scopes

import "testing"

func TestParseReadsWhatTheBuildersWrite(t *testing.T) {
	for _, c := range []struct {
		scope string
		kind  Kind
		rest  string
	}{
		{Local, KindLocal, ""},
		{Team("infra"), KindTeam, "infra"},
		{Team(""), KindTeam, ""},
		{Folder("/srv/shared"), KindFolder, "/srv/shared"},
		{Commons("https://commons.example/"), KindCommons, "https://commons.example/"},
		{"localhost", KindUnknown, ""},
		{"team", KindUnknown, ""},
		{"", KindUnknown, ""},
		{"Commons:https://x", KindUnknown, ""}, // the prefixes are lower case, as written
	} {
		kind, rest := Parse(c.scope)
		if kind != c.kind || rest != c.rest {
			t.Errorf("Parse(%q) = %v, %q; want %v, %q", c.scope, kind, rest, c.kind, c.rest)
		}
		if Of(c.scope) != c.kind {
			t.Errorf("Of(%q) = %v, want %v", c.scope, Of(c.scope), c.kind)
		}
	}
}
