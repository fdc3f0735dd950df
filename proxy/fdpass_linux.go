package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/cordon-sandbox/cordon/violation"

	"golang.org/x/sys/unix"
)

// The Linux bridge: cordon's init inside the sandbox accepts each client's
// TCP connection on the sandbox's own loopback and hands the socket itself
// to the host proxies over a socketpair it inherited, one SCM_RIGHTS
// message per connection. The proxies then splice TCP to TCP and the
// bridge leaves the data path. The message's one data byte says which
// proxy the connection is for.
const (
	TagHTTP  = 'H'
	TagSOCKS = 'S'
	// TagViolation carries no descriptor: its payload is a JSON
	// violation.Violation the sandbox's init saw (a seccomp refusal).
	TagViolation = 'V'
)

// maxReport bounds a violation message from the sandbox.
const maxReport = 4096

// SendViolation reports a refusal seen inside the sandbox to the host.
func SendViolation(sp int, v violation.Violation) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(b)+1 > maxReport {
		return errors.New("violation report too large")
	}
	return unix.Sendmsg(sp, append([]byte{TagViolation}, b...), nil, nil, 0)
}

// NewBridge returns the two ends of a bridge channel: a SOCK_SEQPACKET
// socketpair (one message per connection, never merged), both ends
// close-on-exec. The host serves one end with ServeFDs; the sandbox's init
// inherits the other.
func NewBridge() (host, sandbox *net.UnixConn, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	conv := func(fd int) (*net.UnixConn, error) {
		f := os.NewFile(uintptr(fd), "bridge")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			return nil, err
		}
		return c.(*net.UnixConn), nil
	}
	if host, err = conv(fds[0]); err != nil {
		unix.Close(fds[1])
		return nil, nil, err
	}
	if sandbox, err = conv(fds[1]); err != nil {
		host.Close()
		return nil, nil, err
	}
	return host, sandbox, nil
}

// SendConn hands fd (an accepted TCP socket) over the socketpair end sp,
// tagged for the HTTP or SOCKS proxy.
func SendConn(sp *net.UnixConn, tag byte, fd int) error {
	rights := unix.UnixRights(fd)
	n, oobn, err := sp.WriteMsgUnix([]byte{tag}, rights, nil)
	if err != nil {
		return err
	}
	if n != 1 || oobn != len(rights) {
		return errors.New("short write on the bridge socket")
	}
	return nil
}

// ServeFDs receives connections handed over sp until sp reaches EOF or
// the Server closes, and serves each with the proxy its tag names. Every
// received descriptor must be a connected TCP socket; anything else is
// closed and reported, so a compromised sandbox cannot hand the proxy a
// unix socket or a file.
func (s *Server) ServeFDs(sp *net.UnixConn) error {
	return s.ServeFDsWith(sp, func(tag byte, c *net.TCPConn) {
		switch tag {
		case TagHTTP:
			s.HandleHTTP(c)
		case TagSOCKS:
			s.HandleSOCKS(c)
		}
	})
}

// ServeFDsWith is ServeFDs with another handler for each verified TCP
// connection and its tag (for forwarding to an external proxy). handle runs
// in its own tracked goroutine; the connection is closed after it.
func (s *Server) ServeFDsWith(sp *net.UnixConn, handle func(tag byte, c *net.TCPConn)) error {
	if !s.register(sp) {
		return net.ErrClosed
	}
	defer s.unregister(sp)
	buf := make([]byte, maxReport)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, flags, _, err := sp.ReadMsgUnix(buf, oob)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) {
				return nil // the Server closed, or the sandbox side did
			}
			return err
		}
		if n == 0 && oobn == 0 {
			return nil // the sandbox side closed
		}
		fds, perr := parseRights(oob[:oobn])
		if n > 1 && buf[0] == TagViolation && oobn == 0 && flags&unix.MSG_TRUNC == 0 {
			s.report(buf[1:n])
			continue
		}
		if flags&unix.MSG_CTRUNC != 0 || perr != nil || len(fds) != 1 || n != 1 {
			for _, fd := range fds {
				unix.Close(fd)
			}
			continue
		}
		tag := buf[0]
		if tag != TagHTTP && tag != TagSOCKS {
			unix.Close(fds[0])
			continue
		}
		c, err := tcpConnFromFD(fds[0])
		if err != nil {
			continue
		}
		s.spawn(c, func(net.Conn) { handle(tag, c) })
	}
}

func parseRights(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		r, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		fds = append(fds, r...)
	}
	return fds, nil
}

// tcpConnFromFD checks that fd is a TCP socket over IPv4 or IPv6 and wraps
// it; it closes fd on every path.
func tcpConnFromFD(fd int) (*net.TCPConn, error) {
	if err := checkTCP(fd); err != nil {
		unix.Close(fd)
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "bridged-tcp") // owns fd from here
	c, err := net.FileConn(f)                   // dups the descriptor
	f.Close()
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("handed socket is not TCP")
	}
	return tc, nil
}

func checkTCP(fd int) error {
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil || typ != unix.SOCK_STREAM {
		return fmt.Errorf("handed descriptor is not a stream socket")
	}
	dom, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil || (dom != unix.AF_INET && dom != unix.AF_INET6) {
		return fmt.Errorf("handed socket is not IPv4 or IPv6")
	}
	proto, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PROTOCOL)
	if err != nil || proto != unix.IPPROTO_TCP {
		return fmt.Errorf("handed socket is not TCP")
	}
	return nil
}

// report passes a violation the sandbox's init saw to the sink, with the
// Server's command for attribution: the sandbox writes this channel, so it
// chooses the action, target and reason of its own refusals, never whom
// they are attributed to.
func (s *Server) report(payload []byte) {
	var v violation.Violation
	if json.Unmarshal(payload, &v) != nil || s.cfg.Sink == nil {
		return
	}
	v.Command, v.CommandID = s.cfg.Command, ""
	if v.Time.IsZero() {
		v.Time = time.Now()
	}
	s.cfg.Sink(v)
}
