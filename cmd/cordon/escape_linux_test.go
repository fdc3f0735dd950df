package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Escape tests: an attacker's view of the Linux sandbox. Each runs the real
// binary under real bubblewrap and checks the effect on the host — a file
// that must not appear or change, a secret that must not be printed, a
// listener that must not be reached, a process that must not survive — so
// that it fails if the protection it names is missing. Test files live in
// hostTempDir (under /var/tmp), never under /tmp: the sandbox has a private
// /tmp, which would make a read or write test pass for the wrong reason.
//
// Tests that document a deliberate limitation skip with "known
// limitation: ..." when the limitation shows, so it stays visible.

// --- helpers ---------------------------------------------------------------

func escNeed(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed; this test needs it", tool)
		}
	}
}

// escExisting returns the names (relative to dir) that exist on the host.
func escExisting(dir string, names []string) []string {
	var out []string
	for _, n := range names {
		if escStat(filepath.Join(dir, n)).exists {
			out = append(out, n)
		}
	}
	return out
}

// escTree lists everything under dir, relative to it and sorted:
// directories end in "/", symlinks in " -> TARGET". Two listings taken
// before and after a run show exactly what the run left on the host.
func escTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			rel += " -> " + target
		case d.IsDir():
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// escMarker is unique per call, for file names and process titles.
func escMarker() string {
	return fmt.Sprintf("cordon-esc-%d-%d", os.Getpid(), time.Now().UnixNano())
}

// escRun is s.run with a stdin and extra environment (later entries win:
// "HOME=..." in env replaces the test's empty home).
func escRun(t *testing.T, s *sbx, stdin io.Reader, env []string, args ...string) result {
	t.Helper()
	if s.settings != "" {
		args = append([]string{"-s", s.settings}, args...)
	}
	return runCordon(t, s.dir, stdin, env, args...)
}

// escPyPrelude gives probes res(name, fn), which prints "name=ok[:value]"
// or "name=ERRNO", and sc(nr, args...), a raw syscall that raises OSError.
const escPyPrelude = `
import ctypes, errno, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def res(name, f):
    try:
        r = f()
        print(name + "=ok" + ("" if r is None else ":" + str(r)), flush=True)
    except OSError as e:
        print(name + "=" + (errno.errorcode.get(e.errno, str(e.errno)) if e.errno else str(e)), flush=True)
def sc(*args):
    r = libc.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r
`

// escPy runs a python probe in the sandbox and returns its name=result
// lines as a map, with the raw result.
func escPy(t *testing.T, s *sbx, script string, args ...string) (map[string]string, result) {
	t.Helper()
	r := s.run(append([]string{"--", "python3", "-c", escPyPrelude + script}, args...)...)
	return escParse(r.stdout), r
}

func escParse(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}

// escListener is a host TCP listener that counts the connections it
// accepts and answers HTTP requests with "from-host".
type escListener struct {
	addr  string
	port  int
	conns atomic.Int32
}

func escListen(t *testing.T, network, address string) *escListener {
	t.Helper()
	ln, err := net.Listen(network, address)
	if err != nil {
		t.Skipf("cannot listen on %s %s on the host: %v", network, address, err)
	}
	l := &escListener{addr: ln.Addr().String(), port: ln.Addr().(*net.TCPAddr).Port}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "from-host") }),
		ConnState: func(c net.Conn, st http.ConnState) {
			if st == http.StateNew {
				l.conns.Add(1)
			}
		},
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return l
}

// escUDP is a host UDP socket that counts the datagrams it receives.
type escUDP struct {
	port int
	got  atomic.Int32
}

func escListenUDP(t *testing.T, address string) *escUDP {
	t.Helper()
	pc, err := net.ListenPacket("udp", address)
	if err != nil {
		t.Skipf("cannot listen on udp %s on the host: %v", address, err)
	}
	u := &escUDP{port: pc.LocalAddr().(*net.UDPAddr).Port}
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			u.got.Add(1)
		}
	}()
	t.Cleanup(func() { pc.Close() })
	return u
}

// escUnixListener is a host unix socket (path or "@abstract") that records
// what reaches it.
type escUnixListener struct {
	mu  sync.Mutex
	got []string
}

func (u *escUnixListener) received() []string {
	time.Sleep(100 * time.Millisecond)
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.got...)
}

func escListenUnix(t *testing.T, network, address string) *escUnixListener {
	t.Helper()
	u := &escUnixListener{}
	record := func(s string) {
		u.mu.Lock()
		u.got = append(u.got, s)
		u.mu.Unlock()
	}
	if network == "unixgram" {
		pc, err := net.ListenPacket(network, address)
		if err != nil {
			t.Fatalf("listening on %s: %v", address, err)
		}
		os.Chmod(address, 0o777)
		go func() {
			buf := make([]byte, 2048)
			for {
				n, _, err := pc.ReadFrom(buf)
				if err != nil {
					return
				}
				record("datagram:" + string(buf[:n]))
			}
		}()
		t.Cleanup(func() { pc.Close() })
		return u
	}
	ln, err := net.Listen(network, address)
	if err != nil {
		t.Fatalf("listening on %s: %v", address, err)
	}
	if !strings.HasPrefix(address, "@") {
		os.Chmod(address, 0o777)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			record("connection")
			c.Write([]byte("hello-from-host-socket\n"))
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return u
}

// escHostAddrs are this host's non-loopback unicast addresses.
func escHostAddrs(t *testing.T) []string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.IsLoopback() || ipn.IP.IsLinkLocalUnicast() || ipn.IP.IsMulticast() {
			continue
		}
		out = append(out, ipn.IP.String())
	}
	return out
}

// escFile is a host file's state, to compare before and after a run.
type escFile struct {
	exists  bool
	symlink string
	mode    os.FileMode
	content string
	mtime   time.Time
}

func (f escFile) same(g escFile) bool {
	return f.exists == g.exists && f.symlink == g.symlink && f.mode == g.mode && f.content == g.content && f.mtime.Equal(g.mtime)
}

func escStat(path string) escFile {
	st, err := os.Lstat(path)
	if err != nil {
		return escFile{}
	}
	f := escFile{exists: true, mode: st.Mode(), mtime: st.ModTime()}
	if st.Mode()&os.ModeSymlink != 0 {
		f.symlink, _ = os.Readlink(path)
		return f
	}
	if st.IsDir() {
		ents, _ := os.ReadDir(path)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		f.content = "dir:" + strings.Join(names, ",")
		return f
	}
	b, _ := os.ReadFile(path)
	f.content = string(b)
	return f
}

// escSleeper copies sleep(1) to a uniquely named file in a directory the
// sandbox can see, so that pgrep -f can find exactly the processes that
// run it. (dash's exec has no -a to rename argv[0].)
func escSleeper(t *testing.T, dir string) string {
	t.Helper()
	src, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("sleep is not installed")
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, escMarker())
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func escPgrep(pattern string) string {
	out, _ := exec.Command("pgrep", "-af", pattern).Output()
	return strings.TrimSpace(string(out))
}

