//go:build linux

package seccomp

// Tests against the real kernel. A filter cannot be removed once installed,
// so these tests never install one in the test process: they run the test
// binary again as a child (TestHelperProcess) that installs the filter, tries
// operations and prints one JSON line per result, and the tests read that.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const (
	helperEnv = "CORDON_SECCOMP_HELPER" // the child's mode; see helperMain
	filterEnv = "CORDON_SECCOMP_FILTER" // "default", "allow-unix" or "none"
)

// result is one line of the helper's report.
type result struct {
	Op    string `json:"op"`
	Errno string `json:"errno,omitempty"` // "" when the call worked
	Value string `json:"value,omitempty"`
	Skip  string `json:"skip,omitempty"` // why the probe could not run here
	TID   int    `json:"tid,omitempty"`
}

func init() {
	if os.Getenv(helperEnv) == "thread-only" {
		// Keep the main thread to the main goroutine, so that the
		// filtered goroutine gets a thread Go can end: the main thread
		// it would only park (see InstallThread).
		runtime.LockOSThread()
	}
}

// TestHelperProcess is not a test: it is the child process of the tests in
// this file, and does nothing unless helperEnv is set.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return
	}
	os.Exit(helperMain(mode))
}

func helperMain(mode string) int {
	out := json.NewEncoder(os.Stdout)
	emit := func(r result) { out.Encode(r) }
	install := func(o Options) bool {
		prog, err := Build(o)
		if err == nil {
			err = Install(prog)
		}
		if err != nil {
			emit(result{Op: "install", Errno: err.Error()})
			return false
		}
		return true
	}
	switch mode {
	case "probe":
		filter := os.Getenv(filterEnv)
		if filter != "none" && !install(Options{AllowUnixSockets: filter == "allow-unix"}) {
			return 3
		}
		for _, p := range probes {
			if p.needsFilter && filter == "none" {
				continue
			}
			r := p.run()
			r.Op = p.name
			emit(r)
		}
	case "after-exec":
		// Run by the "probe" child after its filter is installed,
		// through execve: whatever is refused here was inherited.
		for _, p := range probes {
			if p.afterExec {
				r := p.run()
				r.Op = p.name
				emit(r)
			}
		}
	case "tsync":
		return helperTSYNC(emit, install)
	case "no-tsync":
		// The control for "tsync": the same program on the calling
		// thread only, as Install would do without TSYNC.
		return helperTSYNC(emit, func(o Options) bool {
			prog, _ := Build(o)
			unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
			if _, err := setModeFilter(prog, 0); err != nil {
				emit(result{Op: "install", Errno: err.Error()})
				return false
			}
			return true
		})
	case "tsync-conflict":
		// One thread runs under a filter of its own, installed without
		// TSYNC; Install must then fail and name that thread.
		tid := make(chan int)
		go func() {
			runtime.LockOSThread()
			unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
			if _, err := setModeFilter([]unix.SockFilter{ret(unix.SECCOMP_RET_ALLOW)}, 0); err != nil {
				emit(result{Op: "install", Errno: err.Error()})
				os.Exit(3)
			}
			tid <- unix.Gettid()
			select {}
		}()
		emit(result{Op: "other filter", TID: <-tid})
		prog, _ := Build(Options{})
		err := Install(prog)
		emit(result{Op: "Install", Errno: fmt.Sprint(err), Value: statusField("/proc/thread-self/status", "Seccomp")})
	case "thread-only":
		return helperThreadOnly(emit)
	case "notify":
		return helperNotify(emit)
	case "bad-program":
		// A load past the end of seccomp_data, which the kernel's
		// checker refuses.
		err := Install([]unix.SockFilter{load(64), ret(unix.SECCOMP_RET_ALLOW)})
		emit(result{Op: "Install", Errno: errnoName(err), Value: fmt.Sprint(err)})
	case "kill-arch":
		// A filter for the other architecture: every call of this
		// process comes with the wrong arch value.
		other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[runtime.GOARCH]
		noCore()
		if !install(Options{Arch: other}) {
			return 3
		}
		emit(result{Op: "survived"})
	case "kill-x32":
		noCore()
		if !install(Options{}) {
			return 3
		}
		_, _, errno := unix.RawSyscall(x32SyscallBit|unix.SYS_GETPID, 0, 0, 0)
		emit(result{Op: "survived", Errno: errnoName(errno)})
	default:
		emit(result{Op: "mode", Errno: "unknown mode " + mode})
		return 2
	}
	return 0
}

