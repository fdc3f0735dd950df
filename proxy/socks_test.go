package proxy

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	xproxy "golang.org/x/net/proxy"

	"github.com/cordon-sandbox/cordon/hostmatch"
	"github.com/cordon-sandbox/cordon/violation"
)

// skBridgeEnv turns the test binary into an ssh ProxyCommand: with the
// variable set to a socks5h:// URL, it connects to argv[1]:argv[2] through
// that proxy with golang.org/x/net/proxy and bridges stdin/stdout to it,
// as `nc -X 5 -x` would. One binary, no helper to install.
const skBridgeEnv = "CORDON_TEST_SOCKS_CONNECT"

func init() {
	if u := os.Getenv(skBridgeEnv); u != "" {
		os.Exit(skBridge(u, os.Args[1:]))
	}
}

func skBridge(proxyURL string, args []string) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "socks bridge:", err)
		return 1
	}
	if len(args) != 2 {
		return fail(fmt.Errorf("want host and port, got %q", args))
	}
	u, err := url.Parse(proxyURL)
	if err != nil {
		return fail(err)
	}
	d, err := xproxy.FromURL(u, xproxy.Direct)
	if err != nil {
		return fail(err)
	}
	// Keep the raw TCP connection (the SOCKS client wraps it) so that the
	// end of stdin can be passed on as a half-close.
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		return fail(err)
	}
	withConn, ok := d.(interface {
		DialWithConn(context.Context, net.Conn, string, string) (net.Addr, error)
	})
	if !ok {
		return fail(fmt.Errorf("%T cannot dial over a given connection", d))
	}
	if _, err := withConn.DialWithConn(context.Background(), c, "tcp", net.JoinHostPort(args[0], args[1])); err != nil {
		return fail(err)
	}
	go func() {
		io.Copy(c, os.Stdin)
		c.(*net.TCPConn).CloseWrite()
	}()
	io.Copy(os.Stdout, c)
	return 0
}

// skResolver answers from a table, as DNS would (see htFakeResolver).
type skResolver = htFakeResolver

type skSink struct{ htSink }

// take returns the violations delivered since the last take.
func (k *skSink) take() []violation.Violation {
	k.htSink.mu.Lock()
	defer k.htSink.mu.Unlock()
	vs := k.htSink.vs
	k.htSink.vs = nil
	return vs
}

// skWant is the one violation a refusal must deliver.
type skWant struct{ target, reason, command string }

func (k *skSink) check(t *testing.T, want *skWant) {
	t.Helper()
	got := k.take()
	if want == nil {
		if len(got) != 0 {
			t.Errorf("violations %+v, want none", got)
		}
		return
	}
	if len(got) != 1 {
		t.Errorf("violations %+v, want exactly one for %s", got, want.target)
		return
	}
	v := got[0]
	if v.Action != violation.NetworkOutbound || v.Target != want.target || v.Command != want.command ||
		!strings.Contains(v.Reason, want.reason) || v.Time.IsZero() {
		t.Errorf("violation %+v, want network-outbound %s by %q, reason containing %q", v, want.target, want.command, want.reason)
	}
}

// skOrigin is an HTTP server on a loopback listener; it returns its
// host:port, or "" when this host cannot listen there (no IPv6 loopback).
func skOrigin(t *testing.T, network, addr string) string {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		return ""
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from origin")
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return l.Addr().String()
}

