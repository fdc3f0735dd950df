//go:build linux

package seccomp

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// setModeFilterTSYNC calls seccomp(SECCOMP_SET_MODE_FILTER,
// SECCOMP_FILTER_FLAG_TSYNC, &prog). With TSYNC the kernel answers a
// positive thread id, not an errno, when some thread cannot be synchronized;
// it then has installed nothing.
func setModeFilterTSYNC(prog []unix.SockFilter) (tid int, err error) {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP,
		unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC,
		uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}
