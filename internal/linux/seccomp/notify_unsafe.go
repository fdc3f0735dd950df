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

func setModeFilterListener(prog []unix.SockFilter, flags uintptr) (int, error) {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP,
		unix.SECCOMP_SET_MODE_FILTER,
		flags,
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

// Notif is one notification (struct seccomp_notif).
type Notif struct {
	ID    uint64
	Pid   uint32 // the calling thread, in the listener holder's PID namespace
	Flags uint32
	Nr    uint32
	Arch  uint32
	IP    uint64
	Args  [6]uint64
}

// Recv reads one notification. It blocks unless fd is readable (poll it
// first); EINTR and ENOENT (the caller died before it was read) are the
// caller's to retry.
func Recv(fd int) (Notif, error) {
	var n Notif // zeroed: the kernel refuses a dirty struct
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.SECCOMP_IOCTL_NOTIF_RECV), uintptr(unsafe.Pointer(&n)))
	if errno != 0 {
		return n, errno
	}
	return n, nil
}

// Respond answers notification id: the call returns val, or fails with
// errno when errno is not 0. ENOENT: the caller is gone (or was
// interrupted) and got no answer.
func Respond(fd int, id uint64, val int64, errno unix.Errno) error {
	resp := seccompNotifResp{id: id, val: val, error: -int32(errno)}
	if errno != 0 {
		resp.val = 0
	}
	return ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

// Continue lets the kernel run the call as if it had not been filtered.
// Only safe for calls whose arguments are plain values: the kernel reads
// any memory they point to again, after the supervisor looked.
func Continue(fd int, id uint64) error {
	resp := seccompNotifResp{id: id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	return ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

type notifAddFD struct {
	id         uint64
	flags      uint32
	srcfd      uint32
	newfd      uint32
	newfdFlags uint32
}

// AddFDSend installs a copy of srcfd in the caller's descriptor table and
// answers notification id with its number, atomically
// (SECCOMP_ADDFD_FLAG_SEND, Linux 5.14). The calling thread must block
// asynchronous signals: an interrupted ADDFD can leave the caller with a
// bogus answer.
func AddFDSend(fd int, id uint64, srcfd int, cloexec bool) (int, error) {
	a := notifAddFD{id: id, flags: unix.SECCOMP_ADDFD_FLAG_SEND, srcfd: uint32(srcfd)}
	if cloexec {
		a.newfdFlags = unix.O_CLOEXEC
	}
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.SECCOMP_IOCTL_NOTIF_ADDFD), uintptr(unsafe.Pointer(&a)))
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

// idValidOld is SECCOMP_IOCTL_NOTIF_ID_VALID before Linux 5.17, which
// declared it with the wrong direction (_IOR); the kernel still takes it.
const idValidOld = 0x80082102

// IDValid reports whether notification id is still pending: its caller
// is alive and still in that call. Check it after reading the caller's
// memory, before acting on what was read.
func IDValid(fd int, id uint64) bool {
	err := ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id))
	if err == unix.EINVAL || err == unix.ENOTTY {
		err = ioctlPtr(fd, idValidOld, unsafe.Pointer(&id))
	}
	return err == nil
}

// SetSyncWakeUp asks the kernel to switch straight to the supervisor on a
// notification and back to the caller on the answer
// (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, Linux 6.6): less latency per
// guarded call. Older kernels answer EINVAL; nothing else changes.
func SetSyncWakeUp(fd int) error {
	var flags uint64 = unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS), uintptr(flags))
	runtime.KeepAlive(flags)
	if errno != 0 {
		return errno
	}
	return nil
}

func ioctlPtr(fd int, req uint, p unsafe.Pointer) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(p))
	if errno != 0 {
		return errno
	}
	return nil
}
