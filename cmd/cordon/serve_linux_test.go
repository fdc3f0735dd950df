//go:build linux

package main

// cordon serve end to end: the built binary as the daemon, Go clients over
// HTTP, server-sent events and WebSocket, real sandboxes; every write rule
// is checked on the host.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/websocket"
)

const testToken = "test-token-0123456789abcdef"

// daemon is a running `cordon serve`.
type daemon struct {
	t      *testing.T
	cmd    *exec.Cmd
	base   string
	log    *syncBuffer
	home   string
	token  string
	exited chan struct{}
}

type syncBuffer struct {
	mu  chanMutex
	buf bytes.Buffer
}

type chanMutex chan struct{}

func (m chanMutex) lock()   { m <- struct{}{} }
func (m chanMutex) unlock() { <-m }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.lock()
	defer b.mu.unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.lock()
	defer b.mu.unlock()
	return b.buf.String()
}

var listenLine = regexp.MustCompile(`listening on (http://[0-9.:]+)`)

// startDaemon runs cordon serve with args and env; HOME is a fresh
// directory.
func startDaemon(t *testing.T, env []string, args ...string) *daemon {
	t.Helper()
	needBwrap(t)
	home := hostTempDir(t)
	d := &daemon{t: t, log: &syncBuffer{mu: make(chanMutex, 1)}, home: home, token: testToken, exited: make(chan struct{})}
	d.cmd = exec.Command(cordonBin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	d.cmd.Env = append(append(os.Environ(), "HOME="+home, "CORDON_API_TOKEN="+testToken, "CORDON_SANDBOX="), env...)
	d.cmd.Stderr, d.cmd.Stdout = d.log, d.log
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.cmd.Wait(); close(d.exited) }()
	t.Cleanup(func() { d.stop() })
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := listenLine.FindStringSubmatch(d.log.String()); m != nil {
			d.base = m[1]
			return d
		}
		select {
		case <-d.exited:
			t.Fatalf("cordon serve exited: %s", d.log.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("cordon serve did not start: %s", d.log.String())
	return nil
}

func (d *daemon) stop() {
	select {
	case <-d.exited:
		return
	default:
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(20 * time.Second):
		d.cmd.Process.Kill()
		d.t.Errorf("cordon serve did not stop on SIGTERM")
	}
}

// call makes an API request; body is JSON-encoded unless it is a string.
func (d *daemon) call(method, path string, body any) (int, map[string]any) {
	d.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, d.base+path, rd)
	if d.token != "" {
		req.Header.Set("Authorization", "Bearer "+d.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// sse reads a session's event stream until stop says so (or a minute).
func (d *daemon) sse(session string, from string, stop func(typ string, data map[string]any) bool) []map[string]any {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", d.base+"/v1/sessions/"+session+"/events"+from, nil)
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		d.t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var evs []map[string]any
	sc := bufio.NewScanner(resp.Body)
	typ := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var e map[string]any
			json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e)
			if e["type"] != typ {
				d.t.Errorf("event: %s but data type %v", typ, e["type"])
			}
			evs = append(evs, e)
			if stop(typ, e) {
				return evs
			}
		}
	}
	return evs
}

// execWait starts argv in the session and reads its output and exit code
// from the event stream, subscribed after the exec: the stream replays.
func (d *daemon) execWait(session string, req map[string]any) (stdout, stderr string, code int, evs []map[string]any) {
	d.t.Helper()
	st, out := d.call("POST", "/v1/sessions/"+session+"/exec", req)
	if st != 202 {
		d.t.Fatalf("exec: %d %v", st, out)
	}
	id := out["execId"]
	code = -1
	evs = d.sse(session, "", func(typ string, e map[string]any) bool {
		return typ == "exit" && e["execId"] == id
	})
	for _, e := range evs {
		if e["execId"] != id {
			continue
		}
		switch e["type"] {
		case "stdout":
			stdout += e["data"].(string)
		case "stderr":
			stderr += e["data"].(string)
		case "exit":
			code = int(e["code"].(float64))
		}
	}
	return
}

func sh(script string) map[string]any { return map[string]any{"argv": []string{"sh", "-c", script}} }

func TestServeStartupLine(t *testing.T) {
	for _, c := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"default", nil, nil, "agent sandbox ON (bubblewrap"},
		{"flag off", nil, []string{"--sandbox", "off"}, "agent sandbox DISABLED by --sandbox off"},
		{"env off", []string{"CORDON_SANDBOX=off"}, nil, "agent sandbox DISABLED by --sandbox off"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := startDaemon(t, c.env, c.args...)
			log := d.log.String()
			n := 0
			for _, l := range []string{"agent sandbox ON", "no OS-native agent sandbox", "agent sandbox DISABLED"} {
				n += strings.Count(log, l)
			}
			if !strings.Contains(log, c.want) || n != 1 {
				t.Errorf("start-up lines:\n%s", log)
			}
		})
	}
	r := cordon(t, t.TempDir(), "serve", "--sandbox", "maybe")
	if r.code != exitFailure || !strings.Contains(r.stderr, "--sandbox \"maybe\"") {
		t.Errorf("bad --sandbox: %d %s", r.code, r.stderr)
	}
}

