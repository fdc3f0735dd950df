//go:build linux

// Package initproc is cordon's code inside the sandbox. bubblewrap starts
// the cordon binary (bound at /dev/.cordon) as PID 1 of the sandbox; main
// hands over to this package before anything else runs:
//
//	__cordon-init     PID 1: the network bridge, signal forwarding, reaping,
//	                  and the start of the command under the seccomp filter.
//	__cordon-connect  ssh's ProxyCommand: a SOCKS5 CONNECT over stdio.
//
// seccomp filters belong to threads, and fork copies the calling thread's.
// PID 1 installs the filter on one locked OS thread only (no TSYNC) and
// starts the command from that thread, which then ends with its goroutine:
// the command runs filtered while every thread PID 1 keeps is unfiltered
// (so it can later supervise the filter) — with no extra exec stage.
// The command cannot reach PID 1: ptrace and process_vm_* are refused by
// the filter, /proc/1's private files are closed to it because PID 1 is
// non-dumpable, and signals PID 1 does not handle are dropped by the kernel
// for a namespace's init.
package initproc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/internal/linux/guard"
	"github.com/cordon-sandbox/cordon/internal/linux/seccomp"
	"github.com/cordon-sandbox/cordon/proxy"
	"github.com/cordon-sandbox/cordon/violation"
	"golang.org/x/sys/unix"
)

// Stage names, as os.Args[1].
const (
	InitArg    = "__cordon-init"
	ConnectArg = "__cordon-connect"
)

// Inherited descriptors of the init stage.
const (
	ConfigFD   = 3 // the Config, JSON, then EOF
	BridgeFD   = 4 // SOCK_SEQPACKET socketpair to the host proxies; absent without a bridge
	LifelineFD = 7 // read end of a pipe whose write end only the host's cordon holds
)

// Config is what the host tells the init stage.
type Config struct {
	Argv      []string
	Env       []string // the command's environment
	Dir       string
	HTTPPort  int // bridge listeners on the sandbox's loopback; 0: no bridge
	SOCKSPort int
	Seccomp   seccomp.Options
	// Guard: the create-time guard's rules; nil runs without it (a policy
	// with nothing writable, on a kernel too old for it).
	Guard *guard.Config `json:",omitempty"`
	// TTY: the sandbox shares the caller's terminal session, so terminal
	// signals (Ctrl-C) reach the command directly and are not forwarded.
	TTY bool
	// Debug: report timings on stderr (cordon -d).
	Debug bool
}

// Exit codes shared with the host side.
const (
	ExitFailure  = 125
	ExitNotExec  = 126
	ExitNotFound = 127
)

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "cordon: "+format+"\n", args...)
	return ExitFailure
}

// Init is the sandbox's PID 1.
func Init() int {
	start := time.Now()
	// One P for the main loop, the lifeline, the seccomp supervisor and
	// each bridge loop, which block
	// in accept(2): with fewer, a goroutine in a blocking syscall holds
	// the only P until the scheduler's monitor takes it back, delaying
	// start-up, signal forwarding and the exit by up to milliseconds.
	runtime.GOMAXPROCS(5)
	// Nothing in the sandbox may read this process's memory or descriptors
	// (the bridge socket, later the guard's listener).
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fail("init: cannot make PID 1 non-dumpable: %v", err)
	}
	var cfg Config
	cf := os.NewFile(ConfigFD, "config")
	if err := json.NewDecoder(cf).Decode(&cfg); err != nil {
		return fail("init: reading the configuration: %v", err)
	}
	cf.Close()
	if len(cfg.Argv) == 0 {
		return fail("init: no command")
	}
	mark := func(what string) {
		if cfg.Debug {
			fmt.Fprintf(os.Stderr, "cordon[init]: %6.2f ms %s\n", float64(time.Since(start).Microseconds())/1000, what)
		}
	}
	mark("configured")
	// Whatever else was inherited must not reach the command.
	closeExtraFDs()
	// When cordon on the host dies, however it dies, the lifeline reaches
	// EOF and PID 1 exits, which makes the kernel kill everything in the
	// sandbox. (PDEATHSIG alone is not enough: the kernel clears it when a
	// process changes credentials, as bubblewrap does.)
	go func() {
		var b [1]byte
		for {
			if _, err := unix.Read(LifelineFD, b[:]); err != unix.EINTR {
				break
			}
		}
		os.Exit(ExitFailure)
	}()
	if cfg.HTTPPort > 0 {
		for _, l := range []struct {
			port int
			tag  byte
		}{{cfg.HTTPPort, proxy.TagHTTP}, {cfg.SOCKSPort, proxy.TagSOCKS}} {
			fd, err := listenLoopback(l.port)
			if err != nil {
				return fail("init: listening for the proxy bridge on 127.0.0.1:%d: %v", l.port, err)
			}
			go bridgeLoop(fd, BridgeFD, l.tag)
		}
	}

	sigs := make(chan os.Signal, 32)
	signal.Notify(sigs, forwarded...)
	mark("bridge listening")
	child, g, code, err := startCommand(cfg)
	mark("command started")
	if err != nil {
		fmt.Fprintf(os.Stderr, "cordon: %v\n", err)
	}
	if code != 0 {
		return code
	}
	for sig := range sigs {
		s := sig.(syscall.Signal)
		switch s {
		case syscall.SIGCHLD:
			if code, done := reap(child); done {
				mark("command ended")
				if g != nil && cfg.Debug {
					fmt.Fprintf(os.Stderr, "cordon[init]: guard: %d calls answered, %d creations refused, %d paths resolved component by component\n",
						g.Stats.Checked.Load(), g.Stats.Refused.Load(), g.Stats.SlowWalk.Load())
				}
				return code
			}
		case syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTSTP:
			if !cfg.TTY {
				syscall.Kill(child, s)
			}
		default:
			syscall.Kill(child, s)
		}
	}
	return ExitFailure
}

