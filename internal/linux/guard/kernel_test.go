//go:build linux

package guard

// Tests against the real kernel, shaped like the sandbox: the test binary
// runs again as a "sandbox" helper that installs the guard's filter on one
// locked thread, hands the listener to a separate guard process (as PID 1
// is separate from the command) and starts an "ops" process from the
// filtered thread. The ops process makes the calls and prints one JSON line
// per result; the tests then check the directory on the host.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/cordon-sandbox/cordon/internal/linux/seccomp"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/violation"
	"golang.org/x/sys/unix"
)

const (
	helperEnv   = "CORDON_GUARD_HELPER"   // sandbox | guard | ops
	opsEnv      = "CORDON_GUARD_OPS"      // what the ops process does
	dirEnv      = "CORDON_GUARD_DIR"      // the writable directory
	rulesEnv    = "CORDON_GUARD_RULES"    // CreateRules, JSON
	offEnv      = "CORDON_GUARD_OFF"      // "1": no filter, for comparison
	killEnv     = "CORDON_GUARD_KILL"     // "1": kill the guard mid-run
	guardPidEnv = "CORDON_GUARD_GUARDPID" // the guard process, for the ops
	countEnv    = "CORDON_GUARD_COUNT"
	exeEnv      = "CORDON_GUARD_EXE"     // a copy of the test binary nobody can run
	socketsEnv  = "CORDON_GUARD_SOCKETS" // allowUnixSockets, JSON; set: Options.UnixPaths
	portEnv     = "CORDON_GUARD_PORT"    // a TCP port on 127.0.0.1 the test listens on
)

// nobody is who the helper runs as when the tests run as root: the guard
// must hold no capabilities.
const nobody = 65534

type result struct {
	Op    string `json:"op"`
	Errno string `json:"errno,omitempty"`
	Value string `json:"value,omitempty"`
}

func TestHelperProcess(t *testing.T) {
	switch os.Getenv(helperEnv) {
	case "":
		return
	case "sandbox":
		os.Exit(helperSandbox())
	case "guard":
		os.Exit(helperGuard())
	case "ops":
		os.Exit(helperOps())
	}
	os.Exit(2)
}

func emit(r result) {
	b, _ := json.Marshal(r)
	os.Stdout.Write(append(b, '\n'))
}

func errName(err error) string {
	if err == nil {
		return ""
	}
	if e, ok := err.(unix.Errno); ok {
		return unix.ErrnoName(e)
	}
	return err.Error()
}

func helperSandbox() int {
	if os.Getuid() == 0 {
		if err := syscall.Setgroups(nil); err != nil {
			emit(result{Op: "setup", Errno: err.Error()})
			return 1
		}
		if err := syscall.Setgid(nobody); err != nil {
			emit(result{Op: "setup", Errno: err.Error()})
			return 1
		}
		if err := syscall.Setuid(nobody); err != nil {
			emit(result{Op: "setup", Errno: err.Error()})
			return 1
		}
	}
	exe := os.Getenv(exeEnv)
	dir := os.Getenv(dirEnv)
	env := func(mode string, extra ...string) []string {
		// syscall.ForkExec passes duplicates on, and the first wins.
		var out []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, helperEnv+"=") {
				out = append(out, kv)
			}
		}
		return append(append(out, helperEnv+"="+mode), extra...)
	}
	if os.Getenv(offEnv) == "1" {
		cmd := exec.Command(exe, "-test.run=^TestHelperProcess$")
		cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env("ops"), dir, os.Stdout, os.Stderr
		cmd.Run()
		return 0
	}
	prog, err := seccomp.Build(seccomp.Options{Guard: true, Notify: true, UnixPaths: os.Getenv(socketsEnv) != ""})
	if err != nil {
		emit(result{Op: "setup", Errno: err.Error()})
		return 1
	}
	type started struct {
		listener int
		err      error
	}
	installed := make(chan started)
	run := make(chan func())
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is filtered
		l, err := seccomp.InstallThreadNotify(prog)
		installed <- started{l, err}
		if err != nil {
			return
		}
		(<-run)()
	}()
	in := <-installed
	if in.err != nil {
		emit(result{Op: "setup", Errno: in.err.Error()})
		return 1
	}
	// The guard process, started from an unfiltered thread.
	gcmd := exec.Command(exe, "-test.run=^TestHelperProcess$")
	gcmd.Env = env("guard")
	gcmd.Stdout, gcmd.Stderr = os.Stdout, os.Stderr
	gcmd.ExtraFiles = []*os.File{os.NewFile(uintptr(in.listener), "listener")}
	if err := gcmd.Start(); err != nil {
		emit(result{Op: "setup", Errno: err.Error()})
		return 1
	}
	unix.Close(in.listener)
	// The ops process, from the filtered thread. fd 3: it writes a line
	// when it wants the guard killed; stdin: the answer.
	syncR, syncW, _ := os.Pipe()
	contR, contW, _ := os.Pipe()
	type forked struct {
		pid int
		err error
	}
	fc := make(chan forked, 1)
	run <- func() {
		pid, err := syscall.ForkExec(exe, []string{exe, "-test.run=^TestHelperProcess$"}, &syscall.ProcAttr{
			Dir:   dir,
			Env:   env("ops", guardPidEnv+"="+strconv.Itoa(gcmd.Process.Pid)),
			Files: []uintptr{contR.Fd(), 1, 2, syncW.Fd()},
		})
		fc <- forked{pid, err}
	}
	f := <-fc
	syncW.Close()
	contR.Close()
	if f.err != nil {
		emit(result{Op: "setup", Errno: f.err.Error()})
		return 1
	}
	go func() {
		// The ops process asks for the guard to be killed.
		sc := bufio.NewScanner(syncR)
		for sc.Scan() {
			gcmd.Process.Kill()
			gcmd.Wait()
			contW.Write([]byte("go\n"))
		}
	}()
	var ws syscall.WaitStatus
	syscall.Wait4(f.pid, &ws, 0, nil)
	gcmd.Process.Kill()
	gcmd.Wait()
	if ws.Signaled() {
		emit(result{Op: "ops", Errno: "killed by " + ws.Signal().String()})
	}
	return 0
}