func TestServeTokenAndHealth(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "sub", "token")
	d := startDaemon(t, []string{"CORDON_API_TOKEN="}, "--token-file", tokenFile)
	st, err := os.Stat(tokenFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", st, err)
	}
	if !strings.Contains(d.log.String(), tokenFile) || strings.Contains(d.log.String(), testToken) {
		t.Errorf("the log should name the token file, never the token:\n%s", d.log.String())
	}
	b, _ := os.ReadFile(tokenFile)
	d.token = ""
	if code, out := d.call("GET", "/healthz", nil); code != 200 || out["status"] != "ok" || out["sandbox"] != nil {
		t.Errorf("healthz: %d %v", code, out)
	}
	if code, _ := d.call("GET", "/v1/probe", nil); code != 401 {
		t.Errorf("no token: %d", code)
	}
	d.token = "wrong-token-000000000000"
	if code, _ := d.call("GET", "/v1/probe", nil); code != 401 {
		t.Errorf("wrong token: %d", code)
	}
	d.token = strings.TrimSpace(string(b))
	code, out := d.call("GET", "/v1/probe", nil)
	if code != 200 || out["native"] == nil || out["none"] == nil || out["microvm"].(map[string]any)["available"] != false {
		t.Errorf("probe: %d %v", code, out)
	}
}

func TestServeModesAndRules(t *testing.T) {
	d := startDaemon(t, nil)
	w := hostTempDir(t)
	proj, docs, state, locked := filepath.Join(w, "proj"), filepath.Join(w, "docs"), filepath.Join(w, "state"), filepath.Join(w, "proj", "locked")
	for _, p := range []string{proj, docs, state, locked} {
		os.MkdirAll(p, 0o755)
	}
	for _, mode := range []string{"chat", "review", "plan", "orchestrate"} {
		code, out := d.call("POST", "/v1/sessions", map[string]any{
			"sessionId": "s-" + mode, "workspaceId": "w", "mode": mode,
			"bindMounts":      []map[string]any{{"hostPath": proj}, {"hostPath": docs, "readOnly": true}},
			"protectedPaths":  []string{locked},
			"runnerStateDirs": []string{state},
		})
		if code != 201 || out["backend"] != "native" || out["state"] != "warm" {
			t.Fatalf("%s: %d %v", mode, code, out)
		}
		stdout, _, exit, _ := d.execWait("s-"+mode, sh(`
			echo x > `+mode+`.txt; echo $?
			echo x > `+docs+`/`+mode+`; echo $?
			echo x > locked/`+mode+`; echo $?
			echo x > `+state+`/`+mode+`; echo $?
			echo x > `+mode+`.pem; echo $?`))
		want := "2 2 2 0 2"
		if mode == "chat" {
			want = "0 2 2 0 2"
		}
		if got := strings.Join(strings.Fields(stdout), " "); exit != 0 || got != want {
			t.Errorf("%s: %q (exit %d), want %q", mode, got, exit, want)
		}
		_, err := os.Stat(filepath.Join(proj, mode+".txt"))
		if (err == nil) != (mode == "chat") {
			t.Errorf("%s: %s.txt on the host: %v", mode, mode, err)
		}
		for _, p := range []string{filepath.Join(docs, mode), filepath.Join(locked, mode), filepath.Join(proj, mode+".pem")} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("HOLE: %s: %s written", mode, p)
			}
		}
		if _, err := os.Stat(filepath.Join(state, mode)); err != nil {
			t.Errorf("%s: the runner state dir was not writable: %v", mode, err)
		}
	}
	code, out := d.call("GET", "/v1/sessions", nil)
	if list, _ := out["sessions"].([]any); code != 200 || len(list) != 4 {
		t.Errorf("list: %d %v", code, out)
	}
	if code, out := d.call("DELETE", "/v1/sessions/s-chat", nil); code != 200 || out["state"] != "destroyed" {
		t.Errorf("delete: %d %v", code, out)
	}
	if code, _ := d.call("GET", "/v1/sessions/s-chat", nil); code != 404 {
		t.Errorf("get after delete: %d", code)
	}
}