// escWaitGone polls until no process matches pattern, for up to d.
func escWaitGone(pattern string, d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		left := escPgrep(pattern)
		if left == "" || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// escRan is appended to a script whose refusals are the point: escMustRun
// then checks the script ran at all, so that a sandbox that fails to start
// cannot pass for one that refuses.
const escRan = "\necho cordon-script-ran"

func escMustRun(t *testing.T, r result) {
	t.Helper()
	if !strings.Contains(r.stdout, "cordon-script-ran") {
		t.Fatalf("the command did not run, so this test proves nothing: %+v", r)
	}
}

func escQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// --- reading denied files ----------------------------------------------

// Every way to name a denied file reaches the stand-in, never the data.
func TestEscapeReadDenied(t *testing.T) {
	s := newSandbox(t, `{
  "filesystem": {
    "denyRead": ["$DIR/secret", "$DIR/lone.txt", "$DIR/work/hidden.txt", "$DIR/work/*.key", "$DIR/work/private"],
    "allowRead": ["$DIR/secret/public"],
    "allowWrite": ["."]
  }
}`)
	root := filepath.Dir(s.dir)
	secrets := map[string]string{
		"secret/topsecret-name.txt": "SECRET-IN-DIR",
		"secret/public/../sib.txt":  "SECRET-SIBLING",
		"lone.txt":                  "SECRET-LONE-FILE",
		"work/hidden.txt":           "SECRET-HIDDEN-IN-WORK",
		"work/id.key":               "SECRET-GLOB-KEY",
		"work/private/data.txt":     "SECRET-PRIVATE-DIR",
		"secret/public/readme":      "PUBLIC",
		"work/sub/ordinary.txt":     "fine",
	}
	for rel, content := range secrets {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Symlinks prepared on the host, inside the writable and the re-opened area.
	os.Symlink(root+"/lone.txt", s.dir+"/host-link-abs")
	os.Symlink("../lone.txt", s.dir+"/host-link-rel")
	os.Symlink("../sib.txt", root+"/secret/public/up-link")
	os.Symlink(root+"/secret/topsecret-name.txt", root+"/secret/public/abs-link")
	// A descriptor the caller opened on a denied file must not cross.
	fd9, err := os.Open(root + "/lone.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer fd9.Close()

	reads := []string{
		"cat " + root + "/lone.txt",
		"cat " + root + "/secret/topsecret-name.txt",
		"cat " + root + "/secret/sib.txt",
		"cat ../lone.txt ../secret/sib.txt",
		"cat sub/../../lone.txt",
		"cat " + s.dir + "/../lone.txt",
		"cat hidden.txt id.key private/data.txt",
		"cat ./hidden.txt " + s.dir + "//hidden.txt",
		"ln -s ../lone.txt l1 && cat l1",
		"ln -s " + root + "/secret l2 && cat l2/topsecret-name.txt l2/sib.txt",
		"cat host-link-abs host-link-rel",
		"cat " + root + "/secret/public/up-link " + root + "/secret/public/abs-link",
		"cat /proc/self/root" + root + "/lone.txt /proc/self/root" + root + "/secret/sib.txt",
		"cat /proc/thread-self/root" + s.dir + "/hidden.txt",
		"cat /proc/self/cwd/../lone.txt /proc/self/cwd/hidden.txt",
		"cd " + root + " && cat /proc/self/cwd/secret/sib.txt /proc/$$/cwd/lone.txt",
		"cat /proc/1/root" + root + "/lone.txt",
		"cat /proc/1/cwd/hidden.txt",
		"ls -la " + root + "/secret/public private",
		"stat -c '%n %s' " + root + "/lone.txt hidden.txt; wc -c hidden.txt",
		// hard links made inside: the stand-ins are other mounts (EXDEV)
		"ln ../lone.txt hl1; ln hidden.txt hl2; ln id.key hl3; cat hl1 hl2 hl3",
		"cp --reflink=auto hidden.txt copy.txt; cat copy.txt",
		"cat <&9",
		"dd if=" + root + "/lone.txt bs=1 2>/dev/null",
		"tar -cf - -C " + root + " secret lone.txt 2>/dev/null | tar -xOf - 2>/dev/null",
		"grep -r SECRET " + root + " 2>/dev/null",
	}
	for _, script := range reads {
		cmd := exec.Command(cordonBin, "-s", s.settings, "--", "/bin/sh", "-c", script)
		cmd.Dir = s.dir
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		cmd.ExtraFiles = []*os.File{nil, nil, nil, nil, nil, nil, fd9} // fd 9 in cordon
		out, _ := cmd.CombinedOutput()
		if strings.Contains(string(out), "SECRET-") {
			t.Errorf("%q revealed denied data:\n%s", script, out)
		}
	}
	// Names of the files in a denied directory stay hidden too.
	if r := s.sh("ls -a " + root + "/secret; find " + root + " -name '*topsecret*' -o -name 'sib.txt'"); strings.Contains(r.stdout, "topsecret-name.txt") || strings.Contains(r.stdout, "sib.txt") {
		t.Errorf("a denied directory's entries are listed:\n%s", r.stdout)
	}
	if r := s.sh("cat " + root + "/secret/public/readme"); r.stdout != "PUBLIC" {
		t.Errorf("allowRead inside denyRead no longer readable (the test would pass for the wrong reason): %+v", r)
	}
	if r := s.sh("cat sub/ordinary.txt"); r.stdout != "fine" {
		t.Errorf("an ordinary file in the working directory is not readable: %+v", r)
	}

	// Python: openat relative to a directory descriptor, and reopening
	// through /proc/self/fd, cannot reach the data either.
	escNeed(t, "python3")
	m, r := escPy(t, s, `
root = sys.argv[1]
def rd(path, dirfd=None):
    fd = os.open(path, os.O_RDONLY, dir_fd=dirfd)
    try: return os.read(fd, 100).decode(errors="replace")
    finally: os.close(fd)
d = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
res("openat_secret", lambda: rd("secret/sib.txt", d))
res("openat_lone", lambda: rd("lone.txt", d))
p = os.open(root + "/secret/public", os.O_PATH)
res("openat_dotdot", lambda: rd("../sib.txt", p))
res("proc_fd_reopen", lambda: rd("/proc/self/fd/%d/lone.txt" % d))
`, root)
	for k, v := range m {
		if strings.Contains(v, "SECRET") {
			t.Errorf("python %s revealed denied data: %s", k, v)
		}
	}
	if len(m) < 4 {
		t.Errorf("python probe did not run: %+v", r)
	}
}

// A hard link is another name of the same inode: the mount layout hides
// names, so a link made on the host before the run, inside a readable
// directory, is a way around denyRead. Documented here; the test skips
// with "known limitation" while it shows.
func TestEscapeReadDeniedHardlinkMadeBeforeRun(t *testing.T) {
	s := newSandbox(t, `{"filesystem": {"denyRead": ["$DIR/secret", "$DIR/lone.txt"], "allowWrite": ["."]}}`)
	root := filepath.Dir(s.dir)
	os.MkdirAll(root+"/secret", 0o755)
	os.WriteFile(root+"/secret/key", []byte("SECRET-KEY-IN-DIR"), 0o600)
	os.WriteFile(root+"/lone.txt", []byte("SECRET-LONE"), 0o600)
	if err := os.Link(root+"/secret/key", s.dir+"/alias-key"); err != nil {
		t.Skipf("cannot make a hard link on this file system: %v", err)
	}
	os.Link(root+"/lone.txt", s.dir+"/alias-lone")
	// Inside, the command cannot make such a link itself (checked in
	// TestEscapeReadDenied); only a name that already exists leaks.
	r := s.sh("cat alias-key alias-lone" + escRan)
	escMustRun(t, r)
	if strings.Contains(r.stdout, "SECRET") {
		t.Skipf("known limitation: a hard link to a denyRead file made before the run (%s/alias-key, alias-lone) "+
			"reads the data: bubblewrap's mounts hide paths, not inodes, and cordon does not search for other names "+
			"of denied files; got %q", s.dir, r.stdout)
	}
}

// open_by_handle_at opens a file by inode around the mount tree (the
// "shocker" escape). The handle is made on the host; inside, the call must
// fail and print nothing of the file.
func TestEscapeOpenByHandle(t *testing.T) {
	escNeed(t, "python3")
	s := newSandbox(t, `{"filesystem": {"denyRead": ["$DIR/secret"], "allowWrite": ["."]}}`)
	root := filepath.Dir(s.dir)
	os.MkdirAll(root+"/secret", 0o755)
	os.WriteFile(root+"/secret/key", []byte("SECRET-BY-HANDLE"), 0o600)
	mk := exec.Command("python3", "-c", escPyPrelude+`
buf = ctypes.create_string_buffer(8 + 128)
ctypes.memmove(buf, (128).to_bytes(4, "little"), 4)
mnt = ctypes.c_int()
sc(303, -100, sys.argv[1].encode(), buf, ctypes.byref(mnt), 0)
print(buf.raw.hex())
`, root+"/secret/key")
	out, err := mk.Output()
	if err != nil {
		t.Skipf("cannot make a file handle on the host (name_to_handle_at): %v", err)
	}
	handle := strings.TrimSpace(string(out))
	m, r := escPy(t, s, `
buf = ctypes.create_string_buffer(bytes.fromhex(sys.argv[1]))
def go():
    mfd = os.open("/", os.O_RDONLY)
    fd = sc(304, mfd, buf, os.O_RDONLY)
    return os.read(fd, 100).decode(errors="replace")
res("open_by_handle_at", go)
def name():
    b = ctypes.create_string_buffer(8 + 128)
    ctypes.memmove(b, (128).to_bytes(4, "little"), 4)
    mnt = ctypes.c_int()
    return sc(303, -100, sys.argv[2].encode(), b, ctypes.byref(mnt), 0)
res("name_to_handle_at", name)
`, handle, s.dir)
	if strings.Contains(r.stdout, "SECRET") {
		t.Fatalf("open_by_handle_at read a denied file: %+v", r)
	}
	if m["open_by_handle_at"] != "EPERM" || m["name_to_handle_at"] != "EPERM" {
		t.Errorf("want EPERM from both handle calls: %v %+v", m, r)
	}
}

// --- writing outside what is allowed ------------------------------------

func TestEscapeWriteOutsideRoots(t *testing.T) {
	s := newSandbox(t, `{"filesystem": {"allowWrite": ["."]}}`)
	root := filepath.Dir(s.dir)
	mark := escMarker()
	os.MkdirAll(root+"/outdir", 0o755)
	os.Chmod(root+"/outdir", 0o777)
	os.Symlink(root+"/outdir", s.dir+"/host-link")
	binSum := func() string {
		b, _ := os.ReadFile(cordonBin)
		h := sha256.Sum256(b)
		return hex.EncodeToString(h[:])
	}
	before := binSum()
	st, _ := os.Stat(cordonBin)

	home := t.TempDir()
	targets := []string{
		root + "/" + mark,
		root + "/outdir/" + mark,
		"/var/tmp/" + mark,
		"/" + mark,
		"/etc/" + mark,
		"/usr/local/bin/" + mark,
		"/dev/shm/" + mark,
		"/run/" + mark,
		home + "/" + mark,
		os.TempDir() + "/" + mark,
	}
	t.Cleanup(func() {
		for _, p := range targets {
			os.RemoveAll(p)
		}
	})
	var script []string
	for _, p := range targets {
		script = append(script, "echo x > "+p, "mkdir "+p, "mkfifo "+p, "ln -s /etc/passwd "+p, "cp /etc/hostname "+p)
	}
	script = append(script,
		"echo x > ../"+mark,
		"echo x > host-link/"+mark,
		"ln -s "+root+"/outdir in-link && echo x > in-link/"+mark,
		"ln -s .. up && echo x > up/"+mark,
		"echo x > /proc/self/root"+root+"/outdir/"+mark,
		"echo x > /proc/self/cwd/../outdir/"+mark,
		"touch "+root+"/outdir/"+mark,
		"mv "+root+"/outdir "+root+"/moved-"+mark,
		"chmod 700 "+root+"/outdir",
		"echo x > /dev/.cordon", "cp /bin/true /dev/.cordon", "chmod 777 /dev/.cordon",
	)
	for _, line := range script {
		s.run("--", "/bin/sh", "-c", line)
	}
	for _, p := range append(targets, root+"/moved-"+mark) {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("created %s on the host", p)
		}
	}
	if fi, _ := os.Stat(root + "/outdir"); fi == nil || fi.Mode().Perm() != 0o777 {
		t.Errorf("outdir was moved or its mode changed: %v", fi)
	}
	if binSum() != before {
		t.Errorf("the cordon binary on the host was changed through /dev/.cordon")
	}
	if st2, _ := os.Stat(cordonBin); st2 == nil || st2.Mode() != st.Mode() {
		t.Errorf("the cordon binary's mode changed")
	}
	// Sanity: the working directory is writable, so the refusals above are
	// the boundary and not a broken sandbox.
	if r := s.sh("echo ok > " + mark + " && cat " + mark); r.stdout != "ok\n" {
		t.Errorf("write in the working directory: %+v", r)
	}
}

// Every host mount is read-only inside, including submounts of / that a
// non-recursive read-only bind would leave writable. (The sandbox's own
// /proc, /dev and /tmp are not the host's.) A process that is host root
// outside has the owner's rights on root's files, so only the mount flag
// stands between it and /sys.
func TestEscapeHostMountsReadOnly(t *testing.T) {
	escNeed(t, "python3")
	s := newSandbox(t, "")
	mark := escMarker()
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	var sysMounts []string
	for _, line := range strings.Split(string(mi), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		mp := strings.ReplaceAll(f[4], `\040`, " ")
		switch {
		case mp == "/sys" || strings.HasPrefix(mp, "/sys/"):
			sysMounts = append(sysMounts, mp)
			continue
		case mp == "/proc" || strings.HasPrefix(mp, "/proc/"), mp == "/dev" || strings.HasPrefix(mp, "/dev/"),
			mp == "/tmp" || strings.HasPrefix(mp, "/tmp/"), strings.HasPrefix(mp, s.dir):
			continue
		}
		if st, err := os.Stat(mp); err == nil && st.IsDir() {
			dirs = append(dirs, mp)
		}
	}
	var created []string
	for _, d := range dirs {
		created = append(created, filepath.Join(d, mark))
	}
	t.Cleanup(func() {
		for _, p := range created {
			os.Remove(p)
		}
	})
	m, r := escPy(t, s, `
import json
for p in json.loads(sys.argv[1]):
    res("mkdir " + p, lambda: os.mkdir(p))
mounts = {}
for line in open("/proc/self/mountinfo"):
    f = line.split()
    mounts[f[4]] = f[5]
for p in json.loads(sys.argv[2]):
    print("mount " + p + "=" + mounts.get(p, "absent"))
`, escJSON(created), escJSON(sysMounts))
	for _, p := range created {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("created %s on the host (%s)", p, m["mkdir "+p])
		}
	}
	for _, mp := range sysMounts {
		opts := m["mount "+mp]
		if opts != "absent" && !strings.HasPrefix(opts, "ro") {
			t.Errorf("%s is mounted %q inside the sandbox; want read-only", mp, opts)
		}
	}
	if len(m) == 0 {
		t.Errorf("probe did not run: %+v", r)
	}
}

func escJSON(list []string) string {
	var b strings.Builder
	b.WriteString("[")
	for i, s := range list {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(strconv.Quote(s))
	}
	b.WriteString("]")
	return b.String()
}

// denyWrite files keep their content, mode, times and name whatever the
// command does to them, at the top of the writable root and below it.
func TestEscapeDenyWriteFile(t *testing.T) {
	s := newSandbox(t, `{"filesystem": {"allowWrite": ["."], "denyWrite": ["$DIR/work/.env", "$DIR/work/sub/.env", "$DIR/work/*.pem"]}}`)
	files := []string{".env", "sub/.env", "server.pem"}
	os.MkdirAll(s.dir+"/sub", 0o755)
	for _, f := range files {
		os.WriteFile(filepath.Join(s.dir, f), []byte("ORIG "+f), 0o640)
	}
	os.WriteFile(s.dir+"/other", []byte("other"), 0o644)
	before := map[string]escFile{}
	for _, f := range files {
		before[f] = escStat(filepath.Join(s.dir, f))
	}
	ops := []string{
		"echo evil > F", "echo evil >> F", ": > F", "truncate -s 0 F", "rm -f F", "unlink F",
		"mv F F.moved", "mv other F", "cp other F", "cp --remove-destination other F", "ln -sf /etc/passwd F",
		"chmod 777 F", "touch -d 2000-01-01 F", "chown 0:0 F",
		"ln F F.hard && echo evil >> F.hard",
		"dd if=/dev/zero of=F bs=1 count=1 conv=notrunc",
		"sed -i s/ORIG/EVIL/ F",
	}
	for _, f := range files {
		for _, op := range ops {
			s.sh(strings.ReplaceAll(op, "F", f))
		}
	}
	if _, err := exec.LookPath("python3"); err == nil {
		s.run("--", "python3", "-c", `
import os, sys
for f in sys.argv[1:]:
    for fn in (lambda: os.truncate(f, 0),
               lambda: os.setxattr(f, "user.evil", b"1"),
               lambda: os.utime(f, (0, 0)),
               lambda: os.rename(f, f + ".py-moved")):
        try: fn()
        except OSError: pass
    # reopen a read-only descriptor for writing through /proc/self/fd
    try:
        fd = os.open(f, os.O_RDONLY)
        w = os.open("/proc/self/fd/%d" % fd, os.O_WRONLY | os.O_TRUNC)
        os.write(w, b"evil")
    except OSError: pass
    # linkat through the magic link (AT_SYMLINK_FOLLOW) into the writable dir
    try:
        fd = os.open(f, os.O_RDONLY)
        os.link("/proc/self/fd/%d" % fd, f + ".linked", follow_symlinks=True)
        with open(f + ".linked", "a") as h: h.write("evil")
    except OSError: pass
`, ".env", "sub/.env", "server.pem")
	}
	for _, f := range files {
		after := escStat(filepath.Join(s.dir, f))
		if !after.same(before[f]) {
			t.Errorf("%s changed: before %+v, after %+v", f, before[f], after)
		}
		if after.exists && after.content != "ORIG "+f {
			t.Errorf("%s content %q", f, after.content)
		}
		for _, sfx := range []string{".moved", ".py-moved", ".hard", ".linked"} {
			if st := escStat(filepath.Join(s.dir, f+sfx)); st.exists && strings.Contains(st.content, "evil") {
				t.Errorf("%s%s carries writes into the protected inode", f, sfx)
			}
		}
	}
	if r := s.sh("echo ok > sub/plain && cat sub/plain"); r.stdout != "ok\n" {
		t.Errorf("an ordinary write next to the denyWrite files failed, so the refusals prove nothing: %+v", r)
	}
}

// Renaming the parent directory of a denyWrite file moves bubblewrap's
// read-only mount with it (mounts stick to the directory entry, not to the
// path), after which the protected path is free to be created again with
// any content.
func TestEscapeDenyWriteParentRename(t *testing.T) {
	s := newSandbox(t, `{"filesystem": {"allowWrite": ["."], "denyWrite": ["$DIR/work/sub/.env", "$DIR/work/a/b/*.pem"]}}`)
	os.MkdirAll(s.dir+"/sub", 0o755)
	os.MkdirAll(s.dir+"/a/b", 0o755)
	os.WriteFile(s.dir+"/sub/.env", []byte("ORIG"), 0o644)
	os.WriteFile(s.dir+"/a/b/key.pem", []byte("ORIG"), 0o644)
	r := s.sh(`mv sub sub.old; mkdir sub && echo EVIL > sub/.env
mv a a.old; mkdir -p a/b && echo EVIL > a/b/key.pem
mkdir -p prep/b && echo EVIL > prep/b/new.pem && mv prep a2 && mv a2 a 2>/dev/null; true` + escRan)
	escMustRun(t, r)
	for _, f := range []string{"sub/.env", "a/b/key.pem", "a/b/new.pem"} {
		got := escStat(filepath.Join(s.dir, f))
		if strings.Contains(got.content, "EVIL") {
			t.Errorf("HOLE: denyWrite path %s was replaced after renaming its parent directory (content %q); stderr %q",
				f, got.content, r.stderr)
		}
	}
	for _, f := range []string{"sub/.env", "a/b/key.pem"} {
		if got := escStat(filepath.Join(s.dir, f)); got.content != "ORIG" {
			t.Errorf("denyWrite file %s is no longer at its path with its content: %+v", f, got)
		}
	}
}

// A hard link made on the host before the run is another name for a
// denyWrite file's inode; writing through it changes the protected file.
func TestEscapeDenyWriteHardlinkMadeBeforeRun(t *testing.T) {
	s := newSandbox(t, `{"filesystem": {"allowWrite": ["."], "denyWrite": ["$DIR/work/.env"]}}`)
	os.WriteFile(s.dir+"/.env", []byte("ORIG"), 0o644)
	if err := os.Link(s.dir+"/.env", s.dir+"/env-alias"); err != nil {
		t.Skipf("cannot make a hard link: %v", err)
	}
	escMustRun(t, s.sh("echo EVIL >> env-alias"+escRan))
	if b, _ := os.ReadFile(s.dir + "/.env"); string(b) != "ORIG" {
		t.Skipf("known limitation: a hard link to a denyWrite file made before the run (env-alias) writes the "+
			"protected inode: read-only mounts protect names, not inodes; .env is now %q", b)
	}
}

// --- mandatory denies --------------------------------------------------

var escProtectedFiles = []string{".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".zshrc", ".zprofile",
	".profile", ".gitconfig", ".gitmodules", ".ripgreprc", ".mcp.json"}

var escProtectedDirs = []string{".vscode", ".idea", ".claude/commands", ".claude/agents", ".git/hooks"}

// Existing protected names, at the top of the writable root and below it
// within the search depth, cannot be changed, removed or renamed.
func TestEscapeProtectedNamesExisting(t *testing.T) {
	s := newSandbox(t, `{"filesystem": {"allowWrite": ["."]}}`)
	var files, dirs []string
	for _, prefix := range []string{"", "sub/", "a/b/"} {
		for _, n := range escProtectedFiles {
			files = append(files, prefix+n)
		}
		for _, n := range escProtectedDirs {
			// The search looks 3 levels down (mandatoryDenySearchDepth):
			// a/b/.git/hooks is a fourth.
			if prefix != "a/b/" || !strings.Contains(n, "/") {
				dirs = append(dirs, prefix+n)
			}
		}
		if prefix != "a/b/" {
			files = append(files, prefix+".git/config")
		}
	}
	for _, f := range files {
		p := filepath.Join(s.dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("ORIG "+f), 0o644)
	}
	for _, d := range dirs {
		p := filepath.Join(s.dir, d)
		os.MkdirAll(p, 0o755)
		os.WriteFile(p+"/inner", []byte("ORIG "+d), 0o755)
	}
	before := map[string]escFile{}
	for _, p := range append(append([]string{}, files...), dirs...) {
		before[p] = escStat(filepath.Join(s.dir, p))
	}
	for _, d := range dirs {
		before[d+"/inner"] = escStat(filepath.Join(s.dir, d, "inner"))
	}
	// One run per path; each line runs in a subshell, so that a refused
	// redirection on a special built-in (": > f") does not end the script.
	sub := func(lines []string) string {
		for i, l := range lines {
			lines[i] = "(" + l + ")"
		}
		return strings.Join(lines, "\n")
	}
	for _, f := range files {
		q := escQuote(f)
		escMustRun(t, s.sh(sub([]string{
			"echo evil >> " + q, "echo evil > " + q, ": > " + q, "rm -f " + q, "mv " + q + " " + q + ".moved",
			"chmod 777 " + q, "touch -d 2000-01-01 " + q, "ln -sf /etc/passwd " + q, "cp /etc/hostname " + q,
		})+escRan))
	}
	for _, d := range dirs {
		q := escQuote(d)
		escMustRun(t, s.sh(sub([]string{
			"echo evil > " + q + "/new", "echo evil >> " + q + "/inner", "mkdir " + q + "/newdir", "rm -rf " + q,
			"mv " + q + " " + q + ".moved", "chmod 700 " + q, "mv " + q + "/inner " + q + "/renamed", "ln -s /etc " + q + "/lnk",
		})+escRan))
	}
	for p, b := range before {
		if a := escStat(filepath.Join(s.dir, p)); !a.same(b) {
			t.Errorf("protected %s changed: before %+v, after %+v", p, b, a)
		}
	}
	for _, p := range append(append([]string{}, files...), dirs...) {
		if _, err := os.Lstat(filepath.Join(s.dir, p+".moved")); err == nil {
			t.Errorf("protected %s was renamed", p)
		}
	}
	// Sanity: ordinary files next to them stay writable.
	if r := s.sh("echo ok > sub/plain && cat sub/plain"); r.stdout != "ok\n" {
		t.Errorf("ordinary write next to protected names: %+v", r)
	}
}

// Protected names that do not exist at the top of the writable root cannot
// be created: the create-time guard refuses each creation (EPERM), and
// the host gains nothing but what the guard lets git and editors make (an
// empty .git/hooks, as git init makes; .claude, which is not protected
// itself). Nothing stands in for a missing name, so a run that creates
// nothing leaves the working directory exactly as it found it.
func TestEscapeProtectedNamesNewAtTop(t *testing.T) {
	s := newSandbox(t, `{"filesystem": {"allowWrite": ["."]}}`)
	os.MkdirAll(s.dir+"/.git", 0o755) // .git exists, without hooks or config
	if r := s.sh("echo ok > plain && cat plain && rm plain"); r.stdout != "ok\n" {
		t.Fatalf("an ordinary write failed, so the refusals below would prove nothing: %+v", r)
	}
	before := escTree(t, s.dir)
	var script []string
	for _, n := range escProtectedFiles {
		script = append(script, "echo evil > "+n, "mkdir "+n, "ln -s /etc/passwd "+n)
	}
	for _, d := range escProtectedDirs {
		script = append(script, "mkdir -p "+d+" && echo evil > "+d+"/x", "echo evil > "+d)
	}
	script = append(script, "echo evil > .git/config", "mkdir -p .claude && echo evil > .claude/commands",
		"rm -rf .claude/commands && mkdir .claude/commands && echo evil > .claude/commands/x")
	for _, line := range script {
		if r := s.sh(line); !strings.Contains(r.stderr, "Operation not permitted") {
			t.Errorf("%q: want the guard's refusal (Operation not permitted): %+v", line, r)
		}
	}
	want := append(append([]string{}, before...), ".claude/", ".git/hooks/")
	sort.Strings(want)
	if after := escTree(t, s.dir); strings.Join(after, "\n") != strings.Join(want, "\n") {
		t.Errorf("after the refused creations the working directory holds\n%s\nwant\n%s", strings.Join(after, "\n"), strings.Join(want, "\n"))
	}
	before = escTree(t, s.dir)
	escMustRun(t, s.sh("true"+escRan))
	if after := escTree(t, s.dir); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("a run that creates nothing changed the working directory:\nbefore %q\nafter  %q", before, after)
	}
}

