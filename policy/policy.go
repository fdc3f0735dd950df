package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/cordon-sandbox/cordon/hostmatch"
)

// Settings mirrors the srt settings file (~/.srt-settings.json). Build one in
// code and pass it to New, or let Load/Parse read it from JSON. A nil list is
// an empty list: defaults for absent keys are applied by the JSON loader and
// by DefaultSettings, never by New, so code that builds Settings gets exactly
// what it wrote.
type Settings struct {
	Network                   Network
	Filesystem                Filesystem
	IgnoreViolations          map[string][]string // command pattern ("*" for all) → paths
	MandatoryDenySearchDepth  int                 // 1–10; 0 means the default, 3
	EnableWeakerNestedSandbox bool
	BwrapPath                 string   // absolute path of bwrap; "" finds it on PATH
	GitSafeDirectories        []string // git.safeDirectories
	MacOS                     MacOS    // accepted everywhere, enforced only on macOS
}

// Network is the "network" object.
type Network struct {
	AllowedDomains          []string
	DeniedDomains           []string
	DeniedDomainReasons     map[string]string // exact deniedDomains entry → reason
	DeniedResolvedAddresses []string          // IP or CIDR an allowed name must not resolve to
	AllowUnixSockets        []string
	AllowAllUnixSockets     bool
	AllowLocalBinding       bool
	StrictAllowlist         bool
	HTTPProxyPort           int // an external HTTP proxy to use instead of cordon's own
	SOCKSProxyPort          int
}

// Filesystem is the "filesystem" object.
type Filesystem struct {
	DenyRead       []Entry
	AllowRead      []Entry
	AllowWrite     []Entry
	DenyWrite      []Entry
	AllowGitConfig bool
}

// Entry is one filesystem rule as written: a path, which is a glob when it
// contains * ? [ or ] — unless Literal is set ({"path": ..., "literal": true}).
type Entry struct {
	Path    string
	Literal bool
}

// MacOS holds the keys that only the macOS backend can act on.
type MacOS struct {
	EnableWeakerNetworkIsolation bool
	AllowAppleEvents             bool
	AllowPty                     bool
	AllowMachLookup              []string
}

// Env is what relative paths and "~" are resolved against. Zero fields are
// filled from the process: os.Getwd and the home directory.
type Env struct {
	Dir  string
	Home string
}

func (e Env) fill() (Env, error) {
	if e.Dir == "" {
		// The kernel's path of the working directory, symlinks resolved
		// (os.Getwd may answer $PWD, which can go through a symlink that a
		// sandboxed command planted).
		wd, err := syscall.Getwd()
		if err != nil {
			return e, fmt.Errorf("%w: cannot read the working directory: %v", ErrPolicy, err)
		}
		e.Dir = wd
	}
	if e.Home == "" {
		e.Home, _ = os.UserHomeDir() // "" is handled where "~" is used
	}
	if !filepath.IsAbs(e.Dir) {
		return e, fmt.Errorf("%w: working directory %q is not absolute", ErrPolicy, e.Dir)
	}
	return e, nil
}

// Policy is validated, compiled Settings: paths expanded, host rules
// compiled. It is immutable once built and safe to share.
type Policy struct {
	Settings Settings
	Source   string // the settings file, or "built-in defaults"
	// SourceFile is the settings file's absolute path ("" when the policy
	// did not come from a file): never writable from inside the sandbox.
	SourceFile string
	Env        Env

	Hosts          *hostmatch.Rules
	ResolvedDenies []netip.Prefix

	DenyRead, AllowRead, AllowWrite, DenyWrite []Path
	AllowUnixSockets                           []Path

	// Warnings are accepted settings that are probably not what the user
	// meant. Notes are accepted keys that have no effect on this platform.
	Warnings []string
	Notes    []string
}

// DefaultSource names the built-in defaults in messages.
const DefaultSource = "built-in defaults"

// Default search depth for mandatory-deny names below each writable root.
const DefaultMandatoryDenySearchDepth = 3

// secretDirs are hidden by default: with no settings file the command may
// write the working directory, so anything it can read it can copy there.
var secretDirs = []string{
	"~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gh", "~/.config/gcloud", "~/.azure",
	"~/.kube", "~/.docker/config.json", "~/.netrc", "~/.git-credentials",
	"~/.npmrc", "~/.pypirc", "~/.cargo/credentials.toml", "~/.password-store",
}

// DefaultSettings are cordon's secure defaults, used when no settings file
// exists: no network, reads everywhere but the usual credential stores,
// writes only to the working directory (plus the sandbox's private /tmp,
// which every run has).
func DefaultSettings(env Env) Settings {
	var s Settings
	applyDefaults(&s, env, nil)
	return s
}

// applyDefaults fills what a settings file left out. given reports whether
// a field path was present; nil means nothing was.
func applyDefaults(s *Settings, env Env, given map[string]bool) {
	if !given["filesystem.allowWrite"] {
		s.Filesystem.AllowWrite = []Entry{{Path: env.Dir, Literal: true}}
	}
	if !given["filesystem.denyRead"] {
		for _, d := range secretDirs {
			s.Filesystem.DenyRead = append(s.Filesystem.DenyRead, Entry{Path: d})
		}
	}
	if !given["mandatoryDenySearchDepth"] {
		s.MandatoryDenySearchDepth = DefaultMandatoryDenySearchDepth
	}
}

