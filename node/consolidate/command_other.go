//go:build !unix

package consolidate

import "os/exec"

// killGroup leaves the default: cancellation kills the shell only.
func killGroup(*exec.Cmd) {}
