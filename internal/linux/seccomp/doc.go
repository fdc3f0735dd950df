//go:build linux

// Package seccomp builds and installs the seccomp filter that every command
// cordon sandboxes on Linux runs under. It is pure Go, without libseccomp:
// Build turns a table of rules into a classic-BPF program, and Install
// applies it to the whole calling process, right before the in-sandbox init
// executes the command.
//
//	prog, err := seccomp.Build(seccomp.Options{AllowUnixSockets: allowAllUnixSockets})
//	if err != nil {
//		return err // ErrUnsupportedArch: there is no filter for this CPU
//	}
//	if err := seccomp.Install(prog); err != nil {
//		return err // never run the command without its filter
//	}
//	return syscall.Exec(path, argv, env)
//
// # What is refused
//
// The filter is a deny list: a call no rule names is allowed. A refused call
// fails with EPERM ("operation not permitted"), which programs already
// expect from a call they lack the privilege for:
//
//	socket(AF_UNIX or AF_VSOCK, ...)  unless network.allowAllUnixSockets; socketpair stays allowed
//	clone with a CLONE_NEW* flag      new namespaces; clone for threads and fork is allowed
//	clone3                            ENOSYS, not EPERM: see below
//	unshare, setns                    leaving or remaking the sandbox's namespaces
//	ioctl TIOCSTI, TIOCLINUX          typing into the user's terminal
//	io_uring_setup/enter/register     io_uring's work is not seen by seccomp
//	ptrace, process_vm_readv/writev,  reaching into other processes
//	pidfd_getfd
//	mount, umount2, pivot_root,       changing the mount tree, old and new API
//	chroot, fsopen, fsconfig,
//	fsmount, fspick, move_mount,
//	open_tree, open_tree_attr,
//	mount_setattr
//	bpf, perf_event_open,             large kernel attack surfaces; the keyring
//	userfaultfd, keyctl, add_key,     is shared with processes outside
//	request_key
//	open_by_handle_at,                opening files around the mount tree
//	name_to_handle_at
//	kexec_load, kexec_file_load,      the machine itself: kernel, modules, swap,
//	init_module, finit_module,        power, accounting, quotas, I/O ports,
//	delete_module, swapon, swapoff,   kernel log, terminal hang-up
//	reboot, acct, quotactl,
//	quotactl_fd, syslog, vhangup,
//	iopl, ioperm (x86_64)
//	lookup_dcookie, uselib (x86_64),  obsolete
//	nfsservctl
//
// Rules returns the same list as data, each with its reason, for the docs
// and `cordon explain`. Most of these calls also need a capability the
// sandbox drops; the filter is the second wall, and the only one inside a
// user namespace, where a process holds capabilities of its own.
//
// # The architecture check
//
// Syscall numbers differ between ABIs, so the filter first checks
// seccomp_data.arch and kills the process (SECCOMP_RET_KILL_PROCESS, seen
// as death by SIGSYS) for any call that does not come through the native
// ABI: a 32-bit call (int 0x80 on x86_64, AArch32 on arm64) would otherwise
// reach, say, socketcall, a number no rule names. x32 calls arrive with the
// x86_64 arch value but with bit 0x40000000 set in the number, so on amd64
// those are killed too. Killing, not refusing: a call through another ABI
// is a way around the number checks, not an everyday failure to recover
// from. It means a 32-bit binary cannot run in the sandbox at all.
//
// Build takes the architecture as data (Options.Arch), with its own table of
// syscall numbers for amd64 and arm64, so either program can be built and
// tested anywhere.
//
// # What seccomp cannot do
//
// A seccomp filter sees the syscall number and the six argument registers,
// never the memory they point to. So:
//
//   - clone3 keeps its flags in a struct behind a pointer, and the filter
//     cannot see CLONE_NEWUSER there. It refuses clone3 outright with ENOSYS,
//     which glibc (2.34+, for threads and posix_spawn) takes as "old kernel"
//     and retries with clone, whose flags are a register and are checked.
//     Go uses clone already (clone3 only for SysProcAttr.UseCgroupFD, which
//     then fails).
//   - The path of a unix socket is in a sockaddr behind a pointer, so the
//     filter cannot tell connect("/run/docker.sock") from a harmless
//     connect. It refuses creating AF_UNIX sockets instead. Unix sockets the
//     process already holds (inherited, or passed in with SCM_RIGHTS) keep
//     working, and so does socketpair, which makes a connected pair with no
//     path and reaches nothing outside.
//   - File paths, network addresses and hosts are out of its sight
//     altogether: those are for bubblewrap's mounts, the network namespace
//     and cordon's proxies.
//
// The argument tests compare the low 32 bits only (socket's domain, clone's
// flags, ioctl's request): the kernel declares these as int, so it drops
// the high half itself, and a call cannot hide TIOCSTI in 0x1_00005412.
//
// # Install
//
// Install sets no_new_privs (a setuid binary then gains nothing, and an
// unprivileged process may install a filter) and installs the program with
// SECCOMP_FILTER_FLAG_TSYNC, which puts it, and no_new_privs, on every
// thread of the process at once, or on none. A Go process always has several
// threads; without TSYNC the ones that did not call Install would run
// unfiltered, and the final execve could happen on one of them.
//
// InstallThread is the other way in, for a process that must stay
// unfiltered itself (cordon's PID 1, which supervises the command): it
// filters only the calling OS thread, locked to its goroutine for good, and
// every process started from that thread inherits the filter.
//
// Nothing undoes a filter, and it is inherited by every child and across
// execve. A command may add filters of its own (seccomp is allowed): the
// kernel runs them all and the strictest verdict wins, so that can only
// refuse more. The package's tests therefore never install a filter in the
// test process: they run the test binary again as a child and read its
// report.
//
// # Cost
//
// The program is a row of comparisons, about 120 instructions. Calls with an
// argument test (ioctl, clone, socket) come first. Every other verdict
// depends on the syscall number alone, so since Linux 5.11 the kernel works
// out once which numbers are always allowed and skips the filter for them;
// read, write and the rest of a command's everyday calls never run it
// (x86_64 and arm64 have that cache).
package seccomp
