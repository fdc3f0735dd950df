//go:build linux

package guard

import (
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// target is the thread a notification came from.
type target struct {
	tid  int
	tgid int // 0 until needed
	g    *Guard
}

func (t *target) process() (int, unix.Errno) {
	if t.tgid == 0 {
		info, err := t.g.procs.get(t.tid)
		if err != 0 {
			return 0, err
		}
		t.tgid = info.tgid
	}
	return t.tgid, 0
}

// loc is where a path leads: the directory that holds (or will hold) its
// last component, and that component.
type loc struct {
	dir      int    // O_PATH descriptor of the directory
	owned    bool   // dir is ours to close
	last     string // "" for "/", "." or ".." as written
	trailing bool   // the path ended in "/"
	dirPath  string // dir's path in the sandbox, as the kernel reports it
	proc     bool   // dir is on procfs
	procRoot bool   // dir is /proc itself
}

func (l *loc) close() {
	if l.owned {
		unix.Close(l.dir)
		l.owned = false
	}
}

// abs is the path of the last component.
func (l *loc) abs() string {
	switch {
	case l.last == "" || l.last == ".":
		return l.dirPath
	case l.dirPath == "/":
		return "/" + l.last
	}
	return l.dirPath + "/" + l.last
}

const maxLinks = 40 // the kernel's MAXSYMLINKS

// split separates path's directory part from its last component.
func split(path string) (dir, last string, trailing bool) {
	trimmed := strings.TrimRight(path, "/")
	trailing = len(trimmed) < len(path)
	if trimmed == "" { // "/" or "//..."
		return "/", "", trailing
	}
	i := strings.LastIndexByte(trimmed, '/')
	switch {
	case i < 0:
		return "", trimmed, trailing
	case i == 0:
		return "/", trimmed[1:], trailing
	}
	return trimmed[:i], trimmed[i+1:], trailing
}

// start opens the directory a path of t starts from: "/" for an absolute
// path, else t's working directory or its descriptor dirfd.
func (w *worker) start(t *target, dirfd int32, path string) (int, bool, unix.Errno) {
	if strings.HasPrefix(path, "/") {
		return w.g.root, false, 0
	}
	p := w.procPath(t.tid, "cwd", -1)
	if dirfd != unix.AT_FDCWD {
		if dirfd < 0 {
			return -1, false, unix.EBADF
		}
		p = w.procPath(t.tid, "fd/", int(dirfd))
	}
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	switch err {
	case nil:
	case unix.ENOENT:
		return -1, false, unix.EBADF
	default:
		return -1, false, errno(err)
	}
	return fd, true, 0
}

// procPath formats /proc/<tid>/<what>[<n>] without fmt.
func (w *worker) procPath(tid int, what string, n int) string {
	b := w.pathBuf[:0]
	b = append(b, "/proc/"...)
	b = strconv.AppendInt(b, int64(tid), 10)
	b = append(b, '/')
	b = append(b, what...)
	if n >= 0 {
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return string(b)
}

// locate resolves path for t the way the kernel would, up to its last
// component, which it leaves unresolved. from >= 0 starts a relative path
// at that directory instead of dirfd (a symlink's text is relative to the
// directory holding the link).
func (w *worker) locate(t *target, dirfd int32, from int, path string) (loc, unix.Errno) {
	if path == "" {
		return loc{}, unix.ENOENT
	}
	dirPart, last, trailing := split(path)
	var startFD int
	var owned bool
	if from >= 0 && !strings.HasPrefix(path, "/") {
		startFD = from
	} else {
		var e unix.Errno
		startFD, owned, e = w.start(t, dirfd, path)
		if e != 0 {
			return loc{}, e
		}
	}
	l := loc{last: last, trailing: trailing}
	if e, done := w.quickLocate(t, &l, dirfd, from, path, dirPart); done {
		if owned {
			unix.Close(startFD)
		}
		if e != 0 {
			return loc{}, e
		}
		return l, 0
	}
	// The fast way: one openat2 for the directory part. Magic links
	// (/proc/PID/cwd, /proc/PID/fd/N) are refused there, and a
	// directory on procfs is resolved again the slow way: in this
	// process, /proc/self is PID 1, not the caller.
	if dirPart == "" {
		l.dir, l.owned = startFD, owned
		owned = false
	} else {
		fd, err := unix.Openat2(startFD, dirPart, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_NO_MAGICLINKS,
		})
		if err != nil {
			// Every failure is checked the slow way: an error here may be
			// this process's view of /proc, not the caller's.
			defer func() {
				if owned {
					unix.Close(startFD)
				}
			}()
			return w.slowLocate(t, startFD, dirPart, last, trailing)
		}
		l.dir, l.owned = fd, true
	}
	if owned {
		unix.Close(startFD)
	}
	if e := w.describe(&l); e != 0 {
		l.close()
		return loc{}, e
	}
	if l.proc {
		// Again, component by component, from the start.
		l.close()
		s, owned2, e := w.restart(t, dirfd, from, path)
		if e != 0 {
			return loc{}, e
		}
		if owned2 {
			defer unix.Close(s)
		}
		return w.slowLocate(t, s, dirPart, last, trailing)
	}
	return l, 0
}

// quickLocate is the common case in two system calls: the directory the
// path starts from, by name (the kernel's name for the caller's working
// directory or descriptor), and the whole directory part opened from /
// with symlinks refused. Without symlinks the name, lexically cleaned, is
// the directory's path, so it needs no asking. done is false when the
// quick way does not apply (a symlink, /proc, a start that is not a
// directory by name): the caller goes the general way.
func (w *worker) quickLocate(t *target, l *loc, dirfd int32, from int, path, dirPart string) (unix.Errno, bool) {
	var base string
	switch {
	case strings.HasPrefix(path, "/"):
		base = dirPart
	case from >= 0:
		return 0, false
	default:
		link := w.procPath(t.tid, "cwd", -1)
		if dirfd != unix.AT_FDCWD {
			if dirfd < 0 {
				return unix.EBADF, true
			}
			link = w.procPath(t.tid, "fd/", int(dirfd))
		}
		n, err := unix.Readlink(link, w.linkBuf[:])
		if err != nil || n == 0 || n == len(w.linkBuf) || w.linkBuf[0] != '/' {
			return 0, false
		}
		start := string(w.linkBuf[:n])
		if strings.HasSuffix(start, " (deleted)") {
			return 0, false
		}
		base = start
		if dirPart != "" {
			base = start + "/" + dirPart
		}
	}
	clean := filepath.Clean(base)
	if clean == "/proc" || strings.HasPrefix(clean, "/proc/") {
		return 0, false
	}
	fd, err := unix.Openat2(w.g.root, clean, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return 0, false
	}
	l.dir, l.owned, l.dirPath = fd, true, clean
	return 0, true
}

func (w *worker) restart(t *target, dirfd int32, from int, path string) (int, bool, unix.Errno) {
	if from >= 0 && !strings.HasPrefix(path, "/") {
		return from, false, 0
	}
	return w.start(t, dirfd, path)
}

// describe fills in l's directory path and whether it is on procfs.
func (w *worker) describe(l *loc) unix.Errno {
	p, e := w.fdPath(l.dir)
	if e != 0 {
		return e
	}
	l.dirPath = p
	l.proc = p == "/proc" || strings.HasPrefix(p, "/proc/")
	l.procRoot = p == "/proc"
	if l.proc {
		// The path is only a name; the device and inode say what it is.
		var e unix.Errno
		if l.proc, l.procRoot, e = w.onProc(l.dir); e != 0 {
			return e
		}
	}
	return 0
}

// ownsProcPath: p, a path on procfs, lies in this process's own entry
// (/proc/PID/... with PID this process or one of its threads). The caller
// may hold a descriptor of such a directory (opening /proc/1 itself is
// allowed to anyone): nothing is ever resolved inside it for the caller,
// as this process's memory, descriptors and root would be what it got.
func (g *Guard) ownsProcPath(p string) bool {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rest = rest[:i]
	}
	n, err := strconv.Atoi(rest)
	return err == nil && g.isOurs(n)
}

