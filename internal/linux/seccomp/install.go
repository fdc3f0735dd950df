//go:build linux

package seccomp

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// Install sets no_new_privs and installs prog on every thread of the calling
// process. It cannot be undone: call it right before syscall.Exec of the
// command, in a process that has nothing else to do. The filter is inherited
// across fork, clone and execve.
//
// no_new_privs is what lets an unprivileged process install a filter, and it
// stops a setuid binary from gaining privileges the filter did not see. It is
// per thread, so Install sets it and installs the filter from one locked OS
// thread; SECCOMP_FILTER_FLAG_TSYNC then gives every other thread of the
// process both the filter and no_new_privs, or fails without changing any
// thread. Without TSYNC a Go program would keep unfiltered threads, and the
// exec could run on one of them.
func Install(prog []unix.SockFilter) error {
	if len(prog) == 0 || len(prog) > unix.BPF_MAXINSNS {
		return fmt.Errorf("seccomp: install: a program of %d instructions; the kernel takes 1 to %d (use Build)", len(prog), unix.BPF_MAXINSNS)
	}
	// prctl and seccomp must run on the same thread: the kernel refuses
	// the filter (EACCES) on a thread without no_new_privs.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("seccomp: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	tid, err := setModeFilterTSYNC(prog)
	switch {
	case err != nil:
		return fmt.Errorf("seccomp: seccomp(SECCOMP_SET_MODE_FILTER, TSYNC): %w (the kernel needs CONFIG_SECCOMP_FILTER, Linux 3.17 or newer; no filter was installed)", err)
	case tid != 0:
		return fmt.Errorf("seccomp: thread %d of this process cannot take the filter: it runs under seccomp filters this thread does not have; install before any thread sets a filter of its own (no filter was installed)", tid)
	}
	return nil
}
