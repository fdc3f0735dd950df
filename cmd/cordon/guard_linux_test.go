//go:build linux

package main

// The create-time guard end to end: the built binary, real bubblewrap, the
// guard in the sandbox's PID 1; every test checks the host afterwards.

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

const guardSettings = `{"filesystem": {"allowWrite": ["."], "denyWrite": ["**/.env", "**/*.pem", "**/*.key"]}}`

// guardProbe is a python probe of the guard's refusals and what it allows.
const guardProbe = `
E = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
def create(p, flags=E, mode=0o644, **kw):
    os.close(os.open(p, flags, mode, **kw))
for d in ("", "a/", "a/b/c/d/e/"):
    if d:
        os.makedirs(d, exist_ok=True)
    for n in (".env", "key.pem", ".bashrc", "id.key"):
        res("create " + d + n, lambda: create(d + n))
res("create ok.txt", lambda: create("ok.txt"))
res("mv ok.txt .zshrc", lambda: os.rename("ok.txt", ".zshrc"))
res("mv ok.txt a/.env", lambda: os.rename("ok.txt", "a/.env"))
res("ln ok.txt .profile", lambda: os.link("ok.txt", ".profile"))
res("ln -s ok.txt a/x.pem", lambda: os.symlink("ok.txt", "a/x.pem"))
res("mkdir .vscode", lambda: os.mkdir(".vscode"))
res("mkdir a/b/.vscode", lambda: os.mkdir("a/b/.vscode"))
res("mkfifo .bash_login", lambda: os.mkfifo(".bash_login"))
res("mknod a/.gitconfig", lambda: os.mknod("a/.gitconfig", 0o600 | 0o100000))
res("create /proc/self/cwd/a/.env", lambda: create("/proc/self/cwd/a/.env"))
res("create /proc/self/cwd/a/fine", lambda: create("/proc/self/cwd/a/fine"))
dfd = os.open("a/b", os.O_RDONLY | os.O_DIRECTORY)
res("openat a/b ../.env", lambda: create("../.env", dir_fd=dfd))
res("openat a/b c/d/.bashrc", lambda: create("c/d/.bashrc", dir_fd=dfd))
res("openat a/b fine", lambda: create("fine", dir_fd=dfd))
res("create a/b/../../.mcp.json", lambda: create("a/b/../../.mcp.json"))
os.symlink("a/b/c", "lnk")
res("create lnk/server.key", lambda: create("lnk/server.key"))
res("create lnk/fine", lambda: create("lnk/fine"))
os.symlink(".env", "dangling")
res("create dangling -> .env", lambda: create("dangling"))
def tmpfile_link(name):
    fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o600)
    try:
        os.write(fd, b"EVIL")
        # linkat(AT_SYMLINK_FOLLOW): python's os.link calls link(2), which
        # would link the /proc symlink itself (EXDEV, guard or not).
        if libc.linkat(-100, b"/proc/self/fd/%d" % fd, -100, name.encode(), 0x400) != 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
    finally:
        os.close(fd)
res("O_TMPFILE linkat .env", lambda: tmpfile_link(".env"))
res("O_TMPFILE linkat tmp.ok", lambda: tmpfile_link("tmp.ok"))
res("create /dev/null", lambda: create("/dev/null"))
def bind_pair(name):
    a, b = socket.socketpair()
    try:
        a.bind(name)
    finally:
        a.close(); b.close()
res("bind socketpair a/.bashrc", lambda: bind_pair("a/.bashrc"))
res("bind socketpair fine.sock", lambda: bind_pair("a/b/fine.sock"))
`

