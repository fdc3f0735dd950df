package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// End-to-end tests of the Linux sandbox: the real binary under real
// bubblewrap, each checking the effect on the host.

func needBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap is not installed (apt-get install bubblewrap); the sandbox tests need it")
	}
}

// sandbox is a working directory with a settings file.
type sbx struct {
	t        *testing.T
	dir      string // the working directory (writable by default)
	settings string
}

func newSandbox(t *testing.T, settings string) *sbx {
	t.Helper()
	needBwrap(t)
	dir := hostTempDir(t)
	work := filepath.Join(dir, "work")
	os.MkdirAll(work, 0o755)
	s := &sbx{t: t, dir: work}
	if settings != "" {
		s.settings = writeFile(t, dir, "settings.json", strings.ReplaceAll(settings, "$DIR", dir))
	}
	return s
}

// hostTempDir is a temp dir outside /tmp: the sandbox has its own /tmp, so
// host paths under /tmp are invisible inside and would make read tests
// pass for the wrong reason.
func hostTempDir(t *testing.T) string {
	t.Helper()
	base := "/var/tmp"
	if st, err := os.Stat(base); err != nil || !st.IsDir() {
		t.Skip("no /var/tmp for test files outside the sandbox's private /tmp")
	}
	dir, err := os.MkdirTemp(base, "cordon-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	dir, _ = filepath.EvalSymlinks(dir)
	return dir
}

func (s *sbx) run(args ...string) result {
	s.t.Helper()
	if s.settings != "" {
		args = append([]string{"-s", s.settings}, args...)
	}
	return cordon(s.t, s.dir, args...)
}

func (s *sbx) sh(script string) result {
	s.t.Helper()
	return s.run("--", "/bin/sh", "-c", script)
}

func TestSandboxRunsAndPassesStatus(t *testing.T) {
	s := newSandbox(t, "")
	if r := s.run("echo", "hello"); r.code != 0 || r.stdout != "hello\n" {
		t.Fatalf("echo: %+v", r)
	}
	tests := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"sh", "-c", "exit 42"}, 42, ""},
		{[]string{"sh", "-c", "kill -TERM $$"}, 143, ""},
		{[]string{"no-such-command-xyz"}, 127, "not found"},
		{[]string{"./not-exec"}, 126, "not executable"},
		{[]string{"-c", "echo $0-$1", "a", "b"}, 0, ""},
	}
	os.WriteFile(filepath.Join(s.dir, "not-exec"), []byte("#!/bin/sh\n"), 0o644)
	for _, tc := range tests {
		r := s.run(tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.err) {
			t.Errorf("%q: %+v, want exit %d and %q", tc.args, r, tc.code, tc.err)
		}
	}
	if r := s.run("-c", "echo $0-$1", "a", "b"); r.stdout != "a-b\n" {
		t.Errorf("-c with arguments: %q", r.stdout)
	}
}

func TestSandboxProcessState(t *testing.T) {
	s := newSandbox(t, "")
	r := s.sh("grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status; echo pid=$$; id -u")
	if r.code != 0 {
		t.Fatalf("%+v", r)
	}
	for _, want := range []string{"CapEff:\t0000000000000000", "CapPrm:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "pid=1\n") {
		t.Errorf("the command must not be PID 1 (cordon's init is):\n%s", r.stdout)
	}
	if strings.HasSuffix(r.stdout, "\n0\n") {
		t.Errorf("the command runs as uid 0 inside:\n%s", r.stdout)
	}
}

