package backend

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/sandbox"
	"github.com/cordon-sandbox/cordon/violation"
)

// State is a session's state.
type State string

const (
	Created   State = "created"   // launched, not ready yet
	Warm      State = "warm"      // ready, no command running
	Active    State = "active"    // at least one command running
	Suspended State = "suspended" // not supported by none and native
	Destroyed State = "destroyed"
	Errored   State = "error" // Err says why
)

// Port launches sessions.
type Port struct {
	// SandboxOff is `cordon serve --sandbox off`: every session runs on
	// the none backend, and asking for another is an error.
	SandboxOff bool
	// Logf receives the port's log lines (a degraded default backend).
	Logf  func(format string, args ...any)
	Probe map[Backend]ProbeResult
	// Home is the daemon user's home directory, hidden from native
	// sessions except for their binds (default: $HOME).
	Home string
}

// NewPort probes the host once.
func NewPort(sandboxOff bool, logf func(string, ...any)) *Port {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	home, _ := os.UserHomeDir()
	return &Port{SandboxOff: sandboxOff, Logf: logf, Probe: Probe(), Home: home}
}

// ErrUnavailable: the backend asked for cannot run on this host.
var ErrUnavailable = errors.New("backend unavailable")

// Choose resolves the backend for a request: want "" is the unspecified
// default, which takes the best backend the host has (microvm, then
// native, then none) and logs each step down; an explicit backend the host
// lacks is an error, never a quiet downgrade.
func (p *Port) Choose(want Backend) (Backend, error) {
	if p.SandboxOff {
		if want != "" && want != None {
			return "", fmt.Errorf("%w: %s: the agent sandbox is disabled (--sandbox off)", ErrUnavailable, want)
		}
		return None, nil
	}
	if want != "" {
		if r := p.Probe[want]; !r.Available {
			return "", fmt.Errorf("%w: %s: %s", ErrUnavailable, want, r.Hint)
		}
		return want, nil
	}
	for _, b := range []Backend{MicroVM, Native} {
		r := p.Probe[b]
		if r.Available {
			return b, nil
		}
		p.Logf("backend %s unavailable (%s); trying the next", b, r.Hint)
	}
	return None, nil
}

// Handle is a launched session.
type Handle struct {
	SessionID string
	Backend   Backend
	Details   map[string]string

	spec   Spec
	log    *eventLog
	mgr    *sandbox.Manager // native
	ctx    context.Context  // ends with Destroy
	cancel context.CancelFunc
	unsub  func()

	mu         sync.Mutex
	state      State
	err        error
	destroying bool
	running    int
	asks       map[string]pendingAsk
	remembered map[string]bool
	wg         sync.WaitGroup
}

// Launch validates spec and starts a session on backend want ("": the
// default; see Choose). The handle's Backend is the one it got.
func (p *Port) Launch(ctx context.Context, spec Spec, want Backend) (*Handle, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	b, err := p.Choose(want)
	if err != nil {
		return nil, err
	}
	hctx, cancel := context.WithCancel(context.Background())
	h := &Handle{SessionID: spec.SessionID, Backend: b, spec: spec, log: newEventLog(maxEvents),
		ctx: hctx, cancel: cancel, state: Created,
		asks: map[string]pendingAsk{}, remembered: map[string]bool{},
		Details: map[string]string{"description": p.Probe[b].Description, "suspend": "unsupported", "network": string(spec.Access())}}
	h.emit(Event{Type: EvState, State: Created})
	if b == Native {
		if err := h.startNative(ctx, p.Home); err != nil {
			h.fail(err)
			cancel()
			return h, err
		}
	}
	if len(spec.ExecGrantRoots) > 0 && b == Native {
		h.Details["execGrantRoots"] = "not needed on Linux: exec is not restricted by place"
	}
	h.setState(Warm)
	return h, nil
}

func (h *Handle) startNative(ctx context.Context, home string) error {
	for i, b := range h.spec.BindMounts {
		if b.GuestPath != "" && b.GuestPath != b.HostPath {
			return bad(fmt.Sprintf("bindMounts[%d].guestPath", i), "the native backend shows host paths at their own path; %q must be %q or empty", b.GuestPath, b.HostPath)
		}
	}
	st := h.spec.Settings(home)
	dir := h.spec.GuestWorkdir
	if dir == "" {
		dir = "/"
	}
	pol, err := policy.New(st, policy.Env{Dir: dir, Home: home})
	if err != nil {
		return fmt.Errorf("the session's policy: %w", err)
	}
	m, err := sandbox.New(ctx, pol)
	if err != nil {
		return err
	}
	h.mgr = m
	if h.spec.Access() == AccessAsk {
		m.SetAsk(h.ask)
	}
	h.unsub = m.Subscribe(func(v violation.Violation) {
		h.emit(Event{Type: EvViolation, ExecID: v.CommandID,
			Violation: &ViolationEvent{Action: v.Action, Target: v.Target, Reason: v.Reason, Raw: v.Raw}})
	})
	return nil
}

