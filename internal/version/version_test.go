package version

import "testing"

func TestString(t *testing.T) {
	for _, c := range []struct {
		in   Info
		want string
	}{
		{Info{Module: "v1.2.3", Revision: "abc"}, "v1.2.3"},
		{Info{Module: "(devel)", Revision: "3c32306a1b2c4d5e6f"}, "devel+3c32306a1b2c"},
		{Info{Module: "(devel)", Revision: "3c32306", Modified: true}, "devel+3c32306-dirty"},
		{Info{Module: "(devel)"}, "dev"},
		{Info{Module: "(unknown)"}, "dev"},
	} {
		if got := c.in.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.in, got, c.want)
		}
	}
	_ = String() // the test binary records no VCS revision: must not panic
}
