//go:build linux

package seccomp

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// struct seccomp_data, seccomp_notif and seccomp_notif_resp
// (include/uapi/linux/seccomp.h).
type kernelSeccompData struct {
	nr   uint32
	arch uint32
	ip   uint64
	args [6]uint64
}

type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	data  kernelSeccompData
}

type seccompNotifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

func setModeFilterListener(prog []unix.SockFilter) (int, error) {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP,
		unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_NEW_LISTENER,
		uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

// recvNotif reads one notification; the struct must be zeroed each time.
func recvNotif(fd int) (seccompNotif, error) {
	var n seccompNotif
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.SECCOMP_IOCTL_NOTIF_RECV), uintptr(unsafe.Pointer(&n)))
	if errno != 0 {
		return n, errno
	}
	return n, nil
}

func sendResp(fd int, id uint64, e unix.Errno) error {
	resp := seccompNotifResp{id: id, error: -int32(e)}
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.SECCOMP_IOCTL_NOTIF_SEND), uintptr(unsafe.Pointer(&resp)))
	if errno != 0 {
		return errno
	}
	return nil
}