// State returns the session's state and, in state error, why.
func (h *Handle) State() (State, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state, h.err
}

// Spec returns the session's spec, defaults filled in.
func (h *Handle) Spec() Spec { return h.spec }

func (h *Handle) setState(s State) {
	h.mu.Lock()
	if h.state == s || h.state == Destroyed {
		h.mu.Unlock()
		return
	}
	h.state = s
	h.mu.Unlock()
	h.emit(Event{Type: EvState, State: s})
}

func (h *Handle) fail(err error) {
	h.mu.Lock()
	h.state, h.err = Errored, err
	h.mu.Unlock()
	h.emit(Event{Type: EvState, State: Errored, Reason: err.Error()})
}

func (h *Handle) emit(e Event) {
	e.SessionID = h.SessionID
	h.log.add(e)
}

// Subscribe returns the session's events from Seq from on (0: from the
// oldest still buffered), then every new one until cancel or Destroy.
func (h *Handle) Subscribe(from uint64) (<-chan Event, func()) { return h.log.subscribe(from) }

// ExecOptions are per-command settings.
type ExecOptions struct {
	Cwd   string   `json:"cwd,omitempty"`   // default: the spec's guestWorkdir
	Env   []string `json:"env,omitempty"`   // KEY=VALUE, added to the scrubbed environment
	Stdin string   `json:"stdin,omitempty"` // fed to the command, then EOF
}

// ErrNotRunning: the session was destroyed or failed.
var ErrNotRunning = errors.New("the session is not running")

// Exec runs argv in the session. Its events (starting, ready, stdout,
// stderr, violation, killed, exit) go to the session's stream with the
// returned id; the channel carries the same, for this command only,
// closed after its exit event (or when the session ends). Read it to the
// end, or not at all and use Subscribe: an unread channel holds a
// goroutine until the session is destroyed.
func (h *Handle) Exec(ctx context.Context, argv []string, o ExecOptions) (string, <-chan Event, error) {
	if len(argv) == 0 || argv[0] == "" {
		return "", nil, bad("argv", "empty: give the program and its arguments")
	}
	for i, kv := range o.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return "", nil, bad(fmt.Sprintf("env[%d]", i), "%q is not KEY=VALUE", kv)
		}
	}
	if o.Cwd == "" {
		o.Cwd = h.spec.GuestWorkdir
	}
	if o.Cwd != "" && !strings.HasPrefix(o.Cwd, "/") {
		return "", nil, bad("cwd", "%q is not absolute", o.Cwd)
	}
	h.mu.Lock()
	if h.state == Destroyed || h.state == Errored || h.destroying {
		h.mu.Unlock()
		return "", nil, ErrNotRunning
	}
	id := "x" + newID()
	from := h.log.nextSeq()
	h.running++
	h.wg.Add(1)
	h.mu.Unlock()
	events, cancel := h.log.subscribe(from)
	out := make(chan Event, 64)
	go func() {
		defer close(out)
		defer cancel()
		for e := range events {
			if e.ExecID != id {
				continue
			}
			// A caller that stops reading holds nothing up for long: the
			// session's end releases this goroutine.
			select {
			case out <- e:
			case <-h.ctx.Done():
				return
			}
			if e.Type == EvExit {
				return
			}
		}
	}()
	h.setState(Active)
	h.emit(Event{Type: EvStarting, ExecID: id})
	go h.run(ctx, id, argv, o)
	return id, out, nil
}

func (l *eventLog) nextSeq() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next
}