// fdPath is the path of one of this process's descriptors, as the kernel
// has it. A directory removed since it was opened has no path: nothing can
// be created in it (ENOENT).
func (w *worker) fdPath(fd int) (string, unix.Errno) {
	n, err := unix.Readlink(w.procSelfFD(fd), w.linkBuf[:])
	if err != nil {
		return "", errno(err)
	}
	p := string(w.linkBuf[:n])
	if strings.HasSuffix(p, " (deleted)") {
		return "", unix.ENOENT
	}
	if !strings.HasPrefix(p, "/") {
		// Outside this process's root: not a path the rules can judge.
		return "", unix.EACCES
	}
	return p, 0
}

func (w *worker) procSelfFD(fd int) string {
	b := append(w.pathBuf[:0], "/proc/self/fd/"...)
	b = strconv.AppendInt(b, int64(fd), 10)
	return string(b)
}

// slowLocate resolves dirPart from startFD one component at a time, with
// /proc/self and /proc/thread-self read as the caller's, never entering
// this process's own /proc entries, and symlinks followed by their text
// (magic links on procfs by the kernel, from the caller's entries only).
func (w *worker) slowLocate(t *target, startFD int, dirPart, last string, trailing bool) (loc, unix.Errno) {
	w.g.Stats.SlowWalk.Add(1)
	cur, err := unix.Dup(startFD)
	if err != nil {
		return loc{}, errno(err)
	}
	if strings.HasPrefix(dirPart, "/") {
		unix.Close(cur)
		if cur, err = unix.Dup(w.g.root); err != nil {
			return loc{}, errno(err)
		}
	}
	fail := func(e unix.Errno) (loc, unix.Errno) {
		unix.Close(cur)
		return loc{}, e
	}
	comps := components(dirPart)
	links := 0
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		if c == "." {
			continue
		}
		proc, procRoot, e := w.onProc(cur)
		if e != 0 {
			return fail(e)
		}
		if proc && !procRoot {
			// Inside a /proc entry (a descriptor the caller passed, or a
			// step of the walk): never this process's.
			if p, e := w.fdPath(cur); e != 0 || w.g.ownsProcPath(p) {
				return fail(unix.EACCES)
			}
		}
		if procRoot {
			rewritten, e := w.procName(t, c)
			if e != 0 {
				return fail(e)
			}
			if len(rewritten) > 0 {
				comps = append(rewritten, comps...)
				continue
			}
		}
		next, err := unix.Openat(cur, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.ENOTDIR || err == unix.ELOOP {
			if proc && !procRoot {
				// A magic link inside the caller's /proc entry: the kernel
				// follows it to the file itself.
				next, err = unix.Openat(cur, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			} else {
				text, isLink, e := w.readlink(cur, c)
				if e != 0 {
					return fail(e)
				}
				if !isLink {
					return fail(unix.ENOTDIR)
				}
				if links++; links > maxLinks {
					return fail(unix.ELOOP)
				}
				if strings.HasPrefix(text, "/") {
					unix.Close(cur)
					if cur, err = unix.Dup(w.g.root); err != nil {
						return loc{}, errno(err)
					}
				}
				comps = append(components(text), comps...)
				continue
			}
		}
		if err != nil {
			return fail(errno(err))
		}
		unix.Close(cur)
		cur = next
	}
	l := loc{dir: cur, owned: true, last: last, trailing: trailing}
	if e := w.describe(&l); e != 0 {
		l.close()
		return loc{}, e
	}
	if l.proc && w.g.ownsProcPath(l.dirPath) {
		l.close()
		return loc{}, unix.EACCES
	}
	if l.procRoot && last != "" {
		// The last component is a name in /proc itself: "self" and
		// "thread-self" are the caller's, and this process's own entries
		// are never handed out.
		rewritten, e := w.procName(t, last)
		if e != 0 {
			l.close()
			return loc{}, e
		}
		if len(rewritten) > 0 {
			l.close()
			return w.slowLocate(t, w.g.root, "/proc/"+strings.Join(rewritten[:len(rewritten)-1], "/"), rewritten[len(rewritten)-1], trailing)
		}
	}
	return l, 0
}

// components splits a path into its names, dropping empty ones.
func components(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// onProc reports whether fd is a directory on procfs, and its root.
func (w *worker) onProc(fd int) (bool, bool, unix.Errno) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, false, errno(err)
	}
	proc := st.Dev == w.g.procDev
	return proc, proc && st.Ino == 1, 0
}