func TestSandboxFilesystem(t *testing.T) {
	s := newSandbox(t, `{
  "filesystem": {
    "denyRead": ["$DIR/secret", "$DIR/work/hidden.txt"],
    "allowRead": ["$DIR/secret/public"],
    "allowWrite": ["."],
    "denyWrite": ["$DIR/work/.env", "$DIR/work/*.pem"]
  }
}`)
	root := filepath.Dir(s.dir)
	os.MkdirAll(filepath.Join(root, "secret/public"), 0o755)
	os.WriteFile(filepath.Join(root, "secret/key"), []byte("TOPSECRET"), 0o600)
	os.WriteFile(filepath.Join(root, "secret/public/readme"), []byte("PUBLIC"), 0o644)
	os.WriteFile(filepath.Join(s.dir, "hidden.txt"), []byte("HIDDEN"), 0o644)
	os.WriteFile(filepath.Join(s.dir, ".env"), []byte("A=1"), 0o644)
	os.WriteFile(filepath.Join(s.dir, "server.pem"), []byte("PEM"), 0o644)
	os.WriteFile(filepath.Join(s.dir, ".bashrc"), []byte("# rc"), 0o644)
	os.Symlink(filepath.Join(root, "secret"), filepath.Join(s.dir, "link"))

	reads := []struct {
		path  string
		leaks string
	}{
		{root + "/secret/key", "TOPSECRET"},
		{"link/key", "TOPSECRET"},                               // through a symlink
		{"../secret/key", "TOPSECRET"},                          // through ..
		{"/proc/self/root" + root + "/secret/key", "TOPSECRET"}, // through /proc/self/root
		{"hidden.txt", "HIDDEN"},
	}
	for _, rd := range reads {
		r := s.sh("cat " + rd.path)
		if strings.Contains(r.stdout, rd.leaks) {
			t.Errorf("read %s leaked: %+v", rd.path, r)
		}
	}
	if r := s.sh("cat " + root + "/secret/public/readme"); r.stdout != "PUBLIC" {
		t.Errorf("allowRead inside denyRead: %+v", r)
	}

	const guardRefusal = "Operation not permitted" // EPERM from the create-time guard
	writes := []struct {
		script  string
		check   string // host path that must not change / appear
		want    string // its content afterwards ("" = must not exist)
		refusal string // the shell's message, where the guard is what refuses
	}{
		{"echo x > " + root + "/outside", root + "/outside", "", ""},
		{"echo x > .env", s.dir + "/.env", "A=1", ""},
		{"echo x > server.pem", s.dir + "/server.pem", "PEM", ""},
		{"rm -f .env", s.dir + "/.env", "A=1", ""},
		{"mv .env moved", s.dir + "/.env", "A=1", ""},
		{"echo x >> .bashrc", s.dir + "/.bashrc", "# rc", ""},
		{"echo x > .zshrc", s.dir + "/.zshrc", "", guardRefusal},
		{"echo x > .mcp.json", s.dir + "/.mcp.json", "", guardRefusal},
		{"mkdir .vscode", s.dir + "/.vscode", "", guardRefusal},
		{"mkdir .idea", s.dir + "/.idea", "", guardRefusal},
		{"echo x > link/new", root + "/secret/new", "", ""},
		{"echo x > /tmp/cordon-private-tmp-test", "/tmp/cordon-private-tmp-test", "", ""},
		{"echo x > " + root + "/secret/public/new", root + "/secret/public/new", "", ""},
	}
	before := escTree(t, s.dir)
	for _, w := range writes {
		r := s.sh(w.script)
		if !strings.Contains(r.stderr, w.refusal) {
			t.Errorf("%q: want %q from the shell: %+v", w.script, w.refusal, r)
		}
		b, err := os.ReadFile(w.check)
		switch {
		case w.want == "" && err == nil:
			t.Errorf("%q created %s on the host", w.script, w.check)
		case w.want != "" && string(b) != w.want:
			t.Errorf("%q changed %s to %q", w.script, w.check, b)
		}
	}
	if r := s.sh("echo ok > made.txt && cat made.txt"); r.stdout != "ok\n" {
		t.Errorf("write in the working directory: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(s.dir, "made.txt")); string(b) != "ok\n" {
		t.Errorf("the allowed write did not reach the host: %q", b)
	}
	// The refused writes left nothing behind: the working directory gained
	// the one file the command was allowed to make, and nothing else.
	want := append(append([]string{}, before...), "made.txt")
	sort.Strings(want)
	if after := escTree(t, s.dir); strings.Join(after, "\n") != strings.Join(want, "\n") {
		t.Errorf("the working directory holds\n%s\nwant\n%s", strings.Join(after, "\n"), strings.Join(want, "\n"))
	}
}

// hostOrigin serves body over HTTP on the host's loopback until the test
// ends.
func hostOrigin(t *testing.T, body string) *net.TCPAddr {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) }))
	return l.Addr().(*net.TCPAddr)
}

