//go:build linux

package guard

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/linux/seccomp"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/violation"
	"golang.org/x/sys/unix"
)

// worker is one handler thread's state.
type worker struct {
	g       *Guard
	umask   int      // this thread's umask, as last set
	renames [2]int64 // renames started and done when the current call was read
	strBuf  [4096]byte
	linkBuf [4097]byte
	pathBuf [64]byte
}

func newWorker(g *Guard) *worker {
	w := &worker{g: g}
	w.umask = unix.Umask(0o022)
	unix.Umask(w.umask)
	return w
}

const (
	oTmpfile = 0o20000000 // __O_TMPFILE, without O_DIRECTORY
	atFDCWD  = unix.AT_FDCWD
)

func dirArg(v uint64) int32 { return int32(uint32(v)) }

// handle answers one notification.
func (w *worker) handle(n seccomp.Notif) {
	name := seccomp.SyscallName(w.g.opts, n.Nr)
	a := n.Args
	if w.g.refusing[n.Nr] {
		// A call with refusal rows (socket: AF_VSOCK always, AF_UNIX
		// unless allowed): those come here too, in Notify mode.
		if _, refused := seccomp.Match(w.g.opts, n.Nr, n.Args); refused {
			w.respond(n, w.refusal(n))
			return
		}
	}
	t := &target{tid: int(n.Pid), g: w.g}
	w.renames = w.g.renameSnapshot()
	var ans answer
	switch name {
	case "open":
		ans = w.open(n, t, name, atFDCWD, a[0], int(int32(a[1])), uint32(a[2]))
	case "openat":
		ans = w.open(n, t, name, dirArg(a[0]), a[1], int(int32(a[2])), uint32(a[3]))
	case "creat":
		ans = w.open(n, t, name, atFDCWD, a[0], unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, uint32(a[1]))
	case "mkdir":
		ans = w.mknod(n, t, name, atFDCWD, a[0], uint32(a[1])|unix.S_IFDIR, 0)
	case "mkdirat":
		ans = w.mknod(n, t, name, dirArg(a[0]), a[1], uint32(a[2])|unix.S_IFDIR, 0)
	case "mknod":
		ans = w.mknod(n, t, name, atFDCWD, a[0], uint32(a[1]), a[2])
	case "mknodat":
		ans = w.mknod(n, t, name, dirArg(a[0]), a[1], uint32(a[2]), a[3])
	case "rename":
		ans = w.rename(n, t, name, atFDCWD, a[0], atFDCWD, a[1], 0)
	case "renameat":
		ans = w.rename(n, t, name, dirArg(a[0]), a[1], dirArg(a[2]), a[3], 0)
	case "renameat2":
		ans = w.rename(n, t, name, dirArg(a[0]), a[1], dirArg(a[2]), a[3], uint(uint32(a[4])))
	case "link":
		ans = w.link(n, t, name, atFDCWD, a[0], atFDCWD, a[1], 0)
	case "linkat":
		ans = w.link(n, t, name, dirArg(a[0]), a[1], dirArg(a[2]), a[3], int(int32(a[4])))
	case "symlink":
		ans = w.symlink(n, t, name, a[0], atFDCWD, a[1])
	case "symlinkat":
		ans = w.symlink(n, t, name, a[0], dirArg(a[1]), a[2])
	case "socket":
		ans = w.socket(n)
	case "connect", "bind":
		ans = w.sockCall(n, t, name)
	case "umask":
		w.g.procs.setUmask(t.tid, int(a[0]&0o777))
		ans = answer{cont: true, fd: -1}
	default:
		ans = w.refusal(n)
	}
	w.respond(n, ans)
}

