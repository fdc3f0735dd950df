// Package hostmatch decides whether a sandboxed process may connect to
// host:port, from the patterns in the settings keys network.allowedDomains
// and network.deniedDomains (the file format of Anthropic's sandbox-runtime,
// srt).
//
// Compile the two lists once; Decide then costs a few map lookups per label
// of the host, however many rules there are, and allocates nothing.
//
//	rules, err := hostmatch.Compile(
//		[]string{"github.com", "*.github.com", "registry.npmjs.org:443"},
//		[]string{"gist.github.com", "*:22"},
//		map[string]string{"*:22": "no SSH from the sandbox"},
//	)
//	if err != nil {
//		return err // allowedDomains[i]: "entry": what is wrong and how to fix it
//	}
//	d := rules.Decide("API.GitHub.com.", 443) // Allowed, Rule "*.github.com"
//	d = rules.Decide("github.com", 22)        // denied by "*:22": "no SSH from the sandbox"
//	d = rules.Decide("example.com", 443)      // denied by default: "not in allowedDomains"
//
// # Patterns
//
//	Pattern                   Matches                                        Does not match
//	example.com               example.com, EXAMPLE.com., any port            www.example.com
//	localhost, myservice      that single-label name only                    127.0.0.1, ::1
//	_dmarc.example.com        that name ('_' is allowed in labels)
//	*.example.com             a.example.com, a.b.example.com                 example.com
//	bedrock.*.amazonaws.com   bedrock.us-east-1.amazonaws.com                bedrock.amazonaws.com, bedrock.a.b.amazonaws.com
//	example.com:443           example.com on port 443 only                   example.com:80, port unknown
//	*.example.com:8443        subdomains on port 8443 only
//	127.0.0.1, 10.1.2.3:8080  that IPv4 address (on that port)               localhost, 127.1
//	[::1], [2001:db8::1]:443  that IPv6 address, in any spelling:            ::2
//	                          [0:0:0:0:0:0:0:1] is ::1
//	[::ffff:1.2.3.4]          the same as 1.2.3.4
//	*, *:22                   every host (on port 22); deniedDomains only
//
// Names are compared case-insensitively with one trailing dot ignored.
// Addresses are compared as addresses (net/netip), so a client cannot dodge
// a rule by spelling one differently; IPv4-mapped IPv6 counts as IPv4.
// A pattern without a port matches every port; with one, only that port.
// A wildcard never matches an IP address; "*" matches names and addresses.
//
// Decide takes port 0 to mean "unknown" (a DNS query, say): then only
// port-less patterns match, in either list, so "example.com:443" does not
// allow it and "*:22" does not deny it. A caller that learns the port later
// must decide again with it. A host Normalize refuses (bad characters, a
// zone id, "127.1") is denied.
//
// A "*" stands for one whole label. Leading ("*.example.com") it stands for
// one or more labels, so it covers every subdomain but not the domain itself:
// list both "example.com" and "*.example.com" for both. In the middle
// ("bedrock.*.amazonaws.com", or "a.b.*.c.d") it stands for exactly one
// label. A pattern holds at most one "*".
//
// "localhost" is a name like any other: it matches the name "localhost", not
// 127.0.0.1 or ::1. List those addresses to allow a client that dials them.
//
// # Precedence
//
// Deny beats allow: a destination matched by any deniedDomains entry is
// denied, whatever allowedDomains says. Otherwise it is allowed if an
// allowedDomains entry matches, and denied by default if none does. The
// Decision names the entry that decided, the most specific one that matched:
// an exact name or address, then a middle wildcard, then a leading wildcard
// with the longest base, then "*"; a pattern with the matching port beats one
// without, and among duplicates the first written wins.
//
// # What is refused, and why
//
// Compile and Check refuse an entry with a *PatternError that says what is
// wrong and how to fix it, e.g.
//
//	allowedDomains[2]: "*.com": too broad: it covers every name under the public suffix "com"; name a domain, e.g. "*.example.com"
//
// These are refused:
//
//   - URLs: a scheme ("https://example.com"), a path ("example.com/api"),
//     user info ("user@example.com"), address ranges ("10.0.0.0/8"): a pattern
//     names a host, optionally with a port.
//   - White space, control characters, '%' (zone ids, percent-encoding), and
//     characters other than letters, digits, '-', '_' and '.'.
//   - Non-ASCII names: write the punycode form ("xn--bcher-kva.example").
//   - Empty labels ("a..b", ".example.com"), labels over 63 bytes or starting
//     or ending with '-', names over 253 bytes.
//   - A "*" that is not a whole label ("*foo.com", "f*o.com"), more than one
//     "*", a "*" as the top-level label ("example.*"), and a "*" in an
//     address ("*.0.0.1", "1.2.*.4").
//   - Ports that are not 1 to 65535 in plain decimal: "example.com:0",
//     ":65536", ":08", ":abc", ":+1", a bare "example.com:".
//   - IPv4 addresses not in dotted-decimal form ("127.1", "0x7f.0.0.1",
//     "010.0.0.1", "2130706433"): resolvers read them as addresses, so a
//     name ending in a number must be one.
//   - IPv6 addresses without brackets ("::1", "2001:db8::1:443"): with a
//     port they are ambiguous.
//   - In allowedDomains only: "*" and "*:port", which would allow every host;
//     and wildcards whose fixed part right of the "*" is a single label
//     ("*.internal") or an ICANN public suffix ("*.com", "*.co.uk",
//     "foo.*.com"), or whose every name one label down is one
//     ("*.kawasaki.jp"), because they reach anybody's domain. deniedDomains
//     may be that broad: "*.com" there denies all of .com.
//
// A wildcard over a suffix on the private section of the public suffix list
// ("*.github.io", "*.githubusercontent.com") is accepted, but it covers sites
// of unrelated owners; Rules.Warnings lists such entries so the caller can
// warn. The breadth check asks the list about the base and about one label
// below it; it does not see private suffixes deeper down.
//
// # What this package does not do
//
// It compares the name or address the client asked for; it resolves nothing.
// Allowing "example.com" allows whatever address DNS gives for it, and
// denying 127.0.0.1 does not deny a name that resolves there, nor 0.0.0.0 or
// another loopback spelling: the caller that dials must check the resolved
// address itself if that matters. The caller should dial the Normalize form
// of the host, the one that was decided on.
package hostmatch
