package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/cordon-sandbox/cordon/policy"
)

// Exit codes shared with `env`, `timeout` and container runtimes.
const (
	exitOK          = 0
	exitDenied      = 1 // `cordon explain` verdict: denied
	exitFailure     = 125
	exitNotExec     = 126
	exitNotFound    = 127
	exitSignalStart = 128
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

const usage = `usage:
  cordon [-s FILE] [-d] [--] COMMAND [ARGS...]   run COMMAND (no shell) in the sandbox
  cordon [-s FILE] [-d] -c 'STRING' [ARG0 ARGS...] run STRING with /bin/sh -c
  cordon explain [-s FILE]                        print the effective policy
  cordon explain [-s FILE] read|write PATH        may the sandbox read/write PATH?
  cordon explain [-s FILE] connect HOST[:PORT]    may the sandbox connect to HOST?
  cordon proxy [-s FILE] [--http-port N] [--socks-port N] [--no-auth]
                                                  run the filtering proxies in the foreground
  cordon serve [--listen ADDR] [--sandbox on|off] [--token-file FILE]
                                                  the agent sandbox daemon's HTTP API (docs/api.md)
  cordon version

Everything after the first word that is not a flag, or after --, belongs to
the command: 'cordon sh -c "x"' runs sh -c "x". To run a program named like a
cordon verb, put -- before it: 'cordon -- explain'.

flags:
  -s, --settings FILE   settings file (default ~/.srt-settings.json; when it
                        does not exist, cordon's secure defaults apply)
  -d, --debug           print what cordon decides and why, to stderr
  -c STRING             run STRING with /bin/sh -c
  -q, --quiet           no summary of what was refused (one line each, on stderr)
  --violations FILE     also write what was refused to FILE, one JSON object a line
  --control-fd N        read settings updates from descriptor N (N >= 3), one whole
                        settings document a line; network rules apply at once

exit status: the command's, or 128+signal; 125 cordon failed (bad settings,
a rule it cannot enforce); 126 not executable; 127 not found.
`

// globalFlags are accepted before the command and before every verb.
type globalFlags struct {
	settings   string
	debug      bool
	command    string
	cSet       bool
	quiet      bool
	violations string
	controlFD  int
}

func (g *globalFlags) register(fs *flag.FlagSet) {
	// Current values are the defaults, so that flags given before a verb
	// survive the verb's own flag parsing.
	fs.StringVar(&g.settings, "s", g.settings, "settings file")
	fs.StringVar(&g.settings, "settings", g.settings, "settings file")
	fs.BoolVar(&g.debug, "d", g.debug, "debug output")
	fs.BoolVar(&g.debug, "debug", g.debug, "debug output")
	fs.Func("c", "shell string", func(s string) error { g.command, g.cSet = s, true; return nil })
	fs.BoolVar(&g.quiet, "quiet", g.quiet, "no summary of refusals")
	fs.BoolVar(&g.quiet, "q", g.quiet, "no summary of refusals")
	fs.StringVar(&g.violations, "violations", g.violations, "write refusals as JSON lines to FILE")
	fs.IntVar(&g.controlFD, "control-fd", g.controlFD, "read settings updates (JSON lines) from this descriptor")
}

// cliError is a failure of cordon itself, printed as "cordon: ..." and
// turned into an exit code.
type cliError struct {
	code int
	msg  string
}

func (e *cliError) Error() string { return e.msg }

func failf(format string, args ...any) error {
	return &cliError{exitFailure, fmt.Sprintf(format, args...)}
}

// run is main without the process: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	code, err := dispatch(args, stdout, stderr)
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintln(stderr, "cordon: "+line)
		}
		var ce *cliError
		if errors.As(err, &ce) {
			return ce.code
		}
		return exitFailure
	}
	return code
}

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by run
	return fs
}

// invocation is a parsed command line: a verb with its arguments, or the
// argv of a command to run.
type invocation struct {
	g    globalFlags
	verb string   // "explain", "version", "help", or "" to run argv
	args []string // the verb's arguments
	argv []string // the command to run
}

// verbs are recognised only as the first word that is not a flag, and not
// after "--".
var verbs = map[string]bool{"explain": true, "version": true, "help": true, "proxy": true, "serve": true}

func parseArgs(args []string) (invocation, error) {
	var inv invocation
	fs := newFlagSet("cordon")
	inv.g.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			inv.verb = "help"
			return inv, nil
		}
		return inv, failf("%v (see cordon -h)", err)
	}
	rest := fs.Args()
	dashdash := len(rest) < len(args) && args[len(args)-len(rest)-1] == "--"
	switch {
	case !dashdash && !inv.g.cSet && len(rest) > 0 && verbs[rest[0]]:
		inv.verb, inv.args = rest[0], rest[1:]
	case inv.g.cSet:
		if inv.g.command == "" {
			return inv, failf("-c needs a non-empty shell string")
		}
		// Words after the string become $0, $1, ... as with sh -c.
		inv.argv = append([]string{"/bin/sh", "-c", inv.g.command}, rest...)
	case len(rest) == 0:
		return inv, failf("no command given (see cordon -h)")
	default:
		inv.argv = rest
	}
	return inv, nil
}

func dispatch(args []string, stdout, stderr io.Writer) (int, error) {
	inv, err := parseArgs(args)
	if err != nil {
		return 0, err
	}
	switch inv.verb {
	case "help":
		fmt.Fprint(stdout, usage)
		return exitOK, nil
	case "version":
		if len(inv.args) > 0 {
			return 0, failf("version takes no arguments")
		}
		fmt.Fprintln(stdout, versionString())
		return exitOK, nil
	case "explain":
		return explain(inv.g, inv.args, stdout, stderr)
	case "proxy":
		return proxyVerb(inv.g, inv.args, stdout, stderr)
	case "serve":
		return serveVerb(inv.g, inv.args, stdout, stderr)
	}
	if inv.g.controlFD != 0 && inv.g.controlFD < 3 {
		return 0, failf("--control-fd %d: use a descriptor of 3 or more (0-2 are stdin, stdout and stderr)", inv.g.controlFD)
	}
	p, err := loadPolicy(inv.g.settings, stderr, inv.g.debug)
	if err != nil {
		return 0, err
	}
	return runSandboxed(p, inv.argv, inv.g, stderr)
}

// loadPolicy reads the named settings file, or ~/.srt-settings.json, or the
// defaults when that does not exist; warnings always go to stderr, notes
// only with -d.
func loadPolicy(path string, stderr io.Writer, debugOut bool) (*policy.Policy, error) {
	var (
		p   *policy.Policy
		err error
	)
	if path != "" {
		p, err = policy.Load(path)
	} else {
		p, err = policy.LoadDefault(policy.Env{})
	}
	if err != nil {
		return nil, err
	}
	for _, w := range p.Warnings {
		fmt.Fprintln(stderr, "cordon: warning: "+w)
	}
	if debugOut {
		fmt.Fprintln(stderr, "cordon: settings: "+p.Source)
		for _, n := range p.Notes {
			fmt.Fprintln(stderr, "cordon: note: "+n)
		}
	}
	return p, nil
}

func versionString() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += "+" + s.Value[:12]
			}
		}
	}
	return fmt.Sprintf("cordon %s (%s, %s/%s)", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