// paths reads the call's path arguments, then checks that the call is
// still pending: what was read belongs to it.
func (w *worker) paths(n seccomp.Notif, call string, addrs ...uint64) ([]string, answer, bool) {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		s, e := w.readString(int(n.Pid), a)
		if e == unix.EPERM || e == unix.ESRCH {
			if !seccomp.IDValid(w.g.listener, n.ID) {
				return nil, answer{gone: true}, false
			}
			w.g.report(violation.Violation{Action: violation.FileCreate, Target: call,
				Reason: "the guard cannot read the caller's memory (a non-dumpable process?)",
				Raw:    fmt.Sprintf("%s: process_vm_readv(%d): %v", call, n.Pid, e)})
			return nil, fail(unix.EPERM), false
		}
		if e != 0 {
			return nil, fail(e), false
		}
		out[i] = s
	}
	if !seccomp.IDValid(w.g.listener, n.ID) {
		return nil, answer{gone: true}, false
	}
	return out, done, true
}

// kind is what a call creates, for the rules' exceptions.
type kind int

const (
	kindFile kind = iota
	kindDir
	kindOther    // symlink, hard link, device, fifo, socket, rename
	kindMovedDir // a directory renamed into place, with whatever it holds
)

// judge decides whether abs may be created as k. It is the policy's
// write verdict with two exceptions that keep git working in a writable
// root (git init makes .git/hooks and copies *.sample files into it; git
// never runs a *.sample hook and renaming one to a live name is checked
// again), and one addition: a .git that is not a directory (a gitdir file,
// a symlink) points git at another directory's config and hooks.
func (g *Guard) judge(abs string, k kind) policy.Verdict {
	v := g.rules.Verdict(abs)
	if !v.Allowed && v.Field == "mandatory deny" && v.Rule == ".git/hooks" {
		dir, base := filepath.Split(abs)
		switch {
		case k == kindDir && base == "hooks" && strings.HasSuffix(dir, "/.git/"):
			return policy.Verdict{Allowed: true, Why: "an empty .git/hooks runs nothing"}
		case k == kindFile && strings.HasSuffix(base, ".sample") && strings.HasSuffix(dir, "/.git/hooks/"):
			return policy.Verdict{Allowed: true, Why: "git never runs a *.sample hook"}
		}
	}
	if v.Allowed && k != kindDir && k != kindMovedDir && filepath.Base(abs) == ".git" && strings.HasPrefix(v.Field, "filesystem.allowWrite") {
		return policy.Verdict{Field: "mandatory deny", Rule: ".git",
			Why: "a .git that is not a directory sends git to another directory's config and hooks"}
	}
	return v
}

// Every rename in the sandbox is made by the guard, so it can tell whether
// one ran while a call was being resolved and performed: only then can a
// directory have moved under it (the re-check, recheck).
func (g *Guard) renameSnapshot() [2]int64 {
	return [2]int64{g.renamesStarted.Load(), g.renamesDone.Load()}
}

// quiet: no rename was running when snap was taken, and none has started
// since.
func (g *Guard) quiet(snap [2]int64) bool {
	return snap[0] == snap[1] && g.renamesStarted.Load() == snap[0]
}

// denied: the verdict names a rule (a refusal without one, "not in
// allowWrite", is left to the sandbox's mounts).
func denied(v policy.Verdict) bool { return !v.Allowed && v.Field != "" }

// setUmask applies the caller's umask to this thread.
func (w *worker) setUmask(t *target) unix.Errno {
	info, e := w.g.procs.get(t.tid)
	if e != 0 {
		return e
	}
	t.tgid = info.tgid
	if info.umask != w.umask {
		unix.Umask(info.umask)
		w.umask = info.umask
	}
	return 0
}

// recheck looks at where a created name ended up: a rename of one of its
// parents while it was being created may have moved it under a rule.
// It undoes the creation and refuses if so.
func (w *worker) recheck(call string, l *loc, before string, k kind, undo func()) (answer, bool) {
	if w.g.quiet(w.renames) {
		// No rename ran since this call was read: nothing can have moved.
		return done, true
	}
	p, e := w.fdPath(l.dir)
	if e == 0 && p == l.dirPath {
		return done, true
	}
	l2 := *l
	l2.dirPath = p
	v := w.g.judge(l2.abs(), k)
	if e != 0 || denied(v) {
		undo()
		if e != 0 {
			v = policy.Verdict{Field: "guard", Rule: before, Why: "its directory moved while it was being created"}
		}
		return w.refuse(call, l2.abs(), v), false
	}
	return done, true
}