func TestGuardRefusesByName(t *testing.T) {
	escNeed(t, "python3")
	s := newSandbox(t, guardSettings)
	got, r := escPy(t, s, guardProbe)
	if r.code != 0 {
		t.Fatalf("probe exit %d: %s", r.code, r.stderr)
	}
	var refused []string
	for k, v := range got {
		want := "EPERM"
		switch {
		case strings.HasSuffix(k, "fine") || strings.HasSuffix(k, "fine.sock") || strings.HasSuffix(k, "ok.txt") || strings.HasSuffix(k, "tmp.ok") || k == "create /dev/null":
			want = "ok"
		}
		if v != want {
			t.Errorf("%s: %s, want %s", k, v, want)
		}
		if want == "EPERM" {
			refused = append(refused, k)
		}
	}
	if len(got) < 30 {
		t.Errorf("only %d results: %v\n%s", len(got), got, r.stderr)
	}
	// The host: only what was allowed.
	tree := escTree(t, s.dir)
	for _, p := range tree {
		base := filepath.Base(p)
		if base == ".env" || strings.HasSuffix(base, ".pem") || strings.HasSuffix(base, ".key") ||
			base == ".bashrc" || base == ".zshrc" || base == ".profile" || base == ".vscode" ||
			base == ".bash_login" || base == ".gitconfig" || base == ".mcp.json" {
			t.Errorf("HOLE: %s exists on the host", p)
		}
	}
	for _, p := range []string{"ok.txt", "a/fine", "a/b/fine", "a/b/c/fine", "tmp.ok"} {
		if _, err := os.Lstat(filepath.Join(s.dir, p)); err != nil {
			t.Errorf("%s was not created: %v", p, err)
		}
	}
	// Every refusal is reported, with its rule.
	for _, want := range []string{
		"blocked file-create " + s.dir + "/a/b/c/d/e/.env (filesystem.denyWrite[0] **/.env)",
		"blocked file-create " + s.dir + "/.bashrc (mandatory deny .bashrc)",
		"blocked file-create " + s.dir + "/a/b/c/server.key (filesystem.denyWrite[2] **/*.key)",
		"blocked file-create " + s.dir + "/.vscode (mandatory deny .vscode)",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("no %q in the summary:\n%s", want, r.stderr)
		}
	}
}

// The shell's own ways: redirections, mv, ln, mkdir -p, touch, cp.
func TestGuardShell(t *testing.T) {
	s := newSandbox(t, guardSettings)
	r := s.sh(`umask 027
echo x > new.txt; mkdir -p d1/d2; touch d1/d2/t
echo EVIL > .env; echo EVIL > d1/.env; echo EVIL > d1/d2/secret.pem
echo tmp > tmp; mv tmp .zshrc; mv tmp d1/d2/.bashrc; ln tmp .profile; ln -s tmp d1/.bash_profile
cp new.txt d1/server.key; mkdir .vscode d1/.idea
mkdir -p r2/.git h; echo '#!/bin/sh' > h/pre-commit; mv h r2/.git/hooks
echo ok > /dev/stdout; echo err > /dev/stderr; echo null > /dev/null; echo done`)
	if !strings.Contains(r.stdout, "ok\n") || !strings.Contains(r.stdout, "done") {
		t.Errorf("stdout %q, stderr %q", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "err\n") {
		t.Errorf("stderr %q: /dev/stderr did not work", r.stderr)
	}
	for _, p := range []string{".env", "d1/.env", "d1/d2/secret.pem", ".zshrc", "d1/d2/.bashrc", ".profile", "d1/.bash_profile", "d1/server.key", ".vscode", "d1/.idea", "r2/.git/hooks"} {
		if st := escStat(filepath.Join(s.dir, p)); st.exists {
			t.Errorf("HOLE: %s exists on the host", p)
		}
	}
	// Allowed creations keep the caller's umask and owner.
	uid := os.Getuid()
	for p, mode := range map[string]os.FileMode{"new.txt": 0o640, "d1": 0o750 | os.ModeDir, "d1/d2/t": 0o640, "tmp": 0o640} {
		st, err := os.Lstat(filepath.Join(s.dir, p))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if st.Mode() != mode {
			t.Errorf("%s: mode %v, want %v", p, st.Mode(), mode)
		}
		if o := int(st.Sys().(*syscall.Stat_t).Uid); o != uid {
			t.Errorf("%s: owner %d, want %d", p, o, uid)
		}
	}
}

// A thread flips the path between an allowed and a protected name while
// the main thread creates it in a loop; the protected name never appears.
func TestGuardPathFlipRace(t *testing.T) {
	escNeed(t, "python3")
	s := newSandbox(t, guardSettings)
	n := 10000
	if testing.Short() {
		n = 2000
	}
	got, r := escPy(t, s, `
import threading
buf = ctypes.create_string_buffer(64)
ok, bad = b"race-ok\0", b".bashrc\0"
buf.raw = ok + b"\0" * (64 - len(ok))
stop = False
def flip():
    i = 0
    while not stop:
        ctypes.memmove(buf, bad if i % 2 == 0 else ok, 8)
        i += 1
th = threading.Thread(target=flip)
th.start()
libc.openat.restype = ctypes.c_int
counts = {}
for i in range(int(sys.argv[1])):
    fd = libc.openat(-100, buf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    if fd >= 0:
        os.close(fd)
        k = "ok"
    else:
        k = errno.errorcode.get(ctypes.get_errno(), "?")
    counts[k] = counts.get(k, 0) + 1
stop = True
th.join()
for k, v in counts.items():
    print("race." + k + "=" + str(v))
`, strconv.Itoa(n))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	t.Logf("%d creations: %v", n, got)
	if st := escStat(filepath.Join(s.dir, ".bashrc")); st.exists {
		t.Errorf("HOLE: .bashrc was created by the racing thread")
	}
	if got["race.ok"] == "" {
		t.Errorf("no creation succeeded: %v", got)
	}
	for k := range got {
		if k != "race.ok" && k != "race.EPERM" {
			t.Errorf("unexpected outcome %s=%s", k, got[k])
		}
	}
}

// A thousand processes create files at once; every one is answered.
func TestGuardThousandCreators(t *testing.T) {
	s := newSandbox(t, guardSettings)
	r := s.sh(`i=0; while [ $i -lt 1000 ]; do (echo $i > f$i; echo x > f$i.pem) & i=$((i+1)); done; wait; echo done`)
	if !strings.Contains(r.stdout, "done") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	ents, _ := os.ReadDir(s.dir)
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".pem") {
			t.Errorf("HOLE: %s created", e.Name())
		}
		n++
	}
	if n != 1000 {
		t.Errorf("%d files, want 1000", n)
	}
}

