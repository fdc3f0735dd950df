package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/cordon-sandbox/cordon/internal/linux/runner"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/violation"
)

// runSandboxed runs argv in the Linux sandbox and returns its status.
func runSandboxed(p *policy.Policy, argv []string, debug bool, stderr io.Writer) (int, error) {
	var dbg io.Writer
	if debug {
		dbg = stderr
	}
	var (
		mu   sync.Mutex
		seen []violation.Violation
	)
	code, err := runner.Run(runner.Options{
		Policy: p,
		Argv:   argv,
		Sink: func(v violation.Violation) {
			mu.Lock()
			seen = append(seen, v)
			mu.Unlock()
		},
		Debug:  dbg,
		Stderr: os.Stderr, Stdin: os.Stdin, Stdout: os.Stdout,
	})
	mu.Lock()
	for _, v := range seen {
		fmt.Fprintf(stderr, "cordon: blocked %s %s (%s)\n", v.Action, v.Target, v.Reason)
	}
	mu.Unlock()
	if err != nil {
		if errors.Is(err, runner.ErrSetup) {
			return 0, failf("%v", err)
		}
		return 0, err
	}
	return code, nil
}