// skClosedPort returns a loopback address where nothing listens.
func skClosedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func skPair(t *testing.T, allow, deny []string, reasons map[string]string, mod func(*Config)) (*Pair, *skSink) {
	t.Helper()
	rules, err := hostmatch.Compile(allow, deny, reasons)
	if err != nil {
		t.Fatal(err)
	}
	sink := &skSink{}
	cfg := Config{
		Rules: rules, Token: NewToken(), Sink: sink.add, DialTimeout: 5 * time.Second,
		Resolver: skResolver{
			"localhost":          {netip.MustParseAddr("127.0.0.1")},
			"rebind.cordon.test": {netip.MustParseAddr("127.0.0.1")},
		},
	}
	if mod != nil {
		mod(&cfg)
	}
	p, err := StartPair(cfg, Listen{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, sink
}

// skWorld is a Pair with an origin on 127.0.0.1 (and on [::1] when the
// host has it) and rules covering every case the tests ask about.
type skWorld struct {
	p          *Pair
	sink       *skSink
	o4, o6     string // origins, host:port; o6 "" without IPv6 loopback
	closed     string // 127.0.0.1:port, allowed, nothing listening
	originPort string
}

const skSSHReason = "SSH pushes are blocked; use https"

func skStart(t *testing.T, mod func(*Config)) *skWorld {
	t.Helper()
	w := &skWorld{o4: skOrigin(t, "tcp4", "127.0.0.1:0"), o6: skOrigin(t, "tcp6", "[::1]:0"), closed: skClosedPort(t)}
	_, w.originPort, _ = net.SplitHostPort(w.o4)
	allow := []string{w.o4, w.closed, "localhost:" + w.originPort, "*.cordon.test",
		"both.example.com", "ports.example.com:443", "github.com"}
	if w.o6 != "" {
		allow = append(allow, w.o6)
	}
	deny := []string{"both.example.com", "github.com:22"}
	reasons := map[string]string{"both.example.com": "deny wins over allow", "github.com:22": skSSHReason}
	w.p, w.sink = skPair(t, allow, deny, reasons, mod)
	return w
}

func (w *skWorld) auth(command string) *xproxy.Auth {
	return &xproxy.Auth{User: User(command), Password: w.p.cfg.Token}
}

// skDial connects to target through the SOCKS proxy with x/net's client.
func skDial(addr string, auth *xproxy.Auth, target string) (net.Conn, error) {
	d, err := xproxy.SOCKS5("tcp", addr, auth, &net.Dialer{})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return d.(xproxy.ContextDialer).DialContext(ctx, "tcp", target)
}

// skGet fetches / over c and returns the whole response.
func skGet(c net.Conn) (string, error) {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET / HTTP/1.0\r\nHost: origin\r\n\r\n"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

// TestSOCKSGoClient drives the proxy with golang.org/x/net/proxy, the
// client Go programs in the sandbox use through ALL_PROXY.
func TestSOCKSGoClient(t *testing.T) {
	w := skStart(t, nil)
	const cmd = "git push origin" // attributed through the user name
	refused := "connection not allowed by ruleset"
	for _, tt := range []struct {
		name   string
		target string
		auth   *xproxy.Auth
		noAuth bool   // offer only "no authentication"
		err    string // "" means connected and served
		v      *skWant
	}{
		{name: "allowed IPv4 literal", target: w.o4},
		{name: "allowed IPv6 literal", target: w.o6},
		{name: "allowed name, resolved by the proxy", target: "localhost:" + w.originPort},
		{name: "denylist beats allowlist", target: "both.example.com:443", err: refused,
			v: &skWant{"both.example.com:443", "deny wins over allow", cmd}},
		{name: "default deny", target: "elsewhere.example.com:443", err: refused,
			v: &skWant{"elsewhere.example.com:443", "not in allowedDomains", cmd}},
		{name: "name allowed on another port only", target: "ports.example.com:80", err: refused,
			v: &skWant{"ports.example.com:80", "not in allowedDomains", cmd}},
		{name: "address allowed on another port only", target: "127.0.0.1:9", err: refused,
			v: &skWant{"127.0.0.1:9", "not in allowedDomains", cmd}},
		{name: "allowed name resolving to loopback (DNS rebinding)", target: "rebind.cordon.test:80", err: refused,
			v: &skWant{"rebind.cordon.test:80", "forbidden addresses", cmd}},
		{name: "allowed name that does not resolve", target: "nxdomain.cordon.test:80", err: "host unreachable"},
		{name: "allowed address where nothing listens", target: w.closed, err: "connection refused"},
		{name: "wrong password", target: w.o4, auth: &xproxy.Auth{User: User(cmd), Password: "guess"},
			err: "username/password authentication failed"},
		{name: "no credential offered", target: w.o4, noAuth: true, err: "no acceptable authentication methods"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.target == "" {
				t.Skip("this host has no IPv6 loopback ([::1])")
			}
			auth := tt.auth
			if auth == nil && !tt.noAuth {
				auth = w.auth(cmd)
			}
			c, err := skDial(w.p.SOCKSAddr(), auth, tt.target)
			if tt.err != "" {
				if err == nil {
					c.Close()
					t.Fatalf("connected to %s, want %q", tt.target, tt.err)
				}
				if !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %q, want %q", err, tt.err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if body, err := skGet(c); err != nil || !strings.HasSuffix(body, "hello from origin") {
					t.Fatalf("through the proxy: %q, %v", body, err)
				}
			}
			w.sink.check(t, tt.v)
		})
	}
}

// Raw SOCKS5: the replies the Go client hides.

func skRaw(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c.(*net.TCPConn)
}

func skExpect(t *testing.T, r io.Reader, want []byte) {
	t.Helper()
	got := make([]byte, len(want))
	if n, err := io.ReadFull(r, got); err != nil {
		t.Fatalf("read %x, want %x: %v", got[:n], want, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %x, want %x", got, want)
	}
}

// skExpectEOF checks that the proxy ends the connection.
func skExpectEOF(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil || len(b) > 0 {
		t.Fatalf("after the reply: %x, %v; want the connection closed", b, err)
	}
}

func skLogin(t *testing.T, c net.Conn, user, password string) {
	t.Helper()
	c.Write([]byte{5, 1, methodPassword})
	skExpect(t, c, []byte{5, methodPassword})
	b := append([]byte{1, byte(len(user))}, user...)
	b = append(append(b, byte(len(password))), password...)
	c.Write(b)
	skExpect(t, c, []byte{1, 0})
}

// skReq builds a request; addr is ATYP and DST.ADDR.
func skReq(cmd byte, addr []byte, port uint16) []byte {
	return binary.BigEndian.AppendUint16(append([]byte{5, cmd, 0}, addr...), port)
}

func skV4(s string) []byte { return append([]byte{atypIPv4}, netip.MustParseAddr(s).AsSlice()...) }
func skV6(s string) []byte {
	a := netip.MustParseAddr(s).As16()
	return append([]byte{atypIPv6}, a[:]...)
}
func skName(s string) []byte { return append([]byte{atypDomain, byte(len(s))}, s...) }

func skPort(t *testing.T, hostport string) uint16 {
	t.Helper()
	_, p, _ := net.SplitHostPort(hostport)
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return uint16(n)
}

func skReadReply(t *testing.T, r io.Reader) (rep byte, bnd netip.AddrPort) {
	t.Helper()
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		t.Fatalf("reading the reply: %v", err)
	}
	if h[0] != 5 || h[2] != 0 {
		t.Fatalf("reply %x: want VER 5, RSV 0", h)
	}
	var a []byte
	switch h[3] {
	case atypIPv4:
		a = make([]byte, 4+2)
	case atypIPv6:
		a = make([]byte, 16+2)
	default:
		t.Fatalf("reply with address type %d", h[3])
	}
	if _, err := io.ReadFull(r, a); err != nil {
		t.Fatalf("reading the reply: %v", err)
	}
	ip, _ := netip.AddrFromSlice(a[:len(a)-2])
	return h[1], netip.AddrPortFrom(ip, binary.BigEndian.Uint16(a[len(a)-2:]))
}

// TestSOCKSReplyCodes checks each reply code on the wire, and that every
// refusal ends the connection.
func TestSOCKSReplyCodes(t *testing.T) {
	w := skStart(t, nil)
	const cmd = "raw client"
	o4, o6 := skPort(t, w.o4), uint16(0)
	if w.o6 != "" {
		o6 = skPort(t, w.o6)
	}
	loop4 := netip.MustParseAddr("127.0.0.1")
	for _, tt := range []struct {
		name string
		req  []byte
		rep  byte
		bnd  netip.Addr // for 0x00: the proxy's local address upstream
		v    *skWant
	}{
		{name: "CONNECT IPv4 literal", req: skReq(cmdConnect, skV4("127.0.0.1"), o4), bnd: loop4},
		{name: "CONNECT IPv6 literal", req: skReq(cmdConnect, skV6("::1"), o6), bnd: netip.IPv6Loopback()},
		{name: "CONNECT IPv4-mapped IPv6 spelling of an allowed address",
			req: skReq(cmdConnect, skV6("::ffff:127.0.0.1"), o4), bnd: loop4},
		{name: "CONNECT by name", req: skReq(cmdConnect, skName("localhost"), o4), bnd: loop4},
		{name: "BIND", req: skReq(2, skV4("127.0.0.1"), o4), rep: repCommandUnsupported},
		{name: "UDP ASSOCIATE", req: skReq(3, skV4("0.0.0.0"), 0), rep: repCommandUnsupported},
		{name: "unknown address type", req: []byte{5, cmdConnect, 0, 5, 1, 2, 3, 4, 0, 80}, rep: repAddrTypeUnsupported},
		{name: "address type 0", req: []byte{5, cmdConnect, 0, 0}, rep: repAddrTypeUnsupported},
		{name: "empty name", req: skReq(cmdConnect, skName(""), 80), rep: repHostUnreachable},
		{name: "name with a NUL", req: skReq(cmdConnect, skName("a\x00.cordon.test"), 80), rep: repHostUnreachable},
		{name: "name of 255 bytes", req: skReq(cmdConnect, skName(strings.Repeat("a", 255)), 80), rep: repHostUnreachable},
		{name: "port 0", req: skReq(cmdConnect, skV4("127.0.0.1"), 0), rep: repHostUnreachable},
		{name: "denied name", req: skReq(cmdConnect, skName("both.example.com"), 443), rep: repNotAllowed,
			v: &skWant{"both.example.com:443", "deny wins over allow", cmd}},
		{name: "denied IPv6 address", req: skReq(cmdConnect, skV6("2001:db8::1"), 443), rep: repNotAllowed,
			v: &skWant{"[2001:db8::1]:443", "not in allowedDomains", cmd}},
		{name: "allowed name resolving to loopback", req: skReq(cmdConnect, skName("rebind.cordon.test"), 80), rep: repNotAllowed,
			v: &skWant{"rebind.cordon.test:80", "forbidden addresses", cmd}},
		{name: "nothing listening", req: skReq(cmdConnect, skV4("127.0.0.1"), skPort(t, w.closed)), rep: repConnRefused},
		{name: "name that does not resolve", req: skReq(cmdConnect, skName("nxdomain.cordon.test"), 80), rep: repHostUnreachable},
		// Only a policy refusal is told in SSH; the network's are plain replies.
		{name: "name that does not resolve, port 22", req: skReq(cmdConnect, skName("nxdomain.cordon.test"), 22), rep: repHostUnreachable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Contains(tt.name, "IPv6 literal") && w.o6 == "" {
				t.Skip("this host has no IPv6 loopback ([::1])")
			}
			c := skRaw(t, w.p.SOCKSAddr())
			skLogin(t, c, User(cmd), w.p.cfg.Token)
			c.Write(tt.req)
			rep, bnd := skReadReply(t, c)
			if rep != tt.rep {
				t.Fatalf("reply 0x%02x, want 0x%02x", rep, tt.rep)
			}
			w.sink.check(t, tt.v)
			if rep != repSucceeded {
				if bnd != (netip.AddrPortFrom(netip.IPv4Unspecified(), 0)) {
					t.Errorf("BND %v on a refusal, want 0.0.0.0:0", bnd)
				}
				skExpectEOF(t, c)
				return
			}
			if bnd.Addr() != tt.bnd || bnd.Port() == 0 {
				t.Errorf("BND %v, want %v and a port", bnd, tt.bnd)
			}
			if body, err := skGet(c); err != nil || !strings.HasSuffix(body, "hello from origin") {
				t.Fatalf("through the proxy: %q, %v", body, err)
			}
		})
	}
}

