package proxy

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/cordon-sandbox/cordon/hostmatch"
)

// Limits on what a client (or an upstream) may send before its body. Past
// them the connection is answered and dropped: a hostile client costs a
// bounded amount of memory and time.
const (
	maxHeadBytes  = 64 << 10 // request or response line plus headers
	maxHeaderKeys = 200
	maxChunkLine  = 4 << 10
	idleTimeout   = 2 * time.Minute // between requests on a kept-alive connection
)

// head is a request or a response before its body: the first line split in
// three, and the header fields in order as sent.
type head struct {
	first  [3]string
	fields []field
}

type field struct{ name, value string }

func (h *head) get(name string) (string, int) {
	v, n := "", 0
	for _, f := range h.fields {
		if strings.EqualFold(f.name, name) {
			if n == 0 {
				v = f.value
			}
			n++
		}
	}
	return v, n
}

// tokens returns the comma-separated tokens of every field called name,
// lower-cased.
func (h *head) tokens(name string) []string {
	var out []string
	for _, f := range h.fields {
		if strings.EqualFold(f.name, name) {
			for _, t := range strings.Split(f.value, ",") {
				if t = strings.ToLower(strings.TrimSpace(t)); t != "" {
					out = append(out, t)
				}
			}
		}
	}
	return out
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// httpError is a refusal of the client's request: the status to answer,
// and the header naming the reason for proxy refusals.
type httpError struct {
	status int
	kind   string // X-Proxy-Error value; "" for plain protocol errors
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(format string, args ...any) *httpError {
	return &httpError{status: 400, msg: fmt.Sprintf(format, args...)}
}

// readHead reads a first line and header fields from br. It refuses
// obsolete line folding, control characters and oversize heads: anything
// two HTTP parsers might read differently is refused rather than passed on.
func readHead(br *bufio.Reader) (*head, error) {
	var h head
	total := 0
	for i := 0; ; i++ {
		line, err := readLine(br, maxHeadBytes-total)
		if err != nil {
			if i == 0 && errors.Is(err, io.EOF) && total == 0 {
				return nil, io.EOF
			}
			return nil, err
		}
		total += len(line) + 2
		if i == 0 {
			if line == "" {
				// RFC 9112 2.2: tolerate blank lines before the request.
				i = -1
				if total > 256 {
					return nil, badRequest("too many empty lines before the request")
				}
				continue
			}
			parts := strings.SplitN(line, " ", 3)
			// A status line may omit its reason phrase ("HTTP/1.1 204");
			// a request line never has fewer than three parts.
			if len(parts) < 2 || len(parts) == 2 && !strings.HasPrefix(parts[0], "HTTP/") {
				return nil, badRequest("malformed first line %q", clip(line))
			}
			copy(h.first[:], parts)
			continue
		}
		if line == "" {
			return &h, nil
		}
		if line[0] == ' ' || line[0] == '\t' {
			return nil, badRequest("obsolete header line folding is not accepted")
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || !validToken(name) {
			return nil, badRequest("malformed header line %q", clip(line))
		}
		value = strings.Trim(value, " \t")
		for i := 0; i < len(value); i++ {
			if c := value[i]; c < 0x20 && c != '\t' || c == 0x7f {
				return nil, badRequest("header %s holds a control character", name)
			}
		}
		if len(h.fields) >= maxHeaderKeys {
			return nil, &httpError{status: 431, msg: fmt.Sprintf("more than %d header fields", maxHeaderKeys)}
		}
		h.fields = append(h.fields, field{name, value})
	}
}

// readLine reads one line ending in CRLF (a bare LF is accepted), without
// the line ending, refusing lines longer than limit.
func readLine(br *bufio.Reader, limit int) (string, error) {
	var buf []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(buf)+len(frag) > limit+2 {
			return "", &httpError{status: 431, msg: "request head too large"}
		}
		buf = append(buf, frag...)
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(buf) == 0 && errors.Is(err, io.EOF) {
			return "", io.EOF
		}
		return "", io.ErrUnexpectedEOF
	}
	buf = bytes.TrimSuffix(buf[:len(buf)-1], []byte("\r"))
	if bytes.IndexByte(buf, '\r') >= 0 || bytes.IndexByte(buf, 0) >= 0 {
		return "", badRequest("a bare CR or a NUL byte in the head")
	}
	return string(buf), nil
}

func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// request is a parsed proxy request.
type request struct {
	*head
	method, target, proto string
	host                  string // as the client wrote it, without brackets
	port                  int
	path                  string // origin-form for forwarding; "" for CONNECT
	user, password        string
	authOK                bool
	length                int64 // body length; -1 with chunked
	chunked               bool
	keepAlive             bool
	upgrade               bool
}

// parseRequest checks a request head for a proxy: CONNECT host:port, or an
// absolute-form http:// URL whose Host header agrees with it.
func parseRequest(h *head) (*request, error) {
	r := &request{head: h, method: h.first[0], target: h.first[1], proto: h.first[2]}
	if !validToken(r.method) {
		return nil, badRequest("malformed method %q", clip(r.method))
	}
	switch r.proto {
	case "HTTP/1.1":
		r.keepAlive = !has(h.tokens("Connection"), "close")
	case "HTTP/1.0":
		r.keepAlive = has(h.tokens("Connection"), "keep-alive")
	default:
		return nil, &httpError{status: 505, msg: fmt.Sprintf("%q is not supported; use HTTP/1.1", clip(r.proto))}
	}
	if auth, n := h.get("Proxy-Authorization"); n == 1 {
		if rest, ok := cutPrefixFold(auth, "Basic "); ok {
			if dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest)); err == nil {
				r.user, r.password, r.authOK = strings.Cut(string(dec), ":")
			}
		}
	}
	if r.method == "CONNECT" {
		host, port, err := splitAuthority(r.target, 0)
		if err != nil {
			return nil, err
		}
		r.host, r.port = host, port
		return r, nil
	}
	rest, ok := cutPrefixFold(r.target, "http://")
	if !ok {
		if strings.HasPrefix(r.target, "/") || r.target == "*" {
			return nil, badRequest("this is a proxy: send the full URL (GET http://host/path) or CONNECT host:port")
		}
		if _, ok := cutPrefixFold(r.target, "https://"); ok {
			return nil, &httpError{status: 501, msg: "https:// URLs go through CONNECT; set HTTPS_PROXY and let the client tunnel"}
		}
		return nil, badRequest("unsupported request target %q; only http:// URLs and CONNECT", clip(r.target))
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, r.path = rest[:i], rest[i:]
	}
	if r.path == "" || r.path[0] != '/' {
		r.path = "/" + r.path
	}
	if strings.ContainsAny(r.path, " #") {
		return nil, badRequest("malformed URL path")
	}
	host, port, err := splitAuthority(authority, 80)
	if err != nil {
		return nil, err
	}
	r.host, r.port = host, port
	// The Host header must name the same place as the URL: an origin that
	// routes by Host would otherwise serve a host the rules never saw.
	hv, n := h.get("Host")
	switch {
	case n > 1:
		return nil, badRequest("more than one Host header")
	case n == 1:
		hh, hp, err := splitAuthority(hv, 80)
		if err != nil {
			return nil, badRequest("Host header %q: %v", clip(hv), err)
		}
		a, _ := hostmatch.Normalize(hh)
		b, _ := hostmatch.Normalize(host)
		if a != b || hp != port {
			return nil, badRequest("Host header %q disagrees with the request target %q", clip(hv), clip(authority))
		}
	}
	te := h.tokens("Transfer-Encoding")
	cl, ncl := h.get("Content-Length")
	switch {
	case len(te) > 0 && ncl > 0:
		return nil, badRequest("both Transfer-Encoding and Content-Length")
	case len(te) > 0 && r.proto == "HTTP/1.0":
		return nil, badRequest("Transfer-Encoding in an HTTP/1.0 request (RFC 9112 6.1: its framing is faulty)")
	case len(te) > 0:
		if len(te) != 1 || te[0] != "chunked" {
			return nil, &httpError{status: 501, msg: "only Transfer-Encoding: chunked is supported in requests"}
		}
		r.chunked, r.length = true, -1
	case ncl > 0:
		l, err := contentLength(h)
		if err != nil {
			return nil, err
		}
		r.length = l
		_ = cl
	}
	r.upgrade = has(h.tokens("Connection"), "upgrade")
	return r, nil
}