// noCore keeps a process the filter kills from leaving a core file.
func noCore() { unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}) }

// probe is one operation the helper tries.
type probe struct {
	name string
	// needsFilter: without a filter the call would change or break the
	// helper (a fork of the Go runtime, a tracer), so the unfiltered
	// baseline run skips it.
	needsFilter bool
	afterExec   bool // also tried after execve, in mode "after-exec"
	run         func() result
}

func errnoName(err error) string {
	if err == nil {
		return ""
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		if e == 0 {
			return ""
		}
		if n := unix.ErrnoName(e); n != "" {
			return n
		}
	}
	return err.Error()
}

// call turns a call that may return an fd into a result, closing the fd.
func call(fd int, err error) result {
	if err == nil && fd >= 0 {
		unix.Close(fd)
	}
	return result{Errno: errnoName(err)}
}

// rawCall makes a syscall that returns a file descriptor on success, and
// closes it.
func rawCall(trap uintptr, a ...uintptr) result {
	var args [6]uintptr
	copy(args[:], a)
	fd, _, errno := unix.Syscall6(trap, args[0], args[1], args[2], args[3], args[4], args[5])
	if errno != 0 {
		return result{Errno: errnoName(errno)}
	}
	unix.Close(int(fd))
	return result{}
}

// withPty runs f on the master side of a new pseudo-terminal.
func withPty(f func(fd int) result) result {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return result{Skip: "no pseudo-terminal: open /dev/ptmx: " + err.Error()}
	}
	defer unix.Close(fd)
	return f(fd)
}

// runCmd runs a command with clone flags and reports how it started.
func runCmd(cloneflags uintptr, name string, args ...string) result {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: cloneflags}
	return result{Errno: errnoName(cmd.Run())}
}

// statusField reads a field of /proc/<task>/status.
func statusField(path, field string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "read: " + err.Error()
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "no " + field + " line"
}

