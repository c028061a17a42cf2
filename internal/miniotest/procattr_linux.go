package miniotest

import "syscall"

// procAttr ends the server with the test binary, however that ends.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
