package proxy

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"syscall"
	"time"
)

// SOCKS5 (RFC 1928) with username/password authentication (RFC 1929).
// Only the values cordon speaks are named.
const (
	socksVersion = 5

	methodNone         = 0x00
	methodPassword     = 0x02
	methodNoAcceptable = 0xff

	passwordVersion = 1 // RFC 1929 sub-negotiation

	cmdConnect = 1

	atypIPv4   = 1
	atypDomain = 3
	atypIPv6   = 4

	repSucceeded           = 0x00
	repGeneralFailure      = 0x01
	repNotAllowed          = 0x02
	repHostUnreachable     = 0x04
	repConnRefused         = 0x05
	repTTLExpired          = 0x06
	repCommandUnsupported  = 0x07
	repAddrTypeUnsupported = 0x08
)

// socks4Rejected is a SOCKS4 "request rejected or failed" reply. A SOCKS4
// client gets it at once rather than an unexplained hang-up, and learns
// nothing else: cordon speaks only SOCKS5, which carries the credential.
var socks4Rejected = []byte{0, 0x5b, 0, 0, 0, 0, 0, 0}

// lingerTimeout bounds hangUp.
const lingerTimeout = time.Second

// HandleSOCKS serves one SOCKS5 client connection: one CONNECT, decided by
// the rules, then a byte tunnel. The whole handshake must arrive within
// Config.HandshakeTimeout.
//
// Methods: with a Token, only username/password (0x02) is offered; the
// password must be the Token and the user name is the command (see User).
// Without a Token, no authentication (0x00) is preferred, and 0x02 with any
// password is accepted, for its user name. A client that offers neither is
// answered 0xFF. A SOCKS4 client is answered "request rejected" (0x5B).
//
// Only CONNECT is served (BIND and UDP ASSOCIATE: 0x07). Addresses may be
// IPv4, IPv6 or a name, which the proxy resolves (socks5h); any other
// address type: 0x08. Reply codes:
//
//	0x00  connected; BND is the proxy's local address upstream
//	0x02  refused by deniedDomains, by allowedDomains (or when asked), or by
//	      the resolved-address guard; a violation is recorded
//	0x04  the name does not resolve, the host or port is malformed, or the
//	      dial failed otherwise
//	0x05  the destination refused the connection
//	0x06  the dial timed out
//
// A refused destination on port 22 is answered 0x00 instead, and the proxy
// then refuses as an SSH server would, so that ssh and git print the reason
// (see refuseSSH).
func (s *Server) HandleSOCKS(c net.Conn) {
	c.SetDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	// Every field is at most 255 bytes behind a length byte, plus a port.
	var buf [2 + 255]byte
	command, ok := s.negotiate(c, buf[:])
	if !ok {
		return
	}
	host, port, rep, err := readRequest(c, buf[:])
	if err != nil {
		return
	}
	if rep != repSucceeded {
		writeReply(c, rep, netip.AddrPort{})
		hangUp(c)
		return
	}
	up, err := s.connectTo(host, port, command)
	// The decision and the dial may have taken the rest of the handshake's
	// time; the client is owed its answer all the same.
	c.SetDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	if err != nil {
		var r *refusal
		switch {
		case !errors.As(err, &r):
			writeReply(c, repGeneralFailure, netip.AddrPort{})
		case port == 22 && r.policyRefusal():
			refuseSSH(c, net.JoinHostPort(host, "22"), r.reason)
			return
		default:
			writeReply(c, replyCode(r), netip.AddrPort{})
		}
		hangUp(c)
		return
	}
	if !s.register(up) {
		up.Close() // the Server is closing
		return
	}
	defer s.unregister(up)
	bnd := up.LocalAddr().(*net.TCPAddr).AddrPort()
	if writeReply(c, repSucceeded, bnd) != nil {
		up.Close()
		return
	}
	c.SetDeadline(time.Time{})
	// Nothing is buffered on either side: the handshake was read with exact
	// reads, so bytes the client sent behind its request are still in the
	// socket and the kernel can splice from the first byte.
	tunnel(c, nil, up, nil)
}

// negotiate reads the method selection and, when username/password is
// chosen, the RFC 1929 sub-negotiation. It returns the command the user
// name names, and false when the client is to be dropped (it has been told
// why, where SOCKS has a way to say it).
func (s *Server) negotiate(c net.Conn, buf []byte) (command string, ok bool) {
	if _, err := io.ReadFull(c, buf[:2]); err != nil {
		return "", false
	}
	switch buf[0] {
	case socksVersion:
	case 4:
		c.Write(socks4Rejected)
		hangUp(c)
		return "", false
	default:
		return "", false
	}
	methods := buf[:buf[1]]
	if _, err := io.ReadFull(c, methods); err != nil {
		return "", false
	}
	method := s.chooseMethod(methods)
	if _, err := c.Write([]byte{socksVersion, method}); err != nil {
		return "", false
	}
	switch method {
	case methodNone:
		return "", true
	case methodNoAcceptable:
		hangUp(c)
		return "", false
	}

	// RFC 1929: VER 1, ULEN, UNAME, PLEN, PASSWD.
	if _, err := io.ReadFull(c, buf[:2]); err != nil {
		return "", false
	}
	if buf[0] != passwordVersion {
		c.Write([]byte{passwordVersion, 1})
		hangUp(c)
		return "", false
	}
	user, err := readField(c, buf, buf[1])
	if err != nil {
		return "", false
	}
	if _, err := io.ReadFull(c, buf[:1]); err != nil {
		return "", false
	}
	password, err := readField(c, buf, buf[0])
	if err != nil {
		return "", false
	}
	if !s.checkAuth(password) {
		c.Write([]byte{passwordVersion, 1})
		hangUp(c)
		return "", false
	}
	if _, err := c.Write([]byte{passwordVersion, 0}); err != nil {
		return "", false
	}
	return commandOf(user), true
}

