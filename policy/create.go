package policy

import (
	"fmt"
	"strings"
)

// CreateRules are the filesystem rules in the form the create-time guard
// checks them: worked out on the host (paths expanded, symlinks resolved,
// settings files listed), serializable, so the guard inside the sandbox
// never re-reads settings or resolves rules in the sandbox's view, and
// cheap to check for every file a command creates.
type CreateRules struct {
	DenyRead   []Path   `json:"denyRead,omitempty"`
	AllowRead  []Path   `json:"allowRead,omitempty"`
	DenyWrite  []Path   `json:"denyWrite,omitempty"`
	AllowWrite []Path   `json:"allowWrite,omitempty"`
	Settings   []string `json:"settings,omitempty"` // the settings files, each spelling
	Names      []string `json:"names,omitempty"`    // the protected names (MandatoryDenyNames)
}

// CreateRules returns the policy's rules for the create-time guard.
func (p *Policy) CreateRules() *CreateRules {
	r := &CreateRules{
		DenyRead: p.DenyRead, AllowRead: p.AllowRead,
		DenyWrite: p.DenyWrite, AllowWrite: p.AllowWrite,
		Names: p.MandatoryDenyNames(),
	}
	for _, f := range p.SettingsFiles() {
		r.Settings = append(r.Settings, f)
		if res := resolveExisting(f); res != f {
			r.Settings = append(r.Settings, res)
		}
	}
	return r
}

// Verdict decides whether path (absolute and clean, as the kernel would
// reach it) may be created or written: the same answer as
// Policy.CheckWrite, without resolving anything.
//
// A denial names its rule (Field is set). "not in filesystem.allowWrite"
// is the one denial without a Field: there the sandbox's mounts already
// refuse the write, and the guard leaves it to the kernel.
func (r *CreateRules) Verdict(path string) Verdict {
	if v := readVerdict(r.DenyRead, r.AllowRead, path); !v.Allowed {
		v.Why = "hidden by a read rule; writes there never reach the host"
		return v
	}
	for _, f := range r.Settings {
		if path == f {
			return Verdict{Field: "settings file", Rule: f, Why: "never writable from inside the sandbox: it chooses the policy of later runs"}
		}
	}
	for i, d := range r.DenyWrite {
		if d.Covers(path) >= 0 {
			return Verdict{Field: fmt.Sprintf("filesystem.denyWrite[%d]", i), Rule: d.Spec, Why: "read-only inside the sandbox (denyWrite beats allowWrite)"}
		}
	}
	root, idx := -1, -1
	for i, w := range r.AllowWrite {
		if n := w.Covers(path); n > root {
			root, idx = n, i
		}
	}
	if idx >= 0 {
		// Protected names count at any depth below the root: the Linux
		// backend masks the ones that exist and the create-time guard
		// refuses new ones.
		if root < len(path) {
			rel := strings.TrimPrefix(path[root:], "/")
			if name := r.Protected(rel); name != "" {
				return Verdict{Field: "mandatory deny", Rule: name,
					Why: "protected in every writable root: writing it could run code outside the sandbox later (see docs/settings.md)"}
			}
		}
		return Verdict{Allowed: true, Field: fmt.Sprintf("filesystem.allowWrite[%d]", idx), Rule: r.AllowWrite[idx].Spec, Why: "writable"}
	}
	if atOrUnder(path, PrivateTmp) {
		return Verdict{Allowed: true, Why: "the sandbox's private /tmp: writable, but not the host's /tmp, and discarded when the command ends"}
	}
	return Verdict{Why: "not in filesystem.allowWrite"}
}

// Protected reports which protected name rel (a path relative to a
// writable root, "/"-separated) is or lies beneath, or "". It does not
// allocate: it runs for every file the guard checks.
func (r *CreateRules) Protected(rel string) string {
	for _, name := range r.Names {
		if hasComponents(rel, name) {
			return name
		}
	}
	return ""
}

// hasComponents: name's "/"-separated components appear in rel in a row,
// as whole components.
func hasComponents(rel, name string) bool {
	if name == "" {
		return false
	}
	for off := 0; off <= len(rel); {
		i := strings.Index(rel[off:], name)
		if i < 0 {
			return false
		}
		i += off
		end := i + len(name)
		if (i == 0 || rel[i-1] == '/') && (end == len(rel) || rel[end] == '/') {
			return true
		}
		off = i + 1
	}
	return false
}

// readVerdict: the most specific matching denyRead or allowRead rule wins;
// a tie goes to the deny.
func readVerdict(deny, allow []Path, path string) Verdict {
	bestLen, bestDeny, bestIdx := -1, false, -1
	for i, r := range deny {
		if n := r.Covers(path); n >= 0 && n >= bestLen {
			bestLen, bestDeny, bestIdx = n, true, i
		}
	}
	for i, r := range allow {
		if n := r.Covers(path); n > bestLen {
			bestLen, bestDeny, bestIdx = n, false, i
		}
	}
	switch {
	case bestIdx < 0:
		return Verdict{Allowed: true, Why: "reads are allowed everywhere not listed in denyRead"}
	case bestDeny:
		return Verdict{Field: fmt.Sprintf("filesystem.denyRead[%d]", bestIdx), Rule: deny[bestIdx].Spec,
			Why: "hidden inside the sandbox (an empty directory or file stands in its place)"}
	default:
		return Verdict{Allowed: true, Field: fmt.Sprintf("filesystem.allowRead[%d]", bestIdx), Rule: allow[bestIdx].Spec,
			Why: "re-opened inside a denyRead area by a more specific allowRead"}
	}
}
