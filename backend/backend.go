// Package backend is the sandbox layer of an agent control server: it
// turns a session Spec (bind mounts, a mode, protected paths, an egress
// allowlist) into a running sandbox on one of three backends, and runs
// commands in it, streaming their output, exit, refusals and state as
// Events.
//
//	none     no sandbox: the command runs on the host, with an environment
//	         scrubbed of credentials, tokens and proxy overrides (for the
//	         server's own harness commands)
//	native   the OS's own sandbox: on Linux cordon's (bubblewrap,
//	         namespaces, seccomp, the create-time guard, per-session
//	         filtering proxies); on macOS Seatbelt (not in this build yet)
//	microvm  a micro virtual machine: not available yet (Probe says why)
//
// Probe says once, at start, which backends the host has. Port.Launch
// makes a Handle for a Spec; Handle.Exec runs a command in it; Destroy ends
// it and everything it started. cmd/cordon's "serve" puts an HTTP API on
// top (docs/api.md).
package backend

import (
	"runtime"
	"strings"
)

// Backend names a kind of sandbox.
type Backend string

const (
	None    Backend = "none"
	Native  Backend = "native"
	MicroVM Backend = "microvm"
)

// FromName reads a backend name as clients send it: "none", "native",
// "microvm" (any case); "docker", the name older clients use for the OS
// sandbox, is native; empty or unknown is none.
func FromName(s string) Backend {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "native", "docker":
		return Native
	case "microvm":
		return MicroVM
	}
	return None
}

// ProbeResult is what the host can do for one backend.
type ProbeResult struct {
	Available       bool   `json:"available"`
	RequiresInstall bool   `json:"requiresInstall"`
	Hint            string `json:"hint,omitempty"`
	Description     string `json:"description"`
}

// Probe reports each backend on this host. It looks once (bubblewrap on
// PATH and able to build a sandbox, the kernel's seccomp features); call it
// at start and keep the answer.
func Probe() map[Backend]ProbeResult {
	return map[Backend]ProbeResult{
		None:   {Available: true, Description: "no sandbox: commands run on the host with a scrubbed environment"},
		Native: probeNative(runtime.GOOS),
		MicroVM: {Available: false, Description: "micro virtual machine (a kernel boundary)",
			Hint: "not implemented in this build of cordon: use native, or none for the server's own commands"},
	}
}
