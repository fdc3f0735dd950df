//go:build !linux

package main

import (
	"io"
	"runtime"

	"github.com/cordon-sandbox/cordon/policy"
)

// runSandboxed runs argv under p. Until a platform backend exists it
// refuses: cordon never runs a command without its boundary.
func runSandboxed(p *policy.Policy, argv []string, g globalFlags, stderr io.Writer) (int, error) {
	return 0, failf("no sandbox backend for %s yet; refusing to run %q unsandboxed", runtime.GOOS, argv[0])
}
