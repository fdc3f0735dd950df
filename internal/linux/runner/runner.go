//go:build linux

// Package runner runs one command in cordon's Linux sandbox: it starts the
// session's proxies, builds bubblewrap's arguments, starts bubblewrap with
// cordon's init inside and passes the exit status through. It creates
// nothing on the host, so a run killed at any moment (SIGKILL included)
// leaves nothing to clean up.
package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/internal/linux/bwrap"
	"github.com/cordon-sandbox/cordon/internal/linux/guard"
	"github.com/cordon-sandbox/cordon/internal/linux/initproc"
	"github.com/cordon-sandbox/cordon/internal/linux/seccomp"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/proxy"
	"github.com/cordon-sandbox/cordon/violation"
	"golang.org/x/sys/unix"
)

// Ports of the bridge listeners on the sandbox's own loopback (the
// sandbox has its own network namespace, so they clash with nothing
// outside it).
const (
	HTTPPort  = 3128
	SOCKSPort = 1080
)

// ErrSetup is wrapped by failures to build the sandbox: cordon exits 125
// and the command has not run.
var ErrSetup = errors.New("cannot set up the sandbox")

// Options is one run.
type Options struct {
	Policy *policy.Policy
	Argv   []string
	// Command is the text violations are attributed to (default: Argv
	// joined with spaces).
	Command string
	Env     []string // the command's environment (default os.Environ())
	Stdin   *os.File // default os.Stdin, and likewise below
	Stdout  *os.File
	Stderr  *os.File
	Sink    violation.Sink
	Debug   io.Writer // nil: quiet
	// Updates carries new policies while the command runs; their network
	// rules apply to connections opened from then on (the filesystem
	// layout of a running sandbox cannot change).
	Updates <-chan *policy.Policy
	// Ask, when set, is asked about destinations no rule allows (and no
	// deny rule matches) instead of refusing them outright; it holds the
	// connection until it answers (proxy.Config.Ask).
	Ask func(ctx context.Context, host string, port int) (bool, string)
}

