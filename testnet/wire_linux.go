//go:build linux

package testnet

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// sockets lists the TCP sockets of this process with their local port and
// the bytes they sent (acknowledged by the peer) and received, from
// TCP_INFO. Listening sockets are skipped.
func sockets() ([]sockStat, bool) {
	dir, err := os.Open("/proc/self/fd")
	if err != nil {
		return nil, false
	}
	names, err := dir.Readdirnames(-1)
	_ = dir.Close() // read only
	if err != nil {
		return nil, false
	}
	var out []sockStat
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		link, err := os.Readlink("/proc/self/fd/" + name)
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		inode, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]"), 10, 64)
		if err != nil {
			continue
		}
		sa, err := syscall.Getsockname(fd)
		if err != nil {
			continue
		}
		in4, ok := sa.(*syscall.SockaddrInet4)
		if !ok {
			continue
		}
		var info [256]byte
		size := uint32(len(info))
		_, _, errno := syscall.Syscall6(syscall.SYS_GETSOCKOPT, uintptr(fd), syscall.IPPROTO_TCP, syscall.TCP_INFO,
			uintptr(unsafe.Pointer(&info[0])), uintptr(unsafe.Pointer(&size)), 0)
		if errno != 0 || size < 136 {
			continue
		}
		const tcpListen = 10
		if info[0] == tcpListen {
			continue
		}
		// struct tcp_info: tcpi_bytes_acked at 120, tcpi_bytes_received at 128.
		sent := *(*uint64)(unsafe.Pointer(&info[120]))
		rcvd := *(*uint64)(unsafe.Pointer(&info[128]))
		// The fd may have been closed and reused meanwhile: keep the reading
		// only if it still names the same socket.
		if again, err := os.Readlink("/proc/self/fd/" + name); err != nil || again != link {
			continue
		}
		out = append(out, sockStat{inode: inode, port: in4.Port, sent: sent, rcvd: rcvd})
	}
	return out, true
}
