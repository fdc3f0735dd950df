package backend

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/cordon-sandbox/cordon/hostmatch"
)

// Mode is what an agent session may do to its bind mounts.
type Mode string

const (
	Chat        Mode = "chat"        // the binds are writable
	Review      Mode = "review"      // read-only
	Plan        Mode = "plan"        // read-only
	Orchestrate Mode = "orchestrate" // read-only
)

// NetworkAccess is the session's rule for destinations outside its
// allowlist.
type NetworkAccess string

const (
	// AccessAllow refuses them (only the allowlist is reachable). It is
	// the default.
	AccessAllow NetworkAccess = "allow"
	// AccessAsk holds each one while the client is asked (an "ask" event;
	// Handle.Answer), and refuses it when no answer comes in time.
	AccessAsk NetworkAccess = "ask"
	// AccessDeny is NetworkEnabled=false: nothing is reachable.
	AccessDeny NetworkAccess = "deny"
)

// BindMount is a host path the session sees.
type BindMount struct {
	HostPath  string `json:"hostPath"`
	GuestPath string `json:"guestPath,omitempty"` // "" or HostPath on native: paths are not remapped
	ReadOnly  bool   `json:"readOnly,omitempty"`
}

// Spec describes a session.
type Spec struct {
	SessionID   string      `json:"sessionId"`
	WorkspaceID string      `json:"workspaceId"`
	AgentID     string      `json:"agentId,omitempty"`
	BindMounts  []BindMount `json:"bindMounts,omitempty"`
	// NetworkEnabled defaults to true; false means no destination at all
	// (the proxies still run, with an empty allowlist, and report).
	NetworkEnabled  *bool         `json:"networkEnabled,omitempty"`
	NetworkAccess   NetworkAccess `json:"networkAccess,omitempty"`
	EgressAllowlist []string      `json:"egressAllowlist,omitempty"`
	GuestWorkdir    string        `json:"guestWorkdir,omitempty"` // default: the first bind
	Mode            Mode          `json:"mode,omitempty"`         // default chat
	// ProtectedPaths are never writable, in any mode.
	ProtectedPaths []string `json:"protectedPaths,omitempty"`
	// RunnerStateDirs are writable in every mode (the agent runner's own
	// state).
	RunnerStateDirs []string `json:"runnerStateDirs,omitempty"`
	// ExecGrantRoots are where a macOS session may execute from inside its
	// writable binds; Linux does not restrict exec by place.
	ExecGrantRoots []string `json:"execGrantRoots,omitempty"`
	// AskTimeoutSeconds bounds how long an ask waits (default 60, at most
	// 3600); no answer is a refusal.
	AskTimeoutSeconds int `json:"askTimeoutSeconds,omitempty"`
}

// FieldError is a bad Spec field, named as the JSON API names it.
type FieldError struct {
	Field string `json:"field"`
	Msg   string `json:"error"`
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func bad(field, format string, a ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func (s *Spec) networkOn() bool { return s.NetworkEnabled == nil || *s.NetworkEnabled }

// Access is the session's network rule: deny when the network is off.
func (s *Spec) Access() NetworkAccess {
	if !s.networkOn() {
		return AccessDeny
	}
	if s.NetworkAccess == "" {
		return AccessAllow
	}
	return s.NetworkAccess
}

// Validate checks the spec and fills its defaults. Every error names the
// field.
func (s *Spec) Validate() error {
	if !idPattern.MatchString(s.SessionID) {
		return bad("sessionId", "%q: want 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit", s.SessionID)
	}
	if s.WorkspaceID == "" {
		return bad("workspaceId", "required")
	}
	switch s.Mode {
	case "":
		s.Mode = Chat
	case Chat, Review, Plan, Orchestrate:
	default:
		return bad("mode", "%q: want chat, review, plan or orchestrate", s.Mode)
	}
	switch s.NetworkAccess {
	case "", AccessAllow, AccessAsk:
	case AccessDeny:
		if s.networkOn() {
			return bad("networkAccess", `"deny" is networkEnabled: false; say that instead`)
		}
	default:
		return bad("networkAccess", "%q: want allow or ask", s.NetworkAccess)
	}
	if s.AskTimeoutSeconds < 0 || s.AskTimeoutSeconds > 3600 {
		return bad("askTimeoutSeconds", "%d: want 1 to 3600 (0: 60)", s.AskTimeoutSeconds)
	}
	for i, b := range s.BindMounts {
		f := fmt.Sprintf("bindMounts[%d]", i)
		if err := existingAbs(f+".hostPath", b.HostPath); err != nil {
			return err
		}
		if b.GuestPath != "" && !filepath.IsAbs(b.GuestPath) {
			return bad(f+".guestPath", "%q is not absolute", b.GuestPath)
		}
	}
	if s.GuestWorkdir == "" && len(s.BindMounts) > 0 {
		s.GuestWorkdir = s.BindMounts[0].guest()
	}
	if s.GuestWorkdir != "" && !filepath.IsAbs(s.GuestWorkdir) {
		return bad("guestWorkdir", "%q is not absolute", s.GuestWorkdir)
	}
	for _, list := range []struct {
		field string
		paths []string
		exist bool
	}{{"protectedPaths", s.ProtectedPaths, false}, {"runnerStateDirs", s.RunnerStateDirs, true}, {"execGrantRoots", s.ExecGrantRoots, false}} {
		for i, p := range list.paths {
			f := fmt.Sprintf("%s[%d]", list.field, i)
			if list.exist {
				if err := existingAbs(f, p); err != nil {
					return err
				}
			} else if !filepath.IsAbs(p) {
				return bad(f, "%q is not absolute", p)
			}
		}
	}
	for i, h := range s.EgressAllowlist {
		if _, err := hostmatch.Compile([]string{h}, nil, nil); err != nil {
			return bad(fmt.Sprintf("egressAllowlist[%d]", i), "%v", err)
		}
	}
	return nil
}

func existingAbs(field, p string) error {
	if !filepath.IsAbs(p) {
		return bad(field, "%q is not absolute", p)
	}
	st, err := os.Stat(p)
	if err != nil {
		return bad(field, "%q: %v", p, err)
	}
	if !st.IsDir() {
		return bad(field, "%q is not a directory", p)
	}
	return nil
}

func (b BindMount) guest() string {
	if b.GuestPath == "" {
		return b.HostPath
	}
	return b.GuestPath
}
