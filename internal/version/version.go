// Package version says which build of remem is running, from what the Go
// toolchain records in the binary: the module version (a tagged release
// installed with `go install …@v1.2.3`) and the VCS revision it was built
// from, so `remem version`, MCP clients and the commons' info document
// name the same build.
package version

import (
	"runtime/debug"
	"strings"
)

// Info is what the build recorded.
type Info struct {
	Module   string `json:"module"`   // module version, "(devel)" for a build from a checkout
	Revision string `json:"revision"` // VCS revision, "" when not recorded
	Time     string `json:"time"`     // commit time (RFC 3339), "" when not recorded
	Modified bool   `json:"modified"` // built from a tree with uncommitted changes
	Go       string `json:"go"`       // toolchain
}

// Read returns the running binary's build information.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Module: "(unknown)"}
	}
	in := Info{Module: bi.Main.Version, Go: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// String is the short form: the module version when it is a release, else
// "devel" with the first 12 characters of the revision ("devel+3c32306a1b2c",
// "-dirty" when modified); "dev" when nothing was recorded (go test, go run
// of a file).
func String() string { return Read().String() }

func (in Info) String() string {
	if in.Module != "" && in.Module != "(devel)" && in.Module != "(unknown)" {
		return in.Module
	}
	if in.Revision == "" {
		return "dev"
	}
	var b strings.Builder
	b.WriteString("devel+")
	b.WriteString(in.Revision[:min(12, len(in.Revision))])
	if in.Modified {
		b.WriteString("-dirty")
	}
	return b.String()
}
