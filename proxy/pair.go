package proxy

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
)

// Serve accepts connections on l and hands each to handle (HandleHTTP or
// HandleSOCKS) until l is closed. It returns nil after Close.
func (s *Server) serve(l net.Listener, handle func(net.Conn)) error {
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		s.spawn(c, handle)
	}
}

// ServeHTTPProxy serves the HTTP proxy on l.
func (s *Server) ServeHTTPProxy(l net.Listener) error { return s.serve(l, s.HandleHTTP) }

// ServeSOCKS serves the SOCKS5 proxy on l.
func (s *Server) ServeSOCKS(l net.Listener) error { return s.serve(l, s.HandleSOCKS) }

// spawn runs handle(c) in its own goroutine, tracked so Close can end it.
func (s *Server) spawn(c net.Conn, handle func(net.Conn)) {
	if !s.track(c) {
		c.Close()
		return
	}
	go func() {
		defer s.untrack(c)
		defer c.Close()
		handle(c)
	}()
}

// Close ends every connection and waits for their goroutines. Listeners
// are the caller's (Pair closes its own).
func (s *Server) Close() { s.closeConns() }

// Pair is one session's HTTP and SOCKS5 proxies on loopback, sharing one
// Server (rules, credential, violation sink). Pairs share nothing.
type Pair struct {
	*Server
	http, socks net.Listener
	wg          sync.WaitGroup
	closeOnce   sync.Once
}

// Listen says where a Pair listens; "" means 127.0.0.1 on an ephemeral port.
type Listen struct {
	HTTP, SOCKS string
}

// StartPair starts both proxies for one session.
func StartPair(cfg Config, at Listen) (*Pair, error) {
	s, err := NewServer(cfg)
	if err != nil {
		return nil, err
	}
	if at.HTTP == "" {
		at.HTTP = "127.0.0.1:0"
	}
	if at.SOCKS == "" {
		at.SOCKS = "127.0.0.1:0"
	}
	hl, err := net.Listen("tcp", at.HTTP)
	if err != nil {
		return nil, fmt.Errorf("HTTP proxy: %w", err)
	}
	sl, err := net.Listen("tcp", at.SOCKS)
	if err != nil {
		hl.Close()
		return nil, fmt.Errorf("SOCKS proxy: %w", err)
	}
	p := &Pair{Server: s, http: hl, socks: sl}
	p.wg.Add(2)
	go func() { defer p.wg.Done(); s.ServeHTTPProxy(hl) }()
	go func() { defer p.wg.Done(); s.ServeSOCKS(sl) }()
	return p, nil
}

// HTTPAddr and SOCKSAddr are where the proxies listen.
func (p *Pair) HTTPAddr() string  { return p.http.Addr().String() }
func (p *Pair) SOCKSAddr() string { return p.socks.Addr().String() }

// HTTPURL is the proxy URL to give a client (HTTP_PROXY), with the
// credential that names command.
func (p *Pair) HTTPURL(command string) string { return p.proxyURL("http", p.HTTPAddr(), command) }

// SOCKSURL is the same for SOCKS5 (ALL_PROXY), asking the proxy to resolve
// names.
func (p *Pair) SOCKSURL(command string) string {
	return p.proxyURL("socks5h", p.SOCKSAddr(), command)
}

func (p *Pair) proxyURL(scheme, addr, command string) string {
	u := url.URL{Scheme: scheme, Host: addr}
	if p.cfg.Token != "" {
		u.User = url.UserPassword(User(command), p.cfg.Token)
	}
	return u.String()
}

// Close stops both listeners and every connection, and waits until all of
// the Pair's goroutines have returned. It is safe to call more than once.
func (p *Pair) Close() error {
	p.closeOnce.Do(func() {
		p.http.Close()
		p.socks.Close()
		p.wg.Wait()
		p.Server.Close()
	})
	return nil
}
