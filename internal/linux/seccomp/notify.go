//go:build linux

package seccomp

import (
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// Refusal is one refused call, as the supervisor saw it.
type Refusal struct {
	Pid     int        // in the supervisor's PID namespace
	Syscall string     // "socket", "io_uring_setup", ...
	Arg     string     // the rule's argument test, e.g. "domain == AF_UNIX"; "" when every call is refused
	Errno   unix.Errno // what the caller got
	Args    [6]uint64
	Why     string
}

// Match finds the rule refusing syscall nr with args for o's architecture,
// as the filter does.
func Match(o Options, nr uint32, args [6]uint64) (Refusal, bool) {
	a, _, err := archFor(o)
	if err != nil {
		return Refusal{}, false
	}
	for _, r := range table {
		if !r.appliesTo(a, o) || a.nr[r.sys] != nr || r.notifies() {
			continue
		}
		if r.test != nil && !r.test.matches(uint32(args[r.test.arg])) {
			continue
		}
		arg := ""
		if r.test != nil {
			arg = r.test.String()
		}
		return Refusal{Syscall: r.sys, Arg: arg, Errno: r.errno, Args: args, Why: r.why}, true
	}
	return Refusal{}, false
}

// RefusedNumbers lists the syscalls o's filter has refusal rows for (with
// Notify, those arrive on the listener beside the guard's calls).
func RefusedNumbers(o Options) []uint32 {
	a, _, err := archFor(o)
	if err != nil {
		return nil
	}
	var out []uint32
	for _, r := range table {
		if r.appliesTo(a, o) && !r.notifies() {
			out = append(out, a.nr[r.sys])
		}
	}
	return out
}

// InstallThreadNotify is InstallThread for a program built with Notify: it
// returns the listener descriptor the refusals arrive on. The calling
// thread must be locked, as for InstallThread.
func InstallThreadNotify(prog []unix.SockFilter) (int, error) {
	if len(prog) == 0 || len(prog) > unix.BPF_MAXINSNS {
		return -1, fmt.Errorf("seccomp: install: a program of %d instructions; the kernel takes 1 to %d", len(prog), unix.BPF_MAXINSNS)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return -1, fmt.Errorf("seccomp: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	// WAIT_KILLABLE_RECV (Linux 5.19): once the supervisor has read a
	// notification, only a fatal signal interrupts the caller. Without it
	// any signal withdraws the notification and the call restarts after
	// the guard may already have created the file (a spurious EEXIST).
	fd, err := setModeFilterListener(prog, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER|unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
	if err == unix.EINVAL {
		fd, err = setModeFilterListener(prog, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER)
	}
	if err != nil {
		return -1, fmt.Errorf("seccomp: seccomp(SECCOMP_SET_MODE_FILTER, NEW_LISTENER): %w (user notification needs Linux 5.0)", err)
	}
	return fd, nil
}

// Supervise answers every notification on listener with the refusing
// rule's errno and reports it, until the listener fails (every filtered
// process is gone, or the descriptor is closed). A notification that
// matches no rule (which the filter cannot produce) is answered EPERM.
func Supervise(listener int, o Options, report func(Refusal)) error {
	// The answer is a plain errno, so an interrupted ioctl is only retried;
	// the thread is locked so that the descriptor's ioctls stay on one thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for {
		n, err := recvNotif(listener)
		switch {
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.ENOENT):
			continue // interrupted, or the caller died before we read it
		case err != nil:
			return err
		}
		r, ok := Match(o, n.data.nr, n.data.args)
		if !ok {
			r = Refusal{Syscall: fmt.Sprintf("syscall %d", n.data.nr), Errno: unix.EPERM, Args: n.data.args}
		}
		r.Pid = int(n.pid)
		if err := sendResp(listener, n.id, r.Errno); err != nil && !errors.Is(err, unix.ENOENT) {
			return err
		}
		if report != nil {
			report(r)
		}
	}
}