func TestServeNetwork(t *testing.T) {
	escNeed(t, "curl")
	d := startDaemon(t, nil)
	a, b := hostOrigin(t, "from-a"), hostOrigin(t, "from-b")
	w := hostTempDir(t)
	mk := func(id string, extra map[string]any) {
		spec := map[string]any{"sessionId": id, "workspaceId": "w", "bindMounts": []map[string]any{{"hostPath": w}}}
		for k, v := range extra {
			spec[k] = v
		}
		if code, out := d.call("POST", "/v1/sessions", spec); code != 201 {
			t.Fatalf("%s: %d %v", id, code, out)
		}
	}
	mk("na", map[string]any{"egressAllowlist": []string{a.String()}})
	mk("nb", map[string]any{"egressAllowlist": []string{b.String()}})
	mk("off", map[string]any{"networkEnabled": false, "egressAllowlist": []string{a.String()}})
	curl := func(s, target string) string {
		out, _, _, _ := d.execWait(s, sh("curl -s -o /dev/null -w '%{http_code}' http://"+target+"/"))
		return out
	}
	// Two sessions at once, each with its own allowlist: no cross-talk.
	got := make(chan string, 2)
	go func() { got <- "na " + curl("na", a.String()) + " " + curl("na", b.String()) }()
	go func() { got <- "nb " + curl("nb", b.String()) + " " + curl("nb", a.String()) }()
	for i := 0; i < 2; i++ {
		if r := <-got; !strings.HasSuffix(r, " 200 403") {
			t.Errorf("%s: want 200 to its own origin, 403 to the other", r)
		}
	}
	if r := curl("off", a.String()); r != "403" {
		t.Errorf("network off: %s", r)
	}
	// Ask: the client answers over the API.
	mk("ask", map[string]any{"networkAccess": "ask", "askTimeoutSeconds": 30})
	code, out := d.call("POST", "/v1/sessions/ask/exec", sh("curl -s http://"+a.String()+"/"))
	if code != 202 {
		t.Fatalf("exec: %d %v", code, out)
	}
	var answered bool
	var stdout string
	d.sse("ask", "", func(typ string, e map[string]any) bool {
		switch typ {
		case "ask":
			q := e["ask"].(map[string]any)
			if code, out := d.call("POST", "/v1/sessions/ask/asks/"+q["askId"].(string), map[string]any{"decision": "allow"}); code != 200 {
				t.Errorf("answer: %d %v", code, out)
			}
			answered = true
		case "stdout":
			stdout += e["data"].(string)
		}
		return typ == "exit"
	})
	if !answered || stdout != "from-a" {
		t.Errorf("ask: answered %v, stdout %q", answered, stdout)
	}
}