var probes = []probe{
	{name: "socket AF_UNIX", afterExec: true, run: func() result {
		return call(unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0))
	}},
	{name: "socket AF_VSOCK", run: func() result {
		return call(unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0))
	}},
	{name: "socket AF_INET", run: func() result {
		return call(unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0))
	}},
	{name: "socket AF_INET6", run: func() result {
		return call(unix.Socket(unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0))
	}},
	{name: "socketpair AF_UNIX", run: func() result {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return result{Errno: errnoName(err)}
	}},
	{name: "io_uring_setup", run: func() result { return result{Errno: errnoName(ioUringSetup())} }},
	{name: "unshare CLONE_NEWUSER", afterExec: true, run: func() result {
		return result{Errno: errnoName(unix.Unshare(unix.CLONE_NEWUSER))}
	}},
	{name: "clone CLONE_NEWUSER (os/exec)", run: func() result { return runCmd(unix.CLONE_NEWUSER, "/bin/true") }},
	{name: "clone CLONE_NEWNET (os/exec)", run: func() result { return runCmd(unix.CLONE_NEWNET, "/bin/true") }},
	{name: "clone3 zeroed", needsFilter: true, run: func() result { return result{Errno: errnoName(clone3Zeroed())} }},
	{name: "ptrace PTRACE_TRACEME", needsFilter: true, run: func() result {
		_, _, errno := unix.RawSyscall(unix.SYS_PTRACE, unix.PTRACE_TRACEME, 0, 0)
		return result{Errno: errnoName(errno)}
	}},
	{name: "ptrace PTRACE_PEEKDATA parent", run: func() result {
		// Not attached, so the kernel alone answers ESRCH.
		_, err := unix.PtracePeekData(os.Getppid(), 0, make([]byte, 8))
		return result{Errno: errnoName(err)}
	}},
	{name: "bpf", run: func() result { return rawCall(unix.SYS_BPF, unix.BPF_MAP_CREATE, 0, 0) }},
	{name: "keyctl", run: func() result {
		_, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false)
		return result{Errno: errnoName(err)}
	}},
	{name: "userfaultfd", run: func() result { return rawCall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC) }},
	{name: "perf_event_open", run: func() result {
		// A nil attr: the kernel alone would answer EFAULT.
		return rawCall(unix.SYS_PERF_EVENT_OPEN, 0, 0, ^uintptr(0), ^uintptr(0), 0)
	}},
	{name: "mount", run: func() result {
		return result{Errno: errnoName(unix.Mount("none", "/nonexistent/cordon-seccomp-test", "tmpfs", 0, ""))}
	}},
	{name: "open_tree_attr", run: func() result { return rawCall(unix.SYS_OPEN_TREE_ATTR, ^uintptr(0), 0, 0, 0, 0) }},
	{name: "setns", run: func() result { return result{Errno: errnoName(unix.Setns(-1, 0))} }},
	{name: "pidfd_getfd", run: func() result { return rawCall(unix.SYS_PIDFD_GETFD, ^uintptr(0), 0, 0) }},
	{name: "ioctl TIOCSTI", run: func() result {
		return withPty(func(fd int) result { return result{Errno: errnoName(ioctlPushByte(fd, tiocsti))} })
	}},
	{name: "ioctl TIOCSTI in the low 32 bits of 0x1_00005412", run: func() result {
		return withPty(func(fd int) result { return result{Errno: errnoName(ioctlPushByte(fd, 1<<32|tiocsti))} })
	}},
	{name: "ioctl TIOCLINUX", run: func() result {
		return withPty(func(fd int) result { return result{Errno: errnoName(ioctlPushByte(fd, tioclinux))} })
	}},
	{name: "ioctl TCGETS", run: func() result {
		return withPty(func(fd int) result {
			_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
			return result{Errno: errnoName(err)}
		})
	}},
	{name: "NoNewPrivs", afterExec: true, run: func() result {
		return result{Value: statusField("/proc/self/status", "NoNewPrivs")}
	}},
	{name: "Seccomp", afterExec: true, run: func() result {
		return result{Value: statusField("/proc/self/status", "Seccomp")}
	}},
	{name: "glibc threads (python3)", run: func() result {
		// glibc (2.34+) creates threads with clone3 and falls back to
		// clone on ENOSYS, as the filter expects.
		py, err := exec.LookPath("python3")
		if err != nil {
			return result{Skip: "python3 is not installed"}
		}
		b, err := exec.Command(py, "-c", "import threading; t = threading.Thread(target=print, args=('thread ran',)); t.start(); t.join()").CombinedOutput()
		return result{Errno: errnoName(err), Value: strings.TrimSpace(string(b))}
	}},
	{name: "exec /bin/true", run: func() result { return result{Errno: errnoName(exec.Command("/bin/true").Run())} }},
	{name: "after exec", run: func() result {
		// The test binary again, through execve, reporting from the
		// other side; its lines come back as this probe's value.
		exe, err := os.Executable()
		if err != nil {
			return result{Errno: err.Error()}
		}
		cmd := exec.Command(exe, "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), helperEnv+"=after-exec")
		b, err := cmd.Output()
		return result{Errno: errnoName(err), Value: string(b)}
	}},
	{name: "sh -c 'unshare -U true'", run: func() result {
		if _, err := exec.LookPath("unshare"); err != nil {
			return result{Skip: "unshare(1) is not installed"}
		}
		b, err := exec.Command("/bin/sh", "-c", "unshare -U true").CombinedOutput()
		if err == nil {
			return result{}
		}
		r := result{Errno: err.Error(), Value: strings.TrimSpace(string(b))}
		if strings.Contains(r.Value, "Operation not permitted") {
			r.Errno = "EPERM"
		}
		return r
	}},
}

