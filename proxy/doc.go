// Package proxy is cordon's network boundary: per-session HTTP and SOCKS5
// proxies that let a sandboxed process reach only the hosts its policy
// allows, and report every destination they refuse.
//
//	cfg := proxy.PolicyConfig(pol)          // host rules, denied addresses
//	cfg.Token = proxy.NewToken()            // clients must present it
//	cfg.Sink = func(v violation.Violation) { log.Print(v.Target, ": ", v.Reason) }
//	pair, err := proxy.StartPair(cfg, proxy.Listen{})
//	if err != nil { ... }
//	defer pair.Close()
//	env := []string{"HTTP_PROXY=" + pair.HTTPURL("npm install"), "ALL_PROXY=" + pair.SOCKSURL("npm install")}
//
// The HTTP proxy takes CONNECT host:port tunnels and absolute-form requests
// (GET http://host/path), kept alive across requests, each request checked
// again; a refused destination gets 403 with X-Proxy-Error
// (blocked-by-allowlist, blocked-by-denylist or blocked-by-address-guard)
// and a one-line body naming the host and the reason, an unreachable one
// 502. The SOCKS5 proxy takes CONNECT with domain, IPv4 and IPv6
// addresses; a refused SSH destination (port 22) is answered in band with
// an SSH disconnect carrying the reason, so ssh and git print it.
//
// What the proxies guarantee:
//   - Only the session's credential opens them (HTTP Proxy-Authorization
//     Basic, SOCKS5 username/password); its user name names the command,
//     so refusals are attributed. The credential never reaches an origin.
//   - An allowed name that resolves only to loopback, link-local, cloud
//     metadata, 0.0.0.0/8 or this host's own addresses is refused (DNS
//     rebinding), unless the rule names the address or "localhost"
//     itself; the proxy dials the address it checked, never the name again.
//   - Requests two HTTP parsers could read differently (Content-Length with
//     Transfer-Encoding, conflicting lengths, folded headers, a Host header
//     that disagrees with the URL) are refused, not forwarded.
//   - Slow, oversized or garbled clients cost a bounded amount: 64 KiB of
//     head, HandshakeTimeout to send it, then they are dropped.
//   - Bytes move between the raw TCP sockets with io.Copy, so Linux splices
//     them; Close ends every connection and returns only when every
//     goroutine has.
//
// The Linux sandbox has no network of its own: its init accepts on the
// sandbox's loopback and hands each socket over a socketpair (SendConn);
// ServeFDs serves those as if the client had connected directly.
package proxy
