// Package bwrap turns a policy into bubblewrap's argument list: the mount
// layout that enforces the filesystem rules, and the namespace and process
// flags of cordon's Linux sandbox.
//
// Build is a pure function of the policy and of what exists on disk when it
// runs (it stats paths, expands globs and looks for protected names); it
// starts nothing and creates nothing, and every mount it asks of
// bubblewrap is over a path that exists. The order of the mounts is the enforcement: bubblewrap
// applies them in sequence, so every path is mounted after its parents and
// the most specific rule is mounted last.
package bwrap

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/cordon-sandbox/cordon/policy"
	"golang.org/x/sys/unix"
)

// InitPath is where the cordon binary appears inside every sandbox. /dev is
// bubblewrap's own tmpfs, so the mount point never touches the host.
const InitPath = "/dev/.cordon"

// Plan is what a sandbox needs besides the policy.
type Plan struct {
	Policy *policy.Policy
	Self   string // the cordon binary on the host, bound read-only at InitPath
	UID    int    // uid and gid inside the sandbox
	GID    int
	// NewSession detaches the sandbox from the terminal (setsid). Without a
	// terminal on stdin it should be true; with one, false keeps job control
	// working (TIOCSTI is refused by seccomp either way).
	NewSession bool
	StatusFD   int // --json-status-fd; 0 for none
	// MaxGlobMatches bounds how many paths one glob may expand to
	// (default 10,000): a broader glob is refused rather than half-applied.
	MaxGlobMatches int
	// UnixSockets: the guard connects to network.allowUnixSockets by path
	// (seccomp.Options.UnixPaths), so each listed socket that exists is
	// mounted at its path, read-only, even where the sandbox hides its
	// directory (the private /tmp, a denyRead directory).
	UnixSockets bool
}

// Result is the argument list and what could not be applied.
//
// Every mount is over a path that exists: Build creates nothing on the
// host. A protected name (or settings file) that does not exist yet gets
// no mount; the create-time guard (package guard) refuses its creation,
// at any depth, so nothing needs to stand in its place.
type Result struct {
	// Args are bubblewrap's options, without the command: bubblewrap reads
	// them from --args FD, and the command ("--", COMMAND...) must follow on
	// its real command line.
	Args []string
	// Warnings name rules that could not apply (a missing allowWrite path).
	Warnings []string
}

// mount kinds, in the words of the rule they enforce.
type mountKind int

const (
	writable mountKind = iota // --bind
	readOnly                  // --ro-bind
	hidden                    // --tmpfs (dirs) or /dev/null (files), then read-only
)

type mnt struct {
	path string
	kind mountKind
	dir  bool
	pin  bool // mounted even when it changes nothing: see pinAncestors
}