// git works under the guard: init, add, commit, with allowGitConfig; its
// hooks stay protected. Without allowGitConfig, git init is refused with
// a reason.
func TestGuardGit(t *testing.T) {
	escNeed(t, "git")
	s := newSandbox(t, `{"filesystem": {"allowWrite": ["."], "allowGitConfig": true}}`)
	r := s.sh(`git init -q repo && cd repo && echo hi > f && git add f && git -c user.email=a@b -c user.name=a commit -qm one && git log --oneline | wc -l
echo EVIL > .git/hooks/pre-commit; echo rc=$?; mv .git/hooks/pre-commit.sample .git/hooks/pre-commit; echo rc=$?`)
	if !strings.Contains(r.stdout, "1\n") {
		t.Fatalf("git in the sandbox: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "rc=2\nrc=1") {
		t.Errorf("hooks: %q", r.stdout)
	}
	if st := escStat(filepath.Join(s.dir, "repo/.git/hooks/pre-commit")); st.exists {
		t.Errorf("HOLE: a hook was created")
	}
	s2 := newSandbox(t, `{"filesystem": {"allowWrite": ["."]}}`)
	r = s2.sh(`git init -q repo; echo rc=$?`)
	if strings.Contains(r.stdout, "rc=0") || !strings.Contains(r.stderr, "mandatory deny .git/config") {
		t.Errorf("git init without allowGitConfig: stdout %q stderr %q", r.stdout, r.stderr)
	}
	if st := escStat(filepath.Join(s2.dir, "repo/.git/config")); st.exists {
		t.Errorf("HOLE: .git/config created without allowGitConfig")
	}
}

// allowUnixSockets on Linux: the listed socket is reachable (even inside
// the sandbox's private /tmp's place of the host's), others are refused.
func TestGuardUnixSocketsByPath(t *testing.T) {
	escNeed(t, "python3")
	dir := hostTempDir(t)
	var allowedN, deniedN, otherN atomic.Int32
	// listen serves "hello" on a unix socket at p and counts connections.
	listen := func(p string, n *atomic.Int32) string {
		l, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, 0o777)
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				n.Add(1)
				c.Write([]byte("hello"))
				c.Close()
			}
		}()
		return p
	}
	allowed := listen(filepath.Join(dir, "agent.sock"), &allowedN)
	denied := listen(filepath.Join(dir, "docker.sock"), &deniedN)
	// One in the host's /tmp, which the sandbox's own /tmp hides, and one
	// in a denyRead directory (~/.gnupg's agent socket, say).
	tmp, err := os.MkdirTemp("/tmp", "cordon-test-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	os.Chmod(tmp, 0o755)
	os.MkdirAll(filepath.Join(dir, "gnupg"), 0o700)
	inTmp := listen(filepath.Join(tmp, "agent.123"), &otherN)
	inHidden := listen(filepath.Join(dir, "gnupg", "S.gpg-agent"), &otherN)
	s := newSandbox(t, fmt.Sprintf(`{"network": {"allowUnixSockets": [%q, %q, %q]}, "filesystem": {"allowWrite": ["."], "denyRead": [%q]}}`,
		allowed, inTmp, inHidden, filepath.Join(dir, "gnupg")))
	got, r := escPy(t, s, `
def dial(p):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        c.connect(p)
        return c.recv(5).decode()
    finally:
        c.close()
res("allowed", lambda: dial(sys.argv[1]))
res("denied", lambda: dial(sys.argv[2]))
res("abstract", lambda: dial("\0cordon-test"))
res("dgram", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).close())
res("tcp socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close())
res("in /tmp", lambda: dial(sys.argv[3]))
res("in denyRead", lambda: dial(sys.argv[4]))
res("chmod the socket", lambda: os.chmod(sys.argv[1], 0o666))
res("hidden dir listing", lambda: ",".join(os.listdir(os.path.dirname(sys.argv[4]))))
`, allowed, denied, inTmp, inHidden)
	want := map[string]string{"allowed": "ok:hello", "denied": "EPERM", "abstract": "EPERM", "dgram": "EPERM", "tcp socket": "ok",
		"in /tmp": "ok:hello", "in denyRead": "ok:hello", "chmod the socket": "EROFS", "hidden dir listing": "ok:S.gpg-agent"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q (stderr %s)", k, got[k], w, r.stderr)
		}
	}
	if deniedN.Load() != 0 {
		t.Errorf("HOLE: the unlisted socket accepted %d connections", deniedN.Load())
	}
	if !strings.Contains(r.stderr, "blocked unix-socket "+denied+" (not in network.allowUnixSockets)") {
		t.Errorf("no violation for %s:\n%s", denied, r.stderr)
	}
}

