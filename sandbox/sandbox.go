package sandbox

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/violation"
)

// ErrUnsupported is returned by New on a system without a sandbox backend.
var ErrUnsupported = errors.New("sandbox: no sandbox backend on " + runtime.GOOS)

// ErrClosed is returned by methods of a Manager after Close.
var ErrClosed = errors.New("sandbox: manager closed")

// RunArg is the hidden first argument with which a Manager's commands run
// the program itself (see Init).
const RunArg = "__cordon-run"

// Manager runs commands under one policy. Each command runs in a sandbox
// of its own, with its own proxies; the Manager collects what they refuse
// and pushes policy updates to them. Several Managers may live in one
// process. All methods are safe for concurrent use.
type Manager struct {
	dir   string // 0700 directory holding the control socket
	sock  string
	ln    net.Listener
	self  string
	store *violation.Store

	mu      sync.Mutex
	pol     *policy.Policy
	pending map[string]pendingCmd // by token, until the command connects
	live    map[net.Conn]*liveCmd
	ask     AskFunc
	closed  bool
	wg      sync.WaitGroup
}

type pendingCmd struct {
	id, text string
	extra    []string
}

type liveCmd struct {
	mu    sync.Mutex
	enc   *json.Encoder
	extra []string
}

// CommandOptions are per-command settings.
type CommandOptions struct {
	// ID attributes the command's violations (Violations, AnnotateStderr);
	// without one the command text is the key.
	ID string
	// Text is the command as the caller's user sees it, used for
	// attribution and ignoreViolations matching; default: the argv joined.
	Text string
	// AllowDomains are host patterns allowed for this command only, on top
	// of the policy's allowedDomains (the deny list still wins).
	AllowDomains []string
}

// New starts a Manager for p. Call Close when done.
func New(ctx context.Context, p *policy.Policy) (*Manager, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: a nil policy", policy.ErrPolicy)
	}
	if err := supported(p); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: cannot find this program's binary: %w", err)
	}
	dir, err := os.MkdirTemp("", "cordon-manager-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	sock := filepath.Join(dir, "control.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox: control socket: %w", err)
	}
	m := &Manager{
		dir: dir, sock: sock, ln: ln, self: self,
		store:   violation.NewStore(0, p.Settings.IgnoreViolations),
		pol:     p,
		pending: map[string]pendingCmd{},
		live:    map[net.Conn]*liveCmd{},
	}
	m.wg.Add(1)
	go m.accept()
	return m, nil
}

// Command returns an exec.Cmd that runs name with args in a sandbox: set
// its Dir, Env, Stdin, Stdout, Stderr as usual, then Run or Start it. Its
// exit status is the command's (125: the sandbox could not be built; 126,
// 127: not executable, not found).
func (m *Manager) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return m.CommandWith(ctx, CommandOptions{}, name, args...)
}

// CommandWith is Command with per-command options.
func (m *Manager) CommandWith(ctx context.Context, o CommandOptions, name string, args ...string) *exec.Cmd {
	argv, _ := m.wrap(o, append([]string{name}, args...))
	return exec.CommandContext(ctx, argv[0], argv[1:]...)
}

// Wrap returns the argv and environment that run shellCommand with
// /bin/sh -c in a sandbox, for callers that start processes themselves.
func (m *Manager) Wrap(shellCommand string, opts ...CommandOptions) (argv, env []string) {
	var o CommandOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Text == "" {
		o.Text = shellCommand
	}
	return m.wrap(o, []string{"/bin/sh", "-c", shellCommand})
}

func (m *Manager) wrap(o CommandOptions, argv []string) ([]string, []string) {
	if o.Text == "" {
		o.Text = strings.Join(argv, " ")
	}
	token := newToken()
	m.mu.Lock()
	if !m.closed {
		m.pending[token] = pendingCmd{id: o.ID, text: o.Text, extra: o.AllowDomains}
	}
	m.mu.Unlock()
	return append([]string{m.self, RunArg, m.sock, token, "--"}, argv...), os.Environ()
}

// Violations returns what was refused for the command with this key:
// violation.Key(CommandOptions.ID, CommandOptions.Text).
func (m *Manager) Violations(key string) []violation.Violation { return m.store.For(key) }

// AllViolations returns everything refused so far, oldest first.
func (m *Manager) AllViolations() []violation.Violation { return m.store.All() }

// AnnotateStderr appends a <sandbox_violations> block listing what was
// refused for key, for agents that read a command's stderr.
func (m *Manager) AnnotateStderr(key, stderr string) string {
	return m.store.AnnotateStderr(key, stderr)
}