func TestServeBadRequests(t *testing.T) {
	d := startDaemon(t, nil)
	w := hostTempDir(t)
	if code, _ := d.call("POST", "/v1/sessions", map[string]any{"sessionId": "ok", "workspaceId": "w", "bindMounts": []map[string]any{{"hostPath": w}}}); code != 201 {
		t.Fatalf("setup: %d", code)
	}
	for _, c := range []struct {
		name, method, path string
		body               any
		code               int
		field              string
	}{
		{"not JSON", "POST", "/v1/sessions", "{", 400, ""},
		{"empty body", "POST", "/v1/sessions", "", 400, ""},
		{"unknown field", "POST", "/v1/sessions", `{"sessionId":"x","workspaceId":"w","bindMount":[]}`, 400, "bindMount"},
		{"wrong type", "POST", "/v1/sessions", `{"sessionId":"x","workspaceId":"w","networkEnabled":"yes"}`, 400, "networkEnabled"},
		{"no session id", "POST", "/v1/sessions", map[string]any{"workspaceId": "w"}, 400, "sessionId"},
		{"bad mode", "POST", "/v1/sessions", map[string]any{"sessionId": "x", "workspaceId": "w", "mode": "yolo"}, 400, "mode"},
		{"relative bind", "POST", "/v1/sessions", map[string]any{"sessionId": "x", "workspaceId": "w", "bindMounts": []map[string]any{{"hostPath": "proj"}}}, 400, "bindMounts[0].hostPath"},
		{"public suffix", "POST", "/v1/sessions", map[string]any{"sessionId": "x", "workspaceId": "w", "egressAllowlist": []string{"*.co.uk"}}, 400, "egressAllowlist[0]"},
		{"explicit microvm", "POST", "/v1/sessions", map[string]any{"sessionId": "x", "workspaceId": "w", "backend": "microvm"}, 409, "backend"},
		{"guest path remap", "POST", "/v1/sessions", map[string]any{"sessionId": "x", "workspaceId": "w", "bindMounts": []map[string]any{{"hostPath": w, "guestPath": "/workspace"}}}, 400, "bindMounts[0].guestPath"},
		{"duplicate", "POST", "/v1/sessions", map[string]any{"sessionId": "ok", "workspaceId": "w"}, 409, "sessionId"},
		{"no such session", "GET", "/v1/sessions/nope", nil, 404, "id"},
		{"exec no session", "POST", "/v1/sessions/nope/exec", sh("true"), 404, "id"},
		{"exec empty argv", "POST", "/v1/sessions/ok/exec", map[string]any{"argv": []string{}}, 400, "argv"},
		{"exec bad env", "POST", "/v1/sessions/ok/exec", map[string]any{"argv": []string{"true"}, "env": []string{"NOEQUALS"}}, 400, "env[0]"},
		{"exec env not a list or object", "POST", "/v1/sessions/ok/exec", map[string]any{"argv": []string{"true"}, "env": 3}, 400, "env"},
		{"exec relative cwd", "POST", "/v1/sessions/ok/exec", map[string]any{"argv": []string{"true"}, "cwd": "sub"}, 400, "cwd"},
		{"answer bad decision", "POST", "/v1/sessions/ok/asks/a1", map[string]any{"decision": "maybe"}, 400, "decision"},
		{"answer unknown ask", "POST", "/v1/sessions/ok/asks/a1", map[string]any{"decision": "allow"}, 404, "askId"},
		{"events bad from", "GET", "/v1/sessions/ok/events?from=x", nil, 400, "from"},
		{"terminal bad backend", "POST", "/v1/terminals", map[string]any{"backend": "microvm"}, 400, "backend"},
		{"terminal relative cwd", "POST", "/v1/terminals", map[string]any{"cwd": "x"}, 400, "cwd"},
		{"terminal size", "POST", "/v1/terminals", map[string]any{"cols": 5000}, 400, "cols"},
		{"no route", "GET", "/v1/nothing", nil, 404, ""},
	} {
		code, out := d.call(c.method, c.path, c.body)
		if code != c.code || (c.field != "" && out["field"] != c.field) || out["error"] == nil {
			t.Errorf("%s: %d %v, want %d naming %q", c.name, code, out, c.code, c.field)
		}
	}
	big := `{"sessionId":"x","workspaceId":"` + strings.Repeat("w", 2<<20) + `"}`
	if code, _ := d.call("POST", "/v1/sessions", big); code != 413 {
		t.Errorf("2 MiB body: %d", code)
	}
}

