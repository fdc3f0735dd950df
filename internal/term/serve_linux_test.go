//go:build linux

package term

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/websocket"
)

// A session is a test's client of Serve: a real WebSocket connection to an
// httptest server whose handler runs a command on a terminal with Start
// and serves it.
type session struct {
	srv    *httptest.Server
	ws     *websocket.Conn
	pid    int        // of the command
	served chan error // Serve's result
	out    string     // terminal output received and not yet matched
}

// startSession serves argv on an 80x24 terminal and connects to it. ctx is
// Serve's context.
func startSession(t *testing.T, ctx context.Context, argv ...string) *session {
	t.Helper()
	s := &session{served: make(chan error, 1)}
	started := make(chan int, 1)
	s.srv = httptest.NewServer(websocket.Handler(func(ws *websocket.Conn) {
		cmd := exec.Command(argv[0], argv[1:]...)
		master, err := Start(cmd, 80, 24)
		if err != nil {
			t.Errorf("Start(%q): %v", argv, err)
			ws.Close()
			started <- 0
			s.served <- err
			return
		}
		started <- cmd.Process.Pid
		s.served <- Serve(ctx, ws, master, cmd)
	}))
	ws, err := websocket.Dial("ws"+strings.TrimPrefix(s.srv.URL, "http"), "", "http://localhost/")
	if err != nil {
		s.srv.Close()
		t.Fatal(err)
	}
	s.ws = ws
	s.pid = <-started
	t.Cleanup(func() {
		s.ws.Close()
		s.wait(t)
		s.srv.Close()
	})
	if s.pid == 0 {
		t.FailNow()
	}
	return s
}

// wait returns Serve's result.
func (s *session) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-s.served:
		s.served <- err // for the next caller
		return err
	case <-time.After(waitLong):
		t.Fatalf("Serve has not returned after %v", waitLong)
		return nil
	}
}

func (s *session) sendBinary(t *testing.T, b string) {
	t.Helper()
	if err := websocket.Message.Send(s.ws, []byte(b)); err != nil {
		t.Fatal(err)
	}
}

func (s *session) sendText(t *testing.T, text string) {
	t.Helper()
	if err := websocket.Message.Send(s.ws, text); err != nil {
		t.Fatal(err)
	}
}

// next reads frames, adding terminal output to s.out, until a text frame,
// which it returns decoded.
func (s *session) next(t *testing.T) map[string]any {
	t.Helper()
	s.ws.SetReadDeadline(time.Now().Add(waitLong))
	for {
		var f frame
		if err := frames.Receive(s.ws, &f); err != nil {
			t.Fatalf("waiting for a text frame: %v; output %q", err, s.out)
		}
		if !f.text {
			s.out += string(f.data)
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(f.data, &m); err != nil {
			t.Fatalf("text frame %s: %v", f.data, err)
		}
		return m
	}
}

// expect reads the terminal's output until it matches the regular
// expression re, and returns the submatches; the output up to the end of
// the match is used up.
func (s *session) expect(t *testing.T, re string) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	s.ws.SetReadDeadline(time.Now().Add(waitLong))
	for {
		if loc := rx.FindStringSubmatchIndex(s.out); loc != nil {
			var sub []string
			for i := 0; i < len(loc); i += 2 {
				sub = append(sub, s.out[loc[i]:loc[i+1]])
			}
			s.out = s.out[loc[1]:]
			return sub
		}
		var f frame
		if err := frames.Receive(s.ws, &f); err != nil {
			t.Fatalf("waiting for %q in the output: %v; output %q", re, err, s.out)
		}
		if f.text {
			t.Fatalf("text frame %s while waiting for %q in the output %q", f.data, re, s.out)
		}
		s.out += string(f.data)
	}
}

// expectExit reads the exit frame and then the end of the connection.
func (s *session) expectExit(t *testing.T, code int) {
	t.Helper()
	m := s.next(t)
	if m["type"] != "exit" || m["code"] != float64(code) {
		t.Errorf("got %v, want {type:exit code:%d}; output %q", m, code, s.out)
	}
	var f frame
	if err := frames.Receive(s.ws, &f); err != io.EOF {
		t.Errorf("after the exit frame: %v and %q, want the end of the connection (EOF)", err, f.data)
	}
}

// gone reports whether process pid has ended: it does not exist, or it is a
// zombie that its parent (init, for an orphan) has yet to reap.
func gone(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	_, state, err := parseStat(stat)
	return err == nil && state == 'Z'
}