func contentLength(h *head) (int64, error) {
	var l int64 = -1
	for _, f := range h.fields {
		if !strings.EqualFold(f.name, "Content-Length") {
			continue
		}
		for _, v := range strings.Split(f.value, ",") {
			v = strings.TrimSpace(v)
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 || v == "" || v[0] == '+' {
				return 0, badRequest("malformed Content-Length %q", clip(f.value))
			}
			if l >= 0 && n != l {
				return 0, badRequest("conflicting Content-Length values")
			}
			l = n
		}
	}
	return l, nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// splitAuthority parses host[:port] or [v6][:port]. defPort 0: the port is
// required.
func splitAuthority(a string, defPort int) (string, int, error) {
	if a == "" {
		return "", 0, badRequest("empty host")
	}
	if strings.ContainsAny(a, "@ \t") {
		return "", 0, badRequest("%q: user info or white space in the host", clip(a))
	}
	host, portStr := a, ""
	if strings.HasPrefix(a, "[") {
		end := strings.IndexByte(a, ']')
		if end < 0 {
			return "", 0, badRequest("%q: unclosed [", clip(a))
		}
		host, portStr = a[1:end], a[end+1:]
		if portStr != "" {
			if portStr[0] != ':' {
				return "", 0, badRequest("%q: junk after ]", clip(a))
			}
			portStr = portStr[1:]
		}
	} else if i := strings.LastIndexByte(a, ':'); i >= 0 {
		if strings.IndexByte(a, ':') != i {
			return "", 0, badRequest("%q: bracket an IPv6 address", clip(a))
		}
		host, portStr = a[:i], a[i+1:]
	}
	if host == "" {
		return "", 0, badRequest("%q: empty host", clip(a))
	}
	if portStr == "" {
		if defPort == 0 {
			return "", 0, badRequest("%q: CONNECT needs host:port", clip(a))
		}
		return host, defPort, nil
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 1 || port > 65535 || portStr[0] == '+' {
		return "", 0, badRequest("%q: port is not 1-65535", clip(a))
	}
	return host, port, nil
}

// HandleHTTP serves one client connection of the HTTP proxy: CONNECT
// tunnels and absolute-form requests, kept alive across requests.
func (s *Server) HandleHTTP(c net.Conn) {
	br := bufio.NewReaderSize(c, 16<<10)
	var up *upstream
	defer func() {
		if up != nil {
			up.close(s)
		}
	}()
	deadline := s.cfg.HandshakeTimeout
	for {
		c.SetReadDeadline(time.Now().Add(deadline))
		h, err := readHead(br)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				writeError(c, err)
			}
			return
		}
		c.SetReadDeadline(time.Time{})
		deadline = idleTimeout
		r, err := parseRequest(h)
		if err != nil {
			writeError(c, err)
			return
		}
		if s.authRequired() && (!r.authOK || !s.checkAuth(r.password)) {
			writeResponse(c, 407, "Proxy Authentication Required", []string{`Proxy-Authenticate: Basic realm="cordon"`},
				"cordon: this proxy needs the session's credential (use the proxy URL cordon set, user info included)\n")
			return
		}
		command := commandOf(r.user)
		if r.method == "CONNECT" {
			if up != nil {
				up.close(s)
				up = nil
			}
			s.connect(c, br, r, command)
			return
		}
		key := net.JoinHostPort(r.host, strconv.Itoa(r.port))
		// Every request is decided again, also on a kept-alive upstream:
		// the rules may have changed since (SetRules, --control-fd).
		if up != nil && (up.key != key || !s.Rules().Decide(r.host, r.port).Allowed) {
			up.close(s)
			up = nil
		}
		if up == nil {
			conn, err := s.connectTo(r.host, r.port, command)
			if err != nil {
				writeError(c, refusalToHTTP(err, key))
				return
			}
			if !s.register(conn) {
				conn.Close()
				return
			}
			up = &upstream{key: key, conn: conn, br: bufio.NewReaderSize(conn, 16<<10)}
		}
		keep, err := s.forward(c, br, up, r)
		if err != nil || !keep {
			return
		}
	}
}

