// Command cordon runs a command inside an OS-level sandbox: filesystem
// rules, a network allowlist enforced by filtering proxies, and a record of
// everything refused. It reads the settings file of Anthropic's sandbox
// runtime (srt), ~/.srt-settings.json, and is a drop-in for `srt`.
//
//	cordon [-s FILE] [-d] [--] COMMAND [ARGS...]
//	cordon [-s FILE] [-d] -c 'SHELL STRING'
//	cordon explain [-s FILE] [read PATH | write PATH | connect HOST[:PORT]]
//	cordon version
//
// Exit status: the command's own, or 128+signal; 125 when cordon itself
// fails (bad settings, a rule it cannot enforce), 126 when the command is
// not executable, 127 when it is not found.
package main

import (
	"os"

	"github.com/cordon-sandbox/cordon/sandbox"
)

func main() {
	// cordon's hidden stages (the sandbox's PID 1, ssh's ProxyCommand)
	// run before anything else, as runc checks for "init".
	sandbox.Init()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
