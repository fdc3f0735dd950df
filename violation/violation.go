// Package violation records what a sandbox refused: a connection, a file
// creation, a syscall. Every source (the proxies, the create-time guard,
// the seccomp notifier) produces a Violation and hands it to a Sink.
package violation

import "time"

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
	Raw       string    `json:"raw,omitempty"` // what the source saw, verbatim
}

// Sink receives violations. It must not block: sources call it on their
// hot path (a proxy's accept loop, a seccomp handler thread).
type Sink func(Violation)
