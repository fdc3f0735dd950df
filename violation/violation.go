package violation

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Actions name what was refused.
const (
	NetworkOutbound = "network-outbound"
	FileRead        = "file-read"
	FileWrite       = "file-write"
	FileCreate      = "file-create"
	UnixSocket      = "unix-socket"
	Syscall         = "syscall"
)

// Violation is one refusal.
type Violation struct {
	Time      time.Time `json:"time"`
	Action    string    `json:"action"`           // one of the constants above
	Target    string    `json:"target"`           // host:port, a path, a syscall name
	Reason    string    `json:"reason,omitempty"` // the rule and why, for a person
	Command   string    `json:"command,omitempty"`
	CommandID string    `json:"commandId,omitempty"`
	Raw       string    `json:"raw,omitempty"` // what the source saw, verbatim until a Store sanitizes it
}

// Sink receives violations. It must not block: sources call it on their
// hot path (a proxy's accept loop, a seccomp handler thread).
type Sink func(Violation)

// Line is the one-line human form of v:
//
//	blocked network-outbound evil.test:443 (not in allowedDomains)
//	blocked file-create /home/u/.bashrc (mandatory deny .bashrc)
//
// Empty parts are left out. Line sanitizes what it prints (see the package
// comment), so the result never holds a line break or an angle bracket.
func Line(v Violation) string {
	var b strings.Builder
	b.WriteString("blocked")
	for _, part := range []string{sanitize(v.Action, maxAction), sanitize(v.Target, maxTarget)} {
		if part != "" {
			b.WriteByte(' ')
			b.WriteString(part)
		}
	}
	if r := sanitize(v.Reason, maxReason); r != "" {
		b.WriteString(" (")
		b.WriteString(r)
		b.WriteByte(')')
	}
	return b.String()
}

// WriteJSONLines writes vs to w as JSON Lines: one object a line, with the
// keys time, action, target, reason, command, commandId and raw. It writes
// the values as given; violations from a Store are already sanitized, and
// JSON escaping keeps any others from breaking a line.
func WriteJSONLines(w io.Writer, vs []Violation) error {
	enc := json.NewEncoder(w)
	// '&' stays readable; '<' and '>' are gone from sanitized values anyway.
	enc.SetEscapeHTML(false)
	for i := range vs {
		if err := enc.Encode(&vs[i]); err != nil {
			return fmt.Errorf("violation: writing JSON line %d: %w", i+1, err)
		}
	}
	return nil
}