func helperGuard() int {
	// Like PID 1: nothing may read this process's memory or descriptors.
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	var rules policy.CreateRules
	if err := json.Unmarshal([]byte(os.Getenv(rulesEnv)), &rules); err != nil {
		emit(result{Op: "guard", Errno: err.Error()})
		return 1
	}
	var mu sync.Mutex
	var socks []policy.Path
	if v := os.Getenv(socketsEnv); v != "" {
		if err := json.Unmarshal([]byte(v), &socks); err != nil {
			emit(result{Op: "guard", Errno: err.Error()})
			return 1
		}
	}
	o := seccomp.Options{Guard: true, Notify: true, UnixPaths: socks != nil}
	g, err := New(3, Config{Rules: &rules, Seccomp: o, UnixSockets: socks}, func(v violation.Violation) {
		mu.Lock()
		defer mu.Unlock()
		emit(result{Op: "violation", Value: v.Action + " " + v.Target + " (" + v.Reason + ")"})
	})
	if err != nil {
		emit(result{Op: "guard", Errno: err.Error()})
		return 1
	}
	n, _ := strconv.Atoi(os.Getenv("CORDON_GUARD_THREADS"))
	g.Serve(n)
	return 0
}

func helperOps() int {
	switch os.Getenv(opsEnv) {
	case "table":
		opsTable()
	case "race":
		opsRace()
	case "parallel":
		opsParallel()
	case "killed":
		opsKilled()
	case "bench":
		opsBench()
	case "sockets":
		opsSockets()
	case "fifo":
		opsFIFO()
	case "renamerace":
		opsRenameRace()
	}
	return 0
}

func create(path string, flags int, mode uint32) error {
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, mode)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

const wr = unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC

// secretValue is set at run time; /proc/self/mem opened through the guard
// must show the ops process's value, not the guard's.
var secretValue uint64