// Protected names are protected at any depth (docs/settings.md): new ones
// below the top of the writable root, and a repository created during the
// run, cannot get shell start-up files, hooks or a git config either.
// The create-time guard refuses them.
func TestEscapeProtectedNamesNewBelowTop(t *testing.T) {
	s := newSandbox(t, `{"filesystem": {"allowWrite": ["."]}}`)
	os.MkdirAll(s.dir+"/sub", 0o755)
	os.MkdirAll(s.dir+"/repo/.git", 0o755)
	news := []string{"sub/.bashrc", "sub/.profile", "a/b/.mcp.json", "sub/.gitmodules", "sub/.vscode/settings.json",
		"sub/.claude/commands/x.md", "repo/.git/hooks/pre-commit", "repo/.git/config",
		".git/hooks/pre-commit", ".git/config"}
	var script []string
	for _, n := range news {
		script = append(script, "mkdir -p "+filepath.Dir(n)+"; echo EVIL > "+n)
	}
	escMustRun(t, s.sh(strings.Join(script, "\n")+escRan))
	if made := escExisting(s.dir, news); len(made) > 0 {
		t.Errorf("HOLE: protected names that did not exist when the run started were created on the host: %v", made)
	}
}

// Renaming the directory that holds a protected name (.git, .claude)
// takes bubblewrap's mount along; the protected path can then be
// recreated, e.g. a .git with hooks and config that run code the next time
// the user runs git on the host.
func TestEscapeProtectedNamesByRenamingParent(t *testing.T) {
	s := newSandbox(t, `{"filesystem": {"allowWrite": ["."]}}`)
	os.MkdirAll(s.dir+"/.git/hooks", 0o755)
	os.WriteFile(s.dir+"/.git/config", []byte("[core]\n"), 0o644)
	os.WriteFile(s.dir+"/.git/HEAD", []byte("ref: refs/heads/main\n"), 0o644)
	r := s.sh(`mv .git .git.old && mkdir -p .git/hooks && cp .git.old/HEAD .git/ &&
  printf '#!/bin/sh\necho EVIL\n' > .git/hooks/pre-commit && printf '[core]\n\tfsmonitor = echo EVIL\n' > .git/config
mkdir -p prep/commands && echo EVIL > prep/commands/evil.md && mv .claude .claude.old; mv prep .claude` + escRan)
	escMustRun(t, r)
	for _, f := range []string{".git/hooks/pre-commit", ".git/config", ".claude/commands/evil.md"} {
		if st := escStat(filepath.Join(s.dir, f)); strings.Contains(st.content, "EVIL") {
			t.Errorf("HOLE: %s on the host now holds %q after renaming its parent (stderr %q)", f, st.content, r.stderr)
		}
	}
	// The guard refuses the rename that would bring a commands folder
	// under .claude, and the pinned .git keeps its empty hooks.
	if st := escStat(s.dir + "/.claude/commands"); st.exists {
		t.Errorf("HOLE: .claude/commands exists on the host after renaming a directory into place: %+v", st)
	}
	if st := escStat(s.dir + "/.git/hooks"); st.content != "dir:" {
		t.Errorf("HOLE: .git/hooks on the host is now %+v", st)
	}
}

// A protected name (or its parent, .git) that is a symlink to something
// inside the writable root: bubblewrap would mount over the symlink's
// target, and the symlink itself would stay an ordinary entry the command
// could replace. cordon refuses to run (exit 125, naming the link); if it
// ever runs instead, the name must not be replaced.
func TestEscapeProtectedNameSymlink(t *testing.T) {
	s := newSandbox(t, `{"filesystem": {"allowWrite": ["."]}}`)
	os.WriteFile(s.dir+"/rcfile", []byte("ORIG"), 0o644)
	os.Symlink("rcfile", s.dir+"/.bashrc")
	os.MkdirAll(s.dir+"/hooksdir", 0o755)
	os.MkdirAll(s.dir+"/.git", 0o755)
	os.Symlink("../hooksdir", s.dir+"/.git/hooks")
	r := s.sh(`echo EVIL >> .bashrc; rm .bashrc && echo EVIL > .bashrc
echo EVIL > .git/hooks/pre-commit; rm .git/hooks && mkdir .git/hooks && echo EVIL > .git/hooks/pre-commit` + escRan)
	if r.code == 125 && strings.Contains(r.stderr, "is a symlink") {
		t.Logf("refused, as it should be: %s", r.stderr)
	} else {
		escMustRun(t, r)
	}
	if st := escStat(s.dir + "/.bashrc"); st.symlink != "rcfile" {
		t.Errorf("HOLE: the symlinked .bashrc was replaced: %+v (stderr %q)", st, r.stderr)
	}
	if st := escStat(s.dir + "/.git/hooks/pre-commit"); st.exists {
		t.Errorf("HOLE: .git/hooks/pre-commit created through a symlinked hooks directory: %+v", st)
	}
	if b, _ := os.ReadFile(s.dir + "/rcfile"); string(b) != "ORIG" {
		t.Errorf("the symlink's target was written: %q", b)
	}

	// An absolute symlink out of the root: the run may be refused, but
	// nothing outside changes and the name is not replaced.
	s2 := newSandbox(t, `{"filesystem": {"allowWrite": ["."]}}`)
	outside := filepath.Join(filepath.Dir(s2.dir), "outside-rc")
	os.WriteFile(outside, []byte("ORIG"), 0o644)
	os.Symlink(outside, s2.dir+"/.zshrc")
	r = s2.sh("echo EVIL >> .zshrc; rm .zshrc && echo EVIL > .zshrc")
	if b, _ := os.ReadFile(outside); string(b) != "ORIG" {
		t.Errorf("wrote through a symlinked .zshrc to %s: %q", outside, b)
	}
	if st := escStat(s2.dir + "/.zshrc"); st.symlink != outside {
		t.Errorf("HOLE: the symlinked .zshrc was replaced: %+v (%+v)", st, r)
	}

	// A symlinked ancestor: .git -> realgit. The mounts land on
	// realgit/hooks and realgit/config; the .git symlink itself is an
	// ordinary entry of the writable root.
	s3 := newSandbox(t, `{"filesystem": {"allowWrite": ["."]}}`)
	os.MkdirAll(s3.dir+"/realgit/hooks", 0o755)
	os.WriteFile(s3.dir+"/realgit/config", []byte("[core]\n"), 0o644)
	os.Symlink("realgit", s3.dir+"/.git")
	r = s3.sh("rm .git && mkdir -p .git/hooks && echo EVIL > .git/hooks/pre-commit && echo EVIL > .git/config" + escRan)
	if !(r.code == 125 && strings.Contains(r.stderr, "is a symlink")) {
		escMustRun(t, r)
	}
	for _, f := range []string{".git/hooks/pre-commit", ".git/config"} {
		if st := escStat(filepath.Join(s3.dir, f)); strings.Contains(st.content, "EVIL") {
			t.Errorf("HOLE: with .git a symlink to realgit, the command replaced .git and wrote %s", f)
		}
	}
}