type upstream struct {
	key  string
	conn *net.TCPConn
	br   *bufio.Reader
}

func (u *upstream) close(s *Server) {
	s.unregister(u.conn)
	u.conn.Close()
}

// connect answers CONNECT: decide, dial, 200, then a byte tunnel.
func (s *Server) connect(c net.Conn, br *bufio.Reader, r *request, command string) {
	target := net.JoinHostPort(r.host, strconv.Itoa(r.port))
	conn, err := s.connectTo(r.host, r.port, command)
	if err != nil {
		writeError(c, refusalToHTTP(err, target))
		return
	}
	if !s.register(conn) {
		conn.Close()
		return
	}
	defer s.unregister(conn)
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		conn.Close()
		return
	}
	tunnel(c, br, conn, nil)
}

// forward sends one absolute-form request upstream and relays its
// response. It reports whether the client connection may carry another
// request.
func (s *Server) forward(c net.Conn, br *bufio.Reader, up *upstream, r *request) (bool, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s\r\n", r.method, r.path, r.proto)
	if _, n := r.get("Host"); n == 0 {
		fmt.Fprintf(&b, "Host: %s\r\n", hostHeader(r.host, r.port))
	}
	for _, f := range r.fields {
		// The credential is for this proxy; it must never reach an origin.
		if strings.EqualFold(f.name, "Proxy-Authorization") || strings.EqualFold(f.name, "Proxy-Connection") {
			continue
		}
		b.WriteString(f.name)
		b.WriteString(": ")
		b.WriteString(f.value)
		b.WriteString("\r\n")
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(up.conn, b.String()); err != nil {
		return false, err
	}
	// The body goes up while the response comes down: a server may answer
	// 100 Continue first, or refuse before the body ends.
	bodyErr := make(chan error, 1)
	switch {
	case r.chunked:
		go func() { bodyErr <- relayChunked(up.conn, br, c) }()
	case r.length > 0:
		go func() { bodyErr <- copyN(up.conn, br, c, r.length) }()
	default:
		bodyErr <- nil // no body: nothing to wait for
	}
	keep, upgraded, err := s.relayResponse(c, up, r)
	if err != nil {
		c.Close()
		up.conn.Close()
		<-bodyErr
		return false, err
	}
	select {
	case berr := <-bodyErr:
		if berr != nil {
			return false, berr
		}
	case <-time.After(200 * time.Millisecond):
		// The response ended and the request body has not: the server
		// answered early, and the connection is out of step. End it.
		c.Close()
		up.conn.Close()
		<-bodyErr
		return false, nil
	}
	if upgraded {
		tunnel(c, br, up.conn, up.br)
		return false, nil
	}
	return keep, nil
}

func hostHeader(host string, port int) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == 80 {
		return host
	}
	return host + ":" + strconv.Itoa(port)
}

