package proxy

import (
	"net/netip"
	"strings"

	"github.com/cordon-sandbox/cordon/policy"
)

// PolicyConfig is the proxy configuration a policy asks for: its host
// rules, its deniedResolvedAddresses, and every address literal in
// deniedDomains (so a name that resolves to a denied address is refused
// too, as srt does). The caller adds Token, Sink and Ask.
func PolicyConfig(p *policy.Policy) Config {
	cfg := Config{Rules: p.Hosts, Strict: p.Settings.Network.StrictAllowlist}
	cfg.DeniedAddrs = append(cfg.DeniedAddrs, p.ResolvedDenies...)
	for _, d := range p.Settings.Network.DeniedDomains {
		// Port-less address literals only: "1.2.3.4", "[::1]".
		d = strings.TrimSuffix(strings.TrimPrefix(d, "["), "]")
		if ip, err := netip.ParseAddr(d); err == nil && ip.Zone() == "" {
			ip = ip.Unmap()
			cfg.DeniedAddrs = append(cfg.DeniedAddrs, netip.PrefixFrom(ip, ip.BitLen()))
		}
	}
	return cfg
}
