package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"
)

// Path is one filesystem rule, expanded. A rule is enforced on both of its
// forms: the path as written (with ~ and relative parts expanded) and the
// path with symlinks resolved, so neither spelling reaches around it.
type Path struct {
	Spec     string // as written in the settings
	Glob     bool   // Abs is a doublestar pattern (*, **, ?, [...])
	Abs      string // absolute, "~" and relative parts expanded; "//" and "/./" folded
	Resolved string // Abs with symlinks resolved as far as the path exists; == Abs when nothing changes
}

// Forms returns the distinct spellings the rule applies to.
func (p Path) Forms() []string {
	if p.Resolved != "" && p.Resolved != p.Abs {
		return []string{p.Abs, p.Resolved}
	}
	return []string{p.Abs}
}

// isGlob reports whether a spelling is a pattern. srt's rule: any of * ? [ ].
func isGlob(s string) bool { return strings.ContainsAny(s, "*?[]") }

// expand turns an entry into a Path against env.
func expand(e Entry, env Env) (Path, error) {
	p := Path{Spec: e.Path, Glob: !e.Literal && isGlob(e.Path)}
	s := e.Path
	if !p.Glob && len(s) > 1 {
		s = strings.TrimRight(s, "/")
		if s == "" {
			s = "/"
		}
	}
	switch {
	case s == "~" || strings.HasPrefix(s, "~/"):
		if env.Home == "" || !filepath.IsAbs(env.Home) {
			return p, fmt.Errorf("%q starts with ~ but the home directory is unknown (HOME is empty or not absolute); write an absolute path", e.Path)
		}
		s = env.Home + s[1:]
	case !filepath.IsAbs(s):
		// Relative spellings are resolved against the working directory and
		// folded lexically, as srt does.
		s = filepath.Join(env.Dir, s)
	}
	s = collapse(s, p.Glob)
	if p.Glob {
		if !doublestar.ValidatePattern(s) {
			return p, fmt.Errorf("%q is not a valid glob (an unclosed [ or a bad escape); mark it {\"path\": %q, \"literal\": true} if it names a file with those characters", e.Path, e.Path)
		}
		p.Abs = s
		p.Resolved = resolveGlobBase(s)
		return p, nil
	}
	p.Abs = s
	p.Resolved = resolveExisting(s)
	return p, nil
}

// collapse folds "//" runs and "/./" components and, outside globs, a
// trailing "/" or "/.". It does not fold "..": through a symlink that would
// aim the rule at a different file than the kernel reaches.
func collapse(s string, glob bool) string {
	for strings.Contains(s, "//") {
		s = strings.ReplaceAll(s, "//", "/")
	}
	for strings.Contains(s, "/./") {
		s = strings.ReplaceAll(s, "/./", "/")
	}
	if !glob {
		s = strings.TrimSuffix(s, "/.")
		if len(s) > 1 {
			s = strings.TrimRight(s, "/")
		}
		if s == "" {
			s = "/"
		}
	}
	return s
}

// resolveExisting resolves symlinks in the longest prefix of p that exists
// and appends the rest unchanged, so a rule for a file that does not exist
// yet still names the directory its parent really is.
func resolveExisting(p string) string {
	rest := ""
	cur := p
	for {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			if rest == "" {
				return r
			}
			return filepath.Join(r, rest)
		} else if !errors.Is(err, os.ErrNotExist) && !isNotDir(err) {
			return p // unreadable: keep the spelling
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		base := filepath.Base(cur)
		if base == ".." {
			return p // cannot fold ".." below a missing directory safely
		}
		if rest == "" {
			rest = base
		} else {
			rest = base + "/" + rest
		}
		cur = parent
	}
}

func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

// resolveGlobBase resolves the static directory in front of a glob's first
// wildcard, keeping the pattern part as written.
func resolveGlobBase(pattern string) string {
	i := strings.IndexAny(pattern, "*?[")
	base := pattern[:i]
	dir := base
	if !strings.HasSuffix(dir, "/") {
		dir = filepath.Dir(dir)
	} else {
		dir = strings.TrimSuffix(dir, "/")
	}
	if dir == "" || dir == "/" {
		return pattern
	}
	r, err := filepath.EvalSymlinks(dir)
	if err != nil || r == dir {
		return pattern
	}
	return r + pattern[len(dir):]
}

// Covers reports whether path (absolute, cleaned) is the rule's path or lies
// beneath it; for a glob, whether the pattern matches path or one of its
// parent directories. It returns the length of the matched prefix, the
// rule's specificity, or -1.
func (p Path) Covers(path string) int {
	best := -1
	for i := 0; i < 2; i++ {
		// Both forms, without Forms' allocation: this runs for every
		// file the create-time guard checks.
		form := p.Abs
		if i == 1 {
			if p.Resolved == "" || p.Resolved == p.Abs {
				break
			}
			form = p.Resolved
		}
		if p.Glob {
			for cur := path; ; cur = filepath.Dir(cur) {
				if ok, _ := doublestar.Match(form, cur); ok && len(cur) > best {
					best = len(cur)
					break
				}
				if cur == "/" {
					break
				}
			}
			continue
		}
		if atOrUnder(path, form) && len(form) > best {
			best = len(form)
		}
	}
	return best
}

// atOrUnder: p is dir or lies beneath it, by whole path components.
func atOrUnder(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