// Update replaces the policy. Running commands apply its network rules to
// connections they open from then on; commands started later get all of
// it. (A running sandbox's filesystem layout cannot change.)
func (m *Manager) Update(p *policy.Policy) error {
	if p == nil {
		return fmt.Errorf("%w: a nil policy", policy.ErrPolicy)
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	m.pol = p
	live := make([]*liveCmd, 0, len(m.live))
	for _, l := range m.live {
		live = append(live, l)
	}
	m.mu.Unlock()
	for _, l := range live {
		l.send(message{Settings: withExtra(p.Settings, l.extra)})
	}
	return nil
}

// Close stops the Manager: no new command can start, running ones keep
// their sandbox but stop reporting. It is idempotent and safe after errors.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	for c := range m.live {
		c.Close()
	}
	m.mu.Unlock()
	m.ln.Close()
	m.wg.Wait()
	return os.RemoveAll(m.dir)
}

// message is one line of the control protocol between a Manager and a
// command's runner, in either direction.
type message struct {
	Token     string               `json:"token,omitempty"`
	Settings  *policy.Settings     `json:"settings,omitempty"`
	Command   string               `json:"command,omitempty"`
	CommandID string               `json:"commandId,omitempty"`
	Violation *violation.Violation `json:"violation,omitempty"`
	Error     string               `json:"error,omitempty"`
	// Asks (manager → runner, with the settings): ask about destinations.
	Asks bool `json:"asks,omitempty"`
	// Ask (runner → manager): may the command reach Host:Port? Answer
	// (manager → runner) carries the same ID.
	Ask    *askMsg    `json:"ask,omitempty"`
	Answer *answerMsg `json:"answer,omitempty"`
}

type askMsg struct {
	ID   uint64 `json:"id"`
	Host string `json:"host"`
	Port int    `json:"port"`
}

type answerMsg struct {
	ID     uint64 `json:"id"`
	Allow  bool   `json:"allow"`
	Reason string `json:"reason,omitempty"`
}

// AskFunc decides a destination no rule allows, for the command with
// violation key key: allow, and why (the reason a refusal reports).
type AskFunc func(ctx context.Context, key, host string, port int) (allow bool, reason string)

// SetAsk makes the Manager's commands ask fn about destinations their
// rules neither allow nor deny, instead of refusing them; the connection
// waits for the answer. nil (the default) refuses them. It applies to
// commands started from then on.
func (m *Manager) SetAsk(fn AskFunc) {
	m.mu.Lock()
	m.ask = fn
	m.mu.Unlock()
}

// Subscribe calls fn with every violation the Manager's commands report
// from now on, in the order they arrive; cancel stops it.
func (m *Manager) Subscribe(fn func(violation.Violation)) (cancel func()) {
	return m.store.Subscribe(fn)
}

func withExtra(s policy.Settings, extra []string) *policy.Settings {
	s.Network.AllowedDomains = append(append([]string(nil), s.Network.AllowedDomains...), extra...)
	return &s
}

func (l *liveCmd) send(msg message) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.enc.Encode(msg)
}

func (m *Manager) accept() {
	defer m.wg.Done()
	for {
		c, err := m.ln.Accept()
		if err != nil {
			return
		}
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			defer c.Close()
			m.serve(c)
		}()
	}
}

// serve speaks to one command's runner: it hands over the policy, then
// collects the violations the runner reports until it exits.
func (m *Manager) serve(c net.Conn) {
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() {
		return
	}
	var hello message
	if json.Unmarshal(sc.Bytes(), &hello) != nil {
		return
	}
	m.mu.Lock()
	pc, ok := m.pending[hello.Token]
	delete(m.pending, hello.Token)
	l := &liveCmd{enc: json.NewEncoder(c), extra: pc.extra}
	pol := m.pol
	if ok && !m.closed {
		m.live[c] = l
	}
	m.mu.Unlock()
	if !ok {
		json.NewEncoder(c).Encode(message{Error: "unknown or reused command token"})
		return
	}
	defer func() {
		m.mu.Lock()
		delete(m.live, c)
		m.mu.Unlock()
	}()
	m.mu.Lock()
	ask := m.ask
	m.mu.Unlock()
	l.send(message{Settings: withExtra(pol.Settings, pc.extra), Command: pc.text, CommandID: pc.id, Asks: ask != nil})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for sc.Scan() {
		var msg message
		if json.Unmarshal(sc.Bytes(), &msg) != nil {
			continue
		}
		if msg.Ask != nil {
			q := *msg.Ask
			go func() {
				allow, reason := false, "no one to ask"
				if ask != nil {
					allow, reason = ask(ctx, violation.Key(pc.id, pc.text), q.Host, q.Port)
				}
				l.send(message{Answer: &answerMsg{ID: q.ID, Allow: allow, Reason: reason}})
			}()
			continue
		}
		if msg.Violation == nil {
			continue
		}
		v := *msg.Violation
		v.Command, v.CommandID = pc.text, pc.id // the manager's attribution, not the sandbox's
		m.store.Add(v)
	}
}

func newToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
