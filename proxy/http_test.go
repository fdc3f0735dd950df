package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordon-sandbox/cordon/hostmatch"
	"github.com/cordon-sandbox/cordon/violation"
)

// htFakeResolver answers test names without DNS.
type htFakeResolver map[string][]netip.Addr

func (r htFakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// htSink collects violations.
type htSink struct {
	mu sync.Mutex
	vs []violation.Violation
}

func (s *htSink) add(v violation.Violation) { s.mu.Lock(); s.vs = append(s.vs, v); s.mu.Unlock() }
func (s *htSink) all() []violation.Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]violation.Violation(nil), s.vs...)
}

// htOrigin is a real HTTP server on loopback with the handlers the tests use.
func htOrigin(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Proxy-Authorization") != "" {
			http.Error(w, "proxy credential leaked to the origin", 500)
			return
		}
		fmt.Fprintf(w, "hello %s %s", r.Host, r.URL.RequestURI())
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Len", strconv.Itoa(len(b)))
		w.Write(b)
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 5; i++ {
			fmt.Fprintf(w, "part%d;", i)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/upgrade", func(w http.ResponseWriter, r *http.Request) {
		c, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		brw.Flush()
		line, _ := brw.ReadString('\n')
		brw.WriteString("echo:" + line)
		brw.Flush()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, strings.TrimPrefix(srv.URL, "http://")
}

type htEnv struct {
	pair   *Pair
	origin string // 127.0.0.1:port
	sink   *htSink
	token  string
}