// PID 1 (the guard) opens files for the command. A descriptor of /proc/1
// (anyone may open the directory) used as openat's dirfd must not make it
// open its own memory, descriptors or environment for the command — an
// escape from every filter if it did.
func TestGuardNeverOpensItsOwnProcEntries(t *testing.T) {
	escNeed(t, "python3")
	s := newSandbox(t, guardSettings)
	got, r := escPy(t, s, `
d = os.open("/proc/1", os.O_PATH | os.O_DIRECTORY)
fdd = os.open("/proc/1/fd", os.O_PATH | os.O_DIRECTORY)
task = os.open("/proc/1/task", os.O_PATH | os.O_DIRECTORY)
def op(name, dirfd):
    fd = os.open(name, os.O_RDWR | os.O_CREAT, 0o644, dir_fd=dirfd)
    return os.readlink("/proc/self/fd/%d" % fd)
for name in ("mem", "environ", "fd/4", "cwd/x", "root/tmp/x", "task/1/mem", "maps"):
    res("dirfd /proc/1 " + name, lambda: op(name, d))
res("dirfd /proc/1/fd 4", lambda: op("4", fdd))
res("dirfd /proc/1/task 1/mem", lambda: op("1/mem", task))
res("/proc/1/mem", lambda: op("/proc/1/mem", None))
res("/proc/self/../1/mem", lambda: op("/proc/self/../1/mem", None))
os.symlink("/proc/1", "p1")
res("symlink to /proc/1, mem", lambda: op("p1/mem", None))
res("own /proc/self/mem", lambda: op("/proc/self/mem", None))
# An O_PATH descriptor of PID 1's files (no permission is checked for
# O_PATH), reopened through /proc/self/fd with O_CREAT.
for label, path in (("O_PATH /proc/1/mem", "/proc/1/mem"), ("O_PATH /proc/1/environ", "/proc/1/environ")):
    p = os.open(path, os.O_PATH)
    res("reopen " + label, lambda: op("/proc/self/fd/%d" % p, None))
os.symlink("/proc/self/mem", "selfmem")
q = os.open("selfmem", os.O_PATH | os.O_NOFOLLOW)
res("reopen O_PATH symlink to /proc/self/mem", lambda: op("/proc/self/fd/%d" % q, None))
`)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for k, v := range got {
		if k == "own /proc/self/mem" {
			if !strings.HasPrefix(v, "ok:/proc/") || strings.HasPrefix(v, "ok:/proc/1/") {
				t.Errorf("%s: %s, want the caller's own memory", k, v)
			}
			continue
		}
		if strings.HasPrefix(v, "ok") {
			t.Errorf("HOLE: %s opened PID 1's file through the guard: %s", k, v)
		}
	}
	if len(got) != 16 {
		t.Errorf("results: %v\n%s", got, r.stderr)
	}
}