// Build returns bubblewrap's arguments for p.
func Build(p Plan) (Result, error) {
	pol := p.Policy
	if p.MaxGlobMatches == 0 {
		p.MaxGlobMatches = 10000
	}
	var res Result
	paths := map[string]bool{} // candidate mount paths (resolved, existing)
	add := func(path string) { paths[path] = true }

	roots := []string{}  // writable roots that exist
	var literal []string // and how each was reached
	for i, w := range pol.AllowWrite {
		matches, lits, err := expandRuleLiteral(w, p.MaxGlobMatches)
		if err != nil {
			return res, fmt.Errorf("filesystem.allowWrite[%d]: %w", i, err)
		}
		if len(matches) == 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("filesystem.allowWrite[%d] %q does not exist; skipped", i, w.Spec))
		}
		roots = append(roots, matches...)
		literal = append(literal, lits...)
	}
	// A writable root reached through a symlink that itself lies inside a
	// writable root could have been planted by an earlier sandboxed run
	// (ln -s /home/user/.ssh build): following it would hand the sandbox
	// whatever the symlink points at. Such roots are skipped.
	kept := roots[:0:0]
	for i, r := range roots {
		if link := plantedSymlink(literal[i], roots); link != "" {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s is reached through the symlink %s, which lies in a directory a sandboxed command could have written to (and planted it); not made writable: list the real path instead", literal[i], link))
			continue
		}
		kept = append(kept, r)
		add(r)
	}
	roots = kept
	for _, list := range []struct {
		field string
		rules []policy.Path
	}{{"denyRead", pol.DenyRead}, {"allowRead", pol.AllowRead}, {"denyWrite", pol.DenyWrite}} {
		for i, r := range list.rules {
			matches, err := expandRule(r, p.MaxGlobMatches)
			if err != nil {
				return res, fmt.Errorf("filesystem.%s[%d]: %w", list.field, i, err)
			}
			for _, m := range matches {
				add(m)
			}
		}
	}

	// Protected names: existing ones below every writable root (to the
	// search depth) are mounted read-only. Missing ones get nothing: the
	// create-time guard refuses them.
	for _, root := range roots {
		found, err := findProtected(pol, root, pol.Settings.MandatoryDenySearchDepth)
		if err != nil {
			return res, err
		}
		for _, f := range found {
			add(f)
		}
	}

	// The working directory must exist inside even when no rule names it
	// (under /tmp it would otherwise be hidden by the sandbox's own /tmp).
	visibleRoots := roots
	if cwd, err := filepath.EvalSymlinks(pol.Env.Dir); err == nil {
		add(cwd)
		visibleRoots = append(roots[:len(roots):len(roots)], cwd)
	}
	// The settings files: read-only where they exist. One that does not
	// exist (~/.srt-settings.json in a writable home) is the guard's to
	// refuse.
	for _, f := range pol.SettingsFiles() {
		forms := []string{f}
		if dir, err := filepath.EvalSymlinks(filepath.Dir(f)); err == nil {
			forms = append(forms, filepath.Join(dir, filepath.Base(f)))
		}
		for _, r := range roots {
			for _, form := range forms {
				if link := symlinkOnWay(r, form); link != "" {
					return res, symlinkRefusal(link, r)
				}
			}
		}
		if real, err := filepath.EvalSymlinks(f); err == nil {
			add(real)
		}
	}
	var mounts []mnt
	for path := range paths {
		if !visible(path, visibleRoots) {
			continue
		}
		st, err := os.Stat(path)
		if err != nil {
			continue // vanished, or unreadable: nothing to mount over
		}
		kind, err := decide(pol, path)
		if err != nil {
			return res, err
		}
		if filepath.Base(path) == ".git" && st.Mode().IsRegular() && kind == writable {
			kind = readOnly // a gitdir file: see findProtected
		}
		mounts = append(mounts, mnt{path: path, kind: kind, dir: st.IsDir()})
	}
	mounts, err := pinAncestors(pol, mounts, roots)
	if err != nil {
		return res, err
	}
	if p.UnixSockets {
		mounts = append(mounts, socketMounts(pol)...)
	}
	// Parents before children; a path's own mount before deeper ones.
	sort.Slice(mounts, func(i, j int) bool {
		di, dj := depth(mounts[i].path), depth(mounts[j].path)
		if di != dj {
			return di < dj
		}
		return mounts[i].path < mounts[j].path
	})

	a := []string{
		"--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
		"--uid", strconv.Itoa(p.UID), "--gid", strconv.Itoa(p.GID),
		"--die-with-parent", "--as-pid-1", "--cap-drop", "ALL",
		"--ro-bind", "/", "/",
		"--dev", "/dev",
	}
	if pol.Settings.EnableWeakerNestedSandbox {
		// An unprivileged container refuses a fresh proc mount; the user
		// asked for the weaker mode, in which the command sees the
		// container's /proc (as srt does).
		a = append(a, "--bind", "/proc", "/proc")
	} else {
		a = append(a, "--proc", "/proc")
	}
	a = append(a, "--tmpfs", "/tmp")
	if p.NewSession {
		a = append(a, "--new-session")
	}
	var remount []string
	// The sandbox's own /tmp, /dev and /proc already hide the host's: a
	// host path under them is never redundant.
	emitted := []mnt{{path: "/tmp", kind: hidden}, {path: "/dev", kind: hidden}, {path: "/proc", kind: hidden}}
	for _, m := range mounts {
		// A mount that changes nothing (read-only under read-only, writable
		// under the same writable bind, hidden under hidden) costs start-up
		// time and is left out.
		if m.kind == nearest(emitted, m.path) && !m.pin {
			continue
		}
		emitted = append(emitted, m)
		switch {
		case m.kind == writable:
			a = append(a, "--bind", m.path, m.path)
		case m.kind == readOnly:
			a = append(a, "--ro-bind", m.path, m.path)
		case m.dir:
			a = append(a, "--perms", "0755", "--tmpfs", m.path)
			remount = append(remount, m.path)
		default:
			a = append(a, "--ro-bind", "/dev/null", m.path)
		}
	}
	// Hidden directories become read-only only now: until here their
	// tmpfs had to take mount points for the paths re-opened inside them.
	for i := len(remount) - 1; i >= 0; i-- {
		a = append(a, "--remount-ro", remount[i])
	}
	a = append(a, "--ro-bind", p.Self, InitPath, "--chdir", pol.Env.Dir, "--clearenv")
	if p.StatusFD > 0 {
		a = append(a, "--json-status-fd", strconv.Itoa(p.StatusFD))
	}
	res.Args = a
	return res, nil
}