func htStart(t *testing.T, allow, deny []string, reasons map[string]string, mod func(*Config)) *htEnv {
	t.Helper()
	_, origin := htOrigin(t)
	allow = append(allow, origin)
	rules, err := hostmatch.Compile(allow, deny, reasons)
	if err != nil {
		t.Fatal(err)
	}
	sink := &htSink{}
	cfg := Config{Rules: rules, Sink: sink.add, Token: NewToken(), Resolver: htFakeResolver{
		"rebind.lab.test": {netip.MustParseAddr("127.0.0.1")},
		"meta.lab.test":   {netip.MustParseAddr("169.254.169.254")},
	}, DialTimeout: 2 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	p, err := StartPair(cfg, Listen{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return &htEnv{pair: p, origin: origin, sink: sink, token: cfg.Token}
}

func (e *htEnv) client(command string) *http.Client {
	u, _ := url.Parse(e.pair.HTTPURL(command))
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}, Timeout: 10 * time.Second}
}

func TestHTTPAbsoluteForm(t *testing.T) {
	e := htStart(t, nil, nil, nil, nil)
	c := e.client("curl example")
	resp, err := c.Get("http://" + e.origin + "/hello?x=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello "+e.origin+" /hello?x=1" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	// Bodies both ways, fixed-length and chunked, and a streamed response.
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	resp, err = c.Post("http://"+e.origin+"/echo", "text/plain", strings.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != big {
		t.Fatalf("echo: got %d bytes", len(body))
	}
	req, _ := http.NewRequest("POST", "http://"+e.origin+"/echo", io.NopCloser(strings.NewReader("chunky")))
	req.ContentLength = -1 // forces Transfer-Encoding: chunked
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "chunky" || resp.Header.Get("X-Len") != "6" {
		t.Fatalf("chunked upload: %q %v", body, resp.Header)
	}
	resp, err = c.Get("http://" + e.origin + "/chunked")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "part0;part1;part2;part3;part4;" {
		t.Fatalf("chunked download: %q", body)
	}
	if v := e.sink.all(); len(v) != 0 {
		t.Fatalf("violations for allowed traffic: %+v", v)
	}
}

// Two requests on one client connection: the second is answered on the
// same connection (keep-alive), and the proxy re-checks its target.
func TestHTTPKeepAliveRechecksEachRequest(t *testing.T) {
	e := htStart(t, nil, nil, nil, nil)
	conn, err := net.Dial("tcp", e.pair.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	auth := basicAuth(User("ka"), e.token)
	br := bufio.NewReader(conn)
	for i := 0; i < 3; i++ {
		fmt.Fprintf(conn, "GET http://%s/hello HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: %s\r\n\r\n", e.origin, e.origin, auth)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
	}
	// Same connection, now a host the rules refuse.
	fmt.Fprintf(conn, "GET http://denied.example/ HTTP/1.1\r\nHost: denied.example\r\nProxy-Authorization: %s\r\n\r\n", auth)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 403 || resp.Header.Get("X-Proxy-Error") != "blocked-by-allowlist" {
		t.Fatalf("denied on a kept-alive connection: %d %v", resp.StatusCode, resp.Header)
	}
}

func basicAuth(user, pass string) string {
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth(user, pass)
	return r.Header.Get("Authorization")
}

// rawHTTP sends raw bytes to the proxy and returns the response.
func rawHTTP(t *testing.T, addr, raw string) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(conn, raw)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response to %q: %v", raw, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func TestHTTPRefusals(t *testing.T) {
	e := htStart(t, []string{"*.lab.test", "127.0.0.1:1"}, []string{"bad.example", "evil.lab.test"},
		map[string]string{"evil.lab.test": "known exfiltration host"}, nil)
	auth := "Proxy-Authorization: " + basicAuth(User("agent run 7"), e.token) + "\r\n"
	tests := []struct {
		name   string
		raw    string
		status int
		kind   string
		body   string
		target string // violation target; "" for none
	}{
		{"default deny", "GET http://other.example/ HTTP/1.1\r\nHost: other.example\r\n" + auth + "\r\n", 403, "blocked-by-allowlist", "not in allowedDomains", "other.example:80"},
		{"deny list", "CONNECT bad.example:443 HTTP/1.1\r\nHost: bad.example:443\r\n" + auth + "\r\n", 403, "blocked-by-denylist", "bad.example:443 blocked", "bad.example:443"},
		{"deny beats allow, with reason", "CONNECT evil.lab.test:443 HTTP/1.1\r\n" + auth + "\r\n", 403, "blocked-by-denylist", "known exfiltration host", "evil.lab.test:443"},
		{"rebinding to loopback", "CONNECT rebind.lab.test:80 HTTP/1.1\r\n" + auth + "\r\n", 403, "blocked-by-address-guard", "forbidden addresses", "rebind.lab.test:80"},
		{"metadata", "GET http://meta.lab.test/latest/ HTTP/1.1\r\nHost: meta.lab.test\r\n" + auth + "\r\n", 403, "blocked-by-address-guard", "169.254.169.254", "meta.lab.test:80"},
		{"unreachable allowed host", "CONNECT 127.0.0.1:1 HTTP/1.1\r\n" + auth + "\r\n", 502, "upstream-unreachable", "refused", ""},
		{"unresolvable allowed name", "CONNECT nowhere.lab.test:443 HTTP/1.1\r\n" + auth + "\r\n", 502, "upstream-unreachable", "cannot resolve", ""},
		{"no credential", "CONNECT " + e.origin + " HTTP/1.1\r\n\r\n", 407, "", "credential", ""},
		{"wrong credential", "CONNECT " + e.origin + " HTTP/1.1\r\nProxy-Authorization: " + basicAuth("x", "wrong") + "\r\n\r\n", 407, "", "credential", ""},
		{"host header disagrees", "GET http://" + e.origin + "/hello HTTP/1.1\r\nHost: evil.lab.test\r\n" + auth + "\r\n", 400, "", "disagrees", ""},
		{"two host headers", "GET http://" + e.origin + "/ HTTP/1.1\r\nHost: " + e.origin + "\r\nHost: " + e.origin + "\r\n" + auth + "\r\n", 400, "", "more than one Host", ""},
		{"origin-form", "GET /hello HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 400, "", "send the full URL", ""},
		{"https absolute", "GET https://a.lab.test/ HTTP/1.1\r\n" + auth + "\r\n", 501, "", "CONNECT", ""},
		{"smuggling CL+TE", "POST http://" + e.origin + "/echo HTTP/1.1\r\nHost: " + e.origin + "\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n" + auth + "\r\n", 400, "", "both Transfer-Encoding and Content-Length", ""},
		{"conflicting CL", "POST http://" + e.origin + "/echo HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n" + auth + "\r\n", 400, "", "conflicting", ""},
		{"obs-fold", "GET http://" + e.origin + "/ HTTP/1.1\r\nX: a\r\n b\r\n" + auth + "\r\n", 400, "", "folding", ""},
		{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\n", 505, "", "HTTP/1.1", ""},
		{"userinfo in target", "CONNECT user@a.lab.test:443 HTTP/1.1\r\n" + auth + "\r\n", 400, "", "user info", ""},
		{"unbracketed v6", "CONNECT ::1:443 HTTP/1.1\r\n" + auth + "\r\n", 400, "", "bracket", ""},
		{"port zero", "CONNECT a.lab.test:0 HTTP/1.1\r\n" + auth + "\r\n", 400, "", "port", ""},
		{"huge header", "GET http://" + e.origin + "/ HTTP/1.1\r\nX: " + strings.Repeat("a", 70000) + "\r\n\r\n", 431, "", "too large", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.sink.all())
			resp, body := rawHTTP(t, e.pair.HTTPAddr(), tc.raw)
			if resp.StatusCode != tc.status || resp.Header.Get("X-Proxy-Error") != tc.kind || !strings.Contains(body, tc.body) {
				t.Fatalf("got %d %q %q; want %d %q containing %q", resp.StatusCode, resp.Header.Get("X-Proxy-Error"), body, tc.status, tc.kind, tc.body)
			}
			vs := e.sink.all()[before:]
			if tc.target == "" {
				if len(vs) != 0 {
					t.Fatalf("unexpected violations %+v", vs)
				}
				return
			}
			if len(vs) != 1 || vs[0].Target != tc.target || vs[0].Action != violation.NetworkOutbound || vs[0].Command != "agent run 7" || vs[0].Reason == "" {
				t.Fatalf("violations %+v, want one for %s by %q", vs, tc.target, "agent run 7")
			}
		})
	}
}

// CONNECT carries any TCP protocol, including an upgraded WebSocket-style
// stream; absolute-form requests can upgrade too (101).
func TestHTTPTunnels(t *testing.T) {
	e := htStart(t, nil, nil, nil, nil)
	auth := "Proxy-Authorization: " + basicAuth(User("t"), e.token) + "\r\n"
	conn, err := net.Dial("tcp", e.pair.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	// The first request of the tunnel rides in the same packet as CONNECT.
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\n%s\r\nGET /hello HTTP/1.1\r\nHost: %s\r\n\r\n", e.origin, auth, e.origin)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "hello "+e.origin+" /hello" {
		t.Fatalf("through the tunnel: %q", b)
	}

	conn2, err := net.Dial("tcp", e.pair.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	conn2.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn2, "GET http://%s/upgrade HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: echo\r\n%s\r\n", e.origin, e.origin, auth)
	br2 := bufio.NewReader(conn2)
	resp, err = http.ReadResponse(br2, nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	io.WriteString(conn2, "ping\n")
	line, err := br2.ReadString('\n')
	if err != nil || line != "echo:ping\n" {
		t.Fatalf("after upgrade: %q %v", line, err)
	}
}

func TestHTTPWithCurl(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed (apt-get install curl)")
	}
	e := htStart(t, nil, []string{"blocked.example"}, map[string]string{"blocked.example": "no thanks"}, nil)
	proxyURL := e.pair.HTTPURL("curl")
	curl := func(args ...string) (string, int) {
		out, err := exec.Command("curl", append([]string{"-sS", "-x", proxyURL, "--max-time", "10"}, args...)...).CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return string(out), code
	}
	if out, code := curl("http://" + e.origin + "/hello"); code != 0 || out != "hello "+e.origin+" /hello" {
		t.Errorf("absolute-form: %d %q", code, out)
	}
	if out, code := curl("-p", "http://"+e.origin+"/hello"); code != 0 || !strings.Contains(out, "hello") {
		t.Errorf("CONNECT (-p): %d %q", code, out)
	}
	if out, code := curl("-H", "Expect: 100-continue", "--data-binary", strings.Repeat("x", 5000), "http://"+e.origin+"/echo"); code != 0 || len(out) != 5000 {
		t.Errorf("100-continue upload: %d %d bytes", code, len(out))
	}
	if out, code := curl("-i", "http://blocked.example/"); code != 0 || !strings.Contains(out, "403") || !strings.Contains(out, "X-Proxy-Error: blocked-by-denylist") || !strings.Contains(out, "no thanks") {
		t.Errorf("denied: %d %q", code, out)
	}
	if out, code := curl("https://blocked.example/"); code == 0 || !strings.Contains(out, "403") {
		t.Errorf("denied CONNECT: %d %q", code, out)
	}
	// Without the credential the proxy is useless to other local processes.
	bare := "http://" + e.pair.HTTPAddr()
	out, _ := exec.Command("curl", "-sS", "-i", "-x", bare, "http://"+e.origin+"/hello").CombinedOutput()
	if !strings.Contains(string(out), "407") {
		t.Errorf("no credential: %q", out)
	}
}

// A client that sends half a request and stalls is dropped after the
// handshake timeout, and others are served meanwhile.
func TestHTTPSlowloris(t *testing.T) {
	e := htStart(t, nil, nil, nil, func(c *Config) { c.HandshakeTimeout = 300 * time.Millisecond })
	slow, err := net.Dial("tcp", e.pair.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	io.WriteString(slow, "GET http://")
	resp, err := e.client("x").Get("http://" + e.origin + "/hello")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("blocked by a slow client: %v", err)
	}
	resp.Body.Close()
	slow.SetReadDeadline(time.Now().Add(3 * time.Second))
	start := time.Now()
	_, err = io.ReadAll(slow)
	if err != nil || time.Since(start) > 2*time.Second {
		t.Fatalf("slow client not dropped: %v after %v", err, time.Since(start))
	}
}

func TestPairCloseLeavesNothing(t *testing.T) {
	e := htStart(t, nil, nil, nil, nil)
	// Open tunnels that stay open.
	auth := "Proxy-Authorization: " + basicAuth("u", e.token) + "\r\n"
	var conns []net.Conn
	for i := 0; i < 20; i++ {
		c, err := net.Dial("tcp", e.pair.HTTPAddr())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n%s\r\n", e.origin, auth)
		resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: "CONNECT"})
		if err != nil || resp.StatusCode != 200 {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	done := make(chan struct{})
	go func() { e.pair.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs with tunnels open")
	}
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil || isTimeout(err) {
			t.Fatalf("tunnel still open after Close: %v", err)
		}
		c.Close()
	}
	if _, err := net.Dial("tcp", e.pair.HTTPAddr()); err == nil {
		t.Fatal("listener still accepting after Close")
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte("GET http://example.com/x HTTP/1.1\r\nHost: example.com\r\n\r\n"))
	f.Add([]byte("CONNECT [::1]:443 HTTP/1.1\r\nProxy-Authorization: Basic dTpw\r\n\r\n"))
	f.Add([]byte("POST http://a.b:8080/ HTTP/1.0\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"))
	f.Add([]byte("\r\n\r\nGET http://a/ HTTP/1.1\r\nX:\t y \r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := readHead(bufio.NewReaderSize(strings.NewReader(string(data)), 4096))
		if err != nil {
			return
		}
		r, err := parseRequest(h)
		if err != nil {
			var he *httpError
			if !errors.As(err, &he) || he.status < 400 || he.msg == "" {
				t.Fatalf("error without a status: %v", err)
			}
			return
		}
		if r.port < 1 || r.port > 65535 || r.host == "" {
			t.Fatalf("accepted a bad target %q:%d", r.host, r.port)
		}
		if r.method != "CONNECT" && (r.path == "" || r.path[0] != '/') {
			t.Fatalf("bad origin-form %q", r.path)
		}
		if r.chunked && r.length != -1 {
			t.Fatal("chunked with a length")
		}
	})
}

// Two sessions' pairs side by side share nothing: each has its own rules,
// and one session's credential is refused by the other's proxy.
func TestPairsAreIndependent(t *testing.T) {
	a := htStart(t, nil, nil, nil, nil)
	b := htStart(t, nil, nil, nil, nil) // b's origin is not in a's rules
	if a.token == b.token {
		t.Fatal("two pairs got the same credential")
	}
	if resp, err := a.client("x").Get("http://" + b.origin + "/hello"); err != nil || resp.StatusCode != 403 {
		t.Fatalf("a reached b's origin: %v %v", resp, err)
	}
	if resp, err := a.client("x").Get("http://" + a.origin + "/hello"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("a's own origin: %v %v", resp, err)
	}
	u, _ := url.Parse(a.pair.HTTPURL("x"))
	u.Host = b.pair.HTTPAddr() // a's credential, b's proxy
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}}
	if resp, err := c.Get("http://" + b.origin + "/hello"); err != nil || resp.StatusCode != 407 {
		t.Fatalf("a's credential on b's proxy: %v %v", resp, err)
	}
	if len(a.sink.all()) != 1 || len(b.sink.all()) != 0 {
		t.Fatalf("violations crossed sessions: a %v, b %v", a.sink.all(), b.sink.all())
	}
}

