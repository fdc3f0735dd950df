//go:build linux

// Package guard is cordon's create-time guard on Linux: it refuses the
// creation of files by name (a new .env, key.pem or .bashrc inside a
// writable directory), which mounts alone cannot do, because they only
// cover paths that exist when the sandbox starts.
//
// The seccomp filter (seccomp.Options.Guard) hands every call that creates
// or renames a name to this package as a user notification: open and
// openat with O_CREAT or O_TMPFILE, creat, mkdir, mknod, rename, link and
// symlink with their *at forms. Serve, running in the sandbox's PID 1 (the
// same mount view, user and credentials as the command, outside its
// filter), reads the path from the caller's memory once, resolves it the
// way the kernel would from the caller's working directory or directory
// descriptor, checks the final path against the filename rules
// (policy.CreateRules) and then performs the call itself on the
// directories it resolved: an opened file goes to the caller with
// SECCOMP_IOCTL_NOTIF_ADDFD, any other result as the call's return value.
// The call is never continued, so a second thread that rewrites the path
// after the check changes nothing: the kernel never reads it again.
//
// If the guard dies, the kernel fails the notified calls: the command can
// no longer create files, it does not get a free pass. See docs/linux.md,
// "The create-time guard", for what is checked and why.
package guard

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cordon-sandbox/cordon/internal/linux/seccomp"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/violation"
	"golang.org/x/sys/unix"
)

// Config is the guard's part of the sandbox's configuration.
type Config struct {
	Rules   *policy.CreateRules `json:"rules"`
	Seccomp seccomp.Options     `json:"seccomp"`
	// UnixSockets are network.allowUnixSockets, for Seccomp.UnixPaths.
	UnixSockets []policy.Path `json:"unixSockets,omitempty"`
	// Threads answering notifications; 0: one more than the CPUs, at most 8.
	Threads int `json:"threads,omitempty"`
}

// Guard answers the notifications of one listener.
type Guard struct {
	listener int
	opts     seccomp.Options
	rules    *policy.CreateRules
	report   func(violation.Violation)

	unixSockets []policy.Path
	refusing    map[uint32]bool // syscalls with refusal rows in the filter

	base        int32        // handler threads at start
	idle, total atomic.Int32 // handler threads waiting, and alive
	threads     sync.WaitGroup

	renamesStarted, renamesDone atomic.Int64 // see renameSnapshot

	root    int    // O_PATH descriptor of "/"
	procDev uint64 // st_dev of /proc
	self    int    // this process's PID: its /proc entries are never handed out

	procs procCache
	Stats Stats
}

// Stats count what the guard did, for tests and benchmarks.
type Stats struct {
	Checked  atomic.Int64 // notifications answered
	Refused  atomic.Int64 // creations refused by a rule
	SlowWalk atomic.Int64 // paths resolved component by component
}

// MinKernel is the oldest kernel the guard runs on: SECCOMP_ADDFD_FLAG_SEND
// (5.14) answers a call with a descriptor in one step.
const MinKernel = "5.14"

// KernelSupported reports whether release (uname -r) is at least MinKernel.
func KernelSupported(release string) bool {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	digits := parts[1]
	for i, c := range digits {
		if c < '0' || c > '9' {
			digits = digits[:i]
			break
		}
	}
	minor, err2 := strconv.Atoi(digits)
	if err1 != nil || err2 != nil {
		return false
	}
	return major > 5 || major == 5 && minor >= 14
}

// New prepares a guard for listener. It refuses to run with capabilities:
// the guard creates files with its own credentials, which must be the
// command's, with no way around permission checks.
func New(listener int, cfg Config, report func(violation.Violation)) (*Guard, error) {
	if cfg.Rules == nil {
		return nil, errors.New("guard: no rules")
	}
	if err := noCapabilities(); err != nil {
		return nil, err
	}
	root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("guard: opening /: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Stat("/proc", &st); err != nil {
		unix.Close(root)
		return nil, fmt.Errorf("guard: /proc: %w", err)
	}
	if report == nil {
		report = func(violation.Violation) {}
	}
	g := &Guard{listener: listener, opts: cfg.Seccomp, rules: cfg.Rules, report: report,
		root: root, procDev: st.Dev, self: os.Getpid(), unixSockets: cfg.UnixSockets}
	g.procs.m = map[int]*procInfo{}
	g.refusing = map[uint32]bool{}
	for _, nr := range seccomp.RefusedNumbers(cfg.Seccomp) {
		g.refusing[nr] = true
	}
	// Fewer wake-ups per call where the kernel can (6.6+); ignored before.
	if err := seccomp.SetSyncWakeUp(listener); err != nil && os.Getenv("CORDON_GUARD_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, "sync wake up: %v\n", err)
	}
	return g, nil
}

// noCapabilities checks that this process holds no effective capability.
func noCapabilities() error {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return fmt.Errorf("guard: reading /proc/self/status: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			if n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err != nil || n != 0 {
				return fmt.Errorf("guard: this process holds capabilities (CapEff %s); the guard creates files for the command and must have exactly its rights", strings.TrimSpace(v))
			}
			return nil
		}
	}
	return errors.New("guard: no CapEff line in /proc/self/status")
}

// Serve answers notifications on threads of their own until the listener
// hangs up (every filtered process is gone). Each thread is locked, blocks
// asynchronous signals (an interrupted ADDFD can leave the caller with a
// bogus descriptor) and has its own umask.
func (g *Guard) Serve(threads int) {
	if threads <= 0 {
		// One more than the cores: a thread waiting for its ADDFD to be
		// taken up must not leave the other callers unanswered.
		threads = min(runtime.NumCPU()+1, 8)
	}
	// Every thread waits on the listener, and each notification wakes
	// them all; one takes it. Measured on two cores, that costs less than
	// handing a turn from thread to thread (which puts two wake-ups on
	// every call's path).
	g.base = int32(threads)
	for i := 0; i < threads; i++ {
		g.spawn()
	}
	g.threads.Wait()
}