// plantedSymlink returns the first symlink on the way to path (a literal,
// unresolved path) that a sandboxed command could have planted, or "": one
// that lies inside a writable root of this run, or in a directory the
// caller can write (an earlier run, under a broader policy, could have
// written there too). A symlink in a directory the caller cannot write was
// put there by someone else (the system, an administrator) and is followed.
func plantedSymlink(path string, roots []string) string {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	cur := ""
	for _, part := range parts {
		cur += "/" + part
		st, err := os.Lstat(cur)
		if err != nil {
			return ""
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		parent, err := filepath.EvalSymlinks(filepath.Dir(cur))
		if err != nil {
			return ""
		}
		for _, r := range roots {
			if parent == r || strings.HasPrefix(parent, r+"/") {
				return cur
			}
		}
		if unix.Access(parent, unix.W_OK) == nil {
			return cur
		}
		real, err := filepath.EvalSymlinks(cur)
		if err != nil {
			return ""
		}
		cur = real
	}
	return ""
}

// socketMounts are read-only binds of the listed unix sockets that exist
// (a socket can be connected to through a read-only mount; it cannot be
// chmod-ed or replaced there).
func socketMounts(pol *policy.Policy) []mnt {
	var out []mnt
	seen := map[string]bool{}
	for _, sock := range pol.AllowUnixSockets {
		if sock.Glob {
			continue
		}
		real, err := filepath.EvalSymlinks(sock.Abs)
		if err != nil || seen[real] {
			continue
		}
		st, err := os.Stat(real)
		if err != nil || st.Mode()&os.ModeSocket == 0 {
			continue
		}
		seen[real] = true
		out = append(out, mnt{path: real, kind: readOnly})
	}
	return out
}

// decide says how path is mounted, from the policy's verdicts on it.
func decide(pol *policy.Policy, path string) (mountKind, error) {
	rv, err := pol.CheckRead(path)
	if err != nil {
		return 0, err
	}
	if !rv.Allowed {
		return hidden, nil
	}
	wv, err := pol.CheckWrite(path)
	if err != nil {
		return 0, err
	}
	// Field is empty for the private /tmp, which is not a host path.
	if wv.Allowed && wv.Field != "" {
		return writable, nil
	}
	return readOnly, nil
}

// pinAncestors makes every directory between a writable root and a
// protected path (read-only or hidden) a mount point of its own. A mount
// point cannot be renamed (EBUSY), so the command cannot move the
// protected path's parent aside and create a new directory with a new file
// of the same name in its place (mv .git x; mkdir -p .git/hooks; ...).
func pinAncestors(pol *policy.Policy, mounts []mnt, roots []string) ([]mnt, error) {
	have := map[string]bool{}
	for _, m := range mounts {
		have[m.path] = true
	}
	var out []mnt
	for _, m := range mounts {
		if m.kind == writable {
			continue
		}
		root := ""
		for _, r := range roots {
			if strings.HasPrefix(m.path, r+"/") && len(r) > len(root) {
				root = r
			}
		}
		if root == "" {
			continue // not inside a writable root: nothing can be renamed
		}
		for dir := filepath.Dir(m.path); dir != root && len(dir) > len(root); dir = filepath.Dir(dir) {
			if have[dir] {
				continue
			}
			have[dir] = true
			kind, err := decide(pol, dir)
			if err != nil {
				return nil, err
			}
			out = append(out, mnt{path: dir, kind: kind, dir: true, pin: true})
		}
	}
	return append(mounts, out...), nil
}

// nearest is the kind of the closest mount above path: what path is now,
// before its own mount. Everything starts read-only (--ro-bind / /).
func nearest(emitted []mnt, path string) mountKind {
	best, kind := -1, readOnly
	for _, e := range emitted {
		if (path == e.path || strings.HasPrefix(path, e.path+"/")) && len(e.path) > best {
			best, kind = len(e.path), e.kind
		}
	}
	return kind
}

// visible: the sandbox has its own /tmp, /dev and /proc; a host path under
// them is mounted only when it is inside a writable root the user named.
func visible(path string, roots []string) bool {
	for _, own := range []string{"/tmp", "/dev", "/proc"} {
		if path == own || strings.HasPrefix(path, own+"/") {
			for _, r := range roots {
				if path == r || strings.HasPrefix(path, r+"/") {
					return true
				}
			}
			return false
		}
	}
	return true
}

// expandRule returns the existing paths a rule names, symlinks resolved: the
// resolved form of a plain path, or every match of a glob on disk now.
func expandRule(r policy.Path, max int) ([]string, error) {
	real, _, err := expandRuleLiteral(r, max)
	return real, err
}

// expandRuleLiteral is expandRule that also returns, for each match, the
// path it was reached by before symlinks were resolved.
func expandRuleLiteral(r policy.Path, max int) (real, literal []string, err error) {
	if !r.Glob {
		out, err := expandPlain(r)
		for range out {
			literal = append(literal, r.Abs)
		}
		return out, literal, err
	}
	seen := map[string]bool{}
	for _, form := range r.Forms() {
		err := doublestar.GlobWalk(os.DirFS("/"), strings.TrimPrefix(form, "/"), func(p string, d fs.DirEntry) error {
			rp, err := filepath.EvalSymlinks("/" + p)
			if err != nil || seen[rp] {
				return nil
			}
			seen[rp] = true
			real = append(real, rp)
			literal = append(literal, "/"+p)
			if len(real) > max {
				return errTooMany
			}
			return nil
		}, doublestar.WithNoFollow())
		if errors.Is(err, errTooMany) {
			return nil, nil, fmt.Errorf("glob %q matches more than %d paths; narrow it", r.Spec, max)
		}
	}
	return real, literal, nil
}

func expandPlain(r policy.Path) ([]string, error) {
	if _, err := os.Lstat(r.Resolved); err != nil {
		return nil, nil
	}
	real, err := filepath.EvalSymlinks(r.Resolved)
	if err != nil {
		return nil, nil
	}
	return []string{real}, nil
}

var errTooMany = errors.New("too many matches")

// findProtected walks root to depth looking for protected names.
//
// A protected name that is a symlink (or a symlinked .git or .claude on the
// way to one) is refused: cordon can make what the link points at
// read-only, but not the link, which the command could remove and replace
// with a file of its own (rm .bashrc; echo ... > .bashrc).
func findProtected(pol *policy.Policy, root string, depthLimit int) ([]string, error) {
	names := pol.MandatoryDenyNames()
	var out []string
	var bad error
	var walk func(dir, rel string, d int)
	walk = func(dir, rel string, d int) {
		if d > depthLimit || bad != nil {
			return
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			r := e.Name()
			if rel != "" {
				r = rel + "/" + e.Name()
			}
			full := filepath.Join(dir, e.Name())
			if e.Type()&fs.ModeSymlink != 0 && (matchesTail(r, names) || leadsToProtected(e.Name(), names)) {
				bad = symlinkRefusal(full, root)
				return
			}
			// A .git file ("gitdir: ...", in a linked worktree or a
			// submodule) says where the repository, its config and hooks
			// are: rewritten, it hands the user's git a config of the
			// command's choosing.
			if matchesTail(r, names) || e.Name() == ".git" && e.Type().IsRegular() {
				out = append(out, full)
				continue
			}
			if e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
				walk(full, r, d+1)
			}
		}
	}
	walk(root, "", 1)
	return out, bad
}

// leadsToProtected: name is the first component of a protected name with
// more than one (".git" for ".git/hooks").
func leadsToProtected(name string, names []string) bool {
	for _, n := range names {
		if strings.HasPrefix(n, name+"/") {
			return true
		}
	}
	return false
}

func symlinkRefusal(link, root string) error {
	target, _ := os.Readlink(link)
	return fmt.Errorf("%s is a symlink (to %s) in the writable root %s, and its name is protected: cordon can keep what it points at read-only, but not the link itself, which the command could replace with a file of its own; replace the link with the file or directory it points to, or run where %s is not writable", link, target, root, root)
}

// symlinkOnWay returns the first symlink among the components of path
// below root (path included), or "".
func symlinkOnWay(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return ""
	}
	cur := root
	for _, part := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, part)
		if st, err := os.Lstat(cur); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return cur
		}
	}
	return ""
}

// matchesTail: rel ends with one of the protected names, by whole
// components (".git/hooks" matches "sub/.git/hooks", not "x.git/hooks").
func matchesTail(rel string, names []string) bool {
	for _, n := range names {
		if rel == n || strings.HasSuffix(rel, "/"+n) {
			return true
		}
	}
	return false
}

func depth(p string) int { return strings.Count(p, "/") }
