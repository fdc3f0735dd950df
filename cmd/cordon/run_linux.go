package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/linux/runner"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/violation"
)

// runSandboxed runs argv in the Linux sandbox and returns its status, then
// tells the user what was refused: one line each on stderr (unless
// --quiet), and as JSON lines in the --violations file.
func runSandboxed(p *policy.Policy, argv []string, g globalFlags, stderr io.Writer) (int, error) {
	var dbg io.Writer
	if g.debug {
		dbg = stderr
	}
	store := violation.NewStore(0, p.Settings.IgnoreViolations)
	code, err := runner.Run(runner.Options{
		Policy:  p,
		Argv:    argv,
		Command: strings.Join(argv, " "),
		Sink:    store.Sink(),
		Debug:   dbg,
		Stderr:  os.Stderr, Stdin: os.Stdin, Stdout: os.Stdout,
	})
	seen := store.All()
	if !g.quiet {
		// One line per distinct refusal, with a count: a resolver's probe
		// of nscd's socket, say, is refused once per lookup.
		var order []string
		count := map[string]int{}
		for _, v := range seen {
			l := violation.Line(v)
			if count[l] == 0 {
				order = append(order, l)
			}
			count[l]++
		}
		for _, l := range order {
			if n := count[l]; n > 1 {
				l = fmt.Sprintf("%s ×%d", l, n)
			}
			fmt.Fprintln(stderr, "cordon: "+l)
		}
		if dropped := store.Total() - len(seen); dropped > 0 {
			fmt.Fprintf(stderr, "cordon: and %d earlier refusals not kept\n", dropped)
		}
	}
	if g.violations != "" {
		if werr := writeViolations(g.violations, seen); werr != nil {
			fmt.Fprintf(stderr, "cordon: --violations %s: %v\n", g.violations, werr)
			if err == nil && code == 0 {
				code = exitFailure
			}
		}
	}
	if err != nil {
		if errors.Is(err, runner.ErrSetup) {
			return 0, failf("%v", err)
		}
		return 0, err
	}
	return code, nil
}

// writeViolations writes the file even when nothing was refused, so that a
// caller can tell "nothing refused" from "cordon did not run".
func writeViolations(path string, vs []violation.Violation) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := violation.WriteJSONLines(f, vs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