// forwarded are the signals PID 1 passes to the command (and SIGCHLD, its
// own). A namespace's init receives only signals it handles, so every other
// signal sent to PID 1 from inside is dropped by the kernel.
var forwarded = []os.Signal{
	syscall.SIGCHLD, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH, syscall.SIGCONT, syscall.SIGTSTP, syscall.SIGALRM,
}

// reap collects every exited child (PID 1 inherits orphans); it reports
// the command's own status once it has ended.
func reap(child int) (int, bool) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err != nil || pid <= 0 {
			return 0, false
		}
		if pid != child {
			continue
		}
		switch {
		case ws.Exited():
			return ws.ExitStatus(), true
		case ws.Signaled():
			return 128 + int(ws.Signal()), true
		}
	}
}

// startCommand starts the command under the seccomp filter from a locked
// OS thread that carries the filter and dies with this call.
func startCommand(cfg Config) (int, *guard.Guard, int, error) {
	path, code := lookPath(cfg.Argv[0], cfg.Env)
	if code != 0 {
		return 0, nil, code, nil
	}
	prog, err := seccomp.Build(cfg.Seccomp)
	if err != nil {
		return 0, nil, ExitFailure, fmt.Errorf("cannot build the seccomp filter: %v; refusing to run without it", err)
	}
	type started struct {
		pid  int
		code int
		err  error
	}
	var g *guard.Guard
	ch := make(chan started, 1)
	go func() {
		// Never unlocked: when this goroutine returns, its filtered thread
		// is not given back to the scheduler (Go destroys it, or parks it
		// for good if it is the main thread), so no other goroutine of PID 1
		// ever runs filtered.
		runtime.LockOSThread()
		listener, err := seccomp.InstallThreadNotify(prog)
		if err != nil {
			ch <- started{0, ExitFailure, fmt.Errorf("cannot install the seccomp filter: %v; refusing to run without it", err)}
			return
		}
		// Refusals are answered (with the rule's errno) and reported, and
		// guarded creations performed, by unfiltered threads of PID 1. If
		// PID 1 dies, the kernel fails them all: refused all the same.
		report := func(v violation.Violation) {
			if cfg.HTTPPort > 0 {
				proxy.SendViolation(BridgeFD, v)
			}
		}
		if cfg.Guard != nil {
			g, err = guard.New(listener, *cfg.Guard, report)
			if err != nil {
				ch <- started{0, ExitFailure, fmt.Errorf("cannot start the create-time guard: %v; refusing to run without it", err)}
				return
			}
			go func() {
				g.Serve(cfg.Guard.Threads)
				unix.Close(listener)
			}()
		} else {
			go func() {
				seccomp.Supervise(listener, cfg.Seccomp, func(r seccomp.Refusal) { report(guard.RefusalViolation(r)) })
				// Should the supervisor ever stop, closing the listener makes
				// the kernel answer refused calls with ENOSYS instead of
				// leaving them waiting for an answer.
				unix.Close(listener)
			}()
		}
		// syscall.ForkExec forks from this thread, so the child inherits
		// its filter (os.StartProcess would first fork a probe child).
		pid, err := syscall.ForkExec(path, cfg.Argv, &syscall.ProcAttr{
			Dir: cfg.Dir, Env: cfg.Env, Files: []uintptr{0, 1, 2},
		})
		switch {
		case err == nil:
			ch <- started{pid, 0, nil}
		case errors.Is(err, syscall.ENOENT):
			ch <- started{0, ExitNotFound, fmt.Errorf("%s: not found", cfg.Argv[0])}
		default:
			ch <- started{0, ExitNotExec, fmt.Errorf("%s: cannot execute: %v", cfg.Argv[0], err)}
		}
	}()
	r := <-ch
	return r.pid, g, r.code, r.err
}