// A run ends without removing anything on the host, so symlinks the
// command plants where protected names would go (.claude and .git pointing
// out of the writable root) cannot turn an end-of-run clean-up against
// files elsewhere; a .git that is a symlink is refused outright.
func TestEscapeNothingRemovedThroughPlantedSymlinks(t *testing.T) {
	s := newSandbox(t, `{"filesystem": {"allowWrite": ["."]}}`)
	root := filepath.Dir(s.dir)
	victim := root + "/victim"
	os.MkdirAll(victim+"/agents", 0o755)
	os.WriteFile(victim+"/commands", nil, 0o644)
	victim2 := root + "/victim2"
	os.MkdirAll(victim2+"/hooks", 0o755)
	os.WriteFile(victim2+"/config", nil, 0o644)
	os.MkdirAll(s.dir+"/.git", 0o755) // empty: nothing in it is protected, so it is not pinned
	escMustRun(t, s.sh("ln -s "+victim+" .claude; mv .git .git.old && ln -s "+victim2+" .git"+escRan))
	for _, p := range []string{victim + "/agents", victim + "/commands", victim2 + "/hooks", victim2 + "/config"} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("HOLE: the run removed %s outside the writable root, through a symlink the command planted", p)
		}
	}
	if st := escStat(s.dir + "/.git"); st.symlink != "" {
		t.Errorf("HOLE: the command replaced .git with a symlink to %s", st.symlink)
	}
}

// Two runs in the same directory share nothing on the host: each has its
// own guard, so the second still refuses protected names after the first
// has ended.
func TestEscapeConcurrentRunsKeepProtection(t *testing.T) {
	s := newSandbox(t, `{"filesystem": {"allowWrite": ["."]}}`)
	root := filepath.Dir(s.dir)
	// The first run ends only once the second is up (it touches
	// second-up), so the two overlap.
	first := exec.Command(cordonBin, "-s", s.settings, "--", "/bin/sh", "-c", "touch first-up; i=0; while [ ! -e second-up ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done")
	first.Dir = s.dir
	first.Env = append(os.Environ(), "HOME="+t.TempDir())
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !escStat(s.dir+"/first-up").exists && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	second := exec.Command(cordonBin, "-s", s.settings, "--", "/bin/sh", "-c",
		"touch second-up; while [ ! -e "+root+"/go ]; do sleep 0.05; done; echo EVIL > .bashrc; echo EVIL > .mcp.json; mkdir -p .vscode && echo EVIL > .vscode/tasks.json"+escRan)
	second.Dir = s.dir
	second.Env = first.Env
	var secondOut bytes.Buffer
	second.Stdout, second.Stderr = &secondOut, &secondOut
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	os.WriteFile(root+"/go", nil, 0o644)
	done := make(chan error, 1)
	go func() { done <- second.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		second.Process.Kill()
		t.Fatal("the second run did not finish")
	}
	escMustRun(t, result{stdout: secondOut.String()})
	if !strings.Contains(secondOut.String(), "Operation not permitted") {
		t.Errorf("the second run's creations were not refused by its guard:\n%s", secondOut.String())
	}
	if made := escExisting(s.dir, []string{".bashrc", ".mcp.json", ".vscode"}); len(made) > 0 {
		t.Errorf("HOLE: %v created on the host by the second run after the first ended", made)
	}
}

// Killing cordon with SIGKILL gives it no chance to clean up; it creates
// nothing on the host (the guard refuses protected names, nothing stands
// in for them), so there is nothing to clean up: the working directory is
// as it was.
func TestEscapeNothingLeftAfterSIGKILL(t *testing.T) {
	s := newSandbox(t, `{"filesystem": {"allowWrite": ["."]}}`)
	// A repository, a subdirectory and the home directory itself, so that
	// every protected name (.git/hooks, .git/config and
	// ~/.srt-settings.json included) is missing somewhere writable.
	os.MkdirAll(s.dir+"/.git", 0o755)
	os.MkdirAll(s.dir+"/sub", 0o755)
	before := escTree(t, s.dir)
	cmd := exec.Command(cordonBin, "-s", s.settings, "--", "/bin/sh", "-c", "echo started; exec sleep 30")
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "HOME="+s.dir)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "started\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the command did not start: %q", line)
	}
	cmd.Process.Kill()
	cmd.Wait()
	time.Sleep(200 * time.Millisecond)
	if after := escTree(t, s.dir); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("cordon killed with SIGKILL changed the working directory:\nbefore %q\nafter  %q", before, after)
	}
}

// The settings file decides the next run's policy: a command that can
// rewrite it has escaped every later run.
func TestEscapeSettingsFileNotWritable(t *testing.T) {
	t.Run("-s file in the working directory", func(t *testing.T) {
		s := newSandbox(t, "")
		orig := `{"filesystem": {"allowWrite": ["."]}}`
		s.settings = writeFile(t, s.dir, "cordon.json", orig)
		if r := s.sh(`echo '{"filesystem": {"allowWrite": ["/"]}, "network": {"allowedDomains": ["evil.example"]}}' > cordon.json; echo ran`); r.stdout != "ran\n" {
			t.Fatalf("the command did not run: %+v", r)
		}
		if b, _ := os.ReadFile(s.settings); string(b) != orig {
			t.Errorf("HOLE: the command rewrote its own settings file %s: %q", s.settings, b)
		}
	})
	t.Run("-s file in a subdirectory whose parent is renamed", func(t *testing.T) {
		s := newSandbox(t, "")
		os.MkdirAll(s.dir+"/conf", 0o755)
		orig := `{"filesystem": {"allowWrite": ["."]}}`
		s.settings = writeFile(t, s.dir+"/conf", "cordon.json", orig)
		escMustRun(t, s.sh(`mv conf conf.old; mkdir -p conf && echo '{"filesystem": {"allowWrite": ["/"]}}' > conf/cordon.json`+escRan))
		if b, _ := os.ReadFile(s.settings); string(b) != orig {
			t.Errorf("HOLE: the settings file was replaced after renaming its directory: %q", b)
		}
	})
	t.Run("-s file reached through a symlink in the working directory", func(t *testing.T) {
		s := newSandbox(t, "")
		os.MkdirAll(s.dir+"/conf", 0o755)
		orig := `{"filesystem": {"allowWrite": ["."]}}`
		writeFile(t, s.dir+"/conf", "real.json", orig)
		os.Symlink("conf/real.json", s.dir+"/cordon.json")
		s.settings = s.dir + "/cordon.json"
		r := s.sh(`echo '{"filesystem": {"allowWrite": ["/"]}}' >> cordon.json
rm cordon.json && echo '{"filesystem": {"allowWrite": ["/"]}}' > cordon.json` + escRan)
		if !(r.code == 125 && strings.Contains(r.stderr, "is a symlink")) {
			escMustRun(t, r)
		}
		if b, _ := os.ReadFile(s.settings); string(b) != orig {
			t.Errorf("HOLE: the settings file named through a symlink was replaced; the next run with -s %s reads %q", s.settings, b)
		}
	})
	t.Run("~/.srt-settings.json with home below the working directory", func(t *testing.T) {
		s := newSandbox(t, "")
		home := s.dir + "/home"
		os.MkdirAll(home, 0o755)
		escMustRun(t, escRun(t, s, nil, []string{"HOME=" + home}, "--", "/bin/sh", "-c",
			`echo '{"filesystem": {"allowWrite": ["/"]}}' > home/.srt-settings.json`+escRan))
		if st := escStat(home + "/.srt-settings.json"); st.exists {
			t.Errorf("HOLE: the command created %s/.srt-settings.json: %q", home, st.content)
		}
	})
	t.Run("~/.srt-settings.json when the working directory is home", func(t *testing.T) {
		s := newSandbox(t, "")
		env := []string{"HOME=" + s.dir}
		escMustRun(t, escRun(t, s, nil, env, "--", "/bin/sh", "-c", `echo '{"filesystem": {"allowWrite": ["/"]}}' > ~/.srt-settings.json`+escRan))
		if st := escStat(s.dir + "/.srt-settings.json"); st.exists {
			t.Errorf("HOLE: the command created ~/.srt-settings.json, the policy of every later run without -s: %q", st.content)
		}
		orig := `{"filesystem": {"allowWrite": ["."]}}`
		writeFile(t, s.dir, ".srt-settings.json", orig)
		escMustRun(t, escRun(t, s, nil, env, "--", "/bin/sh", "-c", `echo '{"filesystem": {"allowWrite": ["/"]}}' > ~/.srt-settings.json`+escRan))
		if b, _ := os.ReadFile(s.dir + "/.srt-settings.json"); string(b) != orig {
			t.Errorf("HOLE: the command rewrote ~/.srt-settings.json: %q", b)
		}
	})
}

// --- network -----------------------------------------------------------

// No packet leaves the sandbox except through cordon's proxies: direct
// TCP to the host's loopback and real addresses, IPv6, UDP, DNS, raw and
// packet sockets all fail, and no host listener sees a connection.
func TestEscapeNetworkDirect(t *testing.T) {
	escNeed(t, "python3")
	s := newSandbox(t, "")
	type target struct {
		host string
		l    *escListener
		u    *escUDP
	}
	var targets []target
	add := func(host, listen string) {
		targets = append(targets, target{host, escListen(t, "tcp", net.JoinHostPort(listen, "0")), escListenUDP(t, net.JoinHostPort(listen, "0"))})
	}
	add("127.0.0.1", "127.0.0.1")
	if ln, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		ln.Close()
		add("::1", "::1")
	}
	for _, a := range escHostAddrs(t) {
		add(a, a)
	}
	if len(targets) < 2 {
		t.Log("note: this host has no non-loopback address; only loopback is tried")
	}
	var script strings.Builder
	script.WriteString("targets = []\n")
	for _, tg := range targets {
		fmt.Fprintf(&script, "targets.append((%q, %d, %d))\n", tg.host, tg.l.port, tg.u.port)
	}
	script.WriteString(`
for host, tport, uport in targets:
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    def tcp():
        c = socket.socket(fam, socket.SOCK_STREAM); c.settimeout(3); c.connect((host, tport))
    res("tcp " + host, tcp)
    def udp():
        c = socket.socket(fam, socket.SOCK_DGRAM); c.sendto(b"escaped", (host, uport))
    res("udp " + host, udp)
    def udpc():
        c = socket.socket(fam, socket.SOCK_DGRAM); c.connect((host, uport)); c.send(b"escaped")
    res("udpconnect " + host, udpc)
res("dns getaddrinfo", lambda: socket.getaddrinfo("example.com", 80))
res("dns udp 8.8.8.8", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"\0", ("8.8.8.8", 53)))
res("raw icmp", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close())
res("raw ipv6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6).close())
res("packet", lambda: socket.socket(17, socket.SOCK_RAW, 0).close())
res("packet dgram", lambda: socket.socket(17, socket.SOCK_DGRAM, 0).close())
def ifaces():
    return ",".join(sorted(n for _, n in socket.if_nameindex()))
res("interfaces", ifaces)
`)
	m, r := escPy(t, s, script.String())
	if m["interfaces"] != "ok:lo" {
		t.Errorf("the sandbox has interfaces %q; want only lo", m["interfaces"])
	}
	for _, k := range []string{"raw icmp", "raw ipv6", "packet", "packet dgram"} {
		if m[k] != "EPERM" {
			t.Errorf("%s: %q, want EPERM", k, m[k])
		}
	}
	if strings.HasPrefix(m["dns getaddrinfo"], "ok") {
		t.Errorf("DNS resolved inside the sandbox: %s", m["dns getaddrinfo"])
	}
	// The same through the shell tools, with the proxy variables bypassed.
	if _, err := exec.LookPath("curl"); err == nil {
		for _, tg := range targets {
			u := "http://" + net.JoinHostPort(tg.host, strconv.Itoa(tg.l.port)) + "/"
			s.sh("curl -sS --max-time 3 --noproxy '*' " + u)
			s.sh("NO_PROXY='*' no_proxy='*' curl -sS --max-time 3 " + u)
			s.sh("env -u HTTP_PROXY -u http_proxy -u ALL_PROXY -u all_proxy curl -sS --max-time 3 " + u)
			// through the proxy too: the default policy allows nothing
			s.sh("curl -sS --max-time 3 " + u)
			s.sh("curl -sS --max-time 3 -x \"$ALL_PROXY\" " + u)
		}
	}
	if _, err := exec.LookPath("getent"); err == nil {
		if r := s.sh("getent hosts example.com || getent ahosts localhost.example"); r.code == 0 {
			t.Errorf("getent resolved a name: %+v", r)
		}
	}
	time.Sleep(200 * time.Millisecond)
	for _, tg := range targets {
		if n := tg.l.conns.Load(); n != 0 {
			t.Errorf("host TCP listener on %s:%d got %d connections from the sandbox (%s)", tg.host, tg.l.port, n, m["tcp "+tg.host])
		}
		if n := tg.u.got.Load(); n != 0 {
			t.Errorf("host UDP socket on %s:%d got %d datagrams from the sandbox", tg.host, tg.u.port, n)
		}
	}
	if len(m) == 0 {
		t.Errorf("probe did not run: %+v", r)
	}
}