// open is open, openat and creat with O_CREAT or O_TMPFILE.
func (w *worker) open(n seccomp.Notif, t *target, call string, dirfd int32, addr uint64, flags int, mode uint32) answer {
	ps, ans, ok := w.paths(n, call, addr)
	if !ok {
		return ans
	}
	path := ps[0]
	tmpfile := flags&oTmpfile != 0
	from := -1
	var held []int // directories a followed symlink's text is relative to
	defer func() {
		for _, fd := range held {
			unix.Close(fd)
		}
	}()
	for hop := 0; hop <= maxLinks; hop++ {
		l, e := w.locate(t, dirfd, from, path)
		if e != 0 {
			return fail(e)
		}
		ans, next, follow := w.openAt(t, call, &l, flags, mode, tmpfile)
		if !follow {
			l.close()
			return ans
		}
		// A symlink as the last component, to be followed: its text,
		// relative to the directory that holds it.
		path = next
		if l.owned {
			held = append(held, l.dir)
			l.owned = false
		}
		from = l.dir
	}
	return fail(unix.ELOOP)
}

// openAt opens l for open(2). follow: the last component is a symlink the
// kernel would follow; next is its text.
func (w *worker) openAt(t *target, call string, l *loc, flags int, mode uint32, tmpfile bool) (answer, string, bool) {
	cloexec := flags&unix.O_CLOEXEC != 0
	nofollow := flags&unix.O_NOFOLLOW != 0
	name := l.last
	if name == "" {
		name = "."
	}
	// A magic link inside the caller's /proc entry (/proc/PID/fd/1, as
	// /dev/stdout leads to) is followed by the kernel: it names an open
	// file, never a new one.
	magic := l.proc && !l.procRoot
	of := flags | unix.O_CLOEXEC | unix.O_NOCTTY
	if !magic {
		of |= unix.O_NOFOLLOW
	}
	if tmpfile {
		// No name is created: the rules have nothing to judge until the
		// file is linked (linkat is checked).
		if e := w.setUmask(t); e != 0 {
			return fail(e), "", false
		}
		fd, err := unix.Openat(l.dir, name, of, mode)
		if (err == unix.ELOOP || err == unix.ENOTDIR) && !magic && !nofollow {
			if text, isLink, e := w.readlink(l.dir, name); e == 0 && isLink {
				return done, text, true
			}
		}
		if err != nil {
			return fail(errno(err)), "", false
		}
		return answer{fd: fd, cloex: cloexec}, "", false
	}
	if l.trailing || l.last == "" || l.last == "." || l.last == ".." {
		return fail(unix.EISDIR), "", false
	}
	abs := l.abs()
	v := w.g.judge(abs, kindFile)
	if denied(v) {
		return w.refuse(call, abs, v), "", false
	}
	if magic && !nofollow {
		// Reopened through a descriptor whose file was checked first.
		opath, e := w.followMagic(l.dir, name)
		if e != 0 {
			return fail(e), "", false
		}
		fd, err := unix.Open(w.procSelfFD(opath), of, mode)
		unix.Close(opath)
		if err != nil {
			return fail(errno(err)), "", false
		}
		if e := w.checkTTY(t, fd); e != 0 {
			unix.Close(fd)
			return fail(e), "", false
		}
		return answer{fd: fd, cloex: cloexec}, "", false
	}
	// A new file is created at the first try; an existing one (a device,
	// a log opened for appending) is opened without O_CREAT, so nothing
	// is created. Which to try first is a guess: devices exist.
	existingFirst := flags&unix.O_EXCL == 0 && strings.HasPrefix(abs, "/dev/")
	for try := 0; try < 8; try++ {
		created := false
		fd, err := -1, error(unix.ENOENT)
		if existingFirst {
			fd, err = unix.Openat(l.dir, name, of&^unix.O_CREAT, 0)
		}
		if err == unix.ENOENT {
			if e := w.setUmask(t); e != 0 {
				return fail(e), "", false
			}
			fd, err = unix.Openat(l.dir, name, of|unix.O_EXCL, mode)
			created = err == nil
			if err == unix.EEXIST && flags&unix.O_EXCL == 0 {
				// It exists: open it as it is.
				fd, err = unix.Openat(l.dir, name, of&^unix.O_CREAT, 0)
				if err == unix.ENOENT {
					continue // removed meanwhile: create it after all
				}
			}
		}
		if err == unix.ELOOP && !magic && !nofollow {
			if text, isLink, e := w.readlink(l.dir, name); e == 0 && isLink {
				return done, text, true
			}
		}
		if err != nil {
			w.reportWrite(call, abs, v, err)
			return fail(errno(err)), "", false
		}
		if created {
			if a, ok := w.recheck(call, l, abs, kindFile, func() { unix.Close(fd); unix.Unlinkat(l.dir, name, 0) }); !ok {
				return a, "", false
			}
		} else if abs == "/dev/tty" {
			if e := w.checkTTY(t, fd); e != 0 {
				unix.Close(fd)
				return fail(e), "", false
			}
		}
		return answer{fd: fd, cloex: cloexec}, "", false
	}
	return fail(unix.EEXIST), "", false
}