// run runs one command and reports it.
func (h *Handle) run(ctx context.Context, id string, argv []string, o ExecOptions) {
	defer h.wg.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(h.ctx, cancel) // Destroy kills it
	defer stop()
	var cmd *exec.Cmd
	if h.mgr != nil {
		cmd = h.mgr.CommandWith(ctx, sandbox.CommandOptions{ID: id, Text: strings.Join(argv, " ")}, argv[0], argv[1:]...)
	} else {
		cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
	}
	// Its own process group: killing it reaches everything it started.
	// On Linux it also dies with the daemon (see procAttr).
	cmd.SysProcAttr = procAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Dir = o.Cwd
	cmd.Env = append(ScrubbedEnv(os.Environ()), o.Env...)
	cmd.Stdin = strings.NewReader(o.Stdin)
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	cmd.Stdout, cmd.Stderr = outW, errW
	var pumps sync.WaitGroup
	pumps.Add(2)
	go h.pump(&pumps, outR, id, EvStdout)
	go h.pump(&pumps, errR, id, EvStderr)
	code := 0
	if err := cmd.Start(); err != nil {
		outW.Close()
		errW.Close()
		pumps.Wait()
		h.emit(Event{Type: EvStderr, ExecID: id, Data: err.Error() + "\n"})
		code = 127 // not found, as a shell says
		if errors.Is(err, os.ErrPermission) {
			code = 126
		}
	} else {
		h.emit(Event{Type: EvReady, ExecID: id})
		err := cmd.Wait()
		outW.Close()
		errW.Close()
		pumps.Wait()
		if ctx.Err() != nil {
			reason := "cancelled"
			if h.ctx.Err() != nil {
				reason = "the session was destroyed"
			}
			h.emit(Event{Type: EvKilled, ExecID: id, Reason: reason})
		}
		code = exitCode(cmd, err)
	}
	h.emit(Event{Type: EvExit, ExecID: id, Code: &code})
	h.mu.Lock()
	h.running--
	idle := h.running == 0
	h.mu.Unlock()
	if idle {
		h.setState(Warm)
	}
}

func exitCode(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState == nil {
		if err != nil {
			return 127
		}
		return 0
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// pump turns a command's output into events, a chunk at a time.
func (h *Handle) pump(wg *sync.WaitGroup, r io.Reader, id, typ string) {
	defer wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			h.emit(Event{Type: typ, ExecID: id, Data: string(buf[:n])})
		}
		if err != nil {
			return
		}
	}
}

// ask holds a connection to a destination outside the allowlist while the
// client is asked (an ask event, answered with Answer).
func (h *Handle) ask(ctx context.Context, key, host string, port int) (bool, string) {
	target := fmt.Sprintf("%s:%d", host, port)
	h.mu.Lock()
	if allow, ok := h.remembered[target]; ok {
		h.mu.Unlock()
		if allow {
			return true, ""
		}
		return false, "denied by the client (remembered for the session)"
	}
	id := "a" + newID()
	ch := make(chan bool, 1)
	h.asks[id] = pendingAsk{answer: ch, target: target}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.asks, id)
		h.mu.Unlock()
	}()
	h.emit(Event{Type: EvAsk, ExecID: key, Ask: &AskEvent{ID: id, Host: host, Port: port}})
	timeout := time.Duration(h.spec.AskTimeoutSeconds) * time.Second
	if timeout == 0 {
		timeout = time.Minute
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case allow := <-ch:
		if allow {
			return true, ""
		}
		return false, "denied by the client"
	case <-t.C:
		return false, fmt.Sprintf("no answer within %s", timeout)
	case <-ctx.Done():
		return false, "the connection was given up"
	case <-h.ctx.Done():
		return false, "the session was destroyed"
	}
}

// ErrNoSuchAsk: the ask was answered, timed out, or never existed.
var ErrNoSuchAsk = errors.New("no such pending ask")

// Answer answers ask id; remember applies the answer to every later
// connection to the same host and port in this session.
func (h *Handle) Answer(id string, allow, remember bool) error {
	h.mu.Lock()
	q, ok := h.asks[id]
	if ok {
		delete(h.asks, id)
		if remember {
			h.remembered[q.target] = allow
		}
	}
	h.mu.Unlock()
	if !ok {
		return ErrNoSuchAsk
	}
	q.answer <- allow
	return nil
}

// pendingAsk is an ask waiting for the client: where its answer goes, and
// the host:port it is about (for remember).
type pendingAsk struct {
	answer chan bool
	target string
}

// Destroy kills the session's commands, stops its proxies, and ends its
// event stream. It is idempotent.
func (h *Handle) Destroy() error {
	h.mu.Lock()
	if h.state == Destroyed || h.destroying {
		h.mu.Unlock()
		return nil
	}
	h.destroying = true
	h.mu.Unlock()
	h.cancel()
	h.wg.Wait()
	if h.unsub != nil {
		h.unsub()
	}
	var err error
	if h.mgr != nil {
		err = h.mgr.Close()
	}
	h.emit(Event{Type: EvState, State: Destroyed})
	h.mu.Lock()
	h.state = Destroyed
	h.mu.Unlock()
	h.log.close()
	return err
}

func newID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}