func opsTable() {
	do := func(op string, err error) { emit(result{Op: op, Errno: errName(err)}) }
	setup := func(err error) {
		if err != nil {
			emit(result{Op: "ops setup", Errno: err.Error()})
		}
	}
	unix.Umask(0o022)
	do("create ok.txt", create("ok.txt", wr, 0o666))
	old := unix.Umask(0o077)
	do("create private.txt under umask 077", create("private.txt", wr, 0o666))
	unix.Umask(old)
	do("mkdir dir.d", unix.Mkdir("dir.d", 0o777))
	setup(os.MkdirAll("sub", 0o755))
	setup(os.MkdirAll("a/b/c/d/e", 0o755))
	for _, p := range []string{".bashrc", "sub/.bashrc", "a/b/c/d/e/.bashrc", "key.pem", "sub/key.pem", "a/b/c/d/e/.env", "secret.txt", "hidden", "hidden/x"} {
		do("create "+p, create(p, wr, 0o644))
	}
	do("creat .bash_profile", func() error {
		fd, err := unix.Creat(".bash_profile", 0o644)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}())
	do("mkdir .vscode", unix.Mkdir(".vscode", 0o755))
	do("mkdir sub/.vscode", unix.Mkdir("sub/.vscode", 0o755))
	do("mkdir hidden", unix.Mkdir("hidden", 0o755))
	do("rename ok.txt .zshrc", unix.Rename("ok.txt", ".zshrc"))
	do("renameat2 noreplace ok.txt sub/.zprofile", unix.Renameat2(unix.AT_FDCWD, "ok.txt", unix.AT_FDCWD, "sub/.zprofile", unix.RENAME_NOREPLACE))
	do("link ok.txt .profile", unix.Link("ok.txt", ".profile"))
	do("link ok.txt hard.txt", unix.Link("ok.txt", "hard.txt"))
	do("symlink ok.txt .gitconfig", unix.Symlink("ok.txt", ".gitconfig"))
	do("mkfifo .bash_login", unix.Mkfifo(".bash_login", 0o644))
	do("mkfifo fifo", unix.Mkfifo("fifo", 0o644))
	do("create /proc/self/cwd/.bashrc", create("/proc/self/cwd/.bashrc", wr, 0o644))
	do("create /proc/self/cwd/proc-ok", create("/proc/self/cwd/proc-ok", wr, 0o644))
	do("create /proc/thread-self/cwd/.mcp.json", create("/proc/thread-self/cwd/.mcp.json", wr, 0o644))
	subfd, err := unix.Open("sub", unix.O_PATH|unix.O_DIRECTORY, 0)
	setup(err)
	at := func(name string) error {
		fd, err := unix.Openat(subfd, name, wr|unix.O_CLOEXEC, 0o644)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	do("openat sub .bashrc", at(".bashrc"))
	do("openat sub ../.bashrc", at("../.bashrc"))
	do("openat sub rel-ok", at("rel-ok"))
	do("create via /proc/self/fd/N/.bashrc", create("/proc/self/fd/"+strconv.Itoa(subfd)+"/.bashrc", wr, 0o644))
	do("create via /dev/fd/N/fd-ok", create("/dev/fd/"+strconv.Itoa(subfd)+"/fd-ok", wr, 0o644))
	do("create sub/../sub/./../.ripgreprc", create("sub/../sub/./../.ripgreprc", wr, 0o644))
	setup(os.Symlink("sub", "lnk-sub"))
	do("create lnk-sub/.bashrc", create("lnk-sub/.bashrc", wr, 0o644))
	do("create lnk-sub/via-link", create("lnk-sub/via-link", wr, 0o644))
	setup(os.Symlink(".bashrc", "dangle"))
	do("create dangle -> .bashrc", create("dangle", wr, 0o644))
	do("create O_NOFOLLOW dangle", create("dangle", wr|unix.O_NOFOLLOW, 0o644))
	setup(os.Symlink("sub/target-ok", "dangle-ok"))
	do("create dangle-ok -> sub/target-ok", create("dangle-ok", wr, 0o644))
	// O_TMPFILE, then a name for it.
	tfd, err := unix.Open(".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	do("open O_TMPFILE", err)
	if err == nil {
		p := "/proc/self/fd/" + strconv.Itoa(tfd)
		do("linkat tmpfile .bashrc", unix.Linkat(unix.AT_FDCWD, p, unix.AT_FDCWD, ".bashrc", unix.AT_SYMLINK_FOLLOW))
		do("linkat tmpfile key2.pem", unix.Linkat(unix.AT_FDCWD, p, unix.AT_FDCWD, "key2.pem", unix.AT_SYMLINK_FOLLOW))
		do("linkat tmpfile tmp-ok", unix.Linkat(unix.AT_FDCWD, p, unix.AT_FDCWD, "tmp-ok", unix.AT_SYMLINK_FOLLOW))
		unix.Close(tfd)
	}
	do("create /dev/null", create("/dev/null", wr, 0o644))
	// stdin is a pipe the helper made (stdout is the test's, owned by
	// root when the tests run as root: not the caller's to reopen).
	do("open /dev/stdin O_CREAT", create("/dev/stdin", unix.O_RDONLY|unix.O_CREAT, 0o644))
	// /proc/self/mem through the guard is this process's memory.
	secretValue = uint64(time.Now().UnixNano()) | 1
	mfd, err := unix.Open("/proc/self/mem", unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0)
	do("open /proc/self/mem O_CREAT", err)
	if err == nil {
		var b [8]byte
		_, err := unix.Pread(mfd, b[:], int64(uintptr(unsafe.Pointer(&secretValue))))
		got := *(*uint64)(unsafe.Pointer(&b[0]))
		v := "same"
		if err != nil || got != secretValue {
			v = fmt.Sprintf("other (%v)", err)
		}
		emit(result{Op: "/proc/self/mem is the caller's", Value: v})
		unix.Close(mfd)
	}
	gpid := os.Getenv(guardPidEnv)
	do("create /proc/GUARD/environ", create("/proc/"+gpid+"/environ", unix.O_RDONLY|unix.O_CREAT, 0))
	// A descriptor of the guard's /proc directory (anyone may open the
	// directory itself): nothing inside it may be reached through the guard.
	if gfd, err := unix.Open("/proc/"+gpid, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		for _, name := range []string{"mem", "environ", "cwd/x", "root/tmp/x", "fd/3", "task/" + gpid + "/mem"} {
			fd, err := unix.Openat(gfd, name, unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
			if err == nil {
				unix.Close(fd)
			}
			do("openat GUARD-dirfd "+strings.ReplaceAll(name, gpid, "GUARD"), err)
		}
		ffd, err := unix.Open("/proc/"+gpid+"/fd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == nil {
			fd, err := unix.Openat(ffd, "3", unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
			if err == nil {
				unix.Close(fd)
			}
			do("openat GUARD-fd-dirfd 3", err)
		} else {
			do("openat GUARD-fd-dirfd 3", err)
		}
		unix.Close(gfd)
	}
	// git's own layout keeps working; hooks and config stay protected.
	setup(os.MkdirAll("repo/.git", 0o755))
	do("mkdir repo/.git/hooks", unix.Mkdir("repo/.git/hooks", 0o755))
	do("create repo/.git/hooks/pre-commit.sample", create("repo/.git/hooks/pre-commit.sample", wr, 0o755))
	do("create repo/.git/hooks/pre-commit", create("repo/.git/hooks/pre-commit", wr, 0o755))
	do("rename sample to repo/.git/hooks/pre-commit", unix.Rename("repo/.git/hooks/pre-commit.sample", "repo/.git/hooks/pre-commit"))
	do("create repo/.git/config", create("repo/.git/config", wr, 0o644))
	do("create repo/.git/HEAD", create("repo/.git/HEAD", wr, 0o644))
	// A directory renamed to .git brings its hooks along.
	setup(os.MkdirAll("d/hooks", 0o755))
	setup(os.WriteFile("d/hooks/post-checkout", []byte("#!/bin/sh\n"), 0o755))
	setup(os.MkdirAll("repo2", 0o755))
	do("rename d repo2/.git (with hooks/)", unix.Rename("d", "repo2/.git"))
	// A directory with a hook in it, renamed to where .git/hooks would be.
	setup(os.MkdirAll("repo4/.git", 0o755))
	setup(os.MkdirAll("h", 0o755))
	setup(os.WriteFile("h/pre-commit", []byte("#!/bin/sh\n"), 0o755))
	do("rename h repo4/.git/hooks (with pre-commit)", unix.Rename("h", "repo4/.git/hooks"))
	setup(os.MkdirAll("repo3", 0o755))
	do("create repo3/.git as a file", create("repo3/.git", wr, 0o644))
	do("symlink repo3/.git", unix.Symlink("/elsewhere", "repo3/.git"))
	do("mkdir repo3/.git", unix.Mkdir("repo3/.git", 0o755))
	// A socket from socketpair (allowed) bound to a protected name, and
	// to an ordinary one; a TCP bind goes through too.
	bindPair := func(name string) error {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fds[0])
		defer unix.Close(fds[1])
		return unix.Bind(fds[0], &unix.SockaddrUnix{Name: name})
	}
	do("bind socketpair .bashrc", bindPair(".bashrc"))
	do("bind socketpair sub/x.pem", bindPair("sub/x.pem"))
	do("bind socketpair pair.sock", bindPair("pair.sock"))
	// Address lengths the kernel refuses, given to the guard's bind.
	rawBind := func(addr uintptr, size uintptr) error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		var sa [16]byte
		if addr == 1 {
			addr = uintptr(unsafe.Pointer(&sa[0]))
		}
		_, _, e := unix.Syscall(unix.SYS_BIND, uintptr(fd), addr, size)
		runtime.KeepAlive(sa)
		if e != 0 {
			return e
		}
		return nil
	}
	do("bind length 0", rawBind(1, 0))
	do("bind length 1", rawBind(1, 1))
	do("bind length 4096", rawBind(1, 4096))
	do("bind NULL length 16", rawBind(0, 16))
	do("bind tcp 127.0.0.1:0", func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
	}())
	// Plain errors come back as the kernel would give them.
	do("openat2", func() error {
		_, err := unix.Openat2(unix.AT_FDCWD, "x", &unix.OpenHow{Flags: unix.O_CREAT | unix.O_WRONLY, Mode: 0o644})
		return err
	}())
	do("create /etc/cordon-guard-test", create("/etc/cordon-guard-test", wr, 0o644))
	do("create newdir/ (trailing slash)", create("newdir/", wr, 0o644))
	do("create ok.txt O_APPEND again", create("ok.txt", unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND, 0o644))
	do("create ok.txt O_EXCL", create("ok.txt", wr|unix.O_EXCL, 0o644))
	do("create long name", create(strings.Repeat("n", 300), wr, 0o644))
	do("create missing/dir/x", create("missing/dir/x", wr, 0o644))
	do("create ok.txt/x (not a dir)", create("ok.txt/x", wr, 0o644))
	do("mkdir dir.d again", unix.Mkdir("dir.d", 0o777))
	do("openat bad pointer", func() error {
		_, _, e := unix.Syscall6(unix.SYS_OPENAT, atFDCWDPtr, 1, uintptr(wr), 0o644, 0, 0)
		if e != 0 {
			return e
		}
		return nil
	}())
	do("openat bad dirfd", func() error {
		fd, err := unix.Openat(999, "x", wr, 0o644)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}())
	do("symlink loop", func() error {
		os.Symlink("loop1", "loop2")
		os.Symlink("loop2", "loop1")
		return create("loop1", wr, 0o644)
	}())
}

// opsRace: one thread loops open(O_CREAT) on a buffer that another thread
// flips between an allowed and a protected name. A protected name must
// never appear, however the flips fall.
func opsRace() {
	n, _ := strconv.Atoi(os.Getenv(countEnv))
	buf := make([]byte, 64)
	allowed := append([]byte("race-ok"), 0, 0, 0)
	denied := append([]byte(".bashrc"), 0, 0, 0)
	copy(buf, allowed)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if i%2 == 0 {
				copy(buf, denied)
			} else {
				copy(buf, allowed)
			}
		}
	}()
	ok, refused, other := 0, 0, 0
	for i := 0; i < n; i++ {
		fd, _, e := unix.Syscall6(unix.SYS_OPENAT, atFDCWDPtr, uintptr(unsafe.Pointer(&buf[0])), uintptr(wr|unix.O_CLOEXEC), 0o644, 0, 0)
		switch e {
		case 0:
			ok++
			unix.Close(int(fd))
		case unix.EPERM:
			refused++
		default:
			other++
		}
	}
	close(stop)
	wg.Wait()
	runtime.KeepAlive(buf)
	emit(result{Op: "race", Value: fmt.Sprintf("%d %d %d", ok, refused, other)})
}

