//go:build linux

package guard

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawSockCall makes connect or bind on sock with the address bytes as read.
func (w *worker) rawSockCall(call string, sock int, raw []byte) answer {
	nr := uintptr(unix.SYS_CONNECT)
	if call == "bind" {
		nr = unix.SYS_BIND
	}
	_, _, e := unix.Syscall(nr, uintptr(sock), uintptr(unsafe.Pointer(&raw[0])), uintptr(len(raw)))
	if e != 0 {
		return fail(e)
	}
	return done
}
