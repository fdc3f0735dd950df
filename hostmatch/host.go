package hostmatch

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ErrInvalidHost is wrapped by every error Normalize returns, so callers can
// tell a malformed destination from other failures with errors.Is.
var ErrInvalidHost = errors.New("invalid host name")

const (
	maxName   = 253 // bytes in a name, without the trailing dot (RFC 1035)
	maxLabel  = 63  // bytes in one label (RFC 1035)
	maxLabels = (maxName + 1) / 2
)

// host is a destination after normalization: either a name or an address.
type host struct {
	name string     // lowercase, no trailing dot; "" for an address
	addr netip.Addr // valid for IP literals, IPv4-mapped IPv6 unmapped
}

// Normalize returns the canonical form of a host as a client sent it, the form
// Decide matches and the form worth logging:
//
//   - names are lowercased and lose one trailing dot ("Example.COM." → "example.com");
//   - IPv6 literals lose their brackets and take netip's canonical text
//     ("[0:0:0:0:0:0:0:1]" → "::1");
//   - IPv4-mapped IPv6 becomes IPv4 ("::ffff:127.0.0.1" → "127.0.0.1").
//
// It refuses, with an error wrapping ErrInvalidHost: the empty string; names
// with characters other than letters, digits, '-' and '_', with an empty
// label, a label over 63 bytes or a label that starts or ends with '-'; names
// over 253 bytes; zone ids ("fe80::1%eth0"); and names ending in a numeric
// label that are not dotted-decimal IPv4 ("127.1", "0x7f.0.0.1",
// "010.0.0.1", "2130706433"), because resolvers read those as addresses.
//
// A caller that lets a connection through should dial the normalized host, not
// the string the client sent.
func Normalize(h string) (string, error) {
	n, err := parseHost(h)
	if err != nil {
		return "", err
	}
	if n.addr.IsValid() {
		return n.addr.String(), nil
	}
	return n.name, nil
}

// parseHost is Normalize without formatting an address, so Decide does not
// allocate for IP literals.
func parseHost(s string) (host, error) {
	switch {
	case s == "":
		return host{}, badHost(s, "empty")
	case strings.IndexByte(s, '%') >= 0:
		return host{}, badHost(s, "zone ids (\"%eth0\") are not supported")
	case s[0] == '[':
		if s[len(s)-1] != ']' {
			return host{}, badHost(s, "missing ']' at the end; pass the port separately")
		}
		return parseIPv6(s, s[1:len(s)-1])
	case strings.IndexByte(s, ':') >= 0:
		return parseIPv6(s, s)
	}
	name := strings.TrimSuffix(s, ".")
	if len(name) > maxName {
		return host{}, badHost(s, fmt.Sprintf("longer than %d bytes", maxName))
	}
	last := ""
	for l := range strings.SplitSeq(name, ".") {
		if l == "" {
			return host{}, badHost(s, "empty label")
		}
		if msg := checkLabel(l); msg != "" {
			return host{}, badHost(s, msg)
		}
		last = l
	}
	if numericLabel(last) {
		a, err := netip.ParseAddr(name)
		if err != nil || !a.Is4() {
			return host{}, badHost(s, "a name ending in a number is read as an IPv4 address; only dotted-decimal form is accepted")
		}
		return host{addr: a}, nil
	}
	return host{name: strings.ToLower(name)}, nil
}

func parseIPv6(s, inner string) (host, error) {
	if strings.IndexByte(inner, ':') < 0 {
		return host{}, badHost(s, "brackets hold only IPv6 addresses")
	}
	a, err := netip.ParseAddr(inner)
	if err != nil {
		return host{}, badHost(s, "not an IPv6 address; pass the port separately")
	}
	return host{addr: a.Unmap()}, nil
}

// badHost quotes at most a screenful of the host: it comes from the sandboxed
// process and ends up in logs.
func badHost(s, msg string) error {
	const max = 128
	if len(s) > max {
		s = s[:max] + "..."
	}
	return fmt.Errorf("%w: %q: %s", ErrInvalidHost, s, msg)
}

// checkLabel says what is wrong with one non-empty label of a name, or returns "".
// Uppercase is accepted here; callers lowercase.
func checkLabel(l string) string {
	if len(l) > maxLabel {
		return fmt.Sprintf("label %q is %d bytes long; a label has at most %d", l, len(l), maxLabel)
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_':
		case c == '-':
			if i == 0 || i == len(l)-1 {
				return fmt.Sprintf("label %q starts or ends with '-'", l)
			}
		case c >= 0x80:
			return fmt.Sprintf("label %q is not ASCII; write the name in its punycode form (\"xn--...\")", l)
		default:
			return fmt.Sprintf("label %q contains %q; a name holds only letters, digits, '-' and '_'", l, c)
		}
	}
	return ""
}

// numericLabel reports whether a final label makes resolvers (inet_aton) and
// URL parsers (WHATWG "ends in a number") read the whole name as an IPv4
// address: all decimal digits, or "0x" followed by hex digits.
func numericLabel(l string) bool {
	digits := "0123456789"
	if len(l) >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X') {
		l, digits = l[2:], "0123456789abcdefABCDEF"
	} else if l == "" {
		return false
	}
	for i := 0; i < len(l); i++ {
		if strings.IndexByte(digits, l[i]) < 0 {
			return false
		}
	}
	return true
}
