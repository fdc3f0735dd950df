package proxy

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cordon-sandbox/cordon/hostmatch"
	"github.com/cordon-sandbox/cordon/violation"
)

// Config is what one session's proxies enforce.
type Config struct {
	// Rules decide each destination. nil denies everything. Replace them
	// while running with Server.SetRules.
	Rules *hostmatch.Rules
	// DeniedAddrs are addresses an allowed name must not resolve to, on top
	// of the built-in set (loopback, link-local, cloud metadata, 0.0.0.0/8
	// and this host's own addresses).
	DeniedAddrs []netip.Prefix
	// Sink receives a violation for every refused destination. May be nil.
	Sink violation.Sink
	// Token is the per-session secret clients must present (HTTP
	// Proxy-Authorization Basic password, SOCKS5 password). Empty: no
	// authentication (for `cordon proxy` pointed at by other tools).
	Token string
	// Resolver looks names up; nil uses net.DefaultResolver.
	Resolver Resolver
	// DialTimeout bounds each connection attempt upstream (default 10 s).
	DialTimeout time.Duration
	// HandshakeTimeout bounds how long a client may take to send its request
	// line and headers, or its SOCKS handshake (default 30 s): a slowloris
	// client costs one goroutine for that long, then is dropped.
	HandshakeTimeout time.Duration
	// Ask, when set, is consulted for destinations no rule allows (and no
	// rule denies). It returns whether to allow, and why not.
	Ask func(ctx context.Context, host string, port int) (bool, string)
	// Strict never asks (network.strictAllowlist).
	Strict bool
	// Command is whom refusals reported by the sandbox itself (over the
	// bridge) are attributed to.
	Command string
}

// Resolver is the part of *net.Resolver the proxies use.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Server holds what the HTTP and SOCKS5 front ends share: the rules, the
// credential, the address guard and the violation sink. One Server serves
// one session; Servers share no state.
type Server struct {
	cfg   Config
	rules atomic.Pointer[hostmatch.Rules]
	guard *addrGuard

	// ctx is cancelled by Close, ending dials, lookups and Ask calls that
	// are under way.
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// NewServer validates cfg and returns a Server that is not yet listening.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.HandshakeTimeout == 0 {
		cfg.HandshakeTimeout = 30 * time.Second
	}
	g, err := newAddrGuard(cfg.DeniedAddrs)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, guard: g, conns: map[net.Conn]struct{}{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.rules.Store(cfg.Rules)
	return s, nil
}

// SetRules replaces the host rules; connections opened after it use them.
func (s *Server) SetRules(r *hostmatch.Rules) { s.rules.Store(r) }

// Rules returns the rules in force.
func (s *Server) Rules() *hostmatch.Rules { return s.rules.Load() }

// NewToken returns a fresh random per-session secret.
func NewToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // cannot happen on Linux ≥ 3.17
	}
	return hex.EncodeToString(b)
}

// User encodes a command name as a proxy user name, so that the proxy can
// attribute what it refuses to the command that asked. Anything is allowed
// in a command; the encoding keeps it URL- and RFC 1929-safe (≤ 255 bytes).
func User(command string) string {
	if len(command) > 180 {
		command = command[:180]
	}
	if command == "" {
		return "cordon"
	}
	return "c-" + base64.RawURLEncoding.EncodeToString([]byte(command))
}

// commandOf decodes a user name made by User; anything else is kept as is.
func commandOf(user string) string {
	if len(user) > 2 && user[:2] == "c-" {
		if b, err := base64.RawURLEncoding.DecodeString(user[2:]); err == nil {
			return string(b)
		}
	}
	if user == "cordon" {
		return ""
	}
	return user
}

// checkAuth verifies a client's password; it returns whether the client
// may use the proxy. Constant-time: the token is a secret.
func (s *Server) checkAuth(password string) bool {
	if s.cfg.Token == "" {
		return true
	}
	return subtle.ConstantTimeCompare([]byte(password), []byte(s.cfg.Token)) == 1
}

func (s *Server) authRequired() bool { return s.cfg.Token != "" }

// refusal is why a destination was not reached. kind decides the HTTP
// status and the SOCKS reply code.
type refusal struct {
	kind   refusalKind
	reason string
	rule   string // the deny rule, or "" for the default
	err    error  // the dial or lookup error behind an unreachable refusal
}

type refusalKind int

const (
	refusedByDenylist  refusalKind = iota // 403 blocked-by-denylist / SOCKS 0x02
	refusedByAllowlist                    // 403 blocked-by-allowlist / SOCKS 0x02
	refusedAddress                        // resolves only to forbidden addresses: 403 / 0x02
	unreachable                           // dial failed: 502 / 0x05, 0x06 or 0x04
	unresolved                            // name lookup failed: 502 / 0x04
	badTarget                             // malformed host or port: 400 / 0x04
)