func TestSandboxNetwork(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	port := hostOrigin(t, "from-host").Port
	s := newSandbox(t, fmt.Sprintf(`{"network": {"allowedDomains": ["127.0.0.1:%d", "localhost:%d"], "deniedDomains": ["evil.example"]}}`, port, port))
	if r := s.sh(fmt.Sprintf("curl -sS http://127.0.0.1:%d/", port)); r.stdout != "from-host" {
		t.Errorf("allowed host through the bridge: %+v", r)
	}
	if r := s.sh(fmt.Sprintf("curl -sS http://localhost:%d/", port)); r.stdout != "from-host" {
		t.Errorf("allowed localhost:PORT with plain curl: %+v", r)
	}
	r := s.sh("curl -sS -o /dev/null -w '%{http_code}' http://evil.example/")
	if r.stdout != "403" || !strings.Contains(r.stderr, "cordon: blocked network-outbound evil.example:80") {
		t.Errorf("denied host: %+v", r)
	}
	if r := s.sh(fmt.Sprintf("curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:%d/", port)); r.code == 0 || strings.Contains(r.stdout, "from-host") {
		t.Errorf("a direct connection bypassed the proxy: %+v", r)
	}
	if r := s.sh("getent hosts example.com"); r.code == 0 {
		t.Errorf("DNS resolved inside the sandbox: %+v", r)
	}
}