// TestSOCKSMethods checks the method selection and RFC 1929 on the wire,
// with and without a session token.
func TestSOCKSMethods(t *testing.T) {
	withToken, _ := skPair(t, nil, nil, nil, nil)
	noToken, _ := skPair(t, nil, nil, nil, func(c *Config) { c.Token = "" })
	auth := func(user, password string) []byte {
		b := append([]byte{1, byte(len(user))}, user...)
		return append(append(b, byte(len(password))), password...)
	}
	long := strings.Repeat("x", 255)
	for _, tt := range []struct {
		name  string
		p     *Pair
		send  []byte
		want  []byte
		ended bool // the proxy hangs up after want
	}{
		{"token: only no-auth offered", withToken, []byte{5, 1, methodNone}, []byte{5, 0xff}, true},
		{"token: no methods at all", withToken, []byte{5, 0}, []byte{5, 0xff}, true},
		{"token: only GSSAPI offered", withToken, []byte{5, 1, 1}, []byte{5, 0xff}, true},
		{"token: no-auth and password offered", withToken, []byte{5, 2, methodNone, methodPassword}, []byte{5, 2}, false},
		{"token: right password", withToken, append([]byte{5, 1, 2}, auth("u", withToken.cfg.Token)...), []byte{5, 2, 1, 0}, false},
		{"token: wrong password", withToken, append([]byte{5, 1, 2}, auth("user", "bad")...), []byte{5, 2, 1, 1}, true},
		{"token: token as user name", withToken, append([]byte{5, 1, 2}, auth(withToken.cfg.Token, "")...), []byte{5, 2, 1, 1}, true},
		{"token: longest fields", withToken, append([]byte{5, 1, 2}, auth(long, long)...), []byte{5, 2, 1, 1}, true},
		{"token: sub-negotiation version 5", withToken, []byte{5, 1, 2, 5, 1, 'u', 1, 'p'}, []byte{5, 2, 1, 1}, true},
		{"no token: no-auth preferred", noToken, []byte{5, 2, methodPassword, methodNone}, []byte{5, 0}, false},
		{"no token: any password", noToken, append([]byte{5, 1, 2}, auth("u", "anything")...), []byte{5, 2, 1, 0}, false},
		{"no token: only GSSAPI offered", noToken, []byte{5, 1, 1}, []byte{5, 0xff}, true},
		{"SOCKS4", withToken, []byte{4, 1, 0, 80, 127, 0, 0, 1, 'u', 0}, socks4Rejected, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := skRaw(t, tt.p.SOCKSAddr())
			c.Write(tt.send)
			skExpect(t, c, tt.want)
			if tt.ended {
				skExpectEOF(t, c)
			}
		})
	}
}

