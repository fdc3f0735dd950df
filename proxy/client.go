package proxy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"time"
)

// DialSOCKS opens host:port through the SOCKS5 proxy at proxyURL
// (socks5h://user:password@host:port, as cordon puts in ALL_PROXY), letting
// the proxy resolve the name. cordon's own ssh ProxyCommand uses it. It is
// a minimal RFC 1928/1929 client: CONNECT by domain name only.
func DialSOCKS(proxyURL, host, port string) (net.Conn, error) {
	u, err := url.Parse(proxyURL)
	if err != nil || (u.Scheme != "socks5h" && u.Scheme != "socks5") || u.Host == "" {
		return nil, fmt.Errorf("ALL_PROXY %q is not a socks5h:// URL", proxyURL)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 || len(host) == 0 || len(host) > 255 {
		return nil, fmt.Errorf("bad destination %q:%q", host, port)
	}
	c, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if err := socksHandshake(c, u.User, host, p); err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

func socksHandshake(c net.Conn, user *url.Userinfo, host string, port int) error {
	method := byte(methodNone)
	if user != nil {
		method = methodPassword
	}
	if _, err := c.Write([]byte{socksVersion, 1, method}); err != nil {
		return err
	}
	var rep [2]byte
	if _, err := io.ReadFull(c, rep[:]); err != nil {
		return err
	}
	if rep[0] != socksVersion || rep[1] != method {
		return errors.New("the SOCKS proxy refused the authentication method")
	}
	if user != nil {
		name, pass := user.Username(), ""
		pass, _ = user.Password()
		if len(name) > 255 || len(pass) > 255 {
			return errors.New("SOCKS user name or password longer than 255 bytes")
		}
		msg := append([]byte{passwordVersion, byte(len(name))}, name...)
		msg = append(append(msg, byte(len(pass))), pass...)
		if _, err := c.Write(msg); err != nil {
			return err
		}
		if _, err := io.ReadFull(c, rep[:]); err != nil {
			return err
		}
		if rep[1] != 0 {
			return errors.New("the SOCKS proxy refused the credential")
		}
	}
	req := append([]byte{socksVersion, cmdConnect, 0, atypDomain, byte(len(host))}, host...)
	req = binary.BigEndian.AppendUint16(req, uint16(port))
	if _, err := c.Write(req); err != nil {
		return err
	}
	var head [4]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		return err
	}
	if head[1] != repSucceeded {
		return fmt.Errorf("the SOCKS proxy refused %s:%d (reply 0x%02x)", host, port, head[1])
	}
	var skip int
	switch head[3] {
	case atypIPv4:
		skip = 4
	case atypIPv6:
		skip = 16
	case atypDomain:
		var n [1]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return err
		}
		skip = int(n[0])
	default:
		return errors.New("malformed SOCKS reply")
	}
	_, err := io.CopyN(io.Discard, c, int64(skip+2))
	return err
}
