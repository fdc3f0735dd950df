//go:build linux

package seccomp

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// setModeFilter calls seccomp(SECCOMP_SET_MODE_FILTER, flags, &prog).
// With SECCOMP_FILTER_FLAG_TSYNC the kernel answers a positive thread id,
// not an errno, when some thread cannot be synchronized; it then has
// installed nothing.
func setModeFilter(prog []unix.SockFilter, flags uintptr) (tid int, err error) {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP,
		unix.SECCOMP_SET_MODE_FILTER,
		flags,
		uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}
