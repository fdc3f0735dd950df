package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/cordon-sandbox/cordon/proxy"
	"github.com/cordon-sandbox/cordon/violation"
)

// proxyVerb runs one session's filtering proxies in the foreground, for
// tools pointed at them by hand and for benchmarks. It prints the two proxy
// URLs (with the session credential) on stdout and each refusal on stderr,
// and stops on SIGINT or SIGTERM.
func proxyVerb(g globalFlags, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("proxy")
	g.register(fs)
	httpPort := fs.Int("http-port", 0, "HTTP proxy port (default: ephemeral)")
	socksPort := fs.Int("socks-port", 0, "SOCKS5 proxy port (default: ephemeral)")
	noAuth := fs.Bool("no-auth", false, "accept clients without the session credential")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return exitOK, nil
		}
		return 0, failf("proxy: %v", err)
	}
	if fs.NArg() > 0 {
		return 0, failf("proxy: unexpected argument %q", fs.Arg(0))
	}
	for _, p := range []struct {
		name string
		v    int
	}{{"--http-port", *httpPort}, {"--socks-port", *socksPort}} {
		if p.v < 0 || p.v > 65535 {
			return 0, failf("proxy: %s %d is not a port (0-65535; 0 picks a free one)", p.name, p.v)
		}
	}
	pol, err := loadPolicy(g.settings, stderr, g.debug)
	if err != nil {
		return 0, err
	}
	cfg := proxy.PolicyConfig(pol)
	if !*noAuth {
		cfg.Token = proxy.NewToken()
	}
	store := violation.NewStore(0, pol.Settings.IgnoreViolations)
	store.Subscribe(func(v violation.Violation) { fmt.Fprintln(stderr, "cordon: "+violation.Line(v)) })
	cfg.Sink = store.Sink()
	at := proxy.Listen{
		HTTP:  net.JoinHostPort("127.0.0.1", strconv.Itoa(*httpPort)),
		SOCKS: net.JoinHostPort("127.0.0.1", strconv.Itoa(*socksPort)),
	}
	pair, err := proxy.StartPair(cfg, at)
	if err != nil {
		return 0, failf("proxy: %v", err)
	}
	defer pair.Close()
	fmt.Fprintf(stdout, "http  %s\nsocks %s\n", pair.HTTPURL(""), pair.SOCKSURL(""))
	if f, ok := stdout.(*os.File); ok {
		f.Sync()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	return exitOK, nil
}
