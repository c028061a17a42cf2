//go:build unix

package consolidate

import (
	"os/exec"
	"syscall"
)

// killGroup makes cmd the leader of a new process group and, on
// cancellation, kills the whole group, so a shell's children go too.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