// Run runs the command and returns its exit status (or 128+signal). An
// error means the sandbox could not be built and nothing ran.
func Run(o Options) (int, error) {
	start := time.Now()
	mark := func(what string) {
		if o.Debug != nil {
			fmt.Fprintf(o.Debug, "cordon: %6.2f ms %s\n", float64(time.Since(start).Microseconds())/1000, what)
		}
	}
	if o.Stdin == nil {
		o.Stdin, o.Stdout, o.Stderr = os.Stdin, os.Stdout, os.Stderr
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.Command == "" {
		o.Command = strings.Join(o.Argv, " ")
	}
	pol := o.Policy
	bw, err := FindBwrap(pol.Settings.BwrapPath)
	if err != nil {
		return 0, err
	}
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("%w: cannot find cordon's own binary: %v", ErrSetup, err)
	}
	if self, err = filepath.EvalSymlinks(self); err != nil {
		return 0, fmt.Errorf("%w: cannot find cordon's own binary: %v", ErrSetup, err)
	}

	// The session's proxies take connections only from the bridge: no
	// listener on the host, so no other local process can even try them.
	net := pol.Settings.Network
	token := proxy.NewToken()
	var srv *proxy.Server
	if net.HTTPProxyPort == 0 && net.SOCKSProxyPort == 0 {
		cfg := proxy.PolicyConfig(pol)
		cfg.Token, cfg.Sink, cfg.Command, cfg.Ask = token, o.Sink, o.Command, o.Ask
		if srv, err = proxy.NewServer(cfg); err != nil {
			return 0, fmt.Errorf("%w: %v", ErrSetup, err)
		}
		defer srv.Close()
	}
	mark("proxies ready")
	hostEnd, sandboxEnd, err := proxy.NewBridge()
	if err != nil {
		return 0, fmt.Errorf("%w: the bridge socketpair: %v", ErrSetup, err)
	}
	defer hostEnd.Close()
	// bridgeDone closes when the bridge reaches EOF: every copy of the
	// sandbox's end is gone, and every report sent over it has been read.
	bridgeDone := make(chan struct{})
	if srv != nil {
		go func() { srv.ServeFDs(hostEnd); close(bridgeDone) }()
		if o.Updates != nil {
			go func() {
				for p := range o.Updates {
					srv.SetRules(p.Hosts)
				}
			}()
		}
	} else {
		go func() {
			forwardExternal(hostEnd, net.HTTPProxyPort, net.SOCKSProxyPort, o.Sink, o.Command)
			close(bridgeDone)
		}()
	}

	tty := isTerminal(o.Stdin)
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 {
		// Inside, root would be uid 0 without CAP_SETFCAP; an unprivileged
		// uid needs nothing and gives the command nothing. Files it writes
		// still belong to root on the host (the id maps to host uid 0).
		uid, gid = 1000, 1000
	}
	const (
		fdConfig = 3 // = initproc.ConfigFD
		fdBridge = 4 // = initproc.BridgeFD
		fdStatus = 5
		fdArgs   = 6
		// fd 7 = initproc.LifelineFD
	)
	guarded, err := guardFor(pol)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	// allowUnixSockets: the guard checks each connect by path.
	unixPaths := guarded && len(pol.AllowUnixSockets) > 0 && !pol.Settings.Network.AllowAllUnixSockets
	plan, err := bwrap.Build(bwrap.Plan{
		Policy: pol, Self: self, UID: uid, GID: gid,
		NewSession: !tty, StatusFD: fdStatus, UnixSockets: unixPaths,
	})
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	mark(fmt.Sprintf("layout built (%d arguments)", len(plan.Args)))
	for _, w := range plan.Warnings {
		fmt.Fprintln(o.Stderr, "cordon: warning: "+w)
	}
	if o.Debug != nil {
		fmt.Fprintf(o.Debug, "cordon: %s %s\n", bw, strings.Join(plan.Args, " "))
	}
	// bubblewrap starts cordon's init with a clean environment (--clearenv;
	// the init sets its own GOMAXPROCS); the command's goes through the
	// config.
	args := plan.Args

	cfg := initproc.Config{
		Argv: o.Argv, Env: commandEnv(o.Env, proxy.User(o.Command), token),
		Dir: pol.Env.Dir, HTTPPort: HTTPPort, SOCKSPort: SOCKSPort, TTY: tty, Debug: o.Debug != nil,
		Seccomp: seccomp.Options{AllowUnixSockets: net.AllowAllUnixSockets, Notify: true},
	}
	if guarded {
		cfg.Seccomp.Guard = true
		cfg.Seccomp.UnixPaths = unixPaths
		cfg.Guard = &guard.Config{Rules: pol.CreateRules(), Seccomp: cfg.Seccomp, UnixSockets: pol.AllowUnixSockets}
	}
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	argsR, argsW, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	// The lifeline: the sandbox's init holds the read end and exits when it
	// reads EOF, that is when this process is gone. Only cordon holds the
	// write end (close-on-exec keeps it out of bubblewrap).
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	defer lifeW.Close()
	sandboxFile, err := sandboxEnd.File()
	sandboxEnd.Close()
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	go func() {
		for _, a := range args {
			io.WriteString(argsW, a)
			argsW.Write([]byte{0})
		}
		argsW.Close()
	}()
	go func() {
		json.NewEncoder(cfgW).Encode(cfg)
		cfgW.Close()
	}()
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(sigs)
	if tty {
		// The terminal sends Ctrl-C and Ctrl-\ to its whole foreground
		// process group: the command gets them directly, and neither cordon
		// nor bubblewrap's monitor may die of them (that would kill the
		// sandbox before the command's handler has run). Ignored signals
		// stay ignored across exec, so bubblewrap inherits this; cordon's
		// init, which handles them, resets them for the command.
		signal.Ignore(syscall.SIGINT, syscall.SIGQUIT)
		defer signal.Reset(syscall.SIGINT, syscall.SIGQUIT)
	} else {
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGQUIT)
	}

	// bubblewrap is started and waited for from one locked thread: its
	// PDEATHSIG fires when the thread that forked it ends, so that thread
	// must live exactly as long as the wait. If cordon dies, bubblewrap
	// dies, and with it (--die-with-parent) the whole sandbox.
	// syscall.ForkExec also skips os/exec's probe fork.
	started := make(chan error, 1)
	done := make(chan syscall.WaitStatus, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		pid, err := syscall.ForkExec(bw, []string{bw, "--args", strconv.Itoa(fdArgs), "--", bwrap.InitPath, initproc.InitArg}, &syscall.ProcAttr{
			Env:   []string{"PATH=/usr/bin:/bin"},
			Files: []uintptr{o.Stdin.Fd(), o.Stdout.Fd(), o.Stderr.Fd(), cfgR.Fd(), sandboxFile.Fd(), statusW.Fd(), argsR.Fd(), lifeR.Fd()},
			Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
		})
		started <- err
		if err != nil {
			return
		}
		var ws syscall.WaitStatus
		for {
			if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
				break
			}
		}
		done <- ws
	}()
	if err := <-started; err != nil {
		return 0, fmt.Errorf("%w: starting %s: %v", ErrSetup, bw, err)
	}
	mark("bubblewrap started")
	for _, f := range []*os.File{cfgR, sandboxFile, statusW, argsR, lifeR} {
		f.Close()
	}
	childPid := make(chan int, 1)
	go readStatus(statusR, childPid)

	pid := 0
	var pending []syscall.Signal
	for {
		select {
		case p := <-childPid:
			pid = p
			mark("sandbox init running")
			for _, s := range pending { // signals that came before the sandbox did
				syscall.Kill(pid, s)
			}
			pending = nil
		case s := <-sigs:
			if pid > 0 {
				syscall.Kill(pid, s.(syscall.Signal))
			} else {
				pending = append(pending, s.(syscall.Signal))
			}
		case ws := <-done:
			mark("sandbox ended")
			// The last refusals the sandbox reported may still be in flight.
			select {
			case <-bridgeDone:
			case <-time.After(time.Second):
			}
			if pid == 0 {
				select {
				case pid = <-childPid:
				default:
				}
			}
			code := ws.ExitStatus()
			if ws.Signaled() {
				code = 128 + int(ws.Signal())
			}
			if pid == 0 {
				// bubblewrap never started the sandbox: its own message is
				// already on stderr; say why and what to do.
				if perr := Probe(pol.Settings.BwrapPath); perr != nil {
					return 0, perr
				}
				return 0, fmt.Errorf("%w: bubblewrap refused the sandbox layout (exit status %d; its message is above); run with -d to see its arguments", ErrSetup, code)
			}
			return code, nil
		}
	}
}

