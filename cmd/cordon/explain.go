package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"

	"github.com/cordon-sandbox/cordon/policy"
)

// explain prints the effective policy, or one verdict: exit 0 when allowed,
// 1 when denied, 125 when the settings are bad.
func explain(g globalFlags, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("explain")
	g.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return exitOK, nil
		}
		return 0, failf("explain: %v", err)
	}
	if g.cSet {
		return 0, failf("explain: -c runs a command; it has no meaning here")
	}
	rest := fs.Args()
	p, err := loadPolicy(g.settings, stderr, g.debug)
	if err != nil {
		return 0, err
	}
	if len(rest) == 0 {
		printPolicy(stdout, p)
		return exitOK, nil
	}
	if len(rest) != 2 {
		return 0, failf("explain: want read PATH, write PATH or connect HOST[:PORT], got %q", strings.Join(rest, " "))
	}
	var v policy.Verdict
	switch rest[0] {
	case "read":
		v, err = p.CheckRead(rest[1])
	case "write":
		v, err = p.CheckWrite(rest[1])
	case "connect":
		host, port, perr := splitHostPort(rest[1])
		if perr != nil {
			return 0, failf("explain connect: %v", perr)
		}
		v = p.CheckConnect(host, port)
	default:
		return 0, failf("explain: unknown question %q; ask read PATH, write PATH or connect HOST[:PORT]", rest[0])
	}
	if err != nil {
		return 0, failf("explain %s: %v", rest[0], err)
	}
	fmt.Fprintf(stdout, "%s %s: %s\n", rest[0], rest[1], v)
	if v.Allowed {
		return exitOK, nil
	}
	return exitDenied, nil
}

// splitHostPort accepts host, host:port, [v6] and [v6]:port.
func splitHostPort(s string) (string, int, error) {
	if s == "" {
		return "", 0, errors.New("empty host")
	}
	if h, p, err := net.SplitHostPort(s); err == nil {
		port, err := strconv.Atoi(p)
		if err != nil || port < 1 || port > 65535 {
			return "", 0, fmt.Errorf("%q: port %q is not 1-65535", s, p)
		}
		return h, port, nil
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		return s[1 : len(s)-1], 0, nil
	}
	if strings.Count(s, ":") > 1 {
		return "", 0, fmt.Errorf("%q: bracket an IPv6 address, e.g. [%s]:443", s, s)
	}
	if strings.Contains(s, ":") {
		return "", 0, fmt.Errorf("%q: the port must be a number from 1 to 65535", s)
	}
	return s, 0, nil
}

func printPolicy(w io.Writer, p *policy.Policy) {
	fmt.Fprintf(w, "settings: %s\n", p.Source)
	fmt.Fprintf(w, "working directory: %s\n\n", p.Env.Dir)

	n := p.Settings.Network
	fmt.Fprintln(w, "network:")
	switch {
	case n.HTTPProxyPort != 0 || n.SOCKSProxyPort != 0:
		fmt.Fprintf(w, "  external proxies (they do the filtering): http %d, socks %d\n", n.HTTPProxyPort, n.SOCKSProxyPort)
	case len(n.AllowedDomains) == 0:
		fmt.Fprintln(w, "  no allowed domains: every connection off this sandbox is refused")
	default:
		fmt.Fprintln(w, "  only through cordon's proxies, to:")
		for _, d := range n.AllowedDomains {
			fmt.Fprintf(w, "    allow %s\n", d)
		}
	}
	for _, d := range n.DeniedDomains {
		reason := ""
		if r, ok := n.DeniedDomainReasons[d]; ok {
			reason = " (" + r + ")"
		}
		fmt.Fprintf(w, "    deny  %s%s\n", d, reason)
	}
	for _, a := range n.DeniedResolvedAddresses {
		fmt.Fprintf(w, "    never dial %s, whatever name resolves to it\n", a)
	}
	switch {
	case n.AllowAllUnixSockets:
		fmt.Fprintln(w, "  unix sockets: all allowed")
	case len(p.AllowUnixSockets) > 0 && runtime.GOOS == "linux":
		fmt.Fprintf(w, "  unix sockets: stream sockets, connecting only to %s (checked by the create-time guard; datagram and abstract sockets refused)\n", strings.Join(forms(p.AllowUnixSockets), ", "))
	case len(p.AllowUnixSockets) > 0:
		fmt.Fprintf(w, "  unix sockets: only %s\n", strings.Join(forms(p.AllowUnixSockets), ", "))
	default:
		fmt.Fprintln(w, "  unix sockets: refused")
	}
	if runtime.GOOS == "linux" {
		fmt.Fprintf(w, "  listening: allowed on the sandbox's own loopback, which reaches nothing outside\n\n")
	} else {
		fmt.Fprintf(w, "  listening on local ports: %v\n\n", onOff(n.AllowLocalBinding))
	}

	fmt.Fprintln(w, "filesystem:")
	fmt.Fprintln(w, "  read: everywhere, except")
	printPaths(w, "    hidden    ", p.DenyRead)
	printPaths(w, "    re-opened ", p.AllowRead)
	fmt.Fprintln(w, "  write: nowhere, except")
	printPaths(w, "    writable  ", p.AllowWrite)
	fmt.Fprintf(w, "    writable  %s (private to the sandbox, discarded at exit)\n", policy.PrivateTmp)
	printPaths(w, "    read-only ", p.DenyWrite)
	fmt.Fprintf(w, "  never writable inside a writable root (mandatory denies):\n    %s\n", strings.Join(p.MandatoryDenyNames(), " "))
	fmt.Fprintf(w, "    existing ones mounted read-only to depth %d below each root; new ones refused at any depth by the create-time guard (Linux)\n", p.Settings.MandatoryDenySearchDepth)
	if runtime.GOOS == "linux" {
		fmt.Fprintln(w, "  new files: each creation, rename and link is checked by name against the rules above (denyWrite globs included), at any depth")
	}
	if files := p.SettingsFiles(); len(files) > 0 {
		fmt.Fprintf(w, "  never writable, so the command cannot choose its next policy:\n    %s\n", strings.Join(files, " "))
	}
	if len(p.Settings.IgnoreViolations) > 0 {
		fmt.Fprintln(w, "\nignored violations:")
		for cmd, paths := range p.Settings.IgnoreViolations {
			fmt.Fprintf(w, "  %q: %s\n", cmd, strings.Join(paths, ", "))
		}
	}
	if len(p.Notes) > 0 {
		fmt.Fprintln(w, "\nnotes:")
		for _, n := range p.Notes {
			fmt.Fprintln(w, "  "+n)
		}
	}
	if len(p.Warnings) > 0 {
		fmt.Fprintln(w, "\nwarnings:")
		for _, n := range p.Warnings {
			fmt.Fprintln(w, "  "+n)
		}
	}
}

func printPaths(w io.Writer, prefix string, paths []policy.Path) {
	for _, p := range paths {
		line := prefix + p.Abs
		if p.Resolved != p.Abs {
			line += " (also " + p.Resolved + ")"
		}
		if p.Spec != p.Abs {
			line += "   [" + p.Spec + "]"
		}
		fmt.Fprintln(w, line)
	}
}

func forms(paths []policy.Path) []string {
	var out []string
	for _, p := range paths {
		out = append(out, p.Forms()...)
	}
	return out
}

func onOff(b bool) string {
	if b {
		return "allowed"
	}
	return "refused"
}
