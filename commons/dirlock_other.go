//go:build !unix

package commons

import "os"

// lockDir: no flock here; one server per directory is the operator's to keep.
func lockDir(string) (*os.File, error) { return nil, nil }