// The proxies cannot be steered to a port or address the rules do not
// name: alternative spellings of loopback, a Host header that disagrees
// with the target, a second request pipelined on an allowed connection,
// CONNECT and SOCKS.
func TestEscapeProxySteering(t *testing.T) {
	escNeed(t, "curl", "python3")
	allowed := escListen(t, "tcp", "127.0.0.1:0")
	other := escListen(t, "tcp", "127.0.0.1:0")
	s := newSandbox(t, fmt.Sprintf(`{"network": {"allowedDomains": ["localhost:%d"]}}`, allowed.port))
	if r := s.sh(fmt.Sprintf("curl -sS --max-time 5 http://localhost:%d/", allowed.port)); r.stdout != "from-host" {
		t.Fatalf("the allowed target is not reachable, so the refusals below prove nothing: %+v", r)
	}
	p := other.port
	urls := []string{
		"http://127.0.0.1:%d/", "http://localhost:%d/", "http://LOCALHOST:%d/", "http://localhost.:%d/",
		"http://127.1:%d/", "http://2130706433:%d/", "http://0x7f000001:%d/", "http://0177.0.0.1:%d/",
		"http://0.0.0.0:%d/", "http://[::ffff:127.0.0.1]:%d/", "http://[::1]:%d/", "http://127.0.0.1.nip.io:%d/",
		"http://localhost%%00:%d/",
	}
	for _, u := range urls {
		u = fmt.Sprintf(u, p)
		s.sh("curl -sS --max-time 5 " + escQuote(u))
		s.sh("curl -sS --max-time 5 -p " + escQuote(u))                // CONNECT
		s.sh("curl -sS --max-time 5 -x \"$ALL_PROXY\" " + escQuote(u)) // SOCKS5h
		s.sh("curl -sS --max-time 5 --socks5 \"${ALL_PROXY#socks5h://}\" " + escQuote(u))
	}
	// An allowed target with a Host header naming the other port.
	s.sh(fmt.Sprintf("curl -sS --max-time 5 -H 'Host: 127.0.0.1:%d' http://localhost:%d/", p, allowed.port))
	s.sh(fmt.Sprintf("curl -sS --max-time 5 -H 'Host: localhost:%d' http://localhost:%d/", p, allowed.port))
	// Two requests on one client connection: the second names the other
	// port.
	_, r := escPy(t, s, `
import base64, urllib.parse
u = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
auth = base64.b64encode((urllib.parse.unquote(u.username) + ":" + urllib.parse.unquote(u.password)).encode()).decode()
a, o = int(sys.argv[1]), int(sys.argv[2])
req = ""
for target in ("localhost:%d" % a, "127.0.0.1:%d" % o, "localhost:%d" % o):
    req += "GET http://%s/ HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\n\r\n" % (target, target, auth)
c = socket.create_connection((u.hostname, u.port), timeout=5)
c.sendall(req.encode())
out = b""
try:
    while True:
        b = c.recv(65536)
        if not b: break
        out += b
except OSError: pass
print("pipelined=" + repr(out[:300]))
c = socket.create_connection((u.hostname, u.port), timeout=5)
c.sendall(("CONNECT localhost:%d HTTP/1.1\r\nHost: localhost:%d\r\nProxy-Authorization: Basic %s\r\n\r\n" % (a, a, auth)).encode())
c.recv(4096)
c.sendall(("GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (o, o)).encode())
try: c.recv(4096)
except OSError: pass
`, strconv.Itoa(allowed.port), strconv.Itoa(p))
	time.Sleep(200 * time.Millisecond)
	if n := other.conns.Load(); n != 0 {
		t.Errorf("HOLE: the listener on the port no rule allows (127.0.0.1:%d) got %d connections through the proxies (%s)", p, n, r.stdout)
	}

	// A name that resolves to loopback (other than "localhost" named by
	// the rule) is refused even when allowed: DNS rebinding protection.
	if name := escLoopbackName(t); name != "" {
		s2 := newSandbox(t, fmt.Sprintf(`{"network": {"allowedDomains": ["%s:%d"]}}`, name, other.port))
		before := other.conns.Load()
		r := s2.sh(fmt.Sprintf("curl -sS --max-time 5 http://%s:%d/", name, other.port))
		time.Sleep(100 * time.Millisecond)
		if other.conns.Load() != before {
			t.Errorf("allowed name %s that resolves to loopback reached the host's loopback: %+v", name, r)
		}
	}
	// Deny beats allow on the resolved address: localhost is allowed, but
	// its address 127.0.0.1 is denied.
	s3 := newSandbox(t, fmt.Sprintf(`{"network": {"allowedDomains": ["localhost:%d"], "deniedDomains": ["127.0.0.1"]}}`, allowed.port))
	before := allowed.conns.Load()
	s3.sh(fmt.Sprintf("curl -sS --max-time 5 http://localhost:%d/; curl -sS --max-time 5 -p http://localhost:%d/", allowed.port, allowed.port))
	time.Sleep(100 * time.Millisecond)
	if allowed.conns.Load() != before {
		t.Errorf("deniedDomains 127.0.0.1 did not stop an allowed localhost that resolves to it")
	}
}

// escLoopbackName finds a name other than localhost that /etc/hosts maps
// to a loopback address.
func escLoopbackName(t *testing.T) string {
	b, err := os.ReadFile("/etc/hosts")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[0], "127.") {
			continue
		}
		for _, n := range f[1:] {
			if strings.HasPrefix(n, "#") {
				break
			}
			if n != "localhost" && !strings.HasPrefix(n, "localhost.") && !strings.HasPrefix(n, "ip6-") {
				return n
			}
		}
	}
	t.Log("note: no non-localhost loopback name in /etc/hosts; rebinding case skipped")
	return ""
}

// A listener the command opens inside is not reachable from the host: the
// sandbox's loopback is its own.
func TestEscapeListenerInsideNotExposed(t *testing.T) {
	escNeed(t, "python3")
	s := newSandbox(t, "")
	// A port free on the host, so a host connection can only reach the
	// sandbox's listener if the loopbacks were shared.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(cordonBin, "--", "python3", "-c", `
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(5); print("listening", flush=True)
s.settimeout(1.5)
try:
    c, _ = s.accept(); print("ACCEPTED", flush=True)
except OSError: print("none", flush=True)
`, strconv.Itoa(port))
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(out)
	line, _ := br.ReadString('\n')
	if strings.TrimSpace(line) != "listening" {
		cmd.Wait()
		t.Skipf("the in-sandbox listener did not start: %q", line)
	}
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
	if err == nil {
		c.Close()
	}
	rest, _ := io.ReadAll(br)
	cmd.Wait()
	if err == nil || strings.Contains(string(rest), "ACCEPTED") {
		t.Errorf("the host reached a listener inside the sandbox on port %d (%v, %q)", port, err, rest)
	}
}

// --- unix sockets ------------------------------------------------------

// With the default policy no unix socket reaches the host: socket(AF_UNIX)
// is refused, and neither a path socket (in a directory the sandbox sees)
// nor an abstract one gets a connection.
func TestEscapeUnixSockets(t *testing.T) {
	escNeed(t, "python3")
	s := newSandbox(t, "")
	root := filepath.Dir(s.dir)
	mark := escMarker()
	stream := escListenUnix(t, "unix", root+"/host.sock")
	abstract := escListenUnix(t, "unix", "@"+mark)
	m, r := escPy(t, s, `
path, abstract = sys.argv[1], "\0" + sys.argv[2]
res("socket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close())
res("socket dgram", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).close())
res("socket seqpacket", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).close())
res("raw socket syscall", lambda: sc(41, 1, 1, 0))
def via_pair():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    a.connect(path)
res("connect via stream socketpair", via_pair)
`, root+"/host.sock", mark)
	for _, k := range []string{"socket", "socket dgram", "socket seqpacket", "raw socket syscall"} {
		if m[k] != "EPERM" {
			t.Errorf("%s: %q, want EPERM (%+v)", k, m[k], r)
		}
	}
	if got := stream.received(); len(got) > 0 {
		t.Errorf("the host socket %s/host.sock got %v from the sandbox", root, got)
	}
	if got := abstract.received(); len(got) > 0 {
		t.Errorf("the host's abstract socket got %v from the sandbox", got)
	}
}

// socketpair(AF_UNIX, SOCK_DGRAM) is not socket(AF_UNIX): unless the
// filter refuses it too, a datagram socket sends to any path with sendto,
// or after connect — to a host daemon's socket (/dev/log, the journal, any
// SOCK_DGRAM service) around the "no unix sockets" rule. Every type that
// the kernel makes a datagram socket counts (SOCK_RAW is one).
func TestEscapeUnixDatagramViaSocketpair(t *testing.T) {
	escNeed(t, "python3")
	s := newSandbox(t, "")
	root := filepath.Dir(s.dir)
	dgram := escListenUnix(t, "unixgram", root+"/host-dgram.sock")
	m, r := escPy(t, s, `
path = sys.argv[1]
def sendto():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.sendto(b"ESCAPED-sendto", path)
res("socketpair dgram sendto", sendto)
def connect():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.connect(path); a.send(b"ESCAPED-connect")
res("socketpair dgram connect", connect)
def seq():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    a.connect(path)
res("socketpair seqpacket connect", seq)
# af_unix turns SOCK_RAW into SOCK_DGRAM (unix_create), so a filter that
# refuses only the datagram and seqpacket types misses it.
def raw():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_RAW)
    a.sendto(b"ESCAPED-raw", path)
res("socketpair raw sendto", raw)
def cloexec():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK)
    a.sendto(b"ESCAPED-flags", path)
res("socketpair dgram|flags sendto", cloexec)
`, root+"/host-dgram.sock")
	if len(m) != 5 {
		t.Fatalf("the probe did not run: %+v", r)
	}
	if got := dgram.received(); len(got) > 0 {
		t.Errorf("HOLE: a host SOCK_DGRAM unix socket received %v from the sandbox via socketpair(AF_UNIX, ...) "+
			"(probe: %v, stderr %q)", got, m, r.stderr)
	}
}

// network.allowAllUnixSockets: the command may create unix sockets, and a
// host socket's path inside the sandbox is the same inode as outside, so
// it connects (that is what the setting means). Abstract sockets belong to
// the network namespace and stay out of reach.
func TestEscapeUnixSocketsAllowAll(t *testing.T) {
	escNeed(t, "python3")
	s := newSandbox(t, `{"network": {"allowAllUnixSockets": true}}`)
	root := filepath.Dir(s.dir)
	mark := escMarker()
	stream := escListenUnix(t, "unix", root+"/host.sock")
	abstract := escListenUnix(t, "unix", "@"+mark)
	m, r := escPy(t, s, `
def conn(addr):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); c.settimeout(3); c.connect(addr)
    return c.recv(100).decode().strip()
res("path", lambda: conn(sys.argv[1]))
res("abstract", lambda: conn("\0" + sys.argv[2]))
`, root+"/host.sock", mark)
	if got := abstract.received(); len(got) > 0 {
		t.Errorf("the host's abstract socket was reached from the sandbox: %v", got)
	}
	if got := stream.received(); len(got) > 0 {
		t.Logf("NOTE: with allowAllUnixSockets the command connected to the host socket %s/host.sock (%s): "+
			"the mount view does not matter, the socket inode is the host's", root, m["path"])
	} else {
		t.Errorf("allowAllUnixSockets: connecting to a visible host socket failed (%s); %+v", m["path"], r)
	}
}

// network.allowUnixSockets names sockets; another socket stays closed.
func TestEscapeUnixSocketsAllowList(t *testing.T) {
	escNeed(t, "python3")
	s := newSandbox(t, `{"network": {"allowUnixSockets": ["$DIR/allowed.sock"]}}`)
	root := filepath.Dir(s.dir)
	allowed := escListenUnix(t, "unix", root+"/allowed.sock")
	other := escListenUnix(t, "unix", root+"/other.sock")
	m, r := escPy(t, s, `