// Default returns the compiled secure defaults.
func Default(env Env) (*Policy, error) {
	env, err := env.fill()
	if err != nil {
		return nil, err
	}
	p, err := New(DefaultSettings(env), env)
	if p != nil {
		p.Source = DefaultSource
		p.Warnings = append(p.Warnings, broadDefaultWarning(env)...)
	}
	return p, err
}

// broadDefaultWarning: the defaults make the working directory writable,
// which from / or the home directory is almost everything.
func broadDefaultWarning(env Env) []string {
	dir := filepath.Clean(env.Dir)
	if dir == "/" || env.Home != "" && dir == filepath.Clean(env.Home) {
		return []string{fmt.Sprintf("the built-in defaults make the working directory (%s) writable, and that is a broad place; run from a project directory, or write a settings file with a narrower filesystem.allowWrite", dir)}
	}
	return nil
}

// DefaultPath is srt's settings file, ~/.srt-settings.json.
func DefaultPath() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("%w: cannot find the home directory for ~/.srt-settings.json: %v; pass --settings FILE", ErrPolicy, err)
	}
	return filepath.Join(home, ".srt-settings.json"), nil
}

// Load reads and compiles a settings file. A missing file is an error: a
// caller that names a file means it.
func Load(path string) (*Policy, error) { return LoadEnv(path, Env{}) }

// LoadEnv is Load with paths resolved against env.
func LoadEnv(path string, env Env) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: readFailure(err)}
	}
	return parseFile(data, path, env)
}

// parseFile is Parse for a file read from path: it records the file so
// that the sandbox can keep it read-only.
func parseFile(data []byte, path string, env Env) (*Policy, error) {
	p, err := Parse(data, path, env)
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		p.SourceFile = abs
	}
	return p, nil
}

// LoadDefault reads ~/.srt-settings.json, or returns the built-in defaults
// when that file does not exist. Any other failure (unreadable, invalid) is
// an error, never a quiet fall-back: the defaults are a different policy,
// not a weaker reading of the file.
func LoadDefault(env Env) (*Policy, error) {
	path, err := DefaultPath()
	if err != nil {
		return nil, err
	}
	if isPlaceholder(path) {
		return Default(env)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(env)
	}
	if err != nil {
		return nil, &Error{File: path, Msg: readFailure(err)}
	}
	return parseFile(data, path, env)
}

// isPlaceholder: an empty file with no permission bits is what cordon
// before the create-time guard put over a missing settings file during a
// run (and could leave behind when killed with SIGKILL); it stands for no
// file at all.
func isPlaceholder(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode().IsRegular() && st.Size() == 0 && st.Mode().Perm() == 0
}

func readFailure(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file; check the path given to --settings"
	case errors.Is(err, fs.ErrPermission):
		return "cannot read the file (permission denied); make it readable by this user"
	}
	return "cannot read the file: " + err.Error()
}

// Parse reads settings JSON. name is used in messages (usually the file
// path). Absent keys take their defaults; unknown keys, keys cordon cannot
// enforce yet, and malformed values are refused.
func Parse(data []byte, name string, env Env) (*Policy, error) {
	env, err := env.fill()
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(string(data)) == "" {
		return nil, &Error{File: name, Msg: `the file is empty; write a JSON object such as {"network": {"allowedDomains": []}}, or delete the file to use the built-in defaults`}
	}
	root, err := parseTree(data)
	if err != nil {
		var oe *offsetError
		if errors.As(err, &oe) {
			line, col := lineCol(data, oe.off)
			return nil, &Error{File: name, Line: line, Col: col, Msg: oe.msg}
		}
		return nil, &Error{File: name, Msg: err.Error()}
	}
	d := &decoder{data: data, file: name, given: map[string]bool{}}
	var s Settings
	d.settings(root, &s)
	if len(d.errs) > 0 {
		if len(d.errs) == 1 {
			return nil, d.errs[0]
		}
		return nil, d.errs
	}
	applyDefaults(&s, env, d.given)
	p, err := New(s, env)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.File == "" {
			e.File = name
		}
		return nil, err
	}
	p.Source = name
	p.Warnings = append(d.warnings, p.Warnings...)
	p.Notes = append(d.notes, p.Notes...)
	return p, nil
}