// Without a token, a client that names a command still has it recorded.
func TestSOCKSNoTokenAttributes(t *testing.T) {
	origin := skOrigin(t, "tcp4", "127.0.0.1:0")
	p, sink := skPair(t, []string{origin}, nil, nil, func(c *Config) { c.Token = "" })
	c, err := skDial(p.SOCKSAddr(), nil, origin)
	if err != nil {
		t.Fatal(err)
	}
	body, err := skGet(c)
	c.Close()
	if err != nil || !strings.HasSuffix(body, "hello from origin") {
		t.Fatalf("no-auth client: %q, %v", body, err)
	}
	raw := skRaw(t, p.SOCKSAddr())
	raw.Write([]byte{5, 1, methodPassword})
	skExpect(t, raw, []byte{5, methodPassword})
	user := User("npm install")
	raw.Write(slices.Concat([]byte{1, byte(len(user))}, []byte(user), []byte{0}))
	skExpect(t, raw, []byte{1, 0})
	raw.Write(skReq(cmdConnect, skName("registry.example.com"), 443))
	if rep, _ := skReadReply(t, raw); rep != repNotAllowed {
		t.Fatalf("reply 0x%02x, want 0x02", rep)
	}
	sink.check(t, &skWant{"registry.example.com:443", "not in allowedDomains", "npm install"})
}