// checkTTY: fd, opened here, may be /dev/tty, which is the opener's
// controlling terminal. The caller gets it only if that is its terminal
// too (a process that left the session with setsid has none: ENXIO, as
// the kernel would answer it).
func (w *worker) checkTTY(t *target, fd int) unix.Errno {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != unix.Mkdev(5, 0) {
		return 0
	}
	mine, err1 := ttyNr("/proc/self/stat")
	theirs, err2 := ttyNr("/proc/" + strconv.Itoa(t.tid) + "/stat")
	if err1 != nil || err2 != nil || theirs == 0 || theirs != mine {
		return unix.ENXIO
	}
	return 0
}

// ttyNr is field 7 of /proc/PID/stat: the controlling terminal.
func ttyNr(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 {
		return 0, unix.EINVAL
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 5 {
		return 0, unix.EINVAL
	}
	return strconv.ParseInt(f[4], 10, 64)
}

// reportWrite reports a creation the sandbox's mounts refused outside the
// writable roots.
func (w *worker) reportWrite(call, abs string, v policy.Verdict, err error) {
	if err == unix.EROFS && !v.Allowed {
		w.g.report(violation.Violation{Action: violation.FileWrite, Target: abs, Reason: "not in filesystem.allowWrite",
			Raw: fmt.Sprintf("%s %s: %v", call, abs, err)})
	}
}

// mknod is mkdir, mkdirat, mknod and mknodat.
func (w *worker) mknod(n seccomp.Notif, t *target, call string, dirfd int32, addr uint64, mode uint32, dev uint64) answer {
	ps, ans, ok := w.paths(n, call, addr)
	if !ok {
		return ans
	}
	l, e := w.locate(t, dirfd, -1, ps[0])
	if e != 0 {
		return fail(e)
	}
	defer l.close()
	isDir := mode&unix.S_IFMT == unix.S_IFDIR
	if l.last == "" || l.last == "." || l.last == ".." {
		return fail(unix.EEXIST)
	}
	if l.trailing && !isDir {
		return fail(unix.ENOENT)
	}
	k := kindOther
	switch {
	case isDir:
		k = kindDir
	case mode&unix.S_IFMT == 0 || mode&unix.S_IFMT == unix.S_IFREG:
		k = kindFile
	}
	abs := l.abs()
	v := w.g.judge(abs, k)
	if denied(v) {
		return w.refuse(call, abs, v)
	}
	if e := w.setUmask(t); e != 0 {
		return fail(e)
	}
	var err error
	if isDir {
		err = unix.Mkdirat(l.dir, l.last, mode&0o7777)
	} else {
		err = unix.Mknodat(l.dir, l.last, mode, int(dev))
	}
	if err != nil {
		w.reportWrite(call, abs, v, err)
		return fail(errno(err))
	}
	flag := 0
	if isDir {
		flag = unix.AT_REMOVEDIR
	}
	if a, ok := w.recheck(call, &l, abs, k, func() { unix.Unlinkat(l.dir, l.last, flag) }); !ok {
		return a
	}
	return done
}

// symlink is symlink and symlinkat. The link's text is not resolved: it
// is judged when something is created through it.
func (w *worker) symlink(n seccomp.Notif, t *target, call string, textAddr uint64, dirfd int32, addr uint64) answer {
	ps, ans, ok := w.paths(n, call, textAddr, addr)
	if !ok {
		return ans
	}
	if ps[0] == "" {
		return fail(unix.ENOENT)
	}
	l, e := w.locate(t, dirfd, -1, ps[1])
	if e != 0 {
		return fail(e)
	}
	defer l.close()
	if l.last == "" || l.last == "." || l.last == ".." {
		return fail(unix.EEXIST)
	}
	abs := l.abs()
	v := w.g.judge(abs, kindOther)
	if denied(v) {
		return w.refuse(call, abs, v)
	}
	if err := unix.Symlinkat(ps[0], l.dir, l.last); err != nil {
		w.reportWrite(call, abs, v, err)
		return fail(errno(err))
	}
	if a, ok := w.recheck(call, &l, abs, kindOther, func() { unix.Unlinkat(l.dir, l.last, 0) }); !ok {
		return a
	}
	return done
}

// link is link and linkat.
func (w *worker) link(n seccomp.Notif, t *target, call string, olddirfd int32, oldAddr uint64, newdirfd int32, newAddr uint64, flags int) answer {
	if flags&^(unix.AT_SYMLINK_FOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return fail(unix.EINVAL)
	}
	ps, ans, ok := w.paths(n, call, oldAddr, newAddr)
	if !ok {
		return ans
	}
	nl, e := w.locate(t, newdirfd, -1, ps[1])
	if e != 0 {
		return fail(e)
	}
	defer nl.close()
	if nl.last == "" || nl.last == "." || nl.last == ".." || nl.trailing {
		return fail(unix.EEXIST)
	}
	abs := nl.abs()
	v := w.g.judge(abs, kindOther)
	if denied(v) {
		return w.refuse(call, abs, v)
	}
	// The existing file, as an O_PATH descriptor: linked through
	// /proc/self/fd (this process's own) with AT_SYMLINK_FOLLOW.
	var src int
	if ps[0] == "" {
		if flags&unix.AT_EMPTY_PATH == 0 {
			return fail(unix.ENOENT)
		}
		fd, _, e := w.start(t, olddirfd, "")
		if e != 0 {
			return fail(e)
		}
		src = fd
		defer unix.Close(src)
		err := unix.Linkat(src, "", nl.dir, nl.last, unix.AT_EMPTY_PATH)
		return w.linked(call, &nl, abs, v, err)
	}
	ol, e := w.locate(t, olddirfd, -1, ps[0])
	if e != 0 {
		return fail(e)
	}
	defer ol.close()
	if ol.last == "" || ol.last == "." || ol.last == ".." {
		return fail(unix.EPERM) // a directory
	}
	if flags&unix.AT_SYMLINK_FOLLOW == 0 {
		err := unix.Linkat(ol.dir, ol.last, nl.dir, nl.last, 0)
		return w.linked(call, &nl, abs, v, err)
	}
	fd, e := w.openPath(t, &ol)
	if e != 0 {
		return fail(e)
	}
	defer unix.Close(fd)
	err := unix.Linkat(unix.AT_FDCWD, w.procSelfFD(fd), nl.dir, nl.last, unix.AT_SYMLINK_FOLLOW)
	return w.linked(call, &nl, abs, v, err)
}

func (w *worker) linked(call string, nl *loc, abs string, v policy.Verdict, err error) answer {
	if err != nil {
		w.reportWrite(call, abs, v, err)
		return fail(errno(err))
	}
	if a, ok := w.recheck(call, nl, abs, kindOther, func() { unix.Unlinkat(nl.dir, nl.last, 0) }); !ok {
		return a
	}
	return done
}

// followMagic opens name in dir, a directory inside the caller's /proc
// entry, with O_PATH, following it if it is a magic link (/proc/PID/fd/N,
// cwd, root, exe): the file the caller holds. What it leads to is checked
// before anything opens it for real in this process, where the opener's
// identity decides what an open gives: never an entry of this process's
// own /proc (a caller may hold an O_PATH descriptor of /proc/1/mem, which
// reopened here would be this process's memory), and never a symlink (an
// O_PATH descriptor of one would be followed again, by its text, in this
// process's context).
func (w *worker) followMagic(dir int, name string) (int, unix.Errno) {
	fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, errno(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, errno(err)
	}
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		unix.Close(fd)
		return -1, unix.ELOOP
	case st.Dev == w.g.procDev:
		if p, e := w.fdPath(fd); e != 0 || w.g.ownsProcPath(p) {
			unix.Close(fd)
			return -1, unix.EACCES
		}
	}
	return fd, 0
}