// New validates and compiles settings built in code (Parse calls it too).
func New(s Settings, env Env) (*Policy, error) {
	env, err := env.fill()
	if err != nil {
		return nil, err
	}
	if s.MandatoryDenySearchDepth == 0 {
		s.MandatoryDenySearchDepth = DefaultMandatoryDenySearchDepth
	}
	if s.MandatoryDenySearchDepth < 1 || s.MandatoryDenySearchDepth > 10 {
		return nil, &Error{Field: "mandatoryDenySearchDepth", Msg: fmt.Sprintf("%d is out of range; use a whole number from 1 to 10 (default 3)", s.MandatoryDenySearchDepth)}
	}
	for _, port := range []struct {
		field string
		v     int
	}{{"network.httpProxyPort", s.Network.HTTPProxyPort}, {"network.socksProxyPort", s.Network.SOCKSProxyPort}} {
		if port.v < 0 || port.v > 65535 {
			return nil, &Error{Field: port.field, Msg: fmt.Sprintf("%d is not a port; use 1 to 65535, or leave it out to let cordon start its own proxy", port.v)}
		}
	}
	if s.BwrapPath != "" && !filepath.IsAbs(s.BwrapPath) {
		return nil, &Error{Field: "bwrapPath", Msg: fmt.Sprintf("%q is not absolute; give the full path (e.g. /usr/bin/bwrap) so that PATH or the working directory cannot substitute another binary", s.BwrapPath)}
	}
	p := &Policy{Settings: s, Env: env, Source: "settings built in code"}

	rules, err := hostmatch.Compile(s.Network.AllowedDomains, s.Network.DeniedDomains, s.Network.DeniedDomainReasons)
	if err != nil {
		var pe *hostmatch.PatternError
		if errors.As(err, &pe) {
			return nil, &Error{Field: fmt.Sprintf("network.%s[%d]", pe.List, pe.Index), Msg: fmt.Sprintf("%q: %s", pe.Pattern, pe.Msg)}
		}
		return nil, &Error{Field: "network", Msg: err.Error()}
	}
	p.Hosts = rules
	for i, a := range s.Network.DeniedResolvedAddresses {
		pfx, err := parseAddressRange(a)
		if err != nil {
			return nil, &Error{Field: fmt.Sprintf("network.deniedResolvedAddresses[%d]", i), Msg: err.Error()}
		}
		p.ResolvedDenies = append(p.ResolvedDenies, pfx)
	}

	lists := []struct {
		field string
		in    []Entry
		out   *[]Path
		deny  bool
	}{
		{"filesystem.denyRead", s.Filesystem.DenyRead, &p.DenyRead, true},
		{"filesystem.allowRead", s.Filesystem.AllowRead, &p.AllowRead, false},
		{"filesystem.allowWrite", s.Filesystem.AllowWrite, &p.AllowWrite, false},
		{"filesystem.denyWrite", s.Filesystem.DenyWrite, &p.DenyWrite, true},
	}
	for _, l := range lists {
		for i, e := range l.in {
			field := fmt.Sprintf("%s[%d]", l.field, i)
			if msg := checkEntry(e, l.deny); msg != "" {
				return nil, &Error{Field: field, Msg: msg}
			}
			path, err := expand(e, env)
			if err != nil {
				return nil, &Error{Field: field, Msg: err.Error()}
			}
			*l.out = append(*l.out, path)
		}
	}
	for i, sock := range s.Network.AllowUnixSockets {
		field := fmt.Sprintf("network.allowUnixSockets[%d]", i)
		if sock == "" {
			return nil, &Error{Field: field, Msg: "a socket path cannot be empty"}
		}
		path, err := expand(Entry{Path: sock, Literal: true}, env)
		if err != nil {
			return nil, &Error{Field: field, Msg: err.Error()}
		}
		p.AllowUnixSockets = append(p.AllowUnixSockets, path)
	}
	for _, w := range rules.Warnings() {
		p.Warnings = append(p.Warnings, "network."+w)
	}
	for key := range s.Network.DeniedDomainReasons {
		found := false
		for _, d := range s.Network.DeniedDomains {
			if d == key {
				found = true
				break
			}
		}
		if !found {
			p.Warnings = append(p.Warnings, fmt.Sprintf("network.deniedDomainReasons[%q]: names no deniedDomains entry, so it never applies; keys must equal an entry exactly", key))
		}
	}
	return p, nil
}

// checkEntry refuses filesystem entries that cannot mean anything useful.
func checkEntry(e Entry, deny bool) string {
	if e.Path == "" {
		return "a path cannot be empty"
	}
	if strings.ContainsRune(e.Path, 0) {
		return "a path cannot contain a NUL byte"
	}
	// A deny glob ending in "/" matches no path at all: a deny that silently
	// denies nothing is the worst kind of rule, so refuse it (as srt does).
	if deny && !e.Literal && isGlob(e.Path) && strings.HasSuffix(e.Path, "/") &&
		(strings.HasPrefix(e.Path, "/") || strings.HasPrefix(e.Path, "~")) {
		return fmt.Sprintf("deny glob %q ends in \"/\", so it can match no path; write %q, or add a \"**\" segment to match at any depth", e.Path, strings.TrimRight(e.Path, "/"))
	}
	return ""
}

func parseAddressRange(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not an IP range; write a CIDR such as \"10.0.0.0/8\" or \"fc00::/7\"", s)
		}
		return pfx.Masked(), nil
	}
	addr, err := netip.ParseAddr(s)
	if err != nil || addr.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%q is not an IP address; write an IPv4 or unbracketed IPv6 literal such as \"169.254.169.254\" or \"fd00::1\", or a CIDR", s)
	}
	addr = addr.Unmap()
	return netip.PrefixFrom(addr, addr.BitLen()), nil
}