// procName rewrites a name looked up in /proc for the caller: "self" is
// its process, "thread-self" its thread; this process's own entries are
// refused (EACCES). nil: the name stays as it is.
func (w *worker) procName(t *target, name string) ([]string, unix.Errno) {
	switch name {
	case "self":
		tgid, e := t.process()
		if e != 0 {
			return nil, e
		}
		return []string{strconv.Itoa(tgid)}, 0
	case "thread-self":
		tgid, e := t.process()
		if e != 0 {
			return nil, e
		}
		return []string{strconv.Itoa(tgid), "task", strconv.Itoa(t.tid)}, 0
	}
	if n, err := strconv.Atoi(name); err == nil && w.g.isOurs(n) {
		return nil, unix.EACCES
	}
	return nil, 0
}

// isOurs: pid n is this process or one of its threads.
func (g *Guard) isOurs(n int) bool {
	if n == g.self {
		return true
	}
	var st unix.Stat_t
	return unix.Stat("/proc/"+strconv.Itoa(g.self)+"/task/"+strconv.Itoa(n), &st) == nil
}

// readlink reads the symlink name in dir; isLink is false for anything
// that is not a symlink.
func (w *worker) readlink(dir int, name string) (string, bool, unix.Errno) {
	n, err := unix.Readlinkat(dir, name, w.linkBuf[:])
	switch {
	case err == unix.EINVAL:
		return "", false, 0
	case err != nil:
		return "", false, errno(err)
	case n == len(w.linkBuf):
		return "", false, unix.ENAMETOOLONG
	}
	return string(w.linkBuf[:n]), true, 0
}