// A NAT64 address embedding a forbidden IPv4 address is forbidden too.
func TestGuardNAT64(t *testing.T) {
	g, err := newAddrGuard([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ip        string
		forbidden bool
		user      bool
	}{
		{"64:ff9b::a9fe:a9fe", true, false}, // 169.254.169.254
		{"64:ff9b::7f00:1", true, false},    // 127.0.0.1
		{"64:ff9b::a00:1", false, true},     // 10.0.0.1, user-denied
		{"64:ff9b::5db8:d822", false, false},
		{"::ffff:169.254.169.254", true, false},
		{"64:ff9b:1::a9fe:a9fe", true, false}, // local-use NAT64
		{"::ffff:0:a9fe:a9fe", true, false},   // SIIT
		{"::a9fe:a9fe", true, false},          // IPv4-compatible
		{"2002:a9fe:a9fe::", true, false},     // 6to4
		{"fe80::1%eth0", true, false},         // a zone must not hide link-local
	} {
		ip := netip.MustParseAddr(tc.ip)
		if g.forbidden(ip) != tc.forbidden || g.userDenied(ip) != tc.user {
			t.Errorf("%s: forbidden=%v userDenied=%v, want %v %v", tc.ip, g.forbidden(ip), g.userDenied(ip), tc.forbidden, tc.user)
		}
	}
}

// Review findings, each with its test: the rules are re-read on a kept-alive
// connection; framing that two parsers could read differently is refused or
// rewritten; a status line without a reason phrase is relayed.
func TestHTTPReviewFindings(t *testing.T) {
	e := htStart(t, nil, nil, nil, nil)
	auth := "Proxy-Authorization: " + basicAuth(User("r"), e.token) + "\r\n"

	conn, err := net.Dial("tcp", e.pair.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	get := func() int {
		fmt.Fprintf(conn, "GET http://%s/hello HTTP/1.1\r\nHost: %s\r\n%s\r\n", e.origin, e.origin, auth)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	if c := get(); c != 200 {
		t.Fatalf("first request: %d", c)
	}
	rules, _ := hostmatch.Compile(nil, []string{e.origin}, nil)
	e.pair.SetRules(rules)
	if c := get(); c != 403 {
		t.Errorf("after SetRules, a kept-alive connection still reached the origin: %d", c)
	}

	resp, body := rawHTTP(t, e.pair.HTTPAddr(), "POST http://"+e.origin+"/echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n"+auth+"\r\n5\r\nhello\r\n0\r\n\r\n")
	if resp.StatusCode != 400 || !strings.Contains(body, "HTTP/1.0") {
		t.Errorf("chunked HTTP/1.0 request: %d %q", resp.StatusCode, body)
	}
	for _, bad := range []string{"+5", "-5", "0x5", "11111111111111111", ""} {
		if _, ok := parseChunkSize(bad); ok {
			t.Errorf("chunk size %q accepted", bad)
		}
	}
	if n, ok := parseChunkSize("1aF \t"); !ok || n != 0x1af {
		t.Errorf("chunk size 1aF: %d %v", n, ok)
	}
	var out strings.Builder
	in := "005 ;ext=\"x\"\r\nhello\r\n0\r\nTrailer: x\r\n\r\n"
	if err := relayChunked(&out, bufio.NewReader(strings.NewReader(in)), nil); err != nil || out.String() != "5\r\nhello\r\n0\r\n\r\n" {
		t.Errorf("relayChunked rewrote %q to %q (%v)", in, out.String(), err)
	}
	h, err := readHead(bufio.NewReader(strings.NewReader("HTTP/1.1 204\r\n\r\n")))
	if err != nil || h.first[1] != "204" {
		t.Errorf("status line without a reason: %v %+v", err, h)
	}
}
