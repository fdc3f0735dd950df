//go:build linux

package seccomp

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Raw syscalls with pointer arguments, for the probes in kernel_test.go.

// ioUringSetup calls io_uring_setup(1, &params) and closes the ring it may
// get.
func ioUringSetup() error {
	var params [15]uint64 // struct io_uring_params, 120 bytes
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
	if errno != 0 {
		return errno
	}
	unix.Close(int(fd))
	return nil
}

// clone3Zeroed calls clone3 with a zeroed struct clone_args (88 bytes):
// a plain fork. Run it only where the filter is meant to refuse it; should
// the call get through, the child leaves at once.
func clone3Zeroed() error {
	var args [11]uint64
	pid, _, errno := unix.RawSyscall(unix.SYS_CLONE3, uintptr(unsafe.Pointer(&args)), unsafe.Sizeof(args), 0)
	if errno != 0 {
		return errno
	}
	if pid == 0 {
		unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
	return nil
}

// ioctlPushByte pushes one byte into the input of the terminal fd refers to,
// with request as the raw 64-bit ioctl argument.
func ioctlPushByte(fd int, request uint64) error {
	c := byte('x')
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(request), uintptr(unsafe.Pointer(&c)))
	if errno != 0 {
		return errno
	}
	return nil
}
