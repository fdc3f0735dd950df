package hostmatch

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// kind is the shape of a pattern. The order is the order of precedence when
// several patterns of one list match: the most specific shape decides.
type kind uint8

const (
	exact  kind = iota // a name or an address
	middle             // one "*" label between fixed labels: "bedrock.*.amazonaws.com"
	suffix             // "*." + base: every name below base
	global             // "*": every host
)

// pattern is one parsed entry.
type pattern struct {
	kind kind
	key  string     // exact: the name; middle: the name with "*"; suffix: the base
	addr netip.Addr // exact: the address, for IP literals
	star int        // middle: index of the "*" label
	port uint16     // 0: every port
	warn string     // allow list: why a caller may want to warn about this entry
}

// probeLabel stands for "some name" one label below a wildcard's base when
// asking the public suffix list how far that base is shared. It must not
// collide with an exception rule ("!city.kawasaki.jp"), hence the odd name.
const probeLabel = "cordon-probe"

// parsePattern parses one entry of list l. On failure it returns what is wrong
// and how to fix it, in words a user reads after `allowedDomains[2]: "x": `.
func parsePattern(s string, l List) (pattern, string) {
	if s == "" {
		return pattern{}, `empty entry; write a host such as "example.com", or remove the entry`
	}
	if i := strings.Index(s, "://"); i >= 0 {
		return pattern{}, "remove the scheme: write the host only" + example(urlHost(s[i+3:]))
	}
	if i := strings.IndexByte(s, '/'); i >= 0 {
		if _, err := netip.ParsePrefix(strings.NewReplacer("[", "", "]", "").Replace(s)); err == nil {
			return pattern{}, "address ranges (CIDR) are not supported; list each address"
		}
		return pattern{}, "remove the path: write the host only" + example(s[:i])
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c <= ' ' || c == 0x7f:
			return pattern{}, "remove the white space and control characters: write the host only"
		case c == '@':
			return pattern{}, "remove the user name: write the host only" + example(s[strings.LastIndexByte(s, '@')+1:])
		case c == '%':
			return pattern{}, `zone ids and percent-encoding are not supported; write the address or name plainly, e.g. "[fe80::1]"`
		case c >= 0x80:
			return pattern{}, `non-ASCII names are not accepted; write the name in its punycode form, e.g. "xn--bcher-kva.example" for "bücher.example"`
		}
	}

	h, p, msg := splitPort(s)
	if msg != "" {
		return pattern{}, msg
	}
	port, msg := parsePort(p)
	if msg != "" {
		return pattern{}, msg
	}
	pat, msg := parseHostPattern(h)
	pat.port = port
	if msg != "" || pat.kind == exact || l == Deny {
		return pat, msg
	}
	if pat.kind == global {
		if port != 0 {
			return pattern{}, fmt.Sprintf(`"*" would allow every host on port %d; list the domains the command needs`, port)
		}
		return pattern{}, `"*" would allow every host; list the domains the command needs`
	}
	return checkBreadth(pat, s)
}

// splitPort splits "host:port" and "[v6]:port"; p is "" when there is no port.
// A ':' with nothing after it is an error, not "no port".
func splitPort(s string) (h, p, msg string) {
	if s[0] == '[' {
		end := strings.IndexByte(s, ']')
		switch {
		case end < 0:
			return "", "", `missing ']' after the IPv6 address; write e.g. "[2001:db8::1]" or "[2001:db8::1]:443"`
		case end == len(s)-1:
			return s, "", ""
		case s[end+1] != ':':
			return "", "", fmt.Sprintf(`unexpected %q after ']'; write e.g. "[2001:db8::1]" or "[2001:db8::1]:443"`, s[end+1:])
		case end+2 == len(s):
			return "", "", `missing port after ":"; remove the ":" or write a port, e.g. "[2001:db8::1]:443"`
		}
		return s[:end+1], s[end+2:], ""
	}
	switch strings.Count(s, ":") {
	case 0:
		return s, "", ""
	case 1:
		h, p, _ := strings.Cut(s, ":")
		if p == "" {
			return "", "", fmt.Sprintf("missing port after \":\"; remove the \":\" or write a port, e.g. %q", h+":443")
		}
		return h, p, ""
	}
	if _, err := netip.ParseAddr(s); err == nil {
		i := strings.LastIndexByte(s, ':')
		_, aerr := netip.ParseAddr(s[:i])
		if _, msg := parsePort(s[i+1:]); aerr == nil && msg == "" {
			return "", "", fmt.Sprintf("ambiguous IPv6 address: write it in brackets, %q for the address, or %q if the last group is a port",
				"["+s+"]", "["+s[:i]+"]:"+s[i+1:])
		}
		return "", "", fmt.Sprintf("write an IPv6 address in brackets: %q", "["+s+"]")
	}
	return "", "", `too many ':'; write "host:port", or an IPv6 address in brackets, e.g. "[2001:db8::1]:443"`
}

// parsePort parses the digits after ':'; "" means no port.
func parsePort(p string) (uint16, string) {
	if p == "" {
		return 0, ""
	}
	if strings.Trim(p, "0123456789") != "" {
		return 0, fmt.Sprintf("port %q is not a number; write a port from 1 to 65535", p)
	}
	if p[0] == '0' {
		if t := strings.TrimLeft(p, "0"); t != "" {
			return 0, fmt.Sprintf("port %q has a leading zero; write %q", p, t)
		}
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Sprintf("port %s is out of range; write a port from 1 to 65535", p)
	}
	return uint16(n), ""
}

