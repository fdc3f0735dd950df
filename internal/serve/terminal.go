//go:build linux

package serve

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/cordon-sandbox/cordon/backend"
	"github.com/cordon-sandbox/cordon/internal/term"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/sandbox"
	"golang.org/x/net/websocket"
)

// terminal is an interactive shell on a PTY, attached over one WebSocket.
type terminal struct {
	id      string
	backend backend.Backend
	cwd     string
	cols    uint16
	rows    uint16
	mgr     *sandbox.Manager // native

	mu       sync.Mutex
	attached bool
	cancel   context.CancelFunc
	done     chan struct{}
}

func (t *terminal) close() {
	t.mu.Lock()
	cancel, done := t.cancel, t.done
	t.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	if t.mgr != nil {
		t.mgr.Close()
	}
}

type terminalRequest struct {
	Backend string `json:"backend,omitempty"` // none (default) | native
	Cwd     string `json:"cwd,omitempty"`     // default: the daemon user's home
	Cols    int    `json:"cols,omitempty"`    // default 80
	Rows    int    `json:"rows,omitempty"`    // default 24
}

// TerminalSecrets are unreadable in a native terminal.
var TerminalSecrets = []string{"~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gh"}

// terminalPolicy is the fixed native terminal profile: the home directory
// and the working directory writable, the usual secret stores unreadable,
// the network open (every destination is allowed when asked, through the
// sandbox's proxies).
func terminalPolicy(home, cwd string) (*policy.Policy, error) {
	st := policy.Settings{}
	st.Filesystem.AllowWrite = []policy.Entry{{Path: home, Literal: true}, {Path: cwd, Literal: true}}
	for _, s := range TerminalSecrets {
		st.Filesystem.DenyRead = append(st.Filesystem.DenyRead, policy.Entry{Path: s, Literal: true})
	}
	return policy.New(st, policy.Env{Dir: cwd, Home: home})
}

func (s *Server) createTerminal(w http.ResponseWriter, r *http.Request) {
	var req terminalRequest
	if !decode(w, r, &req) {
		return
	}
	b := backend.None
	switch req.Backend {
	case "", "none":
	case "native", "docker":
		b = backend.Native
	default:
		writeError(w, http.StatusBadRequest, "backend", fmt.Sprintf("%q: a terminal runs on none or native", req.Backend))
		return
	}
	if req.Cols == 0 {
		req.Cols = 80
	}
	if req.Rows == 0 {
		req.Rows = 24
	}
	if req.Cols < 1 || req.Cols > 1000 {
		writeError(w, http.StatusBadRequest, "cols", fmt.Sprintf("%d: want 1 to 1000", req.Cols))
		return
	}
	if req.Rows < 1 || req.Rows > 1000 {
		writeError(w, http.StatusBadRequest, "rows", fmt.Sprintf("%d: want 1 to 1000", req.Rows))
		return
	}
	home := s.Port.Home
	if req.Cwd == "" {
		req.Cwd = home
	}
	if !filepath.IsAbs(req.Cwd) {
		writeError(w, http.StatusBadRequest, "cwd", fmt.Sprintf("%q is not absolute", req.Cwd))
		return
	}
	if st, err := os.Stat(req.Cwd); err != nil || !st.IsDir() {
		writeError(w, http.StatusBadRequest, "cwd", fmt.Sprintf("%q is not a directory", req.Cwd))
		return
	}
	t := &terminal{id: "t" + newID(), backend: b, cwd: req.Cwd, cols: uint16(req.Cols), rows: uint16(req.Rows)}
	if b == backend.Native {
		// Wrapped or refused: never a host shell labelled native.
		if _, err := s.Port.Choose(backend.Native); err != nil {
			fail(w, err)
			return
		}
		pol, err := terminalPolicy(home, req.Cwd)
		if err != nil {
			writeError(w, http.StatusConflict, "backend", "the native terminal profile: "+err.Error())
			return
		}
		m, err := sandbox.New(s.ctx, pol)
		if err != nil {
			writeError(w, http.StatusConflict, "backend", "native: "+err.Error())
			return
		}
		m.SetAsk(func(context.Context, string, string, int) (bool, string) { return true, "" })
		t.mgr = m
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		t.close()
		writeError(w, http.StatusServiceUnavailable, "", "the daemon is shutting down")
		return
	}
	if len(s.terminals) >= MaxTerminals {
		s.mu.Unlock()
		t.close()
		writeError(w, http.StatusTooManyRequests, "", fmt.Sprintf("%d terminals exist, the most one daemon keeps; DELETE some first", MaxTerminals))
		return
	}
	s.terminals[t.id] = t
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"terminalId": t.id, "backend": b, "cwd": t.cwd})
}

func (s *Server) terminal(w http.ResponseWriter, r *http.Request) *terminal {
	id := r.PathValue("id")
	s.mu.Lock()
	t := s.terminals[id]
	s.mu.Unlock()
	if t == nil {
		writeError(w, http.StatusNotFound, "id", fmt.Sprintf("no terminal %q", id))
	}
	return t
}

func (s *Server) deleteTerminal(w http.ResponseWriter, r *http.Request) {
	t := s.terminal(w, r)
	if t == nil {
		return
	}
	s.mu.Lock()
	delete(s.terminals, t.id)
	s.mu.Unlock()
	t.close()
	writeJSON(w, http.StatusOK, map[string]string{"terminalId": t.id})
}

// terminalPTY attaches the terminal's one WebSocket: the shell starts now
// and ends with the connection (the protocol is package term's).
func (s *Server) terminalPTY(w http.ResponseWriter, r *http.Request) {
	t := s.terminal(w, r)
	if t == nil {
		return
	}
	t.mu.Lock()
	if t.attached {
		t.mu.Unlock()
		writeError(w, http.StatusConflict, "id", "the terminal is attached already; create another")
		return
	}
	t.attached = true
	ctx, cancel := context.WithCancel(s.ctx)
	t.cancel, t.done = cancel, make(chan struct{})
	t.mu.Unlock()
	defer func() {
		close(t.done)
		s.mu.Lock()
		delete(s.terminals, t.id)
		s.mu.Unlock()
		if t.mgr != nil {
			t.mgr.Close()
		}
	}()
	defer cancel()
	websocket.Server{Handler: func(ws *websocket.Conn) {
		ws.PayloadType = websocket.BinaryFrame
		cmd := t.command(ctx)
		master, err := term.Start(cmd, t.cols, t.rows)
		if err != nil {
			websocket.JSON.Send(ws, map[string]string{"type": "error", "error": "starting the shell: " + err.Error()})
			return
		}
		term.Serve(ctx, ws, master, cmd)
	}}.ServeHTTP(w, r)
}

// command is the terminal's shell.
func (t *terminal) command(ctx context.Context) *exec.Cmd {
	shell := os.Getenv("SHELL")
	if shell == "" || !filepath.IsAbs(shell) {
		shell = "/bin/sh"
	}
	var cmd *exec.Cmd
	if t.mgr != nil {
		cmd = t.mgr.CommandWith(ctx, sandbox.CommandOptions{ID: t.id, Text: shell}, shell)
	} else {
		cmd = exec.Command(shell)
	}
	cmd.Dir = t.cwd
	cmd.Env = append(backend.ScrubbedEnv(os.Environ()), "TERM=xterm-256color")
	// Dies with the daemon, however it dies (term.Start keeps this).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

func newID() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return fmt.Sprintf("%x", b)
}