// skReadDisconnect reads one unencrypted SSH binary packet and returns the
// description of the SSH_MSG_DISCONNECT it must hold, checking the framing
// OpenSSH checks.
func skReadDisconnect(t *testing.T, r io.Reader) string {
	t.Helper()
	var l [4]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		t.Fatalf("reading the packet length: %v", err)
	}
	n := binary.BigEndian.Uint32(l[:])
	if n > 35000 || (4+n)%8 != 0 {
		t.Fatalf("packet_length %d: the packet must be a multiple of 8 bytes", n)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		t.Fatalf("reading the packet: %v", err)
	}
	pad := int(p[0])
	if pad < 4 || pad > len(p)-1 {
		t.Fatalf("padding_length %d in a %d-byte packet", pad, n)
	}
	payload := p[1 : len(p)-pad]
	if len(payload) < 13 || payload[0] != sshMsgDisconnect ||
		binary.BigEndian.Uint32(payload[1:]) != sshDisconnectHostNotAllowed {
		t.Fatalf("payload %x: want SSH_MSG_DISCONNECT, reason 1", payload)
	}
	dl := binary.BigEndian.Uint32(payload[5:])
	if int(dl) != len(payload)-5-4-4 {
		t.Fatalf("payload %x: description length %d does not fit", payload, dl)
	}
	if lang := binary.BigEndian.Uint32(payload[9+dl:]); lang != 0 {
		t.Fatalf("language tag of %d bytes, want none", lang)
	}
	return string(payload[9 : 9+dl])
}

func TestSSHDisconnectPacket(t *testing.T) {
	for n := range 40 {
		desc := strings.Repeat("d", n)
		if got := skReadDisconnect(t, bytes.NewReader(sshDisconnect(desc))); got != desc {
			t.Fatalf("description %q, want %q", got, desc)
		}
	}
}