// relayResponse copies responses from upstream to the client until a
// final one (relaying 1xx interim responses). It reports whether both
// sides keep the connection alive, and whether it was upgraded (101).
func (s *Server) relayResponse(c net.Conn, up *upstream, r *request) (keep, upgraded bool, err error) {
	for {
		h, err := readHead(up.br)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return false, false, fmt.Errorf("reading the response from %s: %w", up.key, err)
		}
		code, cerr := strconv.Atoi(h.first[1])
		if cerr != nil || code < 100 || code > 999 || !strings.HasPrefix(h.first[0], "HTTP/1.") {
			return false, false, fmt.Errorf("%s sent a malformed status line", up.key)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s %s\r\n", h.first[0], h.first[1], h.first[2])
		for _, f := range h.fields {
			fmt.Fprintf(&b, "%s: %s\r\n", f.name, f.value)
		}
		b.WriteString("\r\n")
		if _, err := io.WriteString(c, b.String()); err != nil {
			return false, false, err
		}
		if code == 101 {
			return false, r.upgrade, nil
		}
		if code < 200 {
			continue // interim: another response follows
		}
		keep = r.keepAlive && keepAliveResponse(h)
		switch {
		case r.method == "HEAD" || code == 204 || code == 304:
			return keep, false, nil
		case len(h.tokens("Transfer-Encoding")) > 0:
			te := h.tokens("Transfer-Encoding")
			if te[len(te)-1] != "chunked" {
				return false, false, copyAll(c, up.br, up.conn)
			}
			return keep, false, relayChunked(c, up.br, up.conn)
		default:
			if _, n := h.get("Content-Length"); n > 0 {
				l, err := contentLength(h)
				if err != nil {
					return false, false, fmt.Errorf("%s: %v", up.key, err)
				}
				return keep, false, copyN(c, up.br, up.conn, l)
			}
			// No length: the body ends when the server closes.
			return false, false, copyAll(c, up.br, up.conn)
		}
	}
}