// maxThreads bounds the handler threads. A call can block in the guard
// as long as it would have blocked in the kernel (opening a FIFO waits for
// the other end; a connect waits for a full backlog): when every thread
// is busy another is started, so one such call never holds up the rest,
// and the extra threads end once they are idle again.
const maxThreads = 64

func (g *Guard) spawn() {
	g.idle.Add(1)
	g.total.Add(1)
	g.threads.Add(1)
	go func() {
		defer g.threads.Done()
		// Never unlocked: the thread's signal mask and file system
		// attributes are its own from here on, and Go ends it when
		// this goroutine returns.
		runtime.LockOSThread()
		if err := prepareThread(); err != nil {
			fmt.Fprintf(os.Stderr, "cordon: guard: %v\n", err)
			g.idle.Add(-1)
			g.total.Add(-1)
			return
		}
		g.loop()
	}()
}

// prepareThread gives the calling thread its own umask (unshare CLONE_FS)
// and blocks every signal that is not a synchronous fault.
func prepareThread() error {
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return fmt.Errorf("unshare(CLONE_FS): %w", err)
	}
	var set unix.Sigset_t
	for i := range set.Val {
		set.Val[i] = ^uint64(0)
	}
	for _, s := range []unix.Signal{unix.SIGSEGV, unix.SIGBUS, unix.SIGFPE, unix.SIGILL, unix.SIGTRAP, unix.SIGSYS} {
		set.Val[0] &^= 1 << (uint(s) - 1)
	}
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, nil); err != nil {
		return fmt.Errorf("blocking signals: %w", err)
	}
	return nil
}

func (g *Guard) loop() {
	w := newWorker(g)
	for {
		n, err := g.next()
		if err != nil {
			g.idle.Add(-1)
			g.total.Add(-1)
			return
		}
		if g.idle.Add(-1) == 0 && g.total.Load() < maxThreads {
			g.spawn()
		}
		w.handle(n)
		if g.idle.Add(1) > g.base && g.total.Load() > g.base {
			g.idle.Add(-1)
			g.total.Add(-1)
			return
		}
	}
}

// next waits for the next notification. It fails once every filtered
// process is gone (POLLHUP) or the listener is broken.
func (g *Guard) next() (seccomp.Notif, error) {
	for {
		pfd := []unix.PollFd{{Fd: int32(g.listener), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return seccomp.Notif{}, err
		}
		if pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
			return seccomp.Notif{}, unix.EPIPE
		}
		n, err := seccomp.Recv(g.listener)
		switch {
		case err == unix.EINTR || err == unix.ENOENT:
			continue // interrupted, or the caller died before it was read
		case err != nil:
			return n, err
		}
		return n, nil
	}
}

// answer is the result of one call.
type answer struct {
	val   int64
	errno unix.Errno
	fd    int  // >= 0: hand this descriptor to the caller (and close it)
	cloex bool // with O_CLOEXEC
	gone  bool // the caller is gone: no answer
	cont  bool // let the kernel run the call (plain-value arguments only)
}

func fail(e unix.Errno) answer { return answer{errno: e, fd: -1} }

var done = answer{fd: -1}

func (w *worker) respond(n seccomp.Notif, a answer) {
	g := w.g
	g.Stats.Checked.Add(1)
	switch {
	case a.gone:
	case a.cont:
		seccomp.Continue(g.listener, n.ID)
	case a.fd >= 0:
		if _, err := seccomp.AddFDSend(g.listener, n.ID, a.fd, a.cloex); err != nil && err != unix.ENOENT {
			// EMFILE and the like: the caller's table is full.
			seccomp.Respond(g.listener, n.ID, 0, err.(unix.Errno))
		}
		unix.Close(a.fd)
	default:
		seccomp.Respond(g.listener, n.ID, a.val, a.errno)
	}
}

// refuse reports a refused creation and answers EPERM.
func (w *worker) refuse(call, path string, v policy.Verdict) answer {
	w.g.Stats.Refused.Add(1)
	reason := v.Field
	if v.Rule != "" {
		reason += " " + v.Rule
	}
	w.g.report(violation.Violation{Action: violation.FileCreate, Target: path, Reason: reason,
		Raw: fmt.Sprintf("%s %s: %s", call, path, v.Why)})
	return fail(unix.EPERM)
}

// refusal answers a call the filter refuses outright (Notify mode): with
// the rule's errno, and a report.
func (w *worker) refusal(n seccomp.Notif) answer {
	r, ok := seccomp.Match(w.g.opts, n.Nr, n.Args)
	if !ok {
		r = seccomp.Refusal{Syscall: fmt.Sprintf("syscall %d", n.Nr), Errno: unix.EPERM, Args: n.Args}
	}
	r.Pid = int(n.Pid)
	w.g.report(RefusalViolation(r))
	return fail(r.Errno)
}

// RefusalViolation describes a seccomp refusal.
func RefusalViolation(r seccomp.Refusal) violation.Violation {
	action, target, reason := violation.Syscall, r.Syscall, "seccomp filter"
	if r.Syscall == "socket" || r.Syscall == "socketpair" {
		action, reason = violation.UnixSocket, "seccomp filter; network.allowAllUnixSockets allows it"
	}
	if r.Arg != "" {
		target += "(" + r.Arg + ")"
	}
	return violation.Violation{Action: action, Target: target, Reason: reason,
		Raw: fmt.Sprintf("%s args=%#x errno=%s: %s", r.Syscall, r.Args, r.Errno, r.Why)}
}