// TestSOCKSRefusesSSHOnTheWire is the in-band SSH refusal, byte by byte.
func TestSOCKSRefusesSSHOnTheWire(t *testing.T) {
	w := skStart(t, nil)
	const cmd = "ssh"
	// A client's first packet: 12 bytes of length, 10 of padding, payload SSH_MSG_KEXINIT.
	kexinit := "\x00\x00\x00\x0c\x0a\x14" + strings.Repeat("\x00", 10)
	for _, tt := range []struct {
		name  string
		addr  []byte
		ident string // what the client sends after the proxy's identification
		desc  string // "": no disconnect packet, just the banner and an end
		v     skWant
	}{
		{"denied with a reason", skName("github.com"), "SSH-2.0-OpenSSH_9.2\r\n" + kexinit,
			"cordon: github.com:22 blocked: " + skSSHReason, skWant{"github.com:22", skSSHReason, cmd}},
		{"denied by default, LF only", skName("gitlab.example.com"), "SSH-2.0-x\n" + kexinit,
			"cordon: gitlab.example.com:22 blocked: not in allowedDomains", skWant{"gitlab.example.com:22", "not in allowedDomains", cmd}},
		{"IPv6 address", skV6("2001:db8::1"), "SSH-2.0-x\r\n" + kexinit,
			"cordon: [2001:db8::1]:22 blocked: not in allowedDomains", skWant{"[2001:db8::1]:22", "not in allowedDomains", cmd}},
		{"large first packet", skName("github.com"), "SSH-2.0-x\r\n\x00\x00\x10\x00" + strings.Repeat("k", 0x1000),
			"cordon: github.com:22 blocked: " + skSSHReason, skWant{"github.com:22", skSSHReason, cmd}},
		{"absurd packet length", skName("github.com"), "SSH-2.0-x\r\n\xff\xff\xff\xff",
			"cordon: github.com:22 blocked: " + skSSHReason, skWant{"github.com:22", skSSHReason, cmd}},
		{"client waits for the server's KEXINIT", skName("github.com"), "SSH-2.0-x\r\n",
			"cordon: github.com:22 blocked: " + skSSHReason, skWant{"github.com:22", skSSHReason, cmd}},
		{"not an SSH client", skName("github.com"), "HELLO\r\n", "", skWant{"github.com:22", skSSHReason, cmd}},
		{"ident line too long", skName("github.com"), "SSH-2.0-" + strings.Repeat("x", 300) + "\r\n", "", skWant{"github.com:22", skSSHReason, cmd}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := skRaw(t, w.p.SOCKSAddr())
			skLogin(t, c, User(cmd), w.p.cfg.Token)
			c.Write(skReq(cmdConnect, tt.addr, 22))
			rep, bnd := skReadReply(t, c)
			if rep != repSucceeded || bnd != netip.AddrPortFrom(netip.IPv4Unspecified(), 0) {
				t.Fatalf("reply 0x%02x BND %v, want 0x00 0.0.0.0:0", rep, bnd)
			}
			w.sink.check(t, &tt.v)
			skExpect(t, c, []byte(sshIdent))
			c.Write([]byte(tt.ident))
			if tt.desc != "" {
				if got := skReadDisconnect(t, c); got != tt.desc {
					t.Fatalf("description %q, want %q", got, tt.desc)
				}
			}
			skExpectEOF(t, c)
		})
	}
}

// skSSHArgs runs ssh with only what the test sets: no user config, no
// known_hosts, no agent, and the test binary as its ProxyCommand.
func skSSHArgs() []string {
	return []string{"-F", "/dev/null", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
		"-o", "UserKnownHostsFile=/dev/null", "-o", "ConnectTimeout=10",
		"-o", "ProxyCommand='" + os.Args[0] + "' %h %p"}
}

func skEnv(t *testing.T, p *Pair, command string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "SHELL=/bin/sh",
		skBridgeEnv + "=" + p.SOCKSURL(command)}
}