// helperTSYNC installs the filter from one thread while other locked
// threads keep making syscalls, then has each of them try socket(AF_UNIX),
// and lists every thread's seccomp mode and no_new_privs.
func helperTSYNC(emit func(result), install func(Options) bool) int {
	const workers = 6
	installed := make(chan struct{})
	tids := make(chan int)
	results := make(chan result)
	for range workers {
		go func() {
			// Each worker holds its own OS thread until the helper
			// exits (a locked goroutine that returns takes its thread
			// with it, and the status listing below would miss it).
			runtime.LockOSThread()
			tids <- unix.Gettid()
			for {
				select {
				case <-installed:
					fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
					r := call(fd, err)
					r.Op, r.TID = "worker socket AF_UNIX", unix.Gettid()
					results <- r
					select {}
				default:
					unix.Getppid()
					unix.Nanosleep(&unix.Timespec{Nsec: 100_000}, nil)
				}
			}
		}()
	}
	for range workers {
		<-tids
	}
	runtime.LockOSThread()
	emit(result{Op: "installer", TID: unix.Gettid()})
	tasks, _ := os.ReadDir("/proc/self/task")
	emit(result{Op: "threads before install", Value: fmt.Sprint(len(tasks))})
	if !install(Options{}) {
		return 3
	}
	close(installed)
	for range workers {
		emit(<-results)
	}
	tasks, _ = os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		status := filepath.Join("/proc/self/task", task.Name(), "status")
		emit(result{Op: "thread status", Value: fmt.Sprintf("Seccomp=%s NoNewPrivs=%s",
			statusField(status, "Seccomp"), statusField(status, "NoNewPrivs")), TID: atoi(task.Name())})
	}
	return 0
}

