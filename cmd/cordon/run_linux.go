package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/linux/runner"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/violation"
	"golang.org/x/sys/unix"
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
	var updates chan *policy.Policy
	if g.controlFD >= 3 {
		f := os.NewFile(uintptr(g.controlFD), "control-fd")
		if f == nil {
			return 0, failf("--control-fd %d is not an open descriptor", g.controlFD)
		}
		if _, err := f.Stat(); err != nil {
			return 0, failf("--control-fd %d: %v", g.controlFD, err)
		}
		unix.CloseOnExec(g.controlFD) // the channel that carries the policy must not reach the sandbox
		updates = make(chan *policy.Policy, 4)
		go readControl(f, p.Env, updates, stderr)
	}
	code, err := runner.Run(runner.Options{
		Updates: updates,
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

// readControl reads settings updates, one whole settings document a line
// (srt's --control-fd protocol), until EOF. A line that does not parse is
// reported and skipped: the rules in force stay.
func readControl(f *os.File, env policy.Env, updates chan<- *policy.Policy, stderr io.Writer) {
	defer close(updates)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		p, err := policy.Parse(sc.Bytes(), fmt.Sprintf("--control-fd line %d", n), env)
		if err != nil {
			fmt.Fprintf(stderr, "cordon: update ignored: %v\n", err)
			continue
		}
		updates <- p
	}
}