func TestServeSandboxOff(t *testing.T) {
	d := startDaemon(t, []string{"GITHUB_TOKEN=ghp_leak"}, "--sandbox", "off")
	w := hostTempDir(t)
	code, out := d.call("POST", "/v1/sessions", map[string]any{"sessionId": "s", "workspaceId": "w", "bindMounts": []map[string]any{{"hostPath": w}}})
	if code != 201 || out["backend"] != "none" {
		t.Fatalf("%d %v", code, out)
	}
	stdout, _, exit, _ := d.execWait("s", sh("env; echo x > .env && echo wrote"))
	if exit != 0 || strings.Contains(stdout, "ghp_leak") || !strings.Contains(stdout, "wrote") {
		t.Errorf("none: exit %d\n%s", exit, stdout)
	}
	// env as a list or as an object; an unknown backend name is none.
	for _, env := range []any{[]string{"FOO=bar"}, map[string]string{"FOO": "bar"}} {
		out, _, _, _ := d.execWait("s", map[string]any{"argv": []string{"sh", "-c", "echo $FOO"}, "env": env})
		if out != "bar\n" {
			t.Errorf("env %v: %q", env, out)
		}
	}
	if code, out := d.call("POST", "/v1/sessions", map[string]any{"sessionId": "u", "workspaceId": "w", "backend": "kvm"}); code != 201 || out["backend"] != "none" {
		t.Errorf("unknown backend: %d %v", code, out)
	}
	if code, out := d.call("POST", "/v1/sessions", map[string]any{"sessionId": "n", "workspaceId": "w", "backend": "native"}); code != 409 {
		t.Errorf("native with the sandbox off: %d %v", code, out)
	}
}

// SIGTERM destroys every session: its commands and sandboxes end, and no
// temporary directory is left.
func TestServeShutdownLeavesNothing(t *testing.T) {
	d := startDaemon(t, nil)
	w := hostTempDir(t)
	marker := fmt.Sprintf("cordon-serve-test-%d", time.Now().UnixNano())
	d.call("POST", "/v1/sessions", map[string]any{"sessionId": "s", "workspaceId": "w", "bindMounts": []map[string]any{{"hostPath": w}}})
	d.call("POST", "/v1/sessions/s/exec", sh("exec sleep 300 # "+marker))
	d.sse("s", "", func(typ string, e map[string]any) bool { return typ == "ready" })
	if out, _ := exec.Command("pgrep", "-f", marker).Output(); len(out) == 0 {
		t.Fatal("the command is not running")
	}
	d.stop()
	if out := escWaitGone(marker, 10*time.Second); out != "" {
		t.Errorf("left running after SIGTERM: %s", out)
	}
	if !strings.Contains(d.log.String(), "destroying every session") {
		t.Errorf("log:\n%s", d.log.String())
	}
}