// readStatus reads bubblewrap's JSON status stream and reports the host
// pid of the sandbox's init once it runs.
func readStatus(r *os.File, childPid chan<- int) {
	defer r.Close()
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return
		}
		if p, ok := m["child-pid"].(float64); ok {
			childPid <- int(p)
		}
	}
}

// commandEnv is the command's environment: the caller's, with the proxy
// variables pointing at the bridge and a TMPDIR that exists.
func commandEnv(env []string, user, token string) []string {
	httpURL := fmt.Sprintf("http://%s:%s@127.0.0.1:%d", user, token, HTTPPort)
	socksURL := fmt.Sprintf("socks5h://%s:%s@127.0.0.1:%d", user, token, SOCKSPort)
	set := map[string]string{
		"HTTP_PROXY": httpURL, "HTTPS_PROXY": httpURL, "http_proxy": httpURL, "https_proxy": httpURL,
		"ALL_PROXY": socksURL, "all_proxy": socksURL,
		"GIT_SSH_COMMAND": fmt.Sprintf("ssh -o ProxyCommand='%s %s %%h %%p'", bwrap.InitPath, initproc.ConnectArg),
		"TMPDIR":          "/tmp",
		"SANDBOX_RUNTIME": "1",
	}
	// NO_PROXY is dropped: "localhost" in it would send requests for an
	// allowed localhost:PORT into the sandbox's empty loopback instead of
	// through the proxy, which reaches the host's.
	drop := map[string]bool{"NO_PROXY": true, "no_proxy": true}
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; ok || drop[k] {
			continue
		}
		out = append(out, kv)
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return out
}

// guardFor decides whether the run needs the create-time guard: whenever
// anything is writable, new names there must be checked (protected names
// at any depth, denyWrite globs, denyRead paths that do not exist yet).
// On a kernel too old for the guard such a policy is refused: cordon
// never runs a weaker sandbox than the settings ask for.
func guardFor(pol *policy.Policy) (bool, error) {
	if os.Getenv("CORDON_GUARD") == "off" {
		// For measuring the guard's cost only (bench/guard); said loudly.
		fmt.Fprintln(os.Stderr, "cordon: warning: CORDON_GUARD=off: the create-time guard is OFF; new protected names and denyWrite matches are NOT refused (for measurements only)")
		return false, nil
	}
	var u unix.Utsname
	release := ""
	if unix.Uname(&u) == nil {
		release = unix.ByteSliceToString(u.Release[:])
	}
	if r := os.Getenv("CORDON_KERNEL_RELEASE"); r != "" {
		// For tests of the refusal on old kernels. Claiming a newer kernel
		// than the real one only moves the failure to the first creation,
		// which the kernel then refuses: never a run without the guard.
		release = r
	}
	if guard.KernelSupported(release) {
		return true, nil
	}
	if len(pol.AllowWrite) == 0 {
		return false, nil
	}
	return false, fmt.Errorf("the create-time guard needs Linux %s or newer (seccomp user notification with SECCOMP_ADDFD_FLAG_SEND), this kernel is %q: without it new files in the writable directories (a .bashrc, a .git/hooks entry, a denyWrite match) could not be refused, so cordon does not run; filesystem.allowWrite: [] runs without the guard", guard.MinKernel, release)
}