// listenLoopback opens a listening TCP socket on the sandbox's
// 127.0.0.1:port with plain syscalls: the bridge accepts in blocking mode
// on its own thread, so PID 1 never starts Go's network poller, which
// costs a millisecond of every run's start.
func listenLoopback(port int) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := unix.Listen(fd, 4096); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// bridgeLoop hands every connection accepted on the sandbox's loopback to
// the host proxies over the bridge socket (one SCM_RIGHTS message each,
// tagged for the HTTP or SOCKS proxy) and forgets it.
func bridgeLoop(ln, bridge int, tag byte) {
	for {
		c, _, err := unix.Accept4(ln, unix.SOCK_CLOEXEC)
		if err != nil {
			if err == unix.EINTR || err == unix.ECONNABORTED || err == unix.EMFILE || err == unix.ENFILE {
				continue
			}
			return
		}
		for {
			err = unix.Sendmsg(bridge, []byte{tag}, unix.UnixRights(c), nil, 0)
			if err != unix.EINTR {
				break
			}
		}
		unix.Close(c)
	}
}

// closeExtraFDs marks every descriptor above stderr close-on-exec.
func closeExtraFDs() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}

// lookPath finds argv[0] on the command's PATH, inside the sandbox's view.
func lookPath(name string, env []string) (string, int) {
	path := ""
	for _, kv := range env {
		if len(kv) > 5 && kv[:5] == "PATH=" {
			path = kv[5:]
		}
	}
	if containsSlash(name) {
		st, err := os.Stat(name)
		switch {
		case err != nil:
			fmt.Fprintf(os.Stderr, "cordon: %s: not found\n", name)
			return "", ExitNotFound
		case st.IsDir() || st.Mode()&0o111 == 0:
			fmt.Fprintf(os.Stderr, "cordon: %s: not executable\n", name)
			return "", ExitNotExec
		}
		return name, 0
	}
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	sawNonExec := false
	for _, dir := range splitList(path) {
		if dir == "" {
			dir = "."
		}
		p := dir + "/" + name
		st, err := os.Stat(p)
		if err != nil || st.IsDir() {
			continue
		}
		if st.Mode()&0o111 == 0 {
			sawNonExec = true
			continue
		}
		return p, 0
	}
	if sawNonExec {
		fmt.Fprintf(os.Stderr, "cordon: %s: not executable\n", name)
		return "", ExitNotExec
	}
	fmt.Fprintf(os.Stderr, "cordon: %s: command not found\n", name)
	return "", ExitNotFound
}

func containsSlash(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return true
		}
	}
	return false
}

func splitList(p string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == ':' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return out
}

// Connect is ssh's ProxyCommand inside the sandbox: it opens host:port
// through the SOCKS5 proxy named by ALL_PROXY and joins it to stdio.
func Connect(args []string) int {
	if len(args) != 2 {
		return fail("connect: usage: %s HOST PORT", ConnectArg)
	}
	c, err := proxy.DialSOCKS(os.Getenv("ALL_PROXY"), args[0], args[1])
	if err != nil {
		return fail("connect %s:%s: %v", args[0], args[1], err)
	}
	done := make(chan struct{})
	go func() {
		io.Copy(c, os.Stdin)
		c.(*net.TCPConn).CloseWrite()
		close(done)
	}()
	io.Copy(os.Stdout, c)
	return 0
}