// openPath opens l's last component with O_PATH, following symlinks the
// way the kernel would for the caller.
func (w *worker) openPath(t *target, l *loc) (int, unix.Errno) {
	cur := *l
	cur.owned = false
	var held []int
	defer func() {
		for _, fd := range held {
			unix.Close(fd)
		}
	}()
	for hop := 0; hop <= maxLinks; hop++ {
		magic := cur.proc && !cur.procRoot
		of := unix.O_PATH | unix.O_CLOEXEC
		if !magic {
			of |= unix.O_NOFOLLOW
		}
		if magic {
			return w.followMagic(cur.dir, cur.last)
		}
		fd, err := unix.Openat(cur.dir, cur.last, of, 0)
		if err != nil {
			return -1, errno(err)
		}
		text, isLink, e := w.readlink(cur.dir, cur.last)
		if e != 0 || !isLink {
			return fd, 0
		}
		unix.Close(fd)
		next, e := w.locate(t, atFDCWD, cur.dir, text)
		if e != 0 {
			return -1, e
		}
		if next.owned {
			held = append(held, next.dir)
			next.owned = false
		}
		cur = next
	}
	return -1, unix.ELOOP
}

// rename is rename, renameat and renameat2.
func (w *worker) rename(n seccomp.Notif, t *target, call string, olddirfd int32, oldAddr uint64, newdirfd int32, newAddr uint64, flags uint) answer {
	ps, ans, ok := w.paths(n, call, oldAddr, newAddr)
	if !ok {
		return ans
	}
	ol, e := w.locate(t, olddirfd, -1, ps[0])
	if e != 0 {
		return fail(e)
	}
	defer ol.close()
	nl, e := w.locate(t, newdirfd, -1, ps[1])
	if e != 0 {
		return fail(e)
	}
	defer nl.close()
	for _, l := range []*loc{&ol, &nl} {
		if l.last == "" || l.last == "." || l.last == ".." {
			return fail(unix.EBUSY)
		}
	}
	newAbs, oldAbs := nl.abs(), ol.abs()
	// The new name is created; with RENAME_EXCHANGE the old one too. Each
	// entry is judged where it lands, from where it is now.
	type move struct {
		abs         string
		from, lands *loc
	}
	moves := []move{{newAbs, &ol, &nl}}
	if flags&unix.RENAME_EXCHANGE != 0 {
		moves = append(moves, move{oldAbs, &nl, &ol})
	}
	for _, m := range moves {
		// A directory renamed into place brings its content: never the
		// empty-directory exception (.git/hooks) that mkdir gets.
		k := w.kindOf(m.from)
		if k == kindDir {
			k = kindMovedDir
		}
		v := w.g.judge(m.abs, k)
		if denied(v) {
			return w.refuse(call, m.abs, v)
		}
		if v, bad := w.moveInto(m.from, m.abs); bad {
			return w.refuse(call, m.abs, v)
		}
	}
	w.g.renamesStarted.Add(1)
	defer w.g.renamesDone.Add(1)
	if err := unix.Renameat2(ol.dir, ol.last, nl.dir, nl.last, flags); err != nil {
		w.reportWrite(call, newAbs, w.g.rules.Verdict(newAbs), err)
		return fail(errno(err))
	}
	undo := func() {
		if flags&unix.RENAME_EXCHANGE != 0 {
			unix.Renameat2(nl.dir, nl.last, ol.dir, ol.last, unix.RENAME_EXCHANGE)
		} else {
			unix.Renameat2(nl.dir, nl.last, ol.dir, ol.last, unix.RENAME_NOREPLACE)
		}
	}
	if a, ok := w.recheck(call, &nl, newAbs, kindOther, undo); !ok {
		return a
	}
	// The directory's content again, now at its new place: something may
	// have been created in it between the check and the rename
	// (d/hooks/pre-commit, just before d became .git).
	for _, m := range moves {
		if v, bad := w.moveInto(m.lands, m.abs); bad {
			undo()
			return w.refuse(call, m.abs, v)
		}
	}
	return done
}