// TestSOCKSRefusesSSHInBand runs the real ssh (and git over ssh) through
// the proxy to a denied host on port 22: they must print the reason.
func TestSOCKSRefusesSSHInBand(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("ssh is not installed (apt-get install openssh-client)")
	}
	w := skStart(t, nil)
	want := "cordon: github.com:22 blocked: " + skSSHReason

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ssh := exec.CommandContext(ctx, "ssh", append(skSSHArgs(), "git@github.com", "true")...)
	ssh.Env = skEnv(t, w.p, "ssh")
	out, err := ssh.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Received disconnect") || !strings.Contains(string(out), want) {
		t.Fatalf("ssh: %v\n%s\nwant it to fail printing %q", err, out, want)
	}
	t.Logf("ssh says: %s", strings.TrimSpace(string(out)))
	w.sink.check(t, &skWant{"github.com:22", skSSHReason, "ssh"})

	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed; ssh alone was checked")
	}
	git := exec.CommandContext(ctx, "git", "ls-remote", "git@github.com:cordon-sandbox/cordon.git")
	git.Env = append(skEnv(t, w.p, "git ls-remote"), "GIT_SSH_COMMAND=ssh "+strings.Join(skQuote(skSSHArgs()), " "))
	out, err = git.CombinedOutput()
	if err == nil || !strings.Contains(string(out), want) {
		t.Fatalf("git: %v\n%s\nwant it to fail printing %q", err, out, want)
	}
	t.Logf("git says: %s", strings.TrimSpace(string(out)))
	w.sink.check(t, &skWant{"github.com:22", skSSHReason, "git ls-remote"})
}

// skQuote quotes words for sh (GIT_SSH_COMMAND is run by a shell).
func skQuote(words []string) []string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return q
}

func TestSOCKSWithCurl(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed (apt-get install curl)")
	}
	w := skStart(t, nil)
	u, _ := url.Parse(w.p.SOCKSURL("curl"))
	curl := func(target string) (string, int) {
		// -q: no ~/.curlrc; the environment holds no *_proxy variables.
		cmd := exec.Command("curl", "-q", "-sS", "--max-time", "10",
			"--socks5-hostname", u.User.String()+"@"+u.Host, target)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	if out, code := curl("http://" + w.o4 + "/"); code != 0 || out != "hello from origin" {
		t.Errorf("allowed: exit %d, %q", code, out)
	}
	w.sink.check(t, nil)
	if out, code := curl("http://localhost:" + w.originPort + "/"); code != 0 || out != "hello from origin" {
		t.Errorf("allowed by name: exit %d, %q", code, out)
	}
	// 97 is CURLE_PROXY: the proxy refused.
	if out, code := curl("http://both.example.com/"); code != 97 {
		t.Errorf("denied: exit %d, %q; want 97", code, out)
	}
	w.sink.check(t, &skWant{"both.example.com:80", "deny wins over allow", "curl"})
}

// Every proper prefix of a valid handshake leaves the proxy waiting, then
// ends the connection when the client does, deciding nothing.
func TestSOCKSTruncatedHandshakes(t *testing.T) {
	w := skStart(t, nil)
	user, token := User("t"), w.p.cfg.Token
	full := []byte{5, 1, methodPassword, 1, byte(len(user))}
	full = append(append(append(full, user...), byte(len(token))), token...)
	full = append(full, skReq(cmdConnect, skName("both.example.com"), 443)...)
	replies := []byte{5, 2, 1, 0}
	for n := range len(full) {
		c := skRaw(t, w.p.SOCKSAddr())
		c.Write(full[:n])
		c.CloseWrite()
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		got, err := io.ReadAll(c)
		if err != nil || !bytes.HasPrefix(replies, got) {
			t.Fatalf("after %d of %d bytes: read %x, %v; want a prefix of %x and the end", n, len(full), got, err, replies)
		}
		c.Close()
	}
	w.sink.check(t, nil)
}