// /dev/tty is the opener's controlling terminal, and the guard opens files
// for the command: the command gets its own terminal (echo > /dev/tty
// works on a real pty) and none after leaving the session (setsid), as the
// kernel would answer it — not PID 1's.
func TestGuardDevTTY(t *testing.T) {
	escNeed(t, "python3", "setsid")
	needBwrap(t)
	dir := hostTempDir(t)
	script := `
import os, pty, sys, time, select
pid, fd = pty.fork()
if pid == 0:
    os.chdir(sys.argv[2])
    os.execv(sys.argv[1], ["cordon", "--", "sh", "-c", "echo via-tty > /dev/tty; echo rc=$?; setsid sh -c 'echo x > /dev/tty; echo setsid-rc=$?' 2>&1 | cat"])
out = b""
end = time.time() + 10
while time.time() < end and b"setsid-rc" not in out:
    r, _, _ = select.select([fd], [], [], 0.05)
    if r:
        try: out += os.read(fd, 1000)
        except OSError: break
os.waitpid(pid, 0)
print(out.decode(errors="replace").replace("\r", ""))
`
	out, err := exec.Command("python3", "-c", script, cordonBin, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{"via-tty\n", "rc=0", "setsid-rc=2"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
}

// The README's main job: the demo script under the demo settings, from the
// repository root, shows each refusal and cordon's summary.
func TestREADMEDemo(t *testing.T) {
	escNeed(t, "curl")
	needBwrap(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	r := cordon(t, root, "-s", "examples/demo.json", "--", "sh", "examples/demo.sh")
	for _, want := range []string{"hidden: it reads as an empty file", "cannot create .bashrc: Operation not permitted",
		"server.pem: Operation not permitted", "ok: written from the sandbox"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("demo stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, want := range []string{"blocked network-outbound evil.example.com:443 (a known exfiltration host)",
		"blocked file-create " + root + "/.bashrc (mandatory deny .bashrc)", "(filesystem.denyWrite[0] **/*.pem)"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("demo summary lacks %q:\n%s", want, r.stderr)
		}
	}
	for _, p := range []string{".bashrc", "cordon-demo", "cordon-demo-output.txt"} {
		if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
			t.Errorf("the demo left %s in the repository", p)
		}
	}
}

// On a kernel too old for the guard, a policy with anything writable is
// refused (exit 125, naming the kernel); one with nothing writable runs.
func TestGuardOldKernelRefused(t *testing.T) {
	needBwrap(t)
	s := newSandbox(t, `{"filesystem": {"allowWrite": ["."]}}`)
	r := escRun(t, s, nil, []string{"CORDON_KERNEL_RELEASE=5.10.0-28-amd64"}, "--", "true")
	if r.code != exitFailure || !strings.Contains(r.stderr, "needs Linux 5.14") || !strings.Contains(r.stderr, "5.10.0-28-amd64") {
		t.Errorf("old kernel, writable root: exit %d, %s", r.code, r.stderr)
	}
	ro := newSandbox(t, `{"filesystem": {"allowWrite": []}}`)
	r = escRun(t, ro, nil, []string{"CORDON_KERNEL_RELEASE=5.10.0-28-amd64"}, "--", "sh", "-c", "echo ran")
	if r.code != 0 || r.stdout != "ran\n" {
		t.Errorf("old kernel, nothing writable: exit %d, %q %s", r.code, r.stdout, r.stderr)
	}
}
