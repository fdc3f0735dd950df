//go:build linux

// Package runner runs one command in cordon's Linux sandbox: it starts the
// session's proxies, builds bubblewrap's arguments, starts bubblewrap with
// cordon's init inside, passes the exit status through, and removes what
// the run left on the host.
package runner

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/cordon-sandbox/cordon/internal/linux/bwrap"
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
}

// Run runs the command and returns its exit status (or 128+signal). An
// error means the sandbox could not be built and nothing ran.
func Run(o Options) (int, error) {
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
		cfg.Token, cfg.Sink = token, o.Sink
		if srv, err = proxy.NewServer(cfg); err != nil {
			return 0, fmt.Errorf("%w: %v", ErrSetup, err)
		}
		defer srv.Close()
	}
	hostEnd, sandboxEnd, err := seqpacketPair()
	if err != nil {
		return 0, fmt.Errorf("%w: the bridge socketpair: %v", ErrSetup, err)
	}
	defer hostEnd.Close()
	if srv != nil {
		go srv.ServeFDs(hostEnd)
	} else {
		go forwardExternal(hostEnd, net.HTTPProxyPort, net.SOCKSProxyPort)
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
	)
	plan, err := bwrap.Build(bwrap.Plan{
		Policy: pol, Self: self, UID: uid, GID: gid,
		NewSession: !tty, StatusFD: fdStatus,
	})
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	defer removeCreated(plan.Created)
	for _, w := range plan.Warnings {
		fmt.Fprintln(o.Stderr, "cordon: warning: "+w)
	}
	if o.Debug != nil {
		fmt.Fprintf(o.Debug, "cordon: %s %s\n", bw, strings.Join(plan.Args, " "))
	}
	// bubblewrap starts cordon's init with a clean environment; the
	// command's goes through the config.
	args := append([]string{"--setenv", "GOMAXPROCS", "1"}, plan.Args...)

	cfg := initproc.Config{
		Argv: o.Argv, Env: commandEnv(o.Env, proxy.User(o.Command), token),
		Dir: pol.Env.Dir, HTTPPort: HTTPPort, SOCKSPort: SOCKSPort, TTY: tty,
		Seccomp: seccomp.Options{AllowUnixSockets: net.AllowAllUnixSockets},
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
	sandboxFile, err := sandboxEnd.File()
	sandboxEnd.Close()
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrSetup, err)
	}
	cmd := exec.Command(bw, "--args", strconv.Itoa(fdArgs), "--", bwrap.InitPath, initproc.InitArg)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, o.Stdout, o.Stderr
	cmd.ExtraFiles = []*os.File{cfgR, sandboxFile, statusW, argsR}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	// If cordon dies, bubblewrap dies, and with it (--die-with-parent) the
	// whole sandbox.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
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
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("%w: starting %s: %v", ErrSetup, bw, err)
	}
	for _, f := range []*os.File{cfgR, sandboxFile, statusW, argsR} {
		f.Close()
	}
	childPid := make(chan int, 1)
	go readStatus(statusR, childPid)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	pid := 0
	for {
		select {
		case p := <-childPid:
			pid = p
		case s := <-sigs:
			// With a terminal, the terminal already sent Ctrl-C and friends
			// to the command's process group; forward only what was sent to
			// cordon alone.
			if tty && (s == syscall.SIGINT || s == syscall.SIGQUIT || s == syscall.SIGWINCH) {
				continue
			}
			if pid > 0 {
				syscall.Kill(pid, s.(syscall.Signal))
			}
		case err := <-done:
			if pid == 0 {
				select {
				case pid = <-childPid:
				default:
				}
			}
			code := cmd.ProcessState.ExitCode()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
			}
			if pid == 0 {
				// bubblewrap never started the sandbox: its own message is
				// already on stderr; say why and what to do.
				if perr := Probe(pol.Settings.BwrapPath); perr != nil {
					return 0, perr
				}
				return 0, fmt.Errorf("%w: bubblewrap refused the sandbox layout (%v; its message is above); run with -d to see its arguments", ErrSetup, err)
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

func seqpacketPair() (*net.UnixConn, *net.UnixConn, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	conv := func(fd int) (*net.UnixConn, error) {
		f := os.NewFile(uintptr(fd), "bridge")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			return nil, err
		}
		return c.(*net.UnixConn), nil
	}
	a, err := conv(fds[0])
	if err != nil {
		unix.Close(fds[1])
		return nil, nil, err
	}
	b, err := conv(fds[1])
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	return a, b, nil
}

// removeCreated removes the mount points bubblewrap made on the host if
// they are still empty (deepest first): placeholders leave nothing behind.
func removeCreated(paths []string) {
	seen := map[string]bool{}
	var uniq []string
	for _, p := range paths {
		if !seen[p] {
			seen[p] = true
			uniq = append(uniq, p)
		}
	}
	for i := len(uniq) - 1; i >= 0; i-- {
		p := uniq[i]
		st, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if st.Mode().IsRegular() && st.Size() == 0 {
			os.Remove(p)
		} else if st.IsDir() {
			os.Remove(p) // fails unless empty
		}
	}
}
