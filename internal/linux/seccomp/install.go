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
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return install(prog, unix.SECCOMP_FILTER_FLAG_TSYNC, "TSYNC")
}

// InstallThread sets no_new_privs and installs prog on the calling OS thread
// only, for a process that must stay unfiltered itself but start its
// command filtered: fork and clone copy the calling thread's filter, so
// every process this thread starts (os.StartProcess, exec.Cmd.Start) runs
// under it, and so does whatever they exec.
//
// InstallThread locks the calling goroutine to its OS thread for good, even
// when it fails, and never unlocks it: were the filtered thread given back
// to the Go scheduler, any goroutine could run on it under the filter. Let
// the goroutine return when it is done; the runtime then ends the thread,
// unless it is the process's main thread, which Go parks for good instead
// (it stays filtered but runs no goroutine again). New runtime threads do
// not inherit the filter: Go creates them from its unfiltered template
// thread when asked from a locked one.
func InstallThread(prog []unix.SockFilter) error {
	runtime.LockOSThread()
	return install(prog, 0, "this thread only")
}

// install runs prctl and seccomp on the locked calling thread: the kernel
// refuses a filter (EACCES) on a thread without no_new_privs.
func install(prog []unix.SockFilter, flags uintptr, how string) error {
	if len(prog) == 0 || len(prog) > unix.BPF_MAXINSNS {
		return fmt.Errorf("seccomp: install: a program of %d instructions; the kernel takes 1 to %d (use Build)", len(prog), unix.BPF_MAXINSNS)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("seccomp: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	tid, err := setModeFilter(prog, flags)
	switch {
	case err != nil:
		hint := "no filter was installed"
		switch err {
		case unix.ENOSYS:
			hint = "the kernel has no seccomp(2): it needs Linux 3.17 or newer with CONFIG_SECCOMP_FILTER; no filter was installed"
		case unix.EINVAL:
			hint = "the kernel refused the program (one Build did not make?) or the TSYNC flag (Linux 3.17 or newer); no filter was installed"
		}
		return fmt.Errorf("seccomp: seccomp(SECCOMP_SET_MODE_FILTER, %s): %w (%s)", how, err, hint)
	case tid != 0:
		return fmt.Errorf("seccomp: thread %d of this process cannot take the filter: it runs under seccomp filters this thread does not have; install before any thread sets a filter of its own (no filter was installed)", tid)
	}
	return nil
}