func TestSOCKSGarbage(t *testing.T) {
	w := skStart(t, nil)
	token := w.p.cfg.Token
	login := append([]byte{5, 1, 2, 1, 1, 'u', byte(len(token))}, token...)
	junk := make([]byte, 4096)
	for i := range junk {
		junk[i] = byte(i*7 + i>>8)
	}
	for _, tt := range []struct {
		name string
		send []byte
		want []byte
	}{
		{"HTTP request", []byte("GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n"), nil},
		{"TLS client hello", []byte{0x16, 3, 1, 0, 0xa5, 1, 0, 0, 0xa1, 3, 3}, nil},
		{"all ones", bytes.Repeat([]byte{0xff}, 600), nil},
		{"version 5, then junk", append([]byte{5}, junk...), []byte{5, 0xff}},
		{"request of another version", slices.Concat(login, []byte{4, 1, 0, 1}), []byte{5, 2, 1, 0}},
		{"junk after login", slices.Concat(login, junk), []byte{5, 2, 1, 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := skRaw(t, w.p.SOCKSAddr())
			c.Write(tt.send) // may fail: the proxy can hang up first
			c.CloseWrite()
			got, err := io.ReadAll(c)
			if isTimeout(err) {
				t.Fatalf("proxy kept the connection open: %v", err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("read %x, want %x", got, tt.want)
			}
		})
	}
	w.sink.check(t, nil)
}

// A client that stalls, or trickles a valid handshake, is dropped when the
// handshake time is up, and others are served meanwhile.
func TestSOCKSSlowloris(t *testing.T) {
	const timeout = 300 * time.Millisecond
	w := skStart(t, func(c *Config) { c.HandshakeTimeout = timeout })
	user, token := User("slow"), w.p.cfg.Token
	handshake := append([]byte{5, 1, 2, 1, byte(len(user))}, user...)
	handshake = append(append(handshake, byte(len(token))), token...)
	for _, tt := range []struct {
		name  string
		every time.Duration // 0: one byte, then nothing
	}{
		{"one byte then silence", 0},
		{"one byte every 50ms", 50 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			slow := skRaw(t, w.p.SOCKSAddr())
			start := time.Now()
			slow.Write(handshake[:1])
			if tt.every > 0 {
				go func() {
					for _, b := range handshake[1:] {
						time.Sleep(tt.every)
						if _, err := slow.Write([]byte{b}); err != nil {
							return
						}
					}
				}()
			}
			c, err := skDial(w.p.SOCKSAddr(), w.auth("fast"), w.o4)
			if err != nil {
				t.Fatalf("another client while one stalls: %v", err)
			}
			body, err := skGet(c)
			c.Close()
			if err != nil || !strings.HasSuffix(body, "hello from origin") {
				t.Fatalf("another client while one stalls: %q, %v", body, err)
			}
			slow.SetReadDeadline(time.Now().Add(3 * time.Second))
			got, err := io.ReadAll(slow)
			elapsed := time.Since(start)
			if isTimeout(err) || elapsed > time.Second || elapsed < timeout/2 {
				t.Fatalf("slow client ended after %v (%x, %v); want about %v", elapsed, got, err, timeout)
			}
		})
	}
}

// Close ends open tunnels and half-done handshakes and leaves no goroutine.
func TestSOCKSCloseLeavesNothing(t *testing.T) {
	origin := skOrigin(t, "tcp4", "127.0.0.1:0")
	before := runtime.NumGoroutine()
	rules, err := hostmatch.Compile([]string{origin}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := StartPair(Config{Rules: rules, Token: NewToken()}, Listen{})
	if err != nil {
		t.Fatal(err)
	}
	auth := &xproxy.Auth{User: User("t"), Password: p.cfg.Token}
	var conns []net.Conn
	for range 10 {
		c, err := skDial(p.SOCKSAddr(), auth, origin)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: o\r\n\r\n") // leaves the tunnel busy, kept alive
		conns = append(conns, c)
	}
	for range 3 {
		c := skRaw(t, p.SOCKSAddr())
		c.Write([]byte{5, 1})
		conns = append(conns, c)
	}
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs with tunnels open")
	}
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := io.ReadAll(c); isTimeout(err) {
			t.Fatal("a connection is still open after Close")
		}
		c.Close()
	}
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSOCKSUnreachableCodes(t *testing.T) {
	for _, tt := range []struct {
		r    refusal
		want byte
	}{
		{refusal{kind: unreachable, err: &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}, repConnRefused},
		{refusal{kind: unreachable, err: &net.OpError{Op: "dial", Err: os.ErrDeadlineExceeded}}, repTTLExpired},
		{refusal{kind: unreachable, err: context.DeadlineExceeded}, repTTLExpired},
		{refusal{kind: unresolved, err: context.DeadlineExceeded}, repHostUnreachable},
		{refusal{kind: unresolved, err: &net.DNSError{Err: "no such host", IsNotFound: true}}, repHostUnreachable},
		{refusal{kind: unreachable, err: os.NewSyscallError("connect", syscall.ENETUNREACH)}, repHostUnreachable},
		{refusal{kind: badTarget, reason: "port 0 is not 1-65535"}, repHostUnreachable},
		{refusal{kind: refusedByDenylist, reason: "connection refused"}, repNotAllowed},
		{refusal{kind: refusedByAllowlist}, repNotAllowed},
		{refusal{kind: refusedAddress}, repNotAllowed},
	} {
		if got := replyCode(&tt.r); got != tt.want {
			t.Errorf("replyCode(%+v) = 0x%02x, want 0x%02x", tt.r, got, tt.want)
		}
	}
}
