//go:build linux

package seccomp

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestNumbersAmd64 checks the amd64 tables, which Build uses on any
// architecture, against golang.org/x/sys, which is generated from the
// kernel's headers but only describes the architecture it is built for: this
// file builds only on amd64.
func TestNumbersAmd64(t *testing.T) {
	want := map[string]uint32{
		"open":              unix.SYS_OPEN,
		"openat":            unix.SYS_OPENAT,
		"openat2":           unix.SYS_OPENAT2,
		"creat":             unix.SYS_CREAT,
		"mkdir":             unix.SYS_MKDIR,
		"mkdirat":           unix.SYS_MKDIRAT,
		"mknod":             unix.SYS_MKNOD,
		"mknodat":           unix.SYS_MKNODAT,
		"rename":            unix.SYS_RENAME,
		"renameat":          unix.SYS_RENAMEAT,
		"renameat2":         unix.SYS_RENAMEAT2,
		"link":              unix.SYS_LINK,
		"linkat":            unix.SYS_LINKAT,
		"symlink":           unix.SYS_SYMLINK,
		"symlinkat":         unix.SYS_SYMLINKAT,
		"umask":             unix.SYS_UMASK,
		"connect":           unix.SYS_CONNECT,
		"bind":              unix.SYS_BIND,
		"ioctl":             unix.SYS_IOCTL,
		"clone":             unix.SYS_CLONE,
		"clone3":            unix.SYS_CLONE3,
		"socket":            unix.SYS_SOCKET,
		"io_uring_setup":    unix.SYS_IO_URING_SETUP,
		"io_uring_enter":    unix.SYS_IO_URING_ENTER,
		"io_uring_register": unix.SYS_IO_URING_REGISTER,
		"unshare":           unix.SYS_UNSHARE,
		"setns":             unix.SYS_SETNS,
		"ptrace":            unix.SYS_PTRACE,
		"process_vm_readv":  unix.SYS_PROCESS_VM_READV,
		"process_vm_writev": unix.SYS_PROCESS_VM_WRITEV,
		"pidfd_getfd":       unix.SYS_PIDFD_GETFD,
		"bpf":               unix.SYS_BPF,
		"keyctl":            unix.SYS_KEYCTL,
		"add_key":           unix.SYS_ADD_KEY,
		"request_key":       unix.SYS_REQUEST_KEY,
		"userfaultfd":       unix.SYS_USERFAULTFD,
		"perf_event_open":   unix.SYS_PERF_EVENT_OPEN,
		"mount":             unix.SYS_MOUNT,
		"umount2":           unix.SYS_UMOUNT2,
		"pivot_root":        unix.SYS_PIVOT_ROOT,
		"chroot":            unix.SYS_CHROOT,
		"fsopen":            unix.SYS_FSOPEN,
		"fsconfig":          unix.SYS_FSCONFIG,
		"fsmount":           unix.SYS_FSMOUNT,
		"fspick":            unix.SYS_FSPICK,
		"move_mount":        unix.SYS_MOVE_MOUNT,
		"open_tree":         unix.SYS_OPEN_TREE,
		"open_tree_attr":    unix.SYS_OPEN_TREE_ATTR,
		"mount_setattr":     unix.SYS_MOUNT_SETATTR,
		"kexec_load":        unix.SYS_KEXEC_LOAD,
		"kexec_file_load":   unix.SYS_KEXEC_FILE_LOAD,
		"init_module":       unix.SYS_INIT_MODULE,
		"finit_module":      unix.SYS_FINIT_MODULE,
		"delete_module":     unix.SYS_DELETE_MODULE,
		"open_by_handle_at": unix.SYS_OPEN_BY_HANDLE_AT,
		"name_to_handle_at": unix.SYS_NAME_TO_HANDLE_AT,
		"swapon":            unix.SYS_SWAPON,
		"swapoff":           unix.SYS_SWAPOFF,
		"reboot":            unix.SYS_REBOOT,
		"acct":              unix.SYS_ACCT,
		"quotactl":          unix.SYS_QUOTACTL,
		"quotactl_fd":       unix.SYS_QUOTACTL_FD,
		"iopl":              unix.SYS_IOPL,
		"ioperm":            unix.SYS_IOPERM,
		"syslog":            unix.SYS_SYSLOG,
		"vhangup":           unix.SYS_VHANGUP,
		"lookup_dcookie":    unix.SYS_LOOKUP_DCOOKIE,
		"uselib":            unix.SYS_USELIB,
		"nfsservctl":        unix.SYS_NFSSERVCTL,
		"read":              unix.SYS_READ,
		"write":             unix.SYS_WRITE,
		"getpid":            unix.SYS_GETPID,
		"socketpair":        unix.SYS_SOCKETPAIR,
		"execve":            unix.SYS_EXECVE,
		"fork":              unix.SYS_FORK,
		"vfork":             unix.SYS_VFORK,
		"personality":       unix.SYS_PERSONALITY,
		"kcmp":              unix.SYS_KCMP,
		"seccomp":           unix.SYS_SECCOMP,
	}
	checkNumbers(t, "amd64", want)
}