// chooseMethod picks the authentication method from those the client
// offers. With a Token only username/password will do: a client that
// cannot present the credential gets 0xFF, not a way around it.
func (s *Server) chooseMethod(offered []byte) byte {
	password := slices.Contains(offered, methodPassword)
	switch {
	case s.authRequired() && password:
		return methodPassword
	case s.authRequired():
		return methodNoAcceptable
	case slices.Contains(offered, methodNone):
		return methodNone
	case password:
		return methodPassword // any password; the user name still names the command
	}
	return methodNoAcceptable
}

func readField(r io.Reader, buf []byte, n byte) (string, error) {
	_, err := io.ReadFull(r, buf[:n])
	return string(buf[:n]), err
}

// readRequest reads VER CMD RSV ATYP DST.ADDR DST.PORT. It returns the
// destination (an address in netip's text form, IPv6 without brackets),
// or the reply code that refuses the request; err is set when the client
// went away or does not speak SOCKS5, and then nothing is worth replying.
// RSV is not checked: it carries nothing.
func readRequest(r io.Reader, buf []byte) (host string, port int, rep byte, err error) {
	if _, err = io.ReadFull(r, buf[:4]); err != nil {
		return "", 0, 0, err
	}
	if buf[0] != socksVersion {
		return "", 0, 0, errors.New("not a SOCKS5 request")
	}
	cmd, atyp := buf[1], buf[3]
	var n int
	switch atyp {
	case atypIPv4:
		n = 4
	case atypIPv6:
		n = 16
	case atypDomain:
		if _, err = io.ReadFull(r, buf[:1]); err != nil {
			return "", 0, 0, err
		}
		n = int(buf[0])
	default:
		return "", 0, repAddrTypeUnsupported, nil
	}
	if _, err = io.ReadFull(r, buf[:n+2]); err != nil {
		return "", 0, 0, err
	}
	port = int(binary.BigEndian.Uint16(buf[n:]))
	switch atyp {
	case atypIPv4:
		host = netip.AddrFrom4([4]byte(buf[:4])).String()
	case atypIPv6:
		host = netip.AddrFrom16([16]byte(buf[:16])).String()
	default:
		// Validated by connectTo: an empty name, a NUL or any other byte
		// no host name holds is a badTarget (0x04).
		host = string(buf[:n])
	}
	if cmd != cmdConnect {
		return host, port, repCommandUnsupported, nil
	}
	return host, port, repSucceeded, nil
}

// writeReply sends VER REP RSV ATYP BND.ADDR BND.PORT. An invalid bnd is
// sent as 0.0.0.0:0.
func writeReply(c net.Conn, rep byte, bnd netip.AddrPort) error {
	b := make([]byte, 0, 4+16+2)
	b = append(b, socksVersion, rep, 0)
	switch a := bnd.Addr().Unmap(); {
	case a.Is4():
		b = append(b, atypIPv4)
		b = append(b, a.AsSlice()...)
	case a.Is6():
		b = append(b, atypIPv6)
		b = append(b, a.AsSlice()...)
	default:
		b = append(b, atypIPv4, 0, 0, 0, 0)
	}
	b = binary.BigEndian.AppendUint16(b, bnd.Port())
	_, err := c.Write(b)
	return err
}

// replyCode maps a refusal to the SOCKS5 reply that says it.
func replyCode(r *refusal) byte {
	switch {
	case r.policyRefusal():
		return repNotAllowed
	case r.kind == badTarget:
		return repHostUnreachable
	}
	return unreachableCode(r)
}

// unreachableCode tells a refused connection (0x05) and a timeout (0x06)
// from the rest (0x04), so that a client can say "nothing listens there"
// rather than "no such host".
func unreachableCode(r *refusal) byte {
	switch {
	case r.kind == unresolved:
		return repHostUnreachable
	case errors.Is(r, syscall.ECONNREFUSED):
		return repConnRefused
	case errors.Is(r, os.ErrDeadlineExceeded) || errors.Is(r, context.DeadlineExceeded):
		return repTTLExpired
	}
	return repHostUnreachable
}

// hangUp ends a connection after a final reply. Closing a socket that still
// holds unread bytes (the rest of a request the proxy refused early, an SSH
// client's key exchange) sends a reset, and a reset can cost the client the
// reply it has not read yet. So: close our half, and discard what the
// client still sends until it closes, for at most lingerTimeout.
func hangUp(c net.Conn) {
	closeWrite(c)
	c.SetReadDeadline(time.Now().Add(lingerTimeout))
	io.Copy(io.Discard, io.LimitReader(c, 64<<10))
}
