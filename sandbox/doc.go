// Package sandbox embeds cordon in a Go program: run commands in an
// OS-level sandbox (filesystem rules, a network allowlist enforced by
// per-command filtering proxies, seccomp on Linux) and read back what each
// was refused.
//
//	func main() {
//		sandbox.Init() // first: the sandbox re-runs this binary for its own stages
//
//		pol, err := policy.Load("settings.json") // or policy.Parse, or policy.New(policy.Settings{...}, env)
//		if err != nil { ... }
//		m, err := sandbox.New(ctx, pol)
//		if err != nil { ... } // e.g. bubblewrap missing: the error says what to install
//		defer m.Close()
//
//		cmd := m.CommandWith(ctx, sandbox.CommandOptions{ID: "job-7"}, "npm", "install")
//		cmd.Dir = "/work/project"
//		out, err := cmd.CombinedOutput()
//		fmt.Print(m.AnnotateStderr(violation.Key("job-7", ""), string(out)))
//	}
//
// Every command gets a sandbox and proxies of its own; the Manager hands it
// the policy (plus CommandOptions.AllowDomains for that command alone),
// collects its violations, attributed to CommandOptions.ID or, without one,
// to the command text (violation.Key), and pushes policy updates to the
// commands that are running (Update: network rules apply at once). Wrap
// gives argv and environment for callers that start processes themselves.
//
// Linux only for now (bubblewrap must be installed); New returns
// ErrUnsupported elsewhere. The exec.Cmd of a command exits with the
// command's status, 125 when the sandbox could not be built, 126 or 127
// when the command is not executable or not found.
package sandbox