// parseHostPattern parses the part before the port.
func parseHostPattern(h string) (pattern, string) {
	if h == "" {
		return pattern{}, `no host before the port; write e.g. "example.com:443"`
	}
	if h[0] == '[' {
		inner := h[1 : len(h)-1]
		a, err := netip.ParseAddr(inner)
		switch {
		case strings.IndexByte(inner, '*') >= 0:
			return pattern{}, "a wildcard cannot stand in an IP address; list each address"
		case err == nil && a.Is4():
			return pattern{}, fmt.Sprintf("brackets are only for IPv6 addresses; write %q", inner)
		case err != nil:
			return pattern{}, fmt.Sprintf("%q is not an IPv6 address", inner)
		}
		return pattern{kind: exact, addr: a.Unmap()}, ""
	}

	name := strings.TrimSuffix(h, ".")
	switch {
	case name == "":
		return pattern{}, `no host; write a host such as "example.com"`
	case name == "*":
		return pattern{kind: global}, ""
	case len(name) > maxName:
		return pattern{}, fmt.Sprintf("the name is %d bytes long; a name has at most %d", len(name), maxName)
	}
	labels := strings.Split(name, ".")
	star := -1
	for i, lab := range labels {
		switch {
		case lab == "" && i == 0:
			return pattern{}, fmt.Sprintf("remove the leading dot; to match the subdomains of a domain write %q (and the domain itself on its own)", "*"+name)
		case lab == "":
			return pattern{}, "empty label between dots; remove the extra dot"
		case lab == "*" && star >= 0:
			return pattern{}, "only one wildcard is allowed in a pattern"
		case lab == "*":
			star = i
		case strings.IndexByte(lab, '*') >= 0:
			return pattern{}, fmt.Sprintf("a wildcard must be a whole label: %q is not; write e.g. \"*.example.com\"", lab)
		default:
			if msg := checkLabel(lab); msg != "" {
				return pattern{}, msg
			}
		}
	}

	last := labels[len(labels)-1]
	if numericLabel(last) {
		if star >= 0 {
			return pattern{}, "a wildcard cannot stand in an IP address; list each address"
		}
		a, err := netip.ParseAddr(name)
		if err != nil || !a.Is4() {
			return pattern{}, `write the address in dotted-decimal form, e.g. "127.0.0.1"; a name ending in a number is read as an IPv4 address`
		}
		return pattern{kind: exact, addr: a}, ""
	}
	name = strings.ToLower(name)
	switch {
	case star < 0:
		return pattern{kind: exact, key: name}, ""
	case star == len(labels)-1:
		return pattern{}, `a wildcard cannot stand for the top-level domain; name it, e.g. "example.com"`
	case star == 0:
		return pattern{kind: suffix, key: name[2:]}, ""
	}
	return pattern{kind: middle, key: name, star: star}, ""
}

// checkBreadth refuses an allow wildcard whose fixed part right of the "*"
// is an ICANN public suffix ("*.co.uk", "foo.*.com"), or whose every name one
// label down is one ("*.kawasaki.jp"): such a pattern lets the sandbox reach
// anybody's domain. A base on the private section of the list ("github.io")
// is accepted with a warning: the names below it belong to unrelated owners,
// but allowing all of them is sometimes what a user means.
func checkBreadth(p pattern, written string) (pattern, string) {
	base := p.key
	if p.kind == middle {
		base = p.key[strings.Index(p.key, "*.")+2:]
	}
	fix, site := strings.Replace(p.key, "*", "*.example", 1), strings.Replace(p.key, "*", "example", 1)
	if p.kind == suffix {
		fix, site = "*.example."+base, "example."+base
	}
	if p.port != 0 {
		fix += ":" + strconv.Itoa(int(p.port))
		site += ":" + strconv.Itoa(int(p.port))
	}
	ps, icann := publicsuffix.PublicSuffix(probeLabel + "." + base)
	shared := len(ps) >= len(base) // ps is base or probe.base
	switch {
	case shared && icann && ps == base:
		return pattern{}, fmt.Sprintf("too broad: it covers every name under the public suffix %q; name a domain, e.g. %q", base, fix)
	case shared && icann:
		return pattern{}, fmt.Sprintf("too broad: every name directly under %q is a public suffix; name a domain below one of them", base)
	case strings.IndexByte(base, '.') < 0:
		return pattern{}, fmt.Sprintf("too broad: it covers every name under the top-level domain %q; name a domain, e.g. %q", base, fix)
	case !shared:
		// base lies below every public suffix: one owner's domain.
	default:
		p.warn = fmt.Sprintf("%q covers sites of unrelated owners under %q (a shared suffix on the public suffix list); consider naming the site, e.g. %q",
			written, base, site)
	}
	return p, ""
}

// example turns a host the user probably meant into a suggestion.
func example(h string) string {
	if h == "" {
		return ""
	}
	return fmt.Sprintf(", e.g. %q", h)
}

// urlHost guesses the host[:port] in what follows a URL's "://".
func urlHost(rest string) string {
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return rest[strings.LastIndexByte(rest, '@')+1:]
}