// helperThreadOnly installs the filter with InstallThread on one goroutine's
// thread, which then tries a refused call, starts a child, and starts
// goroutines of its own on new threads; it reports from each, and at the end
// whether any filtered thread is left in the process.
func helperThreadOnly(emit func(result)) int {
	exe, err := os.Executable()
	if err != nil {
		emit(result{Op: "install", Errno: err.Error()})
		return 3
	}
	prog, _ := Build(Options{})
	done := make(chan []result)
	go func() {
		if err := InstallThread(prog); err != nil {
			emit(result{Op: "install", Errno: err.Error()})
			os.Exit(3)
		}
		tid := unix.Gettid()
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		r := call(fd, err)
		r.Op, r.TID = "filtered thread: socket AF_UNIX", tid
		rs := []result{r}

		cmd := exec.Command(exe, "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), helperEnv+"=after-exec")
		out, err := cmd.Output()
		rs = append(rs, result{Op: "child of the filtered thread", Errno: errnoName(err), Value: string(out)})

		// Goroutines started here, each locking a thread the runtime
		// must create for it: from a locked M it asks its template
		// thread, so the new threads are unfiltered.
		spawned := make(chan result)
		for range 3 {
			go func() {
				runtime.LockOSThread()
				fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
				r := call(fd, err)
				r.Op, r.TID = "thread started from the filtered one", unix.Gettid()
				r.Value = statusField("/proc/thread-self/status", "Seccomp")
				spawned <- r
				select {}
			}()
		}
		for range 3 {
			rs = append(rs, <-spawned)
		}
		done <- rs
		// Returning while locked ends the filtered thread.
	}()
	for _, r := range <-done {
		emit(r)
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	r := call(fd, err)
	r.Op = "main goroutine: socket AF_UNIX"
	emit(r)

	// The filtered thread exits soon after its goroutine returns.
	left := "?"
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var filtered []string
		tasks, _ := os.ReadDir("/proc/self/task")
		for _, task := range tasks {
			if statusField(filepath.Join("/proc/self/task", task.Name(), "status"), "Seccomp") == "2" {
				filtered = append(filtered, task.Name())
			}
		}
		if left = strings.Join(filtered, ","); left == "" {
			break
		}
	}
	emit(result{Op: "filtered threads left", Value: left})
	return 0
}

func atoi(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

// runHelper runs the test binary as a helper in mode with env added, and
// returns its results and how it ended.
func runHelper(t *testing.T, mode string, env ...string) ([]result, error) {
	t.Helper()
	if !kernelHasSeccomp() {
		t.Skip("the kernel has no seccomp (no Seccomp line in /proc/self/status; CONFIG_SECCOMP is off)")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^TestHelperProcess$")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+mode), env...)
	cmd.Dir = t.TempDir() // where a killed helper's core file would land
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var rs []result
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r result
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Op != "" {
			rs = append(rs, r)
		}
	}
	for _, r := range rs {
		if r.Op == "install" {
			t.Fatalf("helper could not install the filter: %s", r.Errno)
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("helper %s timed out; stderr:\n%s", mode, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("helper %s stderr:\n%s", mode, stderr.String())
	}
	return rs, err
}

// requireUnfiltered skips a test that needs the test process to start
// without a seccomp filter (it expects a call to work, or a thread to have
// none), as it does not when the tests run inside a sandbox.
func requireUnfiltered(t *testing.T) {
	t.Helper()
	if v := statusField("/proc/self/status", "Seccomp"); v != "0" {
		t.Skipf("the test process already runs under seccomp (Seccomp: %s)", v)
	}
}

func kernelHasSeccomp() bool {
	return !strings.HasPrefix(statusField("/proc/self/status", "Seccomp"), "no ")
}

func byOp(rs []result) map[string]result {
	m := map[string]result{}
	for _, r := range rs {
		m[r.Op] = r
	}
	return m
}

// Wanted outcomes. An errno name must match; these two are not errnos.
const (
	works    = "works"     // the call succeeded
	notEPERM = "not EPERM" // the filter let it through; the kernel may still refuse (no IPv6, no vsock)
)

func checkOutcome(t *testing.T, r result, want string) {
	t.Helper()
	switch want {
	case works:
		if r.Errno != "" {
			t.Errorf("%s: %s, want it to work", r.Op, r.Errno)
		}
	case notEPERM:
		if r.Errno == "EPERM" {
			t.Errorf("%s: EPERM, want the filter to let it through", r.Op)
		}
	default:
		if r.Errno != want {
			t.Errorf("%s: %q, want %s", r.Op, r.Errno, want)
		}
	}
}

// TestKernelRefusals installs the default filter in a helper and checks each
// operation's outcome. A run of the same probes without a filter shows what
// the kernel alone answers: a row whose refusal the kernel would give anyway
// on this machine is logged, since there it does not show the filter at work.
func TestKernelRefusals(t *testing.T) {
	baseRs, err := runHelper(t, "probe", filterEnv+"=none")
	if err != nil {
		t.Fatalf("unfiltered helper: %v", err)
	}
	rs, err := runHelper(t, "probe", filterEnv+"=default")
	if err != nil {
		t.Fatalf("filtered helper: %v", err)
	}
	base, got := byOp(baseRs), byOp(rs)
	rows := []struct{ op, want string }{
		{"socket AF_UNIX", "EPERM"},
		{"socket AF_VSOCK", "EPERM"},
		{"socket AF_INET", works},
		{"socket AF_INET6", notEPERM},
		{"socketpair AF_UNIX", works},
		{"io_uring_setup", "EPERM"},
		{"unshare CLONE_NEWUSER", "EPERM"},
		{"clone CLONE_NEWUSER (os/exec)", "EPERM"},
		{"clone CLONE_NEWNET (os/exec)", "EPERM"},
		{"clone3 zeroed", "ENOSYS"},
		{"ptrace PTRACE_TRACEME", "EPERM"},
		{"ptrace PTRACE_PEEKDATA parent", "EPERM"},
		{"bpf", "EPERM"},
		{"keyctl", "EPERM"},
		{"userfaultfd", "EPERM"},
		{"perf_event_open", "EPERM"},
		{"mount", "EPERM"},
		{"open_tree_attr", "EPERM"},
		{"setns", "EPERM"},
		{"pidfd_getfd", "EPERM"},
		{"ioctl TIOCSTI", "EPERM"},
		{"ioctl TIOCSTI in the low 32 bits of 0x1_00005412", "EPERM"},
		{"ioctl TIOCLINUX", "EPERM"},
		{"ioctl TCGETS", works},
		{"glibc threads (python3)", works},
		{"exec /bin/true", works},
		{"after exec", works},
		{"sh -c 'unshare -U true'", "EPERM"},
	}
	if len(rows)+2 != len(probes) {
		t.Errorf("%d rows for %d probes (+NoNewPrivs, Seccomp)", len(rows), len(probes))
	}
	for _, row := range rows {
		t.Run(row.op, func(t *testing.T) {
			r, ok := got[row.op]
			if !ok {
				t.Fatalf("helper reported nothing for %q", row.op)
			}
			if r.Skip != "" {
				t.Skip(r.Skip)
			}
			checkOutcome(t, r, row.want)
			if b, ok := base[row.op]; ok && b.Skip == "" && b.Errno == row.want && row.want != works && row.want != notEPERM {
				t.Logf("without the filter the kernel answers %s here too, so this row does not tell the filter's refusal apart", b.Errno)
			}
		})
	}
	t.Run("NoNewPrivs and Seccomp mode", func(t *testing.T) {
		if v := got["NoNewPrivs"].Value; v != "1" {
			t.Errorf("NoNewPrivs %q, want 1", v)
		}
		if v := got["Seccomp"].Value; v != "2" {
			t.Errorf("Seccomp %q, want 2 (filter)", v)
		}
	})
	t.Run("inherited across execve", func(t *testing.T) {
		var after []result
		for line := range strings.SplitSeq(got["after exec"].Value, "\n") {
			var r result
			if json.Unmarshal([]byte(line), &r) == nil && r.Op != "" {
				after = append(after, r)
			}
		}
		a := byOp(after)
		checkOutcome(t, a["socket AF_UNIX"], "EPERM")
		checkOutcome(t, a["unshare CLONE_NEWUSER"], "EPERM")
		if a["NoNewPrivs"].Value != "1" || a["Seccomp"].Value != "2" {
			t.Errorf("after execve: NoNewPrivs %q Seccomp %q, want 1 and 2", a["NoNewPrivs"].Value, a["Seccomp"].Value)
		}
	})
}

// TestKernelAllowUnixSockets checks that AllowUnixSockets lets unix and
// vsock sockets through and keeps every other refusal.
func TestKernelAllowUnixSockets(t *testing.T) {
	requireUnfiltered(t)
	rs, err := runHelper(t, "probe", filterEnv+"=allow-unix")
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	got := byOp(rs)
	for _, row := range []struct{ op, want string }{
		{"socket AF_UNIX", works},
		{"socket AF_VSOCK", notEPERM},
		{"io_uring_setup", "EPERM"},
		{"unshare CLONE_NEWUSER", "EPERM"},
		{"clone3 zeroed", "ENOSYS"},
	} {
		checkOutcome(t, got[row.op], row.want)
	}
}

// TestKernelTSYNC checks that Install filters every thread of a Go process,
// not only the one that called it; the control run, which installs the same
// program without TSYNC, shows that the check would notice if it did not.
func TestKernelTSYNC(t *testing.T) {
	for _, mode := range []string{"tsync", "no-tsync"} {
		t.Run(mode, func(t *testing.T) {
			rs, err := runHelper(t, mode)
			if err != nil {
				t.Fatalf("helper: %v", err)
			}
			want, wantStatus := "EPERM", "Seccomp=2 NoNewPrivs=1"
			if mode == "no-tsync" {
				requireUnfiltered(t)
				// no_new_privs is left out: a parent such as bwrap
				// may have set it for the whole process already.
				want, wantStatus = works, "Seccomp=0 NoNewPrivs="
			}
			var installer int
			var workerTIDs []int
			threads := 0
			for _, r := range rs {
				switch r.Op {
				case "installer":
					installer = r.TID
				case "threads before install":
					t.Logf("%s threads before Install", r.Value)
				case "worker socket AF_UNIX":
					workerTIDs = append(workerTIDs, r.TID)
					checkOutcome(t, r, want)
				case "thread status":
					threads++
					if r.TID == installer {
						if r.Value != "Seccomp=2 NoNewPrivs=1" {
							t.Errorf("installing thread %d: %s", r.TID, r.Value)
						}
					} else if !strings.HasPrefix(r.Value, wantStatus) || mode == "tsync" && r.Value != wantStatus {
						t.Errorf("thread %d: %s, want %s", r.TID, r.Value, wantStatus)
					}
				}
			}
			slices.Sort(workerTIDs)
			if len(slices.Compact(workerTIDs)) != 6 || slices.Contains(workerTIDs, installer) {
				t.Errorf("workers ran on threads %v, installer on %d: want 6 threads apart from the installer's", workerTIDs, installer)
			}
			if threads < 7 {
				t.Errorf("status of %d threads, want at least 7", threads)
			}
		})
	}
}

// TestInstallErrors checks what Install reports when the kernel refuses:
// a thread under a filter of its own that TSYNC cannot replace (Install must
// name it and install nothing), and a program the kernel's checker rejects.
func TestInstallErrors(t *testing.T) {
	t.Run("thread TSYNC cannot sync", func(t *testing.T) {
		requireUnfiltered(t)
		rs, err := runHelper(t, "tsync-conflict")
		if err != nil {
			t.Fatalf("helper: %v", err)
		}
		got := byOp(rs)
		other, res := got["other filter"].TID, got["Install"]
		if want := fmt.Sprintf("thread %d ", other); other == 0 || !strings.Contains(res.Errno, want) {
			t.Errorf("Install: %q, want an error naming %q", res.Errno, want)
		}
		if res.Value != "0" {
			t.Errorf("calling thread's Seccomp %q after the failed Install, want 0 (nothing installed)", res.Value)
		}
	})
	t.Run("program the kernel refuses", func(t *testing.T) {
		rs, err := runHelper(t, "bad-program")
		if err != nil {
			t.Fatalf("helper: %v", err)
		}
		res := byOp(rs)["Install"]
		if res.Errno != "EINVAL" || !strings.Contains(res.Value, "SECCOMP_SET_MODE_FILTER") {
			t.Errorf("Install: %s (%s), want EINVAL from seccomp(SECCOMP_SET_MODE_FILTER)", res.Errno, res.Value)
		}
	})
	t.Run("empty or oversized program", func(t *testing.T) {
		// Refused before any syscall, so safe to run in the test process.
		for _, n := range []int{0, unix.BPF_MAXINSNS + 1} {
			if err := Install(make([]unix.SockFilter, n)); err == nil || !strings.Contains(err.Error(), "instructions") {
				t.Errorf("Install of %d instructions: %v", n, err)
			}
		}
	})
}

// TestKernelInstallThread checks InstallThread: the calling thread and the
// processes it starts are filtered; the rest of the process, threads the
// runtime creates afterwards included, is not; and the filtered thread ends
// with its goroutine.
func TestKernelInstallThread(t *testing.T) {
	requireUnfiltered(t)
	rs, err := runHelper(t, "thread-only")
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	var filteredTID int
	spawned := 0
	for _, r := range rs {
		switch r.Op {
		case "filtered thread: socket AF_UNIX":
			filteredTID = r.TID
			checkOutcome(t, r, "EPERM")
		case "child of the filtered thread":
			checkOutcome(t, r, works)
			var after []result
			for line := range strings.SplitSeq(r.Value, "\n") {
				var a result
				if json.Unmarshal([]byte(line), &a) == nil && a.Op != "" {
					after = append(after, a)
				}
			}
			a := byOp(after)
			checkOutcome(t, a["socket AF_UNIX"], "EPERM")
			if a["Seccomp"].Value != "2" || a["NoNewPrivs"].Value != "1" {
				t.Errorf("child: Seccomp %q NoNewPrivs %q, want 2 and 1", a["Seccomp"].Value, a["NoNewPrivs"].Value)
			}
		case "thread started from the filtered one":
			spawned++
			checkOutcome(t, r, works)
			if r.Value != "0" || r.TID == filteredTID {
				t.Errorf("thread %d started from the filtered thread %d: Seccomp %q, want its own thread with 0", r.TID, filteredTID, r.Value)
			}
		case "main goroutine: socket AF_UNIX":
			checkOutcome(t, r, works)
		case "filtered threads left":
			if r.Value != "" {
				t.Errorf("filtered threads %s still alive after their goroutine returned", r.Value)
			}
		}
	}
	if filteredTID == 0 || spawned != 3 {
		t.Errorf("helper reported %+v", rs)
	}
}

// TestKernelKillsOtherArch installs the other architecture's program: every
// call of the helper then carries an arch value the filter does not expect,
// and the kernel must kill it with SIGSYS at its next syscall. This also
// shows that the kernel's loader takes the program Build makes for an
// architecture this test cannot run natively.
func TestKernelKillsOtherArch(t *testing.T) {
	if _, ok := arches[runtime.GOARCH]; !ok {
		t.Skipf("no filter for GOARCH %s", runtime.GOARCH)
	}
	rs, err := runHelper(t, "kill-arch")
	wantSIGSYS(t, rs, err)
}

// TestKernelKillsX32 makes an x32 call (getpid with __X32_SYSCALL_BIT) under
// the amd64 filter; the kernel must kill the helper with SIGSYS.
func TestKernelKillsX32(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("x32 exists on amd64 only")
	}
	rs, err := runHelper(t, "kill-x32")
	wantSIGSYS(t, rs, err)
}

func wantSIGSYS(t *testing.T, rs []result, err error) {
	t.Helper()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("helper ended with %v and reported %+v; want it killed by SIGSYS", err, rs)
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGSYS {
		t.Fatalf("helper ended with %v; want it killed by SIGSYS", err)
	}
	if len(rs) > 0 {
		t.Errorf("helper reported %+v before it was killed", rs)
	}
}

// helperNotify installs the Notify variant on one locked thread, supervises
// it from another, and makes refused calls from the filtered thread.
func helperNotify(emit func(result)) int {
	prog, err := Build(Options{Notify: true})
	if err != nil {
		emit(result{Op: "build", Errno: err.Error()})
		return 0
	}
	type installed struct {
		fd  int
		err error
	}
	ready := make(chan installed)
	calls := make(chan func(), 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is filtered
		fd, err := InstallThreadNotify(prog)
		ready <- installed{fd, err}
		for f := range calls {
			f()
		}
		close(done)
	}()
	in := <-ready
	if in.err != nil {
		emit(result{Op: "install", Errno: in.err.Error()})
		return 0
	}
	reports := make(chan Refusal, 8)
	go Supervise(in.fd, Options{Notify: true}, func(r Refusal) { reports <- r })
	calls <- func() {
		_, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		emit(result{Op: "socket AF_UNIX", Errno: errnoName(err)})
		_, _, e := unix.Syscall(unix.SYS_UNSHARE, unix.CLONE_NEWUSER, 0, 0)
		emit(result{Op: "unshare", Errno: errnoName(errOrNil(e))})
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fd)
		}
		emit(result{Op: "socket AF_INET", Errno: errnoName(err)})
	}
	close(calls)
	<-done
	for i := 0; i < 2; i++ {
		select {
		case r := <-reports:
			emit(result{Op: "report", Value: r.Syscall + " " + r.Arg + " " + r.Errno.Error()})
		case <-time.After(5 * time.Second):
			emit(result{Op: "report", Errno: "timeout"})
		}
	}
	return 0
}

func errOrNil(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// TestKernelNotify: in Notify mode a refused call still fails with the
// rule's errno (answered by the supervisor), each refusal is reported with
// its rule, and allowed calls never reach the supervisor.
func TestKernelNotify(t *testing.T) {
	requireUnfiltered(t)
	rs, err := runHelper(t, "notify")
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	got := byOp(rs)
	if r, ok := got["install"]; ok {
		t.Skipf("user notification unavailable here: %s", r.Errno)
	}
	checkOutcome(t, got["socket AF_UNIX"], "EPERM")
	checkOutcome(t, got["unshare"], "EPERM")
	checkOutcome(t, got["socket AF_INET"], works)
	var reports []string
	for _, r := range rs {
		if r.Op == "report" {
			reports = append(reports, r.Value+r.Errno)
		}
	}
	want := []string{"socket domain == AF_UNIX operation not permitted", "unshare  operation not permitted"}
	if !slices.Equal(reports, want) {
		t.Errorf("reports %q, want %q", reports, want)
	}
}