// opsParallel: many creators at once, each its own files and a protected
// one.
func opsParallel() {
	n, _ := strconv.Atoi(os.Getenv(countEnv))
	var wg sync.WaitGroup
	var mu sync.Mutex
	fails := map[string]int{}
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			d := fmt.Sprintf("p%d", i%50)
			os.Mkdir(d, 0o755)
			for j := 0; j < 3; j++ {
				if err := create(fmt.Sprintf("%s/f%d-%d", d, i, j), wr, 0o644); err != nil {
					mu.Lock()
					fails[errName(err)]++
					mu.Unlock()
				}
			}
			if err := create(d+"/.bashrc", wr, 0o644); err != unix.EPERM {
				mu.Lock()
				fails["protected: "+errName(err)]++
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	emit(result{Op: "parallel", Value: fmt.Sprint(fails)})
}

// opsKilled: a creation works, the guard is killed, the next creation fails.
func opsKilled() {
	emit(result{Op: "before", Errno: errName(create("before", wr, 0o644))})
	os.NewFile(3, "sync").Write([]byte("kill\n"))
	bufio.NewReader(os.Stdin).ReadString('\n')
	emit(result{Op: "after", Errno: errName(create("after", wr, 0o644))})
	emit(result{Op: "after .bashrc", Errno: errName(create(".bashrc", wr, 0o644))})
	emit(result{Op: "mkdir after", Errno: errName(unix.Mkdir("after.d", 0o755))})
	emit(result{Op: "read still works", Errno: errName(create("/dev/null", unix.O_RDONLY, 0))})
}

// opsBench times creations of new files, and of opens without O_CREAT.
func opsBench() {
	n, _ := strconv.Atoi(os.Getenv(countEnv))
	os.Mkdir("b", 0o755)
	start := time.Now()
	for i := 0; i < n; i++ {
		create("b/f"+strconv.Itoa(i), wr, 0o644)
	}
	perCreate := time.Since(start) / time.Duration(n)
	start = time.Now()
	for i := 0; i < n; i++ {
		create("b/f"+strconv.Itoa(i), unix.O_RDONLY, 0)
	}
	perOpen := time.Since(start) / time.Duration(n)
	start = time.Now()
	for i := 0; i < n; i++ {
		create("/dev/null", wr, 0)
	}
	perNull := time.Since(start) / time.Duration(n)
	start = time.Now()
	for i := 0; i < n; i++ {
		unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	}
	perRefused := time.Since(start) / time.Duration(n)
	emit(result{Op: "bench", Value: fmt.Sprintf("%d %d %d %d", perCreate.Nanoseconds(), perOpen.Nanoseconds(), perNull.Nanoseconds(), perRefused.Nanoseconds())})
}

// sandboxRun runs ops in a fresh directory under settings; it returns the
// results, the violations reported and the directory.
func sandboxRun(t *testing.T, settings, ops string, env ...string) (map[string]result, []result, []string, string) {
	return sandboxRunB(t, settings, ops, nil, env...)
}

// sandboxRunB is sandboxRun for tests and benchmarks; setup, if set, runs
// in the directory before the helper starts and adds to its environment.
func sandboxRunB(t testing.TB, settings, ops string, setup func(dir string) []string, env ...string) (map[string]result, []result, []string, string) {
	t.Helper()
	var u unix.Utsname
	unix.Uname(&u)
	if !KernelSupported(unix.ByteSliceToString(u.Release[:])) {
		t.Skipf("the guard needs Linux %s; this is %s", MinKernel, unix.ByteSliceToString(u.Release[:]))
	}
	base := os.Getenv("CORDON_GUARD_TMP") // a tmpfs takes the disk out of the figures
	if base == "" {
		base = "/var/tmp"
	}
	dir, err := os.MkdirTemp(base, "cordon-guard-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	dir, _ = filepath.EvalSymlinks(dir)
	settings = strings.ReplaceAll(settings, "$DIR", dir)
	pol, err := policy.Parse([]byte(settings), "test.json", policy.Env{Dir: dir, Home: dir + "/home"})
	if err != nil {
		t.Fatal(err)
	}
	rules, _ := json.Marshal(pol.CreateRules())
	if len(pol.AllowUnixSockets) > 0 {
		socks, _ := json.Marshal(pol.AllowUnixSockets)
		env = append(env, socketsEnv+"="+string(socks))
	}
	if setup != nil {
		env = append(env, setup(dir)...)
	}
	exe := publicExe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^TestHelperProcess$")
	cmd.Env = append(append(os.Environ(), helperEnv+"=sandbox", opsEnv+"="+ops, dirEnv+"="+dir, rulesEnv+"="+string(rules), exeEnv+"="+exe), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, _ := cmd.Output()
	got := map[string]result{}
	var violations []result
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r result
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Op == "" {
			continue
		}
		switch r.Op {
		case "setup", "guard", "ops setup":
			t.Fatalf("helper: %s: %s\nstderr:\n%s", r.Op, r.Errno, stderr.String())
		case "violation":
			violations = append(violations, r)
		default:
			got[r.Op] = r
			order = append(order, r.Op)
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("helper timed out; stderr:\n%s", stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("helper stderr:\n%s", stderr.String())
	}
	return got, violations, order, dir
}

const tableSettings = `{"filesystem": {"allowWrite": ["."], "denyWrite": ["**/*.pem", "**/.env", "$DIR/secret.txt"], "denyRead": ["$DIR/hidden"]}}`

func TestKernelGuardTable(t *testing.T) {
	got, violations, order, dir := sandboxRun(t, tableSettings, "table")
	want := map[string]string{
		"create ok.txt":                               "",
		"create private.txt under umask 077":          "",
		"mkdir dir.d":                                 "",
		"create .bashrc":                              "EPERM",
		"create sub/.bashrc":                          "EPERM",
		"create a/b/c/d/e/.bashrc":                    "EPERM",
		"create key.pem":                              "EPERM",
		"create sub/key.pem":                          "EPERM",
		"create a/b/c/d/e/.env":                       "EPERM",
		"create secret.txt":                           "EPERM",
		"create hidden":                               "EPERM",
		"create hidden/x":                             "ENOENT",
		"creat .bash_profile":                         "EPERM",
		"mkdir .vscode":                               "EPERM",
		"mkdir sub/.vscode":                           "EPERM",
		"mkdir hidden":                                "EPERM",
		"rename ok.txt .zshrc":                        "EPERM",
		"renameat2 noreplace ok.txt sub/.zprofile":    "EPERM",
		"link ok.txt .profile":                        "EPERM",
		"link ok.txt hard.txt":                        "",
		"symlink ok.txt .gitconfig":                   "EPERM",
		"mkfifo .bash_login":                          "EPERM",
		"mkfifo fifo":                                 "",
		"create /proc/self/cwd/.bashrc":               "EPERM",
		"create /proc/self/cwd/proc-ok":               "",
		"create /proc/thread-self/cwd/.mcp.json":      "EPERM",
		"openat sub .bashrc":                          "EPERM",
		"openat sub ../.bashrc":                       "EPERM",
		"openat sub rel-ok":                           "",
		"create via /proc/self/fd/N/.bashrc":          "EPERM",
		"create via /dev/fd/N/fd-ok":                  "",
		"create sub/../sub/./../.ripgreprc":           "EPERM",
		"create lnk-sub/.bashrc":                      "EPERM",
		"create lnk-sub/via-link":                     "",
		"create dangle -> .bashrc":                    "EPERM",
		"create O_NOFOLLOW dangle":                    "ELOOP",
		"create dangle-ok -> sub/target-ok":           "",
		"open O_TMPFILE":                              "",
		"linkat tmpfile .bashrc":                      "EPERM",
		"linkat tmpfile key2.pem":                     "EPERM",
		"linkat tmpfile tmp-ok":                       "",
		"create /dev/null":                            "",
		"open /dev/stdin O_CREAT":                     "",
		"open /proc/self/mem O_CREAT":                 "",
		"openat GUARD-dirfd mem":                      "EACCES",
		"openat GUARD-dirfd environ":                  "EACCES",
		"openat GUARD-dirfd cwd/x":                    "EACCES",
		"openat GUARD-dirfd root/tmp/x":               "EACCES",
		"openat GUARD-dirfd fd/3":                     "EACCES",
		"openat GUARD-dirfd task/GUARD/mem":           "EACCES",
		"openat GUARD-fd-dirfd 3":                     "EACCES",
		"create /proc/GUARD/environ":                  "EACCES",
		"mkdir repo/.git/hooks":                       "",
		"create repo/.git/hooks/pre-commit.sample":    "",
		"create repo/.git/hooks/pre-commit":           "EPERM",
		"rename sample to repo/.git/hooks/pre-commit": "EPERM",
		"create repo/.git/config":                     "EPERM",
		"create repo/.git/HEAD":                       "",
		"rename h repo4/.git/hooks (with pre-commit)": "EPERM",
		"rename d repo2/.git (with hooks/)":           "EPERM",
		"create repo3/.git as a file":                 "EPERM",
		"symlink repo3/.git":                          "EPERM",
		"mkdir repo3/.git":                            "",
		"openat2":                                     "ENOSYS",
		"bind socketpair .bashrc":                     "EPERM",
		"bind socketpair sub/x.pem":                   "EPERM",
		"bind socketpair pair.sock":                   "",
		"bind length 0":                               "EINVAL",
		"bind length 1":                               "EINVAL",
		"bind length 4096":                            "EINVAL",
		"bind NULL length 16":                         "EFAULT",
		"bind tcp 127.0.0.1:0":                        "",
		"create /etc/cordon-guard-test":               "EACCES",
		"create newdir/ (trailing slash)":             "EISDIR",
		"create ok.txt O_APPEND again":                "",
		"create ok.txt O_EXCL":                        "EEXIST",
		"create long name":                            "ENAMETOOLONG",
		"create missing/dir/x":                        "ENOENT",
		"create ok.txt/x (not a dir)":                 "ENOTDIR",
		"mkdir dir.d again":                           "EEXIST",
		"openat bad pointer":                          "EFAULT",
		"openat bad dirfd":                            "EBADF",
		"symlink loop":                                "ELOOP",
	}
	if os.Getuid() != 0 && os.Getuid() != nobody {
		// Without root, /etc may still be unwritable, but say so only
		// when it is.
		if unix.Access("/etc", unix.W_OK) == nil {
			delete(want, "create /etc/cordon-guard-test")
		}
	}
	for op, w := range want {
		r, ok := got[op]
		if !ok {
			t.Errorf("%s: no result", op)
			continue
		}
		if r.Errno != w {
			t.Errorf("%s: errno %q, want %q", op, r.Errno, orWorks(w))
		}
	}
	for _, op := range order {
		if _, ok := want[op]; !ok && op != "/proc/self/mem is the caller's" {
			t.Errorf("unexpected result %q: %+v", op, got[op])
		}
	}
	if v := got["/proc/self/mem is the caller's"].Value; v != "same" {
		t.Errorf("HOLE: /proc/self/mem opened through the guard is not the caller's memory: %s", v)
	}
	// The host: nothing refused exists; what was allowed does, with the
	// caller's owner and umask.
	for _, p := range []string{".bashrc", "sub/.bashrc", "a/b/c/d/e/.bashrc", "key.pem", "sub/key.pem", "key2.pem",
		"a/b/c/d/e/.env", "secret.txt", "hidden", ".bash_profile", ".vscode", "sub/.vscode", ".zshrc", "sub/.zprofile",
		".profile", ".gitconfig", ".bash_login", ".mcp.json", "sub/.bashrc", ".ripgreprc", "repo/.git/hooks/pre-commit",
		"repo/.git/config", "repo2/.git", "repo4/.git/hooks", "repo3/.git/x", "newdir", "x"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			t.Errorf("HOLE: %s exists on the host", p)
		}
	}
	uid := os.Getuid()
	if uid == 0 {
		uid = nobody
	}
	for p, mode := range map[string]os.FileMode{"ok.txt": 0o644, "private.txt": 0o600, "dir.d": 0o755 | os.ModeDir,
		"fifo": 0o644 | os.ModeNamedPipe, "hard.txt": 0o644, "proc-ok": 0o644, "sub/rel-ok": 0o644, "sub/fd-ok": 0o644,
		"sub/via-link": 0o644, "sub/target-ok": 0o644, "tmp-ok": 0o600, "repo/.git/hooks/pre-commit.sample": 0o755,
		"repo/.git/HEAD": 0o644, "repo3/.git": 0o755 | os.ModeDir} {
		st, err := os.Lstat(filepath.Join(dir, p))
		if err != nil {
			t.Errorf("%s was not created: %v", p, err)
			continue
		}
		if st.Mode() != mode {
			t.Errorf("%s has mode %v, want %v", p, st.Mode(), mode)
		}
		if owner := int(st.Sys().(*syscall.Stat_t).Uid); owner != uid {
			t.Errorf("%s is owned by uid %d, want the caller's %d", p, owner, uid)
		}
	}
	// Each refusal by a rule is reported once, with its path.
	var reported []string
	for _, v := range violations {
		reported = append(reported, v.Value)
	}
	all := strings.Join(reported, "\n")
	for _, p := range []string{"/.bashrc (mandatory deny .bashrc)", "/sub/key.pem (filesystem.denyWrite[0] **/*.pem)",
		"/hidden (filesystem.denyRead[0]", "/repo2/.git (mandatory deny .git/hooks)", "/repo3/.git (mandatory deny .git)",
		"file-create " + dir + "/.zshrc"} {
		if !strings.Contains(all, p) {
			t.Errorf("no violation reported for %q; got:\n%s", p, all)
		}
	}
}

func orWorks(s string) string {
	if s == "" {
		return "works"
	}
	return s
}

// TestKernelGuardRace: a thread flipping the path between an allowed and
// a protected name while another creates it in a loop never gets the
// protected name created: the guard reads the path once and creates what
// it checked.
func TestKernelGuardRace(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 2000
	}
	got, _, _, dir := sandboxRun(t, tableSettings, "race", countEnv+"="+strconv.Itoa(n))
	r, ok := got["race"]
	if !ok {
		t.Fatal("no result")
	}
	var okN, refused, other int
	fmt.Sscan(r.Value, &okN, &refused, &other)
	t.Logf("%d creations: %d allowed, %d refused, %d other errors", n, okN, refused, other)
	if _, err := os.Lstat(filepath.Join(dir, ".bashrc")); err == nil {
		t.Errorf("HOLE: .bashrc was created by the racing thread")
	}
	if okN+refused+other != n || other > 0 {
		t.Errorf("results %s: want only allowed and refused", r.Value)
	}
	if okN == 0 {
		t.Errorf("no creation succeeded: the test did not race")
	}
}

// TestKernelGuardParallel: a thousand creators at once all get answers.
func TestKernelGuardParallel(t *testing.T) {
	got, _, _, dir := sandboxRun(t, tableSettings, "parallel", countEnv+"=1000")
	if v := got["parallel"].Value; v != "map[]" {
		t.Errorf("failures: %s", v)
	}
	n := 0
	for i := 0; i < 50; i++ {
		ents, _ := os.ReadDir(filepath.Join(dir, fmt.Sprintf("p%d", i)))
		for _, e := range ents {
			if e.Name() == ".bashrc" {
				t.Errorf("HOLE: p%d/.bashrc created", i)
			}
			n++
		}
	}
	if n != 3000 {
		t.Errorf("%d files created, want 3000", n)
	}
}

// TestKernelGuardKilled: once the guard is gone, creations fail (the
// kernel answers ENOSYS); reads go on.
func TestKernelGuardKilled(t *testing.T) {
	got, _, _, dir := sandboxRun(t, tableSettings, "killed")
	for op, w := range map[string]string{"before": "", "after": "ENOSYS", "after .bashrc": "ENOSYS", "mkdir after": "ENOSYS", "read still works": ""} {
		if r, ok := got[op]; !ok || r.Errno != w {
			t.Errorf("%s: %+v, want %s", op, r, orWorks(w))
		}
	}
	for _, p := range []string{"after", ".bashrc", "after.d"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s created with the guard dead", p)
		}
	}
}

// atFDCWDPtr is AT_FDCWD as a raw syscall argument.
var atFDCWDPtr = func() uintptr { v := unix.AT_FDCWD; return uintptr(v) }()

var (
	exeOnce sync.Once
	exeCopy string
	exeErr  error
)

// publicExe copies the test binary where the helper, once it is nobody,
// can still run it (go test builds into a private directory).
func publicExe(t testing.TB) string {
	exeOnce.Do(func() {
		self, err := os.Executable()
		if err != nil {
			exeErr = err
			return
		}
		d, err := os.MkdirTemp("/var/tmp", "cordon-guard-exe-")
		if err != nil {
			exeErr = err
			return
		}
		os.Chmod(d, 0o755)
		b, err := os.ReadFile(self)
		if err == nil {
			err = os.WriteFile(filepath.Join(d, "guard.test"), b, 0o755)
		}
		exeCopy, exeErr = filepath.Join(d, "guard.test"), err
	})
	if exeErr != nil {
		t.Fatal(exeErr)
	}
	return exeCopy
}

func TestMain(m *testing.M) {
	code := m.Run()
	if exeCopy != "" {
		os.RemoveAll(filepath.Dir(exeCopy))
	}
	os.Exit(code)
}

// BenchmarkGuard times creations through the guard against the same
// calls without a filter, in one run: ns per creation of a new file, per
// open without O_CREAT (never notified) and per open(O_CREAT) of
// /dev/null (notified, nothing created).
//
//	go test ./internal/linux/guard -run '^$' -bench Guard -benchtime 20000x
func BenchmarkGuard(b *testing.B) {
	for _, mode := range []struct{ name, off string }{{"unguarded", "1"}, {"guarded", "0"}} {
		b.Run(mode.name, func(b *testing.B) {
			got, _, _, _ := sandboxRunB(b, tableSettings, "bench", nil, countEnv+"="+strconv.Itoa(b.N), offEnv+"="+mode.off)
			var create, open, null, refused float64
			fmt.Sscan(got["bench"].Value, &create, &open, &null, &refused)
			b.ReportMetric(refused/1000, "µs/refused")
			b.ReportMetric(create/1000, "µs/create")
			b.ReportMetric(open/1000, "µs/open")
			b.ReportMetric(null/1000, "µs/devnull")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// opsSockets: unix sockets by path.
func opsSockets() {
	do := func(op string, err error) { emit(result{Op: op, Errno: errName(err)}) }
	dial := func(path string) error {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Connect(fd, &unix.SockaddrUnix{Name: path})
	}
	do("socket stream", func() error {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}())
	do("socket dgram", func() error {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}())
	do("connect allowed.sock", dial("allowed.sock"))
	do("connect abs allowed.sock", dial(os.Getenv(dirEnv)+"/allowed.sock"))
	os.Symlink("allowed.sock", "link-to-allowed")
	do("connect link-to-allowed", dial("link-to-allowed"))
	do("connect denied.sock", dial("denied.sock"))
	os.Symlink("denied.sock", "link-to-denied")
	do("connect link-to-denied", dial("link-to-denied"))
	do("connect /proc/self/cwd/denied.sock", dial("/proc/self/cwd/denied.sock"))
	do("connect abstract", dial("@abstract"))
	do("connect missing.sock", dial("missing.sock"))
	do("bind mine.sock", func() error {
		fd, _ := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		defer unix.Close(fd)
		return unix.Bind(fd, &unix.SockaddrUnix{Name: "mine.sock"})
	}())
	do("bind .bashrc", func() error {
		fd, _ := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		defer unix.Close(fd)
		return unix.Bind(fd, &unix.SockaddrUnix{Name: ".bashrc"})
	}())
	port, _ := strconv.Atoi(os.Getenv(portEnv))
	do("connect tcp 127.0.0.1", func() error {
		fd, _ := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		defer unix.Close(fd)
		return unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
	}())
	do("connect on a file, not a socket", func() error {
		f, _ := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		defer unix.Close(f)
		return unix.Connect(f, &unix.SockaddrUnix{Name: "allowed.sock"})
	}())
	// A thread flips the address between the allowed and the denied
	// socket while connect loops: the denied socket must never see a
	// connection.
	var sa [110]byte
	addr := func(name string) []byte {
		b := make([]byte, 110)
		binary.LittleEndian.PutUint16(b, unix.AF_UNIX)
		copy(b[2:], os.Getenv(dirEnv)+"/"+name)
		return b
	}
	allowedSA, deniedSA := addr("allowed.sock"), addr("denied.sock")
	copy(sa[:], allowedSA)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if i%2 == 0 {
				copy(sa[:], deniedSA)
			} else {
				copy(sa[:], allowedSA)
			}
		}
	}()
	ok, refused := 0, 0
	for i := 0; i < 2000; i++ {
		fd, _ := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(&sa[0])), 110)
		if e == 0 {
			ok++
		} else {
			refused++
		}
		unix.Close(fd)
	}
	close(stop)
	wg.Wait()
	runtime.KeepAlive(sa)
	emit(result{Op: "connect race", Value: fmt.Sprintf("%d %d", ok, refused)})
}

// TestKernelGuardUnixSockets: with allowUnixSockets, stream sockets may be
// made, connect reaches only the listed paths (through symlinks and
// /proc/self alike), abstract ones are refused, bind is judged as a
// creation, other families pass, and a racing thread cannot swap the
// address after the check.
func TestKernelGuardUnixSockets(t *testing.T) {
	var deniedAccepts, allowedAccepts atomic.Int64
	var listeners []net.Listener
	t.Cleanup(func() {
		for _, l := range listeners {
			l.Close()
		}
	})
	serve := func(l net.Listener, n *atomic.Int64) {
		listeners = append(listeners, l)
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				n.Add(1)
				c.Close()
			}
		}()
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var tcpAccepts atomic.Int64
	serve(tcp, &tcpAccepts)
	settings := `{"network": {"allowUnixSockets": ["$DIR/allowed.sock"]}, "filesystem": {"allowWrite": ["."]}}`
	got, violations, _, dir := sandboxRunB(t, settings, "sockets", func(dir string) []string {
		for name, n := range map[string]*atomic.Int64{"allowed.sock": &allowedAccepts, "denied.sock": &deniedAccepts} {
			l, err := net.Listen("unix", filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			os.Chmod(filepath.Join(dir, name), 0o777)
			serve(l, n)
		}
		return []string{portEnv + "=" + strconv.Itoa(tcp.Addr().(*net.TCPAddr).Port)}
	})
	want := map[string]string{
		"socket stream": "", "socket dgram": "EPERM",
		"connect allowed.sock": "", "connect abs allowed.sock": "", "connect link-to-allowed": "",
		"connect denied.sock": "EPERM", "connect link-to-denied": "EPERM", "connect /proc/self/cwd/denied.sock": "EPERM",
		"connect abstract": "EPERM", "connect missing.sock": "ENOENT",
		"bind mine.sock": "", "bind .bashrc": "EPERM",
		"connect tcp 127.0.0.1": "", "connect on a file, not a socket": "ENOTSOCK",
	}
	for op, w := range want {
		if r, ok := got[op]; !ok || r.Errno != w {
			t.Errorf("%s: %+v, want %s", op, r, orWorks(w))
		}
	}
	time.Sleep(100 * time.Millisecond)
	if n := deniedAccepts.Load(); n != 0 {
		t.Errorf("HOLE: the denied socket accepted %d connections", n)
	}
	var okN, refused int
	fmt.Sscan(got["connect race"].Value, &okN, &refused)
	if n := allowedAccepts.Load(); n != int64(3+okN) {
		t.Errorf("the allowed socket accepted %d connections, want %d", n, 3+okN)
	}
	if okN == 0 || okN+refused != 2000 {
		t.Errorf("connect race: %q", got["connect race"].Value)
	}
	if st, err := os.Lstat(filepath.Join(dir, "mine.sock")); err != nil || st.Mode()&os.ModeSocket == 0 {
		t.Errorf("mine.sock was not bound: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".bashrc")); err == nil {
		t.Errorf("HOLE: .bashrc bound as a socket")
	}
	all := fmt.Sprint(violations)
	for _, want := range []string{"unix-socket " + dir + "/denied.sock (not in network.allowUnixSockets)", "abstract"} {
		if !strings.Contains(all, want) {
			t.Errorf("no violation %q in %s", want, all)
		}
	}
}

// opsFIFO: writers blocked opening FIFOs (O_CREAT, as a shell's "> fifo"
// does) hold guard threads as long as no reader comes; other creations go
// on meanwhile.
func opsFIFO() {
	const n = 12
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("fifo%d", i)
		if err := unix.Mkfifo(p, 0o644); err != nil {
			emit(result{Op: "mkfifo", Errno: errName(err)})
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
			if err == nil {
				unix.Write(fd, []byte("x"))
				unix.Close(fd)
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	err := create("while-blocked", wr, 0o644)
	emit(result{Op: "create while FIFO writers wait", Errno: errName(err), Value: time.Since(start).String()})
	for i := 0; i < n; i++ {
		fd, err := unix.Open(fmt.Sprintf("fifo%d", i), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			var b [1]byte
			unix.Read(fd, b[:])
			unix.Close(fd)
		}
	}
	wg.Wait()
	emit(result{Op: "writers done"})
}

// TestKernelGuardBlockingOpens: calls that block in the guard (FIFO
// writers waiting for a reader) do not hold up other creations.
func TestKernelGuardBlockingOpens(t *testing.T) {
	done := make(chan map[string]result)
	go func() {
		got, _, _, _ := sandboxRun(t, tableSettings, "fifo")
		done <- got
	}()
	select {
	case got := <-done:
		if r := got["create while FIFO writers wait"]; r.Errno != "" || r.Op == "" {
			t.Errorf("creation while FIFO writers wait: %+v", r)
		}
		if _, ok := got["writers done"]; !ok {
			t.Errorf("the FIFO writers never finished: %v", got)
		}
	case <-time.After(time.Minute):
		t.Fatal("the guard stalled behind blocked FIFO opens")
	}
}

// opsRenameRace: one thread keeps making d/hooks/pre-commit and removing
// it, the main thread renames d to repo/.git and back. Whenever the rename
// is allowed, .git must not hold a hook right after it.
func opsRenameRace() {
	os.MkdirAll("repo", 0o755)
	os.Mkdir("d", 0o755)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			unix.Mkdir("d/hooks", 0o755)
			create("d/hooks/pre-commit", wr, 0o755)
			unix.Unlink("d/hooks/pre-commit")
			unix.Rmdir("d/hooks")
		}
	}()
	moved, refused, holes := 0, 0, 0
	for i := 0; i < 5000; i++ {
		if err := unix.Rename("d", "repo/.git"); err != nil {
			refused++
			continue
		}
		moved++
		var st unix.Stat_t
		if unix.Lstat("repo/.git/hooks/pre-commit", &st) == nil {
			holes++
		}
		unix.Rmdir("repo/.git/hooks")
		for unix.Rename("repo/.git", "d") != nil {
			unix.Unlink("repo/.git/hooks/pre-commit")
			unix.Rmdir("repo/.git/hooks")
		}
	}
	close(stop)
	wg.Wait()
	emit(result{Op: "rename race", Value: fmt.Sprintf("%d %d %d", moved, refused, holes)})
}

// TestKernelGuardRenameRace: a directory renamed to .git while a thread
// fills it with a hook never leaves the hook in .git (the content is
// checked again after the rename, and the rename undone).
func TestKernelGuardRenameRace(t *testing.T) {
	got, _, _, _ := sandboxRun(t, tableSettings, "renamerace")
	var moved, refused, holes int
	fmt.Sscan(got["rename race"].Value, &moved, &refused, &holes)
	t.Logf("renames: %d allowed, %d refused, %d left a hook in .git", moved, refused, holes)
	if holes > 0 {
		t.Errorf("HOLE: %d renames left a hook in .git", holes)
	}
	if moved+refused != 5000 || moved == 0 {
		t.Errorf("result %q", got["rename race"].Value)
	}
}