def conn(addr):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); c.settimeout(3); c.connect(addr)
    return c.recv(100).decode().strip()
res("allowed", lambda: conn(sys.argv[1]))
res("other", lambda: conn(sys.argv[2]))
`, root+"/allowed.sock", root+"/other.sock")
	if m["other"] == "" {
		t.Fatalf("the probe did not run: %+v", r)
	}
	if got := other.received(); len(got) > 0 {
		t.Errorf("a socket not in allowUnixSockets was reached: %v (%v)", got, m)
	}
	if got := allowed.received(); len(got) == 0 {
		t.Logf("NOTE: the socket named in allowUnixSockets is not reachable either (%s): socket(AF_UNIX) is refused "+
			"unless allowAllUnixSockets; per-path allowing needs the guard", m["allowed"])
	}
}

// --- kernel interfaces -------------------------------------------------

// Namespaces, tracing, the keyring, BPF, perf, userfaultfd, mounts, chroot,
// device nodes, io_uring, open_by_handle_at and TIOCSTI are refused.
func TestEscapeSyscalls(t *testing.T) {
	escNeed(t, "python3")
	s := newSandbox(t, "")
	m, r := escPy(t, s, `
import fcntl, termios
buf = ctypes.create_string_buffer(512)
res("clone CLONE_NEWUSER", lambda: sc(56, 0x10000000 | 17, 0, 0, 0, 0))
res("clone CLONE_NEWNS", lambda: sc(56, 0x00020000 | 17, 0, 0, 0, 0))
res("clone CLONE_NEWNET", lambda: sc(56, 0x40000000 | 17, 0, 0, 0, 0))
res("unshare CLONE_NEWUSER", lambda: sc(272, 0x10000000))
res("unshare CLONE_NEWNS", lambda: sc(272, 0x00020000))
res("setns", lambda: sc(308, os.open("/proc/self/ns/net", os.O_RDONLY), 0))
res("ptrace attach 1", lambda: sc(101, 16, 1, 0, 0))
res("ptrace traceme", lambda: sc(101, 0, 0, 0, 0))
res("process_vm_readv 1", lambda: sc(310, 1, buf, 1, buf, 1, 0))
res("pidfd_getfd", lambda: sc(438, sc(434, 1, 0), 0, 0))
res("keyctl", lambda: sc(250, 0, -3, 0, 0, 0))
res("add_key", lambda: sc(248, b"user", b"k", b"v", 1, -3))
res("request_key", lambda: sc(249, b"user", b"k", None, -3))
res("bpf", lambda: sc(321, 0, buf, 72))
res("perf_event_open", lambda: sc(298, buf, 0, -1, -1, 0))
res("userfaultfd", lambda: sc(323, 0))
res("mount tmpfs", lambda: sc(165, b"none", os.getcwd().encode(), b"tmpfs", 0, 0))
res("umount", lambda: sc(166, b"/proc", 2))
res("chroot", lambda: sc(161, b"/tmp"))
res("pivot_root", lambda: sc(155, b"/tmp", b"/tmp"))
res("fsopen", lambda: sc(430, b"tmpfs", 0))
res("open_tree", lambda: sc(428, -100, b"/", 1))
res("move_mount", lambda: sc(429, -100, b"/tmp", -100, b"/mnt", 0))
res("mknod char", lambda: sc(133, b"devnull", 0o20666, 0x0103))
res("mknod block", lambda: sc(133, b"devblk", 0o60666, 0x0800))
res("io_uring_setup", lambda: sc(425, 1, buf))
res("syslog", lambda: sc(103, 3, buf, 100))
res("init_module", lambda: sc(175, buf, 1, b""))
res("kexec_load", lambda: sc(246, 0, 0, 0, 0))
res("reboot", lambda: sc(169, 0xfee1dead, 672274793, 0x4321fedc, 0))
res("swapon", lambda: sc(167, b"/dev/null", 0))
res("iopl", lambda: sc(172, 3))
res("acct", lambda: sc(163, None))
res("vhangup", lambda: sc(153))
res("clone3", lambda: sc(435, buf, 88))
m, sl = os.openpty()
res("TIOCSTI", lambda: fcntl.ioctl(sl, termios.TIOCSTI, b"x"))
res("TIOCLINUX", lambda: fcntl.ioctl(sl, 0x541C, b"\x02"))
def vsock():
    socket.socket(40, socket.SOCK_STREAM).close()
res("AF_VSOCK", vsock)
print("alive=yes")
`)
	want := map[string]string{"clone3": "ENOSYS"}
	for _, k := range []string{"clone CLONE_NEWUSER", "clone CLONE_NEWNS", "clone CLONE_NEWNET", "unshare CLONE_NEWUSER",
		"unshare CLONE_NEWNS", "setns", "ptrace attach 1", "ptrace traceme", "process_vm_readv 1", "keyctl", "add_key",
		"request_key", "bpf", "perf_event_open", "userfaultfd", "mount tmpfs", "umount", "chroot", "pivot_root", "fsopen",
		"open_tree", "move_mount", "io_uring_setup", "syslog", "init_module", "kexec_load", "reboot", "swapon", "iopl",
		"acct", "vhangup", "TIOCSTI", "TIOCLINUX", "AF_VSOCK"} {
		want[k] = "EPERM"
	}
	for k, w := range want {
		if m[k] != w {
			t.Errorf("%s: %q, want %s", k, m[k], w)
		}
	}
	for _, k := range []string{"mknod char", "mknod block", "pidfd_getfd"} {
		if strings.HasPrefix(m[k], "ok") {
			t.Errorf("%s succeeded", k)
		}
	}
	for _, f := range []string{"devnull", "devblk"} {
		if st, err := os.Lstat(filepath.Join(s.dir, f)); err == nil && st.Mode()&os.ModeDevice != 0 {
			t.Errorf("a device node %s was made on the host", f)
		}
	}
	if m["alive"] != "yes" {
		t.Errorf("probe did not finish: %+v", r)
	}
	// util-linux's unshare, for the record.
	if _, err := exec.LookPath("unshare"); err == nil {
		if r := s.sh("unshare -U true || unshare -Ur true || unshare -m true"); r.code == 0 {
			t.Errorf("unshare made a namespace: %+v", r)
		}
	}
}

// System calls through another ABI (i386 int 0x80, x32) have other numbers
// and would pass every number check: the filter kills the process.
func TestEscapeForeignSyscallABI(t *testing.T) {
	escNeed(t, "python3")
	if arch := strings.TrimSpace(escOutput("uname", "-m")); arch != "x86_64" {
		t.Skipf("the i386 and x32 ABIs are x86_64's; this is %s", arch)
	}
	s := newSandbox(t, "")
	// unshare(CLONE_NEWUSER) is 310 on i386; eax is the number, ebx the flags.
	int80 := escPyPrelude + `
import mmap
code = (b"\x53\xb8" + (310).to_bytes(4, "little") + b"\xbb" + (0x10000000).to_bytes(4, "little") +
        b"\xcd\x80\x5b\x48\x63\xc0\xc3")
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
f = ctypes.CFUNCTYPE(ctypes.c_long)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
print("int80=" + str(f()), flush=True)
`
	// On the host the same code must work, or the kernel has no i386
	// emulation and the test proves nothing.
	if out := escOutput("python3", "-c", int80); !strings.Contains(out, "int80=") {
		t.Log("note: no i386 emulation on this host; int 0x80 case skipped")
	} else {
		r := s.run("--", "python3", "-c", int80)
		if r.code != 128+int(syscall.SIGSYS) || strings.Contains(r.stdout, "int80=0") {
			t.Errorf("an i386 unshare(CLONE_NEWUSER) via int 0x80: %+v; want the process killed by SIGSYS (exit 159)", r)
		}
	}
	x32 := escPyPrelude + `
try:
    print("x32=" + str(sc(0x40000000 | 272, 0x10000000)), flush=True)
except OSError as e:
    print("x32=" + errno.errorcode[e.errno], flush=True)
`
	r := s.run("--", "python3", "-c", x32)
	if r.code != 128+int(syscall.SIGSYS) {
		t.Errorf("an x32 unshare(CLONE_NEWUSER): %+v; want the process killed by SIGSYS (exit 159)", r)
	}
}

func escOutput(name string, args ...string) string {
	out, _ := exec.Command(name, args...).CombinedOutput()
	return string(out)
}

// TIOCSTI on the caller's terminal would type commands into the user's
// shell after cordon exits. Proven with a reader outside the sandbox on
// the same terminal: it must read nothing the sandbox pushed.
func TestEscapeTIOCSTIOnCallerTerminal(t *testing.T) {
	escNeed(t, "script", "python3")
	s := newSandbox(t, "")
	inject := `
import fcntl, termios, errno
try:
    for c in b"INJECTED-BY-SANDBOX\n":
        fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))
    print("inject=ok")
except OSError as e:
    print("inject=" + errno.errorcode[e.errno])
`
	pyFile := writeFile(t, filepath.Dir(s.dir), "inject.py", inject)
	run := func(inner string) string {
		outer := "sh -c " + escQuote(inner+"; read -r line; echo outer-read:[$line]")
		cmd := exec.Command("sh", "-c", "sleep 1 | script -qec "+escQuote(outer)+" /dev/null")
		cmd.Dir = s.dir
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	// Without cordon the same injection works, so the check below can fail.
	if out := run("python3 " + pyFile); !strings.Contains(out, "outer-read:[INJECTED") {
		t.Logf("note: TIOCSTI does not work on this host even outside the sandbox (%q); the check below cannot fail", out)
	}
	out := run(cordonBin + " -- python3 " + pyFile)
	if strings.Contains(out, "outer-read:[INJECTED") || !strings.Contains(out, "inject=EPERM") {
		t.Errorf("the sandbox typed into the caller's terminal: %q", out)
	}
}

// --- privileges ----------------------------------------------------------

// setuid and file-capability binaries give nothing: no euid 0, no
// capabilities, and host root's rights over other users' files do not
// reach the sandbox.
func TestEscapeNoPrivilegeGain(t *testing.T) {
	s := newSandbox(t, "")
	root := filepath.Dir(s.dir)
	if os.Geteuid() != 0 {
		t.Skip("needs root to make setuid and file-capability binaries on the host")
	}
	// A file root could read on the host, owned by a uid the sandbox does
	// not map.
	os.WriteFile(root+"/other-user.txt", []byte("SECRET-OTHER-USER"), 0o600)
	os.Chown(root+"/other-user.txt", 12345, 12345)
	os.Chmod(root, 0o755)
	idBin, _ := exec.LookPath("id")
	catBin, _ := exec.LookPath("cat")
	grepBin, _ := exec.LookPath("grep")
	// copyBin copies a binary, gives it an owner, then the mode (chown
	// clears the setuid bit, so it comes last).
	copyBin := func(src, dst string, uid int, mode os.FileMode) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chown(dst, uid, uid)
		os.Chmod(dst, mode)
	}
	copyBin(idBin, root+"/suid-id", 0, 0o755|os.ModeSetuid)
	copyBin(catBin, root+"/suid-cat", 12345, 0o755|os.ModeSetuid)
	script := root + "/suid-id -u; " + root + "/suid-cat " + root + "/other-user.txt; cat " + root + "/other-user.txt; " +
		"su -c 'id -u' root </dev/null; sudo -n id -u </dev/null"
	if _, err := exec.LookPath("setcap"); err == nil {
		copyBin(grepBin, root+"/cap-grep", 0, 0o755)
		if out, err := exec.Command("setcap", "cap_dac_override,cap_sys_admin,cap_net_raw+ep", root+"/cap-grep").CombinedOutput(); err != nil {
			t.Logf("note: setcap failed (%v %s); file-capability case skipped", err, out)
		} else {
			script += "; " + root + "/cap-grep -E '^Cap(Eff|Prm)' /proc/self/status"
		}
	}
	r := s.sh(script)
	if !strings.HasPrefix(r.stdout, "1000\n") && !strings.HasPrefix(r.stdout, strconv.Itoa(os.Getuid())+"\n") {
		t.Errorf("the setuid id did not run or ran with another uid: %+v", r)
	}
	if strings.Contains(r.stdout, "SECRET-OTHER-USER") {
		t.Errorf("read a file of an unmapped uid: %+v", r)
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.TrimSpace(line) == "0" {
			t.Errorf("something ran with uid 0: %+v", r)
		}
		if strings.HasPrefix(line, "Cap") && !strings.HasSuffix(line, "0000000000000000") {
			t.Errorf("a file-capability binary gained capabilities: %q", line)
		}
	}
}

// --- processes and PID 1 ---------------------------------------------------

// The command cannot reach PID 1 (cordon's unfiltered init holding the
// bridge socket): its memory, environment, descriptors and links are
// closed; signals, even SIGKILL and SIGSTOP, do not stop it.
func TestEscapePID1Unreachable(t *testing.T) {
	escNeed(t, "python3")
	s := newSandbox(t, "")
	m, r := escPy(t, s, `