// kindOf: what renaming l's entry would create.
func (w *worker) kindOf(l *loc) kind {
	var st unix.Stat_t
	if unix.Fstatat(l.dir, l.last, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return kindOther
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return kindDir
	case unix.S_IFREG:
		return kindFile
	}
	return kindOther
}

// maxMoveCheck bounds how many entries of a renamed directory are judged
// one by one (only when a glob rule could match below it).
const maxMoveCheck = 10000

// moveInto checks what renaming the directory at src to dest would put
// under the rules: a protected name spanning dest's last components and
// the directory's content (a directory "hooks/" renamed to ".git"), a
// literal rule naming something inside it, and, with glob rules, every
// entry.
func (w *worker) moveInto(src *loc, dest string) (policy.Verdict, bool) {
	if w.kindOf(src) != kindDir {
		return policy.Verdict{}, false
	}
	exists := func(rel string) bool {
		var st unix.Stat_t
		return unix.Fstatat(src.dir, src.last+"/"+rel, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
	}
	r := w.g.rules
	for _, name := range r.Names {
		comps := strings.Split(name, "/")
		for k := 1; k < len(comps); k++ {
			head := "/" + strings.Join(comps[:k], "/")
			if strings.HasSuffix(dest, head) && exists(strings.Join(comps[k:], "/")) {
				v := w.g.judge(dest+"/"+strings.Join(comps[k:], "/"), kindOther)
				if denied(v) {
					return v, true
				}
			}
		}
	}
	globs := false
	var literal []string
	for _, list := range [][]policy.Path{r.DenyWrite, r.DenyRead} {
		for _, p := range list {
			if p.Glob {
				globs = true
				continue
			}
			literal = append(literal, p.Abs, p.Resolved)
		}
	}
	literal = append(literal, r.Settings...)
	for _, p := range literal {
		if rel, ok := strings.CutPrefix(p, dest+"/"); ok && exists(rel) {
			if v := w.g.judge(p, kindOther); denied(v) {
				return v, true
			}
		}
	}
	if !globs {
		return policy.Verdict{}, false
	}
	root := w.procSelfFD(src.dir) + "/" + src.last
	count := 0
	var found policy.Verdict
	bad := false
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return nil
		}
		if count++; count > maxMoveCheck {
			found, bad = policy.Verdict{Field: "guard", Rule: "directory rename",
				Why: "the directory has more than " + strconv.Itoa(maxMoveCheck) + " entries to check against the glob rules"}, true
			return fs.SkipAll
		}
		k := kindOther
		switch {
		case d.IsDir():
			k = kindDir
		case d.Type().IsRegular():
			k = kindFile
		}
		if v := w.g.judge(dest+p[len(root):], k); denied(v) {
			found, bad = v, true
			return fs.SkipAll
		}
		return nil
	})
	return found, bad
}
