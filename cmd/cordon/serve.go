package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cordon-sandbox/cordon/backend"
	"github.com/cordon-sandbox/cordon/internal/serve"
)

// serveVerb is `cordon serve`: the agent control server's sandbox daemon
// (docs/api.md). It logs one line saying whether agents are sandboxed, the
// address, and where the API token is; it stops on SIGINT or SIGTERM,
// destroying every session and terminal first.
func serveVerb(g globalFlags, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("serve")
	g.register(fs)
	listen := fs.String("listen", "127.0.0.1:8787", "address to listen on (loopback by default; port 0 picks a free one)")
	mode := os.Getenv("CORDON_SANDBOX")
	if mode == "" {
		mode = "on"
	}
	fs.StringVar(&mode, "sandbox", mode, "on: sandbox agents when the host has a backend; off: run them unsandboxed (env CORDON_SANDBOX)")
	tokenFile := fs.String("token-file", "", "where a generated API token is written (default: $XDG_RUNTIME_DIR/cordon/api-token or ~/.cordon/api-token)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return exitOK, nil
		}
		return 0, failf("serve: %v", err)
	}
	if fs.NArg() > 0 {
		return 0, failf("serve: unexpected argument %q", fs.Arg(0))
	}
	var off bool
	switch strings.ToLower(mode) {
	case "on", "1", "true":
	case "off", "0", "false":
		off = true
	default:
		return 0, failf("serve: --sandbox %q: want on or off (or CORDON_SANDBOX=on|off)", mode)
	}
	logger := log.New(stderr, "cordon serve: ", log.LstdFlags)
	port := backend.NewPort(off, logger.Printf)
	native := port.Probe[backend.Native]
	switch {
	case off:
		logger.Print("agent sandbox DISABLED by --sandbox off")
	case native.Available:
		logger.Printf("agent sandbox ON (%s)", native.Description)
	default:
		logger.Printf("no OS-native agent sandbox on this host (%s)", native.Hint)
	}
	token, where, err := apiToken(*tokenFile)
	if err != nil {
		return 0, failf("serve: %v", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return 0, failf("serve: --listen %s: %v", *listen, err)
	}
	if ap, err := netipAddr(ln.Addr()); err == nil && !ap {
		logger.Printf("warning: listening on %s, which is not loopback: anyone who can reach it and has the token controls the agents", ln.Addr())
	}
	logger.Printf("listening on http://%s; API token %s", ln.Addr(), where)
	srv := serve.New(port, token)
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	select {
	case s := <-sig:
		logger.Printf("%v: destroying every session and terminal", s)
	case err := <-errc:
		srv.Shutdown()
		return 0, failf("serve: %v", err)
	}
	srv.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hs.Shutdown(ctx)
	return exitOK, nil
}

// apiToken is CORDON_API_TOKEN, or a new random token written (0600) to
// file; where says which, for the log (never the token itself).
func apiToken(file string) (token, where string, err error) {
	if t := os.Getenv("CORDON_API_TOKEN"); t != "" {
		where = "from CORDON_API_TOKEN"
		if len(t) < 16 {
			where += " (warning: shorter than 16 characters; use a long random value)"
		}
		return t, where, nil
	}
	if file == "" {
		dir := os.Getenv("XDG_RUNTIME_DIR")
		if dir == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", "", fmt.Errorf("no XDG_RUNTIME_DIR and no home directory for the token file; set CORDON_API_TOKEN or --token-file")
			}
			dir = filepath.Join(home, ".cordon")
		} else {
			dir = filepath.Join(dir, "cordon")
		}
		file = filepath.Join(dir, "api-token")
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return "", "", err
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	token = hex.EncodeToString(b)
	// Replace, never append to, whatever was there; readable by the owner only.
	// O_EXCL|O_NOFOLLOW: a file or symlink planted at the temporary name
	// is never written through.
	tmp := file + ".tmp"
	os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", "", err
	}
	_, werr := f.WriteString(token + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp)
		return "", "", werr
	}
	if err := os.Rename(tmp, file); err != nil {
		os.Remove(tmp)
		return "", "", err
	}
	return token, "in " + file + " (mode 0600)", nil
}

func netipAddr(a net.Addr) (bool, error) {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return false, errors.New("not TCP")
	}
	return tcp.IP.IsLoopback(), nil
}