func keepAliveResponse(h *head) bool {
	conn := h.tokens("Connection")
	if h.first[0] == "HTTP/1.0" {
		return has(conn, "keep-alive")
	}
	return !has(conn, "close")
}

// relayChunked copies a chunked body, chunk by chunk, checking the framing
// so that both ends agree on where the body stops.
func relayChunked(dst io.Writer, br *bufio.Reader, raw net.Conn) error {
	for {
		line, err := readLine(br, maxChunkLine)
		if err != nil {
			return err
		}
		sizeStr, _, _ := strings.Cut(line, ";")
		size, ok := parseChunkSize(sizeStr)
		if !ok {
			return fmt.Errorf("malformed chunk size %q", clip(line))
		}
		// The size is written again in canonical form and extensions are
		// dropped, so that the next hop reads exactly the framing this
		// proxy read.
		if _, err := fmt.Fprintf(dst, "%x\r\n", size); err != nil {
			return err
		}
		if size == 0 {
			// Trailer fields are read and dropped: nothing ambiguous passes.
			for {
				t, err := readLine(br, maxChunkLine)
				if err != nil {
					return err
				}
				if t == "" {
					_, err := io.WriteString(dst, "\r\n")
					return err
				}
			}
		}
		if err := copyN(dst, br, raw, size); err != nil {
			return err
		}
		if end, err := readLine(br, 0); err != nil || end != "" {
			return errors.New("chunk not followed by CRLF")
		}
		if _, err := io.WriteString(dst, "\r\n"); err != nil {
			return err
		}
	}
}

// parseChunkSize accepts 1 to 16 hex digits, optionally followed by
// spaces or tabs (RFC 9112 allows whitespace before an extension); no
// sign, no prefix, nothing that overflows.
func parseChunkSize(s string) (int64, bool) {
	s = strings.TrimRight(s, " \t")
	if s == "" || len(s) > 16 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | uint64(d)
	}
	if n > 1<<62 {
		return 0, false
	}
	return int64(n), true
}

// refusalToHTTP maps why a destination was not reached to a status.
func refusalToHTTP(err error, target string) *httpError {
	var r *refusal
	if !errors.As(err, &r) {
		return &httpError{status: 502, kind: "upstream-unreachable", msg: fmt.Sprintf("cordon: %s unreachable: %v", target, err)}
	}
	switch r.kind {
	case refusedByDenylist:
		return &httpError{403, "blocked-by-denylist", fmt.Sprintf("cordon: %s blocked: %s", target, r.reason)}
	case refusedByAllowlist:
		return &httpError{403, "blocked-by-allowlist", fmt.Sprintf("cordon: %s blocked: %s", target, r.reason)}
	case refusedAddress:
		return &httpError{403, "blocked-by-address-guard", fmt.Sprintf("cordon: %s blocked: %s", target, r.reason)}
	case badTarget:
		return &httpError{400, "", fmt.Sprintf("cordon: %s: %s", target, r.reason)}
	}
	return &httpError{502, "upstream-unreachable", fmt.Sprintf("cordon: %s unreachable: %s", target, r.reason)}
}

func writeError(c net.Conn, err error) {
	var he *httpError
	if !errors.As(err, &he) {
		if errors.Is(err, io.ErrUnexpectedEOF) || isTimeout(err) {
			return // the client went away or stalled: nobody to tell
		}
		he = badRequest("%v", err)
	}
	var extra []string
	if he.kind != "" {
		extra = append(extra, "X-Proxy-Error: "+he.kind)
	}
	msg := he.msg
	if !strings.HasPrefix(msg, "cordon: ") {
		msg = "cordon: " + msg
	}
	writeResponse(c, he.status, statusText(he.status), extra, msg+"\n")
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func writeResponse(c net.Conn, code int, text string, extra []string, body string) {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n", code, text, len(body))
	for _, e := range extra {
		b.WriteString(e + "\r\n")
	}
	b.WriteString("\r\n")
	b.WriteString(body)
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, b.String())
}

func statusText(code int) string {
	switch code {
	case 400:
		return "Bad Request"
	case 403:
		return "Forbidden"
	case 407:
		return "Proxy Authentication Required"
	case 431:
		return "Request Header Fields Too Large"
	case 501:
		return "Not Implemented"
	case 502:
		return "Bad Gateway"
	case 505:
		return "HTTP Version Not Supported"
	}
	return "Error"
}