import signal, time
def rd(p): return len(open(p, "rb").read(4096))
for p in ["/proc/1/mem", "/proc/1/environ", "/proc/1/maps", "/proc/1/auxv", "/proc/1/syscall", "/proc/1/stack", "/proc/1/io"]:
    res("read " + p, lambda: rd(p))
for n in (os.listdir("/proc/1/fd") if os.access("/proc/1/fd", os.R_OK) else []):
    res("readlink fd " + n, lambda: os.readlink("/proc/1/fd/" + n))
    res("open fd " + n, lambda: os.close(os.open("/proc/1/fd/" + n, os.O_RDONLY)))
    res("fdinfo " + n, lambda: rd("/proc/1/fdinfo/" + n))
for p in ["/proc/1/cwd", "/proc/1/root", "/proc/1/exe"]:
    res("readlink " + p, lambda: os.readlink(p))
res("map_files", lambda: os.listdir("/proc/1/map_files"))
def mem_write():
    fd = os.open("/proc/1/mem", os.O_WRONLY); os.close(fd)
res("write /proc/1/mem", mem_write)
# SIGKILL and SIGSTOP cannot be caught, so a namespace's init drops them;
# other signals PID 1 forwards to the command, which is the command's own
# business.
for sig in (signal.SIGKILL, signal.SIGSTOP):
    try: os.kill(1, sig)
    except OSError: pass
time.sleep(0.3)
st = open("/proc/1/stat").read().split(")")[1].split()[0]
print("pid1state=" + st)
print("alive=yes")
`)
	if m["alive"] != "yes" {
		t.Fatalf("the command did not survive its attack on PID 1: %+v", r)
	}
	if r.code != 0 {
		t.Errorf("exit %d after signalling PID 1 (it forwarded a fatal signal?): %+v", r.code, r)
	}
	if st := m["pid1state"]; st == "T" || st == "t" || st == "Z" {
		t.Errorf("PID 1 is in state %s", st)
	}
	for k, v := range m {
		if (strings.HasPrefix(k, "read ") || strings.HasPrefix(k, "readlink") || strings.HasPrefix(k, "open fd") ||
			strings.HasPrefix(k, "fdinfo") || k == "map_files" || k == "write /proc/1/mem") && strings.HasPrefix(v, "ok") {
			t.Errorf("%s: %s", k, v)
		}
	}
}

// The command inherits no descriptor but stdio: not the bridge socket, not
// the config pipe, not what the caller had open.
func TestEscapeNoInheritedDescriptors(t *testing.T) {
	s := newSandbox(t, "")
	f, err := os.Open(filepath.Dir(s.dir))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// ls inherits the command's descriptors and adds one: its listing of
	// /proc/self/fd.
	cmd := exec.Command(cordonBin, "--", "/bin/sh", "-c", "exec ls -l /proc/self/fd")
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	cmd.ExtraFiles = []*os.File{f, f, f, f, f, f, f}
	out, _ := cmd.Output()
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		before, target, ok := strings.Cut(line, " -> ")
		if !ok {
			continue
		}
		seen++
		f := strings.Fields(before)
		n, _ := strconv.Atoi(f[len(f)-1])
		if n > 2 && !strings.HasPrefix(target, "/proc/") {
			t.Errorf("the command inherited descriptor %d -> %s", n, target)
		}
	}
	if seen < 3 {
		t.Errorf("no descriptor listing: %s", out)
	}
}

// Another sandbox's proxy credential cannot be found: other sessions'
// processes are in other PID namespaces, and nothing of theirs is in /proc.
func TestEscapeOtherSessionCredentials(t *testing.T) {
	s := newSandbox(t, "")
	a := exec.Command(cordonBin, "--", "/bin/sh", "-c", "echo \"$HTTP_PROXY\"; exec sleep 10")
	a.Dir = s.dir
	a.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, _ := a.StdoutPipe()
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { a.Process.Kill(); a.Wait() }()
	line, _ := bufio.NewReader(out).ReadString('\n')
	u := strings.TrimSpace(line)
	if escParseToken(u) == "" {
		t.Fatalf("no credential in HTTP_PROXY %q", u)
	}
	token := escParseToken(u)
	r := s.sh("echo \"$HTTP_PROXY\"; ps -eo pid,args 2>/dev/null; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n'")
	self := escParseToken(strings.SplitN(r.stdout, "\n", 2)[0])
	if self == "" {
		t.Fatalf("the second sandbox did not run: %+v", r)
	}
	if self == token {
		t.Fatalf("two sessions got the same proxy credential %q", token)
	}
	if strings.Contains(r.stdout, token) || strings.Contains(r.stderr, token) {
		t.Errorf("a sandbox found another session's proxy credential")
	}
	if strings.Contains(r.stdout, "sleep 10") {
		t.Errorf("a sandbox sees another session's processes:\n%s", r.stdout)
	}
}

func escParseToken(u string) string {
	at := strings.LastIndex(u, "@")
	if at < 0 {
		return ""
	}
	colon := strings.LastIndex(u[:at], ":")
	if colon < 0 {
		return ""
	}
	return u[colon+1 : at]
}

// Host processes are invisible and out of reach: kill -9 -1 inside kills
// nothing outside.
func TestEscapeHostProcessesUnreachable(t *testing.T) {
	s := newSandbox(t, "")
	sleeper := escSleeper(t, filepath.Dir(s.dir))
	host := exec.Command(sleeper, "30")
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { host.Wait(); close(exited) }()
	defer func() { host.Process.Kill(); <-exited }()
	time.Sleep(50 * time.Millisecond)
	pid := host.Process.Pid
	// "[c]ordon-esc-..." matches the host process but not this script's
	// own command line, which holds the bracketed spelling.
	mark := filepath.Base(sleeper)
	pat := "[" + mark[:1] + "]" + mark[1:]
	r := s.sh(fmt.Sprintf("grep -l '%s' /proc/[0-9]*/cmdline 2>/dev/null; pkill -9 -f '%s'; kill -9 %d; kill -9 -1; echo done", pat, pat, pid))
	if !strings.Contains(r.stdout, "done") {
		t.Fatalf("the command did not run: %+v", r)
	}
	if strings.Contains(r.stdout, "/proc/") {
		t.Errorf("the sandbox sees a host process: %+v", r)
	}
	select {
	case <-exited:
		t.Errorf("a host process died during the run (%v): %+v", host.ProcessState, r)
	case <-time.After(200 * time.Millisecond):
	}
}

// A daemon (setsid, nohup, double fork) does not outlive the run, nor a
// killed cordon.
func TestEscapeDaemonDoesNotSurvive(t *testing.T) {
	escNeed(t, "setsid", "nohup", "pgrep")
	s := newSandbox(t, "")
	sl := escSleeper(t, filepath.Dir(s.dir))
	pat := "^" + sl // the sleepers themselves, not the shells that name them
	t.Cleanup(func() { exec.Command("pkill", "-9", "-f", pat).Run() })
	daemon := fmt.Sprintf(`setsid nohup %s 301 >/dev/null 2>&1 </dev/null &
