package proxy

import (
	"fmt"
	"net"
	"net/url"

	xproxy "golang.org/x/net/proxy"
)

// DialSOCKS opens host:port through the SOCKS5 proxy at proxyURL
// (socks5h://user:password@host:port, as cordon puts in ALL_PROXY), letting
// the proxy resolve the name. cordon's own ssh ProxyCommand uses it.
func DialSOCKS(proxyURL, host, port string) (net.Conn, error) {
	u, err := url.Parse(proxyURL)
	if err != nil || (u.Scheme != "socks5h" && u.Scheme != "socks5") || u.Host == "" {
		return nil, fmt.Errorf("ALL_PROXY %q is not a socks5h:// URL", proxyURL)
	}
	var auth *xproxy.Auth
	if u.User != nil {
		pass, _ := u.User.Password()
		auth = &xproxy.Auth{User: u.User.Username(), Password: pass}
	}
	d, err := xproxy.SOCKS5("tcp", u.Host, auth, xproxy.Direct)
	if err != nil {
		return nil, err
	}
	return d.Dial("tcp", net.JoinHostPort(host, port))
}
