package backend

import (
	"os"
	"path/filepath"

	"github.com/cordon-sandbox/cordon/policy"
)

// DispatchDenies are the names a dispatched agent may never create inside
// a writable bind, on top of cordon's mandatory denies: environment files
// and keys.
var DispatchDenies = []string{"**/.env", "**/*.key", "**/*.pem"}

// hiddenRoots are where a user's own files live. Only the binds (and the
// runner's state directories) are visible of them; the system (/usr, /etc,
// /bin, ...) stays readable, since the tools run from there.
func hiddenRoots(home string) []string {
	roots := []string{"/home", "/root", "/mnt", "/media", "/srv", "/opt", "/var/tmp", "/run/user"}
	if home != "" && home != "/" {
		roots = append(roots, home)
	}
	return roots
}

// Settings turns a validated Spec into cordon settings for the native
// backend:
//
//   - binds are the readable set under the places users keep files
//     (hiddenRoots); a read-only bind is readable only;
//   - mode chat makes the writable binds writable; review, plan and
//     orchestrate make every bind read-only;
//   - runnerStateDirs are writable in every mode; protectedPaths never;
//   - inside writable binds, .env, *.key and *.pem cannot be created
//     (DispatchDenies; the create-time guard), beside cordon's mandatory
//     denies (.bashrc, .git/hooks, ...);
//   - the network allowlist is Allowlist(); Denied beats it.
func (s *Spec) Settings(home string) policy.Settings {
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	st := policy.Settings{}
	fs := &st.Filesystem
	for _, r := range hiddenRoots(home) {
		fs.DenyRead = append(fs.DenyRead, literal(r))
	}
	for _, b := range s.BindMounts {
		host := filepath.Clean(b.HostPath)
		fs.AllowRead = append(fs.AllowRead, literal(host))
		if b.ReadOnly || s.Mode != Chat {
			continue
		}
		fs.AllowWrite = append(fs.AllowWrite, literal(host))
		for _, g := range DispatchDenies {
			fs.DenyWrite = append(fs.DenyWrite, policy.Entry{Path: filepath.Join(host, g)})
		}
	}
	for _, d := range s.RunnerStateDirs {
		fs.AllowRead = append(fs.AllowRead, literal(d))
		fs.AllowWrite = append(fs.AllowWrite, literal(d))
	}
	for _, p := range s.ProtectedPaths {
		fs.DenyWrite = append(fs.DenyWrite, literal(p))
	}
	st.Network.AllowedDomains = s.Allowlist()
	st.Network.DeniedDomains = append([]string(nil), Denied...)
	return st
}

func literal(p string) policy.Entry { return policy.Entry{Path: p, Literal: true} }