( ( %s 302 ) </dev/null >/dev/null 2>&1 & ) ; ( setsid sh -c 'trap "" HUP TERM INT; exec %s 303' </dev/null >/dev/null 2>&1 & )`, sl, sl, sl)
	r := s.sh(daemon + "; sleep 0.3; pgrep -f '^" + sl + " 30' | wc -l")
	if strings.TrimSpace(r.stdout) != "3" {
		t.Fatalf("the daemons did not start inside, so the check below would prove nothing: %+v", r)
	}
	if left := escWaitGone(pat, 2*time.Second); left != "" {
		t.Errorf("daemons outlived the sandbox:\n%s", left)
	}

	cmd := exec.Command(cordonBin, "--", "/bin/sh", "-c", daemon+"; exec "+sl+" 304")
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(escPgrep(pat), "\n") < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := strings.Count(escPgrep(pat), "\n") + 1; n != 4 {
		t.Logf("note: %d sleepers running before the kill, want 4:\n%s", n, escPgrep(pat))
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if left := escWaitGone(pat, 3*time.Second); left != "" {
		t.Errorf("the sandbox outlived a SIGKILLed cordon:\n%s", left)
	}
}

// --- status, signals, stdio --------------------------------------------

func TestEscapeExitStatusAndSignals(t *testing.T) {
	s := newSandbox(t, "")
	for _, code := range []int{0, 1, 2, 42, 100, 125, 126, 127, 128, 200, 254, 255} {
		if r := s.sh(fmt.Sprintf("exit %d", code)); r.code != code {
			t.Errorf("exit %d came out as %d: %+v", code, r.code, r)
		}
	}
	for sig, want := range map[string]int{"KILL": 137, "TERM": 143, "SEGV": 139, "HUP": 129, "USR1": 138} {
		if r := s.sh("kill -" + sig + " $$"); r.code != want {
			t.Errorf("killed by SIG%s: exit %d, want %d", sig, r.code, want)
		}
	}
	// Signals sent to cordon reach the command.
	for _, tc := range []struct {
		sig  syscall.Signal
		name string
	}{{syscall.SIGTERM, "TERM"}, {syscall.SIGHUP, "HUP"}, {syscall.SIGUSR1, "USR1"}} {
		sig, name := tc.sig, tc.name
		cmd := exec.Command(cordonBin, "--", "/bin/sh", "-c", "trap 'echo got-"+name+"; exit 7' "+name+"; echo ready; while :; do sleep 0.05; done")
		cmd.Dir = s.dir
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(out)
		br.ReadString('\n')
		cmd.Process.Signal(sig)
		rest, _ := io.ReadAll(br)
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 || !strings.Contains(string(rest), "got-"+name) {
			t.Errorf("SIG%s to cordon: %v %q; want the trap's exit 7", name, err, rest)
		}
	}
}

func TestEscapeStdio(t *testing.T) {
	s := newSandbox(t, "")
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	r := escRun(t, s, bytes.NewReader(data), nil, "--", "cat")
	if r.code != 0 || r.stdout != string(data) {
		t.Errorf("stdin through cat: exit %d, %d bytes back of %d", r.code, len(r.stdout), len(data))
	}
	r = s.sh("echo to-out; echo to-err >&2")
	if r.stdout != "to-out\n" || r.stderr != "to-err\n" {
		t.Errorf("stdout/stderr mixed: %+v", r)
	}
	if r := escRun(t, s, strings.NewReader("line1\nline2\n"), nil, "--", "/bin/sh", "-c", "read a; read b; echo \"$b-$a\""); r.stdout != "line2-line1\n" {
		t.Errorf("stdin lines: %+v", r)
	}
}

// A terminal on stdin is a terminal inside; an interactive shell works.
func TestEscapeInteractiveTTY(t *testing.T) {
	escNeed(t, "script")
	s := newSandbox(t, "")
	run := func(stdin io.Reader, inner string) string {
		cmd := exec.Command("script", "-qec", inner, "/dev/null")
		cmd.Dir = s.dir
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		cmd.Stdin = stdin
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		done := make(chan struct{})
		go func() { cmd.Run(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		return out.String()
	}
	if out := run(strings.NewReader(""), cordonBin+" -- sh -c 'test -t 0 && test -t 1 && echo tty-ok'"); !strings.Contains(out, "tty-ok") {
		t.Errorf("no terminal inside: %q", out)
	}
	if _, err := exec.LookPath("bash"); err == nil {
		pr, pw := io.Pipe()
		go func() {
			time.Sleep(500 * time.Millisecond)
			io.WriteString(pw, "echo hi-from-$((40+2))-bash; exit\n")
			time.Sleep(time.Second)
			pw.Close()
		}()
		if out := run(pr, cordonBin+" -- bash --norc -i"); !strings.Contains(out, "hi-from-42-bash") {
			t.Errorf("interactive bash: %q", out)
		}
	}
}

// --- environment -----------------------------------------------------------

func TestEscapeEnvironment(t *testing.T) {
	s := newSandbox(t, "")
	mark := escMarker()
	env := []string{"NO_PROXY=localhost,127.0.0.1", "no_proxy=*", "HTTP_PROXY=http://evil.example:1", "ALL_PROXY=socks5://evil.example:1"}
	r := escRun(t, s, nil, env, "--", "/bin/sh", "-c",
		`env | sort; test -d "$TMPDIR" && echo x > "$TMPDIR/`+mark+`" && echo tmpdir-writable`)
	vars := map[string]string{}
	for _, line := range strings.Split(r.stdout, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			vars[k] = v
		}
	}
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
		if !strings.HasPrefix(vars[k], "http://") || !strings.HasSuffix(vars[k], "@127.0.0.1:3128") {
			t.Errorf("%s=%q; want the bridge on 127.0.0.1:3128", k, vars[k])
		}
	}
	for _, k := range []string{"ALL_PROXY", "all_proxy"} {
		if !strings.HasPrefix(vars[k], "socks5h://") || !strings.HasSuffix(vars[k], "@127.0.0.1:1080") {
			t.Errorf("%s=%q; want socks5h to the bridge on 127.0.0.1:1080", k, vars[k])
		}
	}
	for _, k := range []string{"NO_PROXY", "no_proxy"} {
		if v, ok := vars[k]; ok {
			t.Errorf("%s=%q reached the command", k, v)
		}
	}
	if !strings.Contains(r.stdout, "tmpdir-writable") {
		t.Errorf("TMPDIR %q does not exist or is not writable: %+v", vars["TMPDIR"], r)
	}
	for _, p := range []string{"/tmp/" + mark, "/var/tmp/" + mark, vars["TMPDIR"] + "/" + mark} {
		if _, err := os.Lstat(p); err == nil {
			os.Remove(p)
			t.Errorf("the sandbox's TMPDIR file appeared on the host at %s", p)
		}
	}
}

// Telling curl not to use the proxy (or setting NO_PROXY) reaches nothing,
// even for a host the rules allow.
func TestEscapeNoProxyTrick(t *testing.T) {
	escNeed(t, "curl")
	origin := escListen(t, "tcp", "127.0.0.1:0")
	s := newSandbox(t, fmt.Sprintf(`{"network": {"allowedDomains": ["localhost:%d", "127.0.0.1:%d"]}}`, origin.port, origin.port))
	if r := s.sh(fmt.Sprintf("curl -sS --max-time 5 http://127.0.0.1:%d/", origin.port)); r.stdout != "from-host" {
		t.Fatalf("the allowed host is not reachable through the proxy: %+v", r)
	}
	before := origin.conns.Load()
	for _, script := range []string{
		"curl -sS --max-time 3 --noproxy '*' http://127.0.0.1:%d/",
		"NO_PROXY='*' curl -sS --max-time 3 http://127.0.0.1:%d/",
		"NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost curl -sS --max-time 3 http://localhost:%d/",
		"curl -sS --max-time 3 --proxy '' http://127.0.0.1:%d/",
		"curl -sS --max-time 3 --interface lo http://127.0.0.1:%d/ --noproxy '*'",
	} {
		r := s.sh(fmt.Sprintf(script, origin.port))
		if strings.Contains(r.stdout, "from-host") {
			t.Errorf("%q reached the host around the proxy", script)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if n := origin.conns.Load(); n != before {
		t.Errorf("the host listener got %d direct connections", n-before)
	}
}

// --- cordon inside cordon --------------------------------------------------

// The cordon binary is visible inside (/dev/.cordon). Running it again —
// as a nested sandbox with a permissive policy, or its init stage with a
// config that allows unix sockets — lifts nothing: filters only stack.
func TestEscapeCordonInsideCordon(t *testing.T) {
	escNeed(t, "python3")
	s := newSandbox(t, "")
	root := filepath.Dir(s.dir)
	mark := escMarker()
	permissive := writeFile(t, root, "permissive.json", `{"filesystem": {"allowWrite": ["/"]}, "network": {"allowAllUnixSockets": true}}`)
	cfg := fmt.Sprintf(`{"Argv":["python3","-c","import socket\nsocket.socket(socket.AF_UNIX)\nprint('UNIX-SOCKET-OK')"],"Env":[%q],"Dir":%q,"Seccomp":{"AllowUnixSockets":true}}`,
		"PATH="+os.Getenv("PATH"), s.dir)
	cfgFile := writeFile(t, root, "exec.json", cfg)
	r := s.sh(strings.Join([]string{
		"/dev/.cordon -s " + permissive + " -- touch " + root + "/" + mark,
		"/dev/.cordon __cordon-init 3<" + cfgFile,
		"echo outer-ran",
	}, "; "))
	if !strings.Contains(r.stdout, "outer-ran") {
		t.Fatalf("the outer sandbox did not run: %+v", r)
	}
	if _, err := os.Lstat(root + "/" + mark); err == nil {
		t.Errorf("a nested cordon with a permissive policy wrote outside the sandbox")
	}
	if strings.Contains(r.stdout, "UNIX-SOCKET-OK") {
		t.Errorf("re-running cordon's init stage lifted the unix-socket refusal: %+v", r)
	}
}

// --- across runs -----------------------------------------------------------

// A rule is resolved through symlinks when a run starts. A symlink the
// command of an earlier run planted inside a writable root must not
// redirect a later run's allowWrite rule to a directory outside it: the
// first run makes "build" a link to any host directory, the second writes
// there.
func TestEscapeAllowWriteRuleThroughPlantedSymlink(t *testing.T) {
	t.Run("rule path missing at the first run", func(t *testing.T) {
		s := newSandbox(t, `{"filesystem": {"allowWrite": [".", "./build"]}}`)
		outside := filepath.Join(filepath.Dir(s.dir), "outside")
		os.MkdirAll(outside, 0o755)
		escMustRun(t, s.sh("ln -s "+outside+" build"+escRan))
		r := s.sh("echo PWNED > build/x" + escRan)
		escMustRun(t, r)
		if _, err := os.Lstat(outside + "/x"); err == nil {
			t.Errorf("HOLE: a symlink planted by an earlier run made %s writable through allowWrite \"./build\" (%q)", outside, r.stderr)
		}
	})
	t.Run("rule path's parent renamed by the first run", func(t *testing.T) {
		s := newSandbox(t, `{"filesystem": {"allowWrite": [".", "./a/build"]}}`)
		outside := filepath.Join(filepath.Dir(s.dir), "outside")
		os.MkdirAll(outside, 0o755)
		os.MkdirAll(s.dir+"/a/build", 0o755)
		escMustRun(t, s.sh("mv a a.old && mkdir a && ln -s "+outside+" a/build"+escRan))
		r := s.sh("echo PWNED > a/build/x" + escRan)
		escMustRun(t, r)
		if _, err := os.Lstat(outside + "/x"); err == nil {
			t.Errorf("HOLE: renaming a parent and planting a symlink made %s writable through allowWrite \"./a/build\"", outside)
		}
	})
	t.Run("glob match that is a planted symlink", func(t *testing.T) {
		s := newSandbox(t, `{"filesystem": {"allowWrite": [".", "./out/*"]}}`)
		outside := filepath.Join(filepath.Dir(s.dir), "outside")
		os.MkdirAll(outside, 0o755)
		os.MkdirAll(s.dir+"/out", 0o755)
		escMustRun(t, s.sh("ln -s "+outside+" out/x"+escRan))
		escMustRun(t, s.sh("echo PWNED > out/x/f"+escRan))
		if _, err := os.Lstat(outside + "/f"); err == nil {
			t.Errorf("HOLE: a planted symlink matched by allowWrite \"./out/*\" made %s writable", outside)
		}
	})
	// The symlink is planted under a policy where its directory is
	// writable; the later run's policy writes only the rule's path, so the
	// symlink no longer lies "inside a writable root" — but a sandboxed
	// command made it all the same.
	t.Run("planted under an earlier, broader policy", func(t *testing.T) {
		s := newSandbox(t, `{"filesystem": {"allowWrite": ["."]}}`)
		root := filepath.Dir(s.dir)
		outside := filepath.Join(root, "outside")
		os.MkdirAll(outside, 0o755)
		escMustRun(t, s.sh("ln -s "+outside+" build"+escRan))
		narrow := writeFile(t, root, "narrow.json", `{"filesystem": {"allowWrite": ["`+s.dir+`/build"]}}`)
		other := filepath.Join(root, "elsewhere")
		os.MkdirAll(other, 0o755)
		r := cordon(t, other, "-s", narrow, "--", "/bin/sh", "-c", "echo PWNED > "+s.dir+"/build/f"+escRan)
		escMustRun(t, r)
		if _, err := os.Lstat(outside + "/f"); err == nil {
			t.Errorf("HOLE: a symlink planted by an earlier sandboxed run (policy allowWrite \".\") redirected a later "+
				"policy's allowWrite %s/build to %s", s.dir, outside)
		}
	})
}

// denyWrite holds for files that do not exist when the run starts, named
// by a path or a glob (docs/settings.md; the design's create-time guard).
func TestEscapeDenyWriteNewFile(t *testing.T) {
	s := newSandbox(t, `{"filesystem": {"allowWrite": ["."], "denyWrite": ["$DIR/work/.env", "$DIR/work/*.pem", "$DIR/work/conf/**"]}}`)
	os.MkdirAll(s.dir+"/conf", 0o755)
	escMustRun(t, s.sh("echo EVIL > .env; echo EVIL > new.pem; echo EVIL > conf/app.yml; mkdir -p conf/d && echo EVIL > conf/d/x"+escRan))
	// Inside an existing directory the rule names, the mount covers it.
	for _, f := range []string{"conf/app.yml", "conf/d/x"} {
		if st := escStat(filepath.Join(s.dir, f)); st.exists {
			t.Errorf("created %s inside a denyWrite directory", f)
		}
	}
	if made := escExisting(s.dir, []string{".env", "new.pem"}); len(made) > 0 {
		t.Errorf("HOLE: a denyWrite path or glob that named no file when the run started did not stop its creation: %v", made)
	}
}

// The SOCKS proxy only connects: BIND would open a listening port on the
// host, UDP ASSOCIATE would relay datagrams anywhere.
func TestEscapeSOCKSOnlyConnects(t *testing.T) {
	escNeed(t, "python3")
	s := newSandbox(t, `{"network": {"allowedDomains": ["localhost", "127.0.0.1"]}}`)
	m, r := escPy(t, s, `
import struct, urllib.parse
u = urllib.parse.urlsplit(os.environ["ALL_PROXY"])
user, pw = urllib.parse.unquote(u.username).encode(), urllib.parse.unquote(u.password).encode()
def socks(cmd, host, port):
    c = socket.create_connection((u.hostname, u.port), timeout=5)
    c.sendall(b"\x05\x01\x02")
    if c.recv(2) != b"\x05\x02": return "no-auth"
    c.sendall(b"\x01" + bytes([len(user)]) + user + bytes([len(pw)]) + pw)
    if c.recv(2)[1:] != b"\x00": return "auth-failed"
    c.sendall(b"\x05" + bytes([cmd]) + b"\x00\x01" + socket.inet_aton(host) + struct.pack(">H", port))
    rep = c.recv(10)
    return "rep%d" % rep[1] if len(rep) > 1 else "closed"
for name, cmd in (("bind", 2), ("udp", 3)):
    try: print(name + "=" + socks(cmd, "127.0.0.1", 0))
    except OSError as e: print(name + "=" + str(e))
`)
	for _, k := range []string{"bind", "udp"} {
		if m[k] == "rep0" {
			t.Errorf("SOCKS5 %s was granted: %+v", k, r)
		}
		if m[k] == "" {
			t.Errorf("probe did not run: %+v", r)
		}
	}
}

// The proxy decides on the host it then dials: request lines that parse
// differently for a permissive reader (userinfo, fragments, backslashes,
// an authority that disagrees with the Host header) cannot reach a port
// no rule allows.
func TestEscapeProxyURLConfusion(t *testing.T) {
	escNeed(t, "python3")
	allowed := escListen(t, "tcp", "127.0.0.1:0")
	other := escListen(t, "tcp", "127.0.0.1:0")
	s := newSandbox(t, fmt.Sprintf(`{"network": {"allowedDomains": ["localhost:%d"]}}`, allowed.port))
	m, r := escPy(t, s, `
import base64, urllib.parse
u = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
auth = base64.b64encode((urllib.parse.unquote(u.username) + ":" + urllib.parse.unquote(u.password)).encode()).decode()
a, o = int(sys.argv[1]), int(sys.argv[2])
lines = [
    "GET http://localhost:%d/ HTTP/1.1\r\nHost: localhost:%d" % (a, a),  # the control: allowed
    "GET http://localhost:%d@127.0.0.1:%d/ HTTP/1.1\r\nHost: 127.0.0.1:%d" % (a, o, o),
    "GET http://127.0.0.1:%d#@localhost:%d/ HTTP/1.1\r\nHost: localhost:%d" % (o, a, a),
    "GET http://127.0.0.1:%d\\@localhost:%d/ HTTP/1.1\r\nHost: localhost:%d" % (o, a, a),
    "GET http://localhost:%d:%d/ HTTP/1.1\r\nHost: localhost:%d" % (a, o, a),
    "GET /relative HTTP/1.1\r\nHost: 127.0.0.1:%d" % o,
    "GET http://localhost:%d/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nHost: localhost:%d" % (a, o, a),
    "CONNECT localhost:%d@127.0.0.1:%d HTTP/1.1\r\nHost: localhost:%d" % (a, o, a),
    "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: localhost:%d" % (o, a),
    "CONNECT [::ffff:127.0.0.1]:%d HTTP/1.1\r\nHost: [::ffff:127.0.0.1]:%d" % (o, o),
    "CONNECT localhost:%d HTTP/1.1\r\nHost: localhost:%d" % (o, o),
]
for i, line in enumerate(lines):
    try:
        c = socket.create_connection((u.hostname, u.port), timeout=5)
        c.sendall((line + "\r\nProxy-Authorization: Basic " + auth + "\r\n\r\n").encode())
        out = c.recv(200).split(b"\r\n")[0].decode(errors="replace")
        print("req%d=%s" % (i, out))
    except OSError as e:
        print("req%d=%s" % (i, e))
`, strconv.Itoa(allowed.port), strconv.Itoa(other.port))
	t.Logf("answers: %v", m)
	if !strings.Contains(m["req0"], "200") {
		t.Fatalf("the allowed control request failed, so the refusals prove nothing: %+v", r)
	}
	time.Sleep(200 * time.Millisecond)
	if n := other.conns.Load(); n != 0 {
		t.Errorf("HOLE: a port no rule allows got %d connections through a confusing request: %v", n, m)
	}
}