func (r *refusal) Error() string { return r.reason }

func (r *refusal) Unwrap() error { return r.err }

// policyRefusal reports whether the refusal is the policy's (a violation),
// not the network's.
func (r *refusal) policyRefusal() bool { return r.kind <= refusedAddress }

// connectTo decides and dials host:port for command. On refusal it records
// a violation and returns a *refusal. Close cancels it.
func (s *Server) connectTo(host string, port int, command string) (*net.TCPConn, error) {
	ctx := s.ctx
	target := net.JoinHostPort(host, strconv.Itoa(port))
	conn, err := s.decideAndDial(ctx, host, port)
	if err != nil {
		var r *refusal
		if !errors.As(err, &r) {
			r = &refusal{kind: unreachable, reason: err.Error(), err: err}
		}
		if r.policyRefusal() && s.cfg.Sink != nil {
			s.cfg.Sink(violation.Violation{
				Time: time.Now(), Action: violation.NetworkOutbound, Target: target,
				Reason: r.reason, Command: command, Raw: r.rule,
			})
		}
		return nil, r
	}
	return conn, nil
}

func (s *Server) decideAndDial(ctx context.Context, host string, port int) (*net.TCPConn, error) {
	if port < 1 || port > 65535 {
		return nil, &refusal{kind: badTarget, reason: fmt.Sprintf("port %d is not 1-65535", port)}
	}
	canon, err := hostmatch.Normalize(host)
	if err != nil {
		return nil, &refusal{kind: badTarget, reason: err.Error()}
	}
	d := s.rules.Load().Decide(canon, port)
	if !d.Allowed {
		switch {
		case !d.Default:
			return nil, &refusal{kind: refusedByDenylist, reason: d.Reason, rule: d.Rule}
		case s.cfg.Ask != nil && !s.cfg.Strict:
			ok, why := s.cfg.Ask(ctx, canon, port)
			if !ok {
				if why == "" {
					why = "refused when asked"
				}
				return nil, &refusal{kind: refusedByAllowlist, reason: why}
			}
		default:
			return nil, &refusal{kind: refusedByAllowlist, reason: d.Reason}
		}
	}
	addrs, err := s.resolve(ctx, canon, d)
	if err != nil {
		return nil, err
	}
	return s.dial(ctx, addrs, port)
}

// resolve returns the addresses that may be dialled for an allowed host.
// An IP literal, or "localhost" allowed by a rule naming it, is taken as
// the user's explicit choice. A name is looked up and every address in the
// forbidden set dropped: a name that points only there (DNS rebinding,
// 127.0.0.1.nip.io, metadata) is refused.
func (s *Server) resolve(ctx context.Context, host string, d hostmatch.Decision) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		// Only an address rule can allow an address, so this one was named.
		if s.guard.userDenied(ip) {
			return nil, &refusal{kind: refusedAddress, reason: host + " is in network.deniedResolvedAddresses"}
		}
		return []netip.Addr{ip}, nil
	}
	lctx, cancel := context.WithTimeout(ctx, s.cfg.DialTimeout)
	defer cancel()
	ips, err := s.cfg.Resolver.LookupNetIP(lctx, "ip", host)
	if err != nil {
		return nil, &refusal{kind: unresolved, reason: fmt.Sprintf("cannot resolve %s: %v", host, err), err: err}
	}
	explicitLocal := host == "localhost" && (d.Rule == "localhost" || len(d.Rule) > 10 && d.Rule[:10] == "localhost:")
	var ok []netip.Addr
	var dropped []string
	for _, ip := range ips {
		ip = ip.Unmap()
		if s.guard.userDenied(ip) || (!explicitLocal && s.guard.forbidden(ip)) {
			dropped = append(dropped, ip.String())
			continue
		}
		ok = append(ok, ip)
	}
	if len(ok) == 0 {
		return nil, &refusal{kind: refusedAddress, reason: fmt.Sprintf("%s resolves only to forbidden addresses %v (loopback, link-local, metadata, this host, or deniedResolvedAddresses); allow the address itself if you mean it", host, dropped)}
	}
	return ok, nil
}

// dial tries each checked address in turn: the proxy connects to the
// address it checked, never to the name again.
func (s *Server) dial(ctx context.Context, addrs []netip.Addr, port int) (*net.TCPConn, error) {
	d := net.Dialer{Timeout: s.cfg.DialTimeout}
	var last error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return c.(*net.TCPConn), nil
		}
		last = err
	}
	return nil, &refusal{kind: unreachable, reason: last.Error(), err: last}
}

// register records a live connection (a client's or an upstream's) so
// that Close can end it. It returns false once the Server is closing.
func (s *Server) register(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) unregister(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// track registers a client connection and counts its handler goroutine.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.unregister(c)
	s.wg.Done()
}

// closeConns ends every live connection and waits for the handlers.
func (s *Server) closeConns() {
	s.cancel()
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}
