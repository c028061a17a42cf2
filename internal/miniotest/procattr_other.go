//go:build !linux

package miniotest

import "syscall"

// procAttr: only Linux ends a child with its parent; Stop ends it here.
func procAttr() *syscall.SysProcAttr { return nil }
