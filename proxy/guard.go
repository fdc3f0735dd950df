package proxy

import (
	"fmt"
	"net"
	"net/netip"
)

// builtinDenied are addresses no allowed *name* may lead to: a sandboxed
// command that controls a DNS answer (rebinding, 127.0.0.1.nip.io) must not
// reach services on this host, its link-local neighbours or a cloud
// metadata endpoint through an allowed-looking name.
var builtinDenied = []string{
	"0.0.0.0/8",          // "this network"; 0.0.0.0 reaches local services
	"127.0.0.0/8",        // loopback
	"169.254.0.0/16",     // link-local, AWS/GCP/Azure/OCI metadata at .169.254
	"100.100.100.200/32", // Alibaba Cloud metadata
	"168.63.129.16/32",   // Azure wire server
	"::/128",             // unspecified
	"::1/128",            // loopback
	"fe80::/10",          // link-local
	"fd00:ec2::254/128",  // AWS metadata over IPv6
}

// addrGuard is the forbidden set: the built-in ranges, this host's own
// addresses, and the user's deniedResolvedAddresses.
type addrGuard struct {
	builtin []netip.Prefix
	user    []netip.Prefix
}

func newAddrGuard(user []netip.Prefix) (*addrGuard, error) {
	g := &addrGuard{user: user}
	for _, s := range builtinDenied {
		g.builtin = append(g.builtin, netip.MustParsePrefix(s))
	}
	// This host's own addresses reach the same services as loopback does.
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("listing this host's addresses for the rebinding guard: %w", err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(ipn.IP); ok {
				ip = ip.Unmap()
				g.builtin = append(g.builtin, netip.PrefixFrom(ip, ip.BitLen()))
			}
		}
	}
	return g, nil
}

// IPv6 forms that carry an IPv4 address, and where: on a network that
// translates them, 64:ff9b::a9fe:a9fe reaches 169.254.169.254.
var embeddings = []struct {
	prefix netip.Prefix
	at     int // byte offset of the IPv4 address in the 16
}{
	{netip.MustParsePrefix("64:ff9b::/96"), 12},    // NAT64, well-known (RFC 6052)
	{netip.MustParsePrefix("64:ff9b:1::/48"), 12},  // NAT64, local use (RFC 8215)
	{netip.MustParsePrefix("::ffff:0:0:0/96"), 12}, // SIIT (RFC 7915)
	{netip.MustParsePrefix("::/96"), 12},           // IPv4-compatible (deprecated)
	{netip.MustParsePrefix("2002::/16"), 2},        // 6to4 (RFC 3056)
}

// embedded returns the IPv4 address an IPv6 address stands for.
func embedded(ip netip.Addr) (netip.Addr, bool) {
	if !ip.Is6() || ip.Is4In6() {
		return ip, false
	}
	b := ip.As16()
	for _, e := range embeddings {
		if e.prefix.Contains(ip) {
			return netip.AddrFrom4([4]byte{b[e.at], b[e.at+1], b[e.at+2], b[e.at+3]}), true
		}
	}
	return ip, false
}

// forbidden: ip is in the built-in set (so only an explicit rule reaches it).
func (g *addrGuard) forbidden(ip netip.Addr) bool {
	ip = ip.WithZone("") // a zone would make every Contains false
	if v4, ok := embedded(ip); ok && g.forbidden(v4) {
		return true
	}
	ip = ip.Unmap()
	for _, p := range g.builtin {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// userDenied: ip is in deniedResolvedAddresses (nothing reaches it).
func (g *addrGuard) userDenied(ip netip.Addr) bool {
	ip = ip.WithZone("")
	if v4, ok := embedded(ip); ok && g.userDenied(v4) {
		return true
	}
	ip = ip.Unmap()
	for _, p := range g.user {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