// within retries cond for up to waitLong.
func within(cond func() bool) bool {
	for deadline := time.Now().Add(waitLong); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

func TestServeShell(t *testing.T) {
	s := startSession(t, context.Background(), "/bin/sh")
	// The terminal echoes what is typed: the quotes keep the echo from
	// matching, so "hello" can only be what the shell printed.
	s.sendBinary(t, `echo hel""lo`+"\r")
	s.expect(t, "hello")
	s.sendText(t, `{"type":"input","data":"echo js\"\"on\r"}`)
	s.expect(t, "json")
	s.sendBinary(t, "exit 3\r")
	s.expectExit(t, 3)
	if err := s.wait(t); err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func TestServeResize(t *testing.T) {
	s := startSession(t, context.Background(), "/bin/sh")
	s.sendBinary(t, "stty size\r")
	s.expect(t, `24 80\r\n`)
	// Frames are handled in order: the resize is done before stty runs.
	s.sendText(t, `{"type":"resize","cols":100,"rows":40}`)
	s.sendBinary(t, "stty size\r")
	s.expect(t, `40 100\r\n`)
}

func TestServeExitCode(t *testing.T) {
	tests := []struct {
		script string
		code   int
	}{
		{"exit 0", 0},
		{"echo bye; exit 3", 3},
		{"kill -TERM $$", 128 + 15},
		{"kill -KILL $$", 128 + 9},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			s := startSession(t, context.Background(), "/bin/sh", "-c", tt.script)
			s.expectExit(t, tt.code)
			if strings.HasPrefix(tt.script, "echo bye") && !strings.Contains(s.out, "bye") {
				t.Errorf("output before the exit frame is %q, want bye", s.out)
			}
			if err := s.wait(t); err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
}

func TestServeRefusesMalformedFrames(t *testing.T) {
	s := startSession(t, context.Background(), "/bin/sh")
	for frame, field := range map[string]string{
		`{"type":"resize","cols":0,"rows":24}`:    "cols",
		`{"type":"resize","cols":80,"rows":5000}`: "rows",
		`{"type":"input","data":42}`:              "data",
		`{"type":"paste"}`:                        "type",
		`ls`:                                      "JSON",
	} {
		s.sendText(t, frame)
		m := s.next(t)
		if msg, _ := m["error"].(string); m["type"] != "error" || !strings.Contains(msg, field) {
			t.Errorf("answer to %s is %v, want an error frame naming %s", frame, m, field)
		}
	}
	// The session goes on, at the size it had.
	s.sendBinary(t, `echo al""ive; stty size`+"\r")
	s.expect(t, `alive\r\n24 80\r\n`)
}

func TestServeClientDisconnect(t *testing.T) {
	// A pollable file first, so that the poller's own descriptors are
	// counted in the baseline.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	w.Close()
	goroutines := runtime.NumGoroutine()
	fds := openFDs(t)

	s := startSession(t, context.Background(), "/bin/sh")
	// A job of its own (the shell has job control, being interactive):
	// the kernel's hangup would not reach it.
	s.sendBinary(t, "sleep 1000 & echo job=$!=\r")
	job, _ := strconv.Atoi(s.expect(t, `job=(\d+)=`)[1])
	if stat, err := os.ReadFile("/proc/" + strconv.Itoa(job) + "/stat"); err != nil || strings.Fields(string(stat))[4] == strconv.Itoa(s.pid) {
		t.Fatalf("the job %d is not in a process group of its own: %q, %v", job, stat, err)
	}

	s.ws.Close()
	if err := s.wait(t); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if err := syscall.Kill(s.pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the shell %d after Serve: kill 0: %v, want ESRCH", s.pid, err)
	}
	if !gone(job) {
		t.Errorf("the shell's job %d is still running after Serve", job)
	}
	s.srv.Close()
	if !within(func() bool { return runtime.NumGoroutine() <= goroutines }) {
		t.Errorf("%d goroutines after Serve, %d before", runtime.NumGoroutine(), goroutines)
	}
	if !within(func() bool { return openFDs(t) <= fds }) {
		t.Errorf("%d open descriptors after Serve, %d before", openFDs(t), fds)
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

func TestServeCancel(t *testing.T) {
	tests := []struct {
		name   string
		script string
		code   int
	}{
		{"SIGHUP", "echo ready; sleep 1000", 128 + int(syscall.SIGHUP)},
		// Ignored signals stay ignored across exec: neither the shell nor
		// sleep dies of SIGHUP.
		{"SIGKILL after the grace period", `trap "" HUP; echo ready; sleep 1000`, 128 + int(syscall.SIGKILL)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := startSession(t, ctx, "/bin/sh", "-c", tt.script)
			s.expect(t, "ready")
			cancel()
			s.expectExit(t, tt.code)
			if err := s.wait(t); !errors.Is(err, context.Canceled) {
				t.Errorf("Serve: %v, want context.Canceled", err)
			}
			if err := syscall.Kill(s.pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("the shell %d after Serve: kill 0: %v, want ESRCH", s.pid, err)
			}
		})
	}
}

func TestServeEndsJobsLeftBehind(t *testing.T) {
	// The shell exits at once; its job, in a process group of its own,
	// would run on and keep the terminal open.
	s := startSession(t, context.Background(), "/bin/sh", "-c", "set -m; sleep 1000 & echo job=$!=; exit 5")
	job, _ := strconv.Atoi(s.expect(t, `job=(\d+)=`)[1])
	s.expectExit(t, 5)
	if err := s.wait(t); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if !gone(job) {
		t.Errorf("the job %d is still running after Serve", job)
	}
}

func TestServeNotStarted(t *testing.T) {
	master, slave, err := OpenPTY()
	if err != nil {
		t.Fatal(err)
	}
	defer slave.Close()
	served := make(chan error, 1)
	srv := httptest.NewServer(websocket.Handler(func(ws *websocket.Conn) {
		served <- Serve(context.Background(), ws, master, exec.Command("/bin/sh"))
	}))
	defer srv.Close()
	ws, err := websocket.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), "", "http://localhost/")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := <-served; err == nil || !strings.Contains(err.Error(), "term.Start") {
		t.Errorf("Serve of a command not started: %v, want an error that names term.Start", err)
	}
	var f frame
	ws.SetReadDeadline(time.Now().Add(waitLong))
	if err := frames.Receive(ws, &f); err != io.EOF {
		t.Errorf("client read %v, want EOF", err)
	}
	if _, err := master.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
		t.Errorf("master after Serve: write %v, want os.ErrClosed", err)
	}
}