// readString reads a NUL-terminated path (at most PATH_MAX bytes) from
// the caller's memory.
func (w *worker) readString(tid int, addr uint64) (string, unix.Errno) {
	if addr == 0 {
		return "", unix.EFAULT
	}
	const pathMax = 4096
	buf := w.strBuf[:]
	got := 0
	for got < pathMax {
		// One page at a time: a read that crosses into an unmapped page
		// fails as a whole.
		a := addr + uint64(got)
		chunk := int(4096 - a%4096)
		if chunk > pathMax-got {
			chunk = pathMax - got
		}
		local := []unix.Iovec{{Base: &buf[got], Len: uint64(chunk)}}
		remote := []unix.RemoteIovec{{Base: uintptr(a), Len: chunk}}
		n, err := unix.ProcessVMReadv(tid, local, remote, 0)
		if err != nil || n <= 0 {
			if err == unix.EPERM || err == unix.ESRCH {
				return "", errno(err)
			}
			return "", unix.EFAULT
		}
		for i := got; i < got+n; i++ {
			if buf[i] == 0 {
				return string(buf[:i]), 0
			}
		}
		got += n
	}
	return "", unix.ENAMETOOLONG
}

// errno turns an error from x/sys into its errno (EIO for anything else).
func errno(err error) unix.Errno {
	if e, ok := err.(unix.Errno); ok {
		return e
	}
	return unix.EIO
}