// A terminal: a real PTY over a WebSocket; typing reaches the shell and
// its echo comes back; a resize is seen by the shell; native terminals
// hide the secret directories and are wrapped or refused.
func TestServeTerminal(t *testing.T) {
	d := startDaemon(t, nil)
	os.MkdirAll(filepath.Join(d.home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(d.home, ".ssh", "id_ed25519"), []byte("PRIVATE-KEY"), 0o600)
	for _, b := range []string{"none", "native"} {
		t.Run(b, func(t *testing.T) {
			code, out := d.call("POST", "/v1/terminals", map[string]any{"backend": b, "cwd": d.home, "cols": 100, "rows": 30})
			if code != 201 {
				t.Fatalf("%d %v", code, out)
			}
			id := out["terminalId"].(string)
			cfg, _ := websocket.NewConfig(strings.Replace(d.base, "http", "ws", 1)+"/v1/terminals/"+id+"/pty", d.base)
			cfg.Header = http.Header{"Authorization": {"Bearer " + d.token}}
			ws, err := websocket.DialConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			var got strings.Builder
			read := func(want string) bool {
				re := regexp.MustCompile(want)
				deadline := time.Now().Add(20 * time.Second)
				for time.Now().Before(deadline) && !re.MatchString(got.String()) {
					ws.SetReadDeadline(deadline)
					var msg []byte
					if websocket.Message.Receive(ws, &msg) != nil {
						return false
					}
					got.Write(msg)
				}
				return re.MatchString(got.String())
			}
			websocket.Message.Send(ws, []byte("echo hello-$((40+2)); stty size\r"))
			// hello-42 and the size are output: the typed line shows $((40+2)).
			if !read("hello-42") || !read("30 100") {
				t.Fatalf("typed echo and stty size; the terminal shows:\n%s", got.String())
			}
			websocket.Message.Send(ws, `{"type":"resize","cols":120,"rows":40}`)
			// Seen once in many runs under load: the first stty after the
			// resize still said 30 100 (not reproduced in 300 resize/stty
			// rounds through the daemon); ask again before failing.
			resized := false
			for try := 0; try < 3 && !resized; try++ {
				websocket.Message.Send(ws, []byte(fmt.Sprintf("echo size$(stty size | tr ' ' x)-%d\r", try)))
				resized = read(fmt.Sprintf("size40x120-%d|size30x100-%d", try, try)) && strings.Contains(got.String(), "size40x120")
			}
			websocket.Message.Send(ws, []byte("cat ~/.ssh/id_ed25519; echo key-rc=$?\r"))
			if !resized || !read("key-rc=[0-9]") {
				t.Fatalf("after a resize:\n%s", got.String())
			}
			if leaked := strings.Contains(got.String(), "PRIVATE-KEY"); leaked != (b == "none") {
				t.Errorf("%s terminal: the private key read: %v\n%s", b, leaked, got.String())
			}
			websocket.Message.Send(ws, []byte("exit 3\r"))
			read(`"code": ?3`)
			if !strings.Contains(got.String(), `"type":"exit"`) {
				t.Errorf("no exit frame:\n%s", got.String())
			}
		})
	}
	if code, _ := d.call("GET", "/v1/terminals/nope/pty", nil); code != 404 {
		t.Errorf("unknown terminal: %d", code)
	}
	// The WebSocket needs the token like every other route.
	code, out := d.call("POST", "/v1/terminals", map[string]any{"cwd": d.home})
	if code != 201 {
		t.Fatalf("%d %v", code, out)
	}
	cfg, _ := websocket.NewConfig(strings.Replace(d.base, "http", "ws", 1)+"/v1/terminals/"+out["terminalId"].(string)+"/pty", d.base)
	if ws, err := websocket.DialConfig(cfg); err == nil {
		ws.Close()
		t.Errorf("HOLE: a terminal attached without the token")
	}
}

// A daemon killed with SIGKILL takes its native sessions' sandboxes along.
func TestServeKilledDaemonLeavesNoSandbox(t *testing.T) {
	d := startDaemon(t, nil)
	w := hostTempDir(t)
	marker := fmt.Sprintf("cordon-serve-kill-%d", time.Now().UnixNano())
	d.call("POST", "/v1/sessions", map[string]any{"sessionId": "s", "workspaceId": "w", "bindMounts": []map[string]any{{"hostPath": w}}})
	d.call("POST", "/v1/sessions/s/exec", sh("sleep 317 & exec sleep 301 # "+marker))
	d.sse("s", "", func(typ string, e map[string]any) bool { return typ == "ready" })
	time.Sleep(200 * time.Millisecond)
	if out, _ := exec.Command("pgrep", "-f", marker).Output(); len(out) == 0 {
		t.Fatal("the command is not running")
	}
	d.cmd.Process.Kill()
	<-d.exited
	if out := escWaitGone(marker, 10*time.Second); out != "" {
		t.Errorf("left running after the daemon was killed: %s", out)
	}
	if out := escWaitGone("sleep 317", 5*time.Second); out != "" {
		t.Errorf("the background job survived: %s", out)
	}
}