func TestSandboxSeccomp(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	s := newSandbox(t, "")
	probe := `
import ctypes, errno, os, socket
libc = ctypes.CDLL(None, use_errno=True)
def sc(name, *args):
    r = libc.syscall(*args)
    print(name, "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()])
try:
    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); print("unix ok")
except OSError as e: print("unix", errno.errorcode[e.errno])
sc("io_uring_setup", 425, 1, ctypes.create_string_buffer(120))
sc("unshare", 272, 0x10000000)
sc("ptrace_attach_1", 101, 16, 1, 0, 0)
sc("mknod", 133, b"/tmp/dev", 0o20666, 0x0103)
try:
    open("/proc/1/mem", "rb").read(1); print("pid1mem ok")
except OSError as e: print("pid1mem", errno.errorcode[e.errno])
`
	r := s.run("--", "python3", "-c", probe)
	for _, want := range []string{"unix EPERM", "io_uring_setup EPERM", "unshare EPERM", "ptrace_attach_1 EPERM", "pid1mem EACCES"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("want %q in:\n%s%s", want, r.stdout, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "mknod ok") {
		t.Errorf("mknod of a device worked:\n%s", r.stdout)
	}
	if r := s.sh("unshare -U true"); r.code == 0 {
		t.Errorf("unshare -U worked: %+v", r)
	}
}

// Nothing is left behind: background processes die with the command, and
// cordon's death takes the whole tree with it.
func TestSandboxLeavesNothing(t *testing.T) {
	s := newSandbox(t, "")
	// A uniquely named copy of sleep (dash's exec has no -a to rename one).
	sleeper := escSleeper(t, s.dir)
	marker := filepath.Base(sleeper)
	alive := func() bool {
		out, _ := exec.Command("pgrep", "-f", marker).Output()
		return len(out) > 0
	}
	r := s.sh("(" + sleeper + " 300 &) ; sleep 0.2; pgrep -f " + marker + " >/dev/null && echo started")
	if !strings.Contains(r.stdout, "started") {
		t.Fatalf("the background process never started, so this test proves nothing: %+v", r)
	}
	time.Sleep(200 * time.Millisecond)
	if alive() {
		t.Errorf("a background process outlived the sandbox")
	}
	cmd := exec.Command(cordonBin, "--", sleeper, "300")
	cmd.Dir = s.dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !alive() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !alive() {
		t.Fatal("the sandboxed process never started")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	time.Sleep(300 * time.Millisecond)
	if alive() {
		t.Errorf("the sandbox outlived a killed cordon")
	}
}

func TestSandboxSignals(t *testing.T) {
	s := newSandbox(t, "")
	cmd := exec.Command(cordonBin, "--", "sh", "-c", `trap 'echo got-INT; exit 3' INT; echo ready; while :; do sleep 0.05; done`)
	cmd.Dir = s.dir
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	io.ReadFull(out, buf)
	cmd.Process.Signal(syscall.SIGINT)
	rest, _ := io.ReadAll(out)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || !strings.Contains(string(rest), "got-INT") {
		t.Errorf("SIGINT to cordon did not reach the command: %v %q", err, rest)
	}
}

// On a terminal, Ctrl-C reaches the command, whose handler runs to the end:
// neither cordon nor bubblewrap dies of it and takes the sandbox down.
func TestSandboxCtrlCOnTerminal(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed (the test drives a pty with it)")
	}
	needBwrap(t)
	script := `
import os, pty, sys, time, select
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], ["cordon", "--", "sh", "-c", "test -t 0 && echo tty-ok; trap 'echo got-INT; sleep 0.3; echo handler-done; exit 7' INT; echo ready; while :; do sleep 0.1; done"])
out = b""
def rd(t, until=None):
    global out
    end = time.time() + t
    while time.time() < end and (until is None or until not in out):
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try: out += os.read(fd, 1000)
            except OSError: return
rd(10, b"ready")
os.write(fd, b"\x03")
rd(5, b"handler-done")
_, st = os.waitpid(pid, 0)
print(out.decode(errors="replace").replace("\r", ""), "exit", os.waitstatus_to_exitcode(st))
`
	out, err := exec.Command("python3", "-c", script, cordonBin).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{"tty-ok", "got-INT", "handler-done", "exit 7"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
}

// git over ssh inside the sandbox goes through GIT_SSH_COMMAND, which uses
// cordon itself as the ProxyCommand (SOCKS5 to the bridge): a refused
// host is answered in band, so git prints the reason.
func TestSandboxGitSSHRefusedInBand(t *testing.T) {
	for _, tool := range []string{"ssh", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	s := newSandbox(t, `{"network": {"allowedDomains": ["example.com"], "deniedDomains": ["github.com:22"],
	  "deniedDomainReasons": {"github.com:22": "SSH pushes are blocked; use an https remote"}}}`)
	r := s.sh("HOME=/tmp GIT_SSH_VARIANT=ssh git ls-remote git@github.com:cordon/none.git 2>&1; echo rc=$?")
	if !strings.Contains(r.stdout, "SSH pushes are blocked; use an https remote") || strings.Contains(r.stdout, "rc=0") {
		t.Errorf("git over ssh: %+v", r)
	}
	if !strings.Contains(r.stderr, "cordon: blocked network-outbound github.com:22") {
		t.Errorf("the refusal is not in cordon's summary: %q", r.stderr)
	}
}

// A refused syscall is reported by the seccomp supervisor in PID 1 and
// shows up in cordon's summary, without strace.
func TestSandboxReportsSeccompRefusals(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	s := newSandbox(t, "")
	r := s.run("--", "python3", "-c", `
import socket, ctypes, errno
try: socket.socket(socket.AF_UNIX)
except OSError as e: print("unix", errno.errorcode[e.errno])
libc = ctypes.CDLL(None, use_errno=True)
print("io_uring", libc.syscall(425, 1, ctypes.create_string_buffer(120)), errno.errorcode[ctypes.get_errno()])
`)
	if !strings.Contains(r.stdout, "unix EPERM") || !strings.Contains(r.stdout, "io_uring -1 EPERM") {
		t.Fatalf("the calls were not refused with EPERM: %+v", r)
	}
	for _, want := range []string{"cordon: blocked unix-socket socket(domain == AF_UNIX)", "cordon: blocked syscall io_uring_setup"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("summary lacks %q:\n%s", want, r.stderr)
		}
	}
}

// Refusals: one summary line each on stderr, silenced by --quiet, written
// as JSON lines by --violations, and suppressed by ignoreViolations.
func TestSandboxViolationOutputs(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	s := newSandbox(t, `{"network": {"allowedDomains": ["ok.example"], "deniedDomains": ["evil.example"],
	  "deniedDomainReasons": {"evil.example": "exfiltration host"}},
	  "ignoreViolations": {"*": ["quiet.example"], "curl -sS http://noisy": ["noisy.example"]}}`)
	script := "curl -sS -o /dev/null http://evil.example/; curl -sS -o /dev/null http://quiet.example/; curl -sS -o /dev/null http://noisy.example/; true"
	r := s.sh(script)
	if !strings.Contains(r.stderr, "cordon: blocked network-outbound evil.example:80 (exfiltration host)") {
		t.Errorf("summary: %q", r.stderr)
	}
	if strings.Contains(r.stderr, "quiet.example") {
		t.Errorf(`ignoreViolations "*" did not suppress: %q`, r.stderr)
	}
	// The "curl -sS http://noisy" key does not occur in this command's text,
	// so its pattern does not apply.
	if !strings.Contains(r.stderr, "noisy.example:80") {
		t.Errorf("an ignore rule for another command suppressed this one: %q", r.stderr)
	}
	out := filepath.Join(s.dir, "v.jsonl")
	r = s.run("--quiet", "--violations", out, "--", "/bin/sh", "-c", script)
	if strings.Contains(r.stderr, "cordon: blocked") {
		t.Errorf("--quiet printed: %q", r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string // glibc's resolver also probes nscd's unix socket: keep the network ones
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.Contains(l, `"action":"network-outbound"`) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 || !strings.Contains(lines[0], `"action":"network-outbound"`) || !strings.Contains(lines[0], `"target":"evil.example:80"`) ||
		!strings.Contains(lines[0], `"command":"/bin/sh -c curl`) {
		t.Errorf("--violations wrote:\n%s", b)
	}
	r = s.run("--violations", out, "--", "true")
	if b, _ := os.ReadFile(out); len(b) != 0 || r.code != 0 {
		t.Errorf("a run with nothing refused must leave an empty file: %q %+v", b, r)
	}
}

// --control-fd: settings documents, one a line, change the network rules
// of the running command at once; a bad line is reported and ignored.
func TestSandboxControlFD(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	o := hostOrigin(t, "ok").String()
	s := newSandbox(t, `{"network": {"allowedDomains": []}}`)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`curl -sS -o /dev/null -w '%%{http_code} ' http://%s/; touch first; while [ ! -e go ]; do sleep 0.05; done; curl -sS -o /dev/null -w '%%{http_code}' http://%s/`, o, o)
	cmd := exec.Command(cordonBin, "-s", s.settings, "--control-fd", "3", "--", "/bin/sh", "-c", script)
	cmd.Dir = s.dir
	cmd.ExtraFiles = []*os.File{r}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(s.dir, "first")); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Fprintf(w, "{\"network\": {\"allowedDomain\": []}}\n{\"network\": {\"allowedDomains\": [%q]}}\n", o)
	time.Sleep(200 * time.Millisecond)
	os.WriteFile(filepath.Join(s.dir, "go"), nil, 0o644)
	cmd.Wait()
	w.Close()
	if out.String() != "403 200" {
		t.Errorf("before and after the update: %q, want 403 then 200 (stderr %q)", out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "update ignored") || !strings.Contains(errb.String(), `did you mean "allowedDomains"`) {
		t.Errorf("the bad line was not reported: %q", errb.String())
	}
	if r := cordon(t, s.dir, "--control-fd", "1", "true"); r.code != 125 {
		t.Errorf("--control-fd 1: %+v", r)
	}
}

// A refused unix socket shows up in the --violations file and is
// suppressed by an ignoreViolations pattern on its target.
func TestSandboxUnixSocketViolationOutputs(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	probe := "import socket\ntry: socket.socket(socket.AF_UNIX)\nexcept OSError: print('refused')"
	s := newSandbox(t, "")
	out := filepath.Join(s.dir, "v.jsonl")
	r := s.run("--violations", out, "--", "python3", "-c", probe)
	b, _ := os.ReadFile(out)
	if r.stdout != "refused\n" || !strings.Contains(string(b), `"action":"unix-socket"`) || !strings.Contains(string(b), `"target":"socket(domain == AF_UNIX)"`) {
		t.Errorf("--violations: %q (%+v)", b, r)
	}
	quiet := newSandbox(t, `{"ignoreViolations": {"*": ["socket(domain == AF_UNIX)"]}}`)
	if r := quiet.run("--", "python3", "-c", probe); r.stdout != "refused\n" || strings.Contains(r.stderr, "unix-socket") {
		t.Errorf("ignoreViolations did not suppress the unix socket: %+v", r)
	}
}

// With httpProxyPort, the bridge hands connections to that external proxy
// on the host's loopback, which does the filtering (srt's meaning).
func TestSandboxExternalProxy(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	ext := hostOrigin(t, "via-external-proxy") // answers every request, absolute-form included
	s := newSandbox(t, fmt.Sprintf(`{"network": {"httpProxyPort": %d}}`, ext.Port))
	if r := s.sh("curl -sS http://anything.example/"); r.stdout != "via-external-proxy" {
		t.Errorf("through the external proxy: %+v", r)
	}
}
