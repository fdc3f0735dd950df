package hostmatch

import (
	"errors"
	"strings"
	"testing"
)

func TestPatternAccepted(t *testing.T) {
	long63 := strings.Repeat("a", 63)
	name253 := strings.Repeat(strings.Repeat("a", 62)+".", 4)[:253-4] + ".com" // 249 + ".com"
	tests := []struct {
		in   string
		list List
		kind kind
		key  string // the name, base, middle key, or the address's canonical text
		port uint16
		warn string // substring of the warning, if one is wanted
	}{
		{"example.com", Allow, exact, "example.com", 0, ""},
		{"api.github.com", Allow, exact, "api.github.com", 0, ""},
		{"localhost", Allow, exact, "localhost", 0, ""},
		{"myservice", Allow, exact, "myservice", 0, ""},
		{"_dmarc.example.com", Allow, exact, "_dmarc.example.com", 0, ""},
		{"Example.COM", Allow, exact, "example.com", 0, ""},
		{"example.com.", Allow, exact, "example.com", 0, ""},
		{"a-b.example.com", Allow, exact, "a-b.example.com", 0, ""},
		{"123.example.com", Allow, exact, "123.example.com", 0, ""},
		{"xn--bcher-kva.example", Allow, exact, "xn--bcher-kva.example", 0, ""},
		{long63 + ".com", Allow, exact, long63 + ".com", 0, ""},
		{name253, Allow, exact, name253, 0, ""},
		{"com", Allow, exact, "com", 0, ""}, // only the name "com" itself
		{"*.example.com", Allow, suffix, "example.com", 0, ""},
		{"*.Example.com.", Allow, suffix, "example.com", 0, ""},
		{"*.example.co.uk", Allow, suffix, "example.co.uk", 0, ""},
		{"bedrock.*.amazonaws.com", Allow, middle, "bedrock.*.amazonaws.com", 0, ""},
		{"a.b.*.c.d", Allow, middle, "a.b.*.c.d", 0, ""},
		{"example.com:443", Allow, exact, "example.com", 443, ""},
		{"example.com:1", Allow, exact, "example.com", 1, ""},
		{"example.com:65535", Allow, exact, "example.com", 65535, ""},
		{"*.example.com:8443", Allow, suffix, "example.com", 8443, ""},
		{"127.0.0.1", Allow, exact, "127.0.0.1", 0, ""},
		{"127.0.0.1.", Allow, exact, "127.0.0.1", 0, ""},
		{"10.1.2.3:8080", Allow, exact, "10.1.2.3", 8080, ""},
		{"[::1]", Allow, exact, "::1", 0, ""},
		{"[0:0:0:0:0:0:0:1]", Allow, exact, "::1", 0, ""},
		{"[2001:DB8::1]:443", Allow, exact, "2001:db8::1", 443, ""},
		{"[::ffff:1.2.3.4]", Allow, exact, "1.2.3.4", 0, ""},
		{"*.github.io", Allow, suffix, "github.io", 0, `"example.github.io"`},
		{"*.githubusercontent.com", Allow, suffix, "githubusercontent.com", 0, "shared suffix"},
		{"foo.*.github.io", Allow, middle, "foo.*.github.io", 0, `"foo.example.github.io"`},
		{"*.compute.amazonaws.com", Allow, suffix, "compute.amazonaws.com", 0, "unrelated owners"},
		{"*", Deny, global, "", 0, ""},
		{"*:22", Deny, global, "", 22, ""},
		{"*.com", Deny, suffix, "com", 0, ""},
		{"*.co.uk", Deny, suffix, "co.uk", 0, ""},
		{"foo.*.com", Deny, middle, "foo.*.com", 0, ""},
		{"*.internal", Deny, suffix, "internal", 0, ""},
		{"*.github.io", Deny, suffix, "github.io", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.list.String()+"/"+tt.in, func(t *testing.T) {
			p, msg := parsePattern(tt.in, tt.list)
			if msg != "" {
				t.Fatalf("refused: %s", msg)
			}
			key := p.key
			if p.addr.IsValid() {
				key = p.addr.String()
			}
			if p.kind != tt.kind || key != tt.key || p.port != tt.port {
				t.Errorf("got kind %d key %q port %d, want kind %d key %q port %d", p.kind, key, p.port, tt.kind, tt.key, tt.port)
			}
			if (p.warn == "") != (tt.warn == "") || !strings.Contains(p.warn, tt.warn) {
				t.Errorf("warning %q, want one containing %q", p.warn, tt.warn)
			}
			if err := Check(tt.in, tt.list); err != nil {
				t.Errorf("Check: %v", err)
			}
		})
	}
}

func TestPatternRefused(t *testing.T) {
	long64 := strings.Repeat("a", 64)
	name254 := strings.Repeat("a.", 125) + "abcd" // 254 bytes
	tests := []struct {
		in   string
		list List
		want []string // substrings of the message
	}{
		{"", Allow, []string{"empty entry"}},
		{"https://example.com", Allow, []string{"remove the scheme", `"example.com"`}},
		{"http://user@Example.com:8080/x?y", Deny, []string{"remove the scheme", `"Example.com:8080"`}},
		{"example.com/path", Allow, []string{"remove the path", `"example.com"`}},
		{"10.0.0.0/8", Deny, []string{"CIDR"}},
		{"[2001:db8::]/32", Deny, []string{"CIDR"}},
		{"example .com", Allow, []string{"white space"}},
		{" example.com", Allow, []string{"white space"}},
		{"example.com\n", Allow, []string{"white space"}},
		{"exa\x00mple.com", Allow, []string{"control"}},
		{"user@example.com", Allow, []string{"user name", `"example.com"`}},
		{"[fe80::1%eth0]", Allow, []string{"zone ids"}},
		{"fe80::1%eth0", Allow, []string{"zone ids"}},
		{"example%2ecom", Allow, []string{"percent-encoding"}},
		{"bücher.example", Allow, []string{"punycode", "xn--"}},
		{"*.bücher.example", Deny, []string{"punycode"}},
		{"example.com:0", Allow, []string{"port 0 is out of range", "1 to 65535"}},
		{"example.com:00", Allow, []string{"port 00 is out of range"}},
		{"example.com:65536", Allow, []string{"port 65536 is out of range"}},
		{"example.com:99999999999999999999", Allow, []string{"out of range"}},
		{"example.com:08", Allow, []string{"leading zero", `"8"`}},
		{"example.com:abc", Allow, []string{`port "abc" is not a number`}},
		{"example.com:+443", Allow, []string{"not a number"}},
		{"example.com:-1", Allow, []string{"not a number"}},
		{"example.com:", Allow, []string{"missing port", `"example.com:443"`}},
		{":443", Allow, []string{"no host before the port"}},
		{"[::1]:", Allow, []string{"missing port"}},
		{"[::1]:0", Allow, []string{"out of range"}},
		{"[::1]x", Allow, []string{`unexpected "x" after ']'`}},
		{"[::1", Allow, []string{"missing ']'"}},
		{"[1.2.3.4]", Allow, []string{"brackets are only for IPv6", `"1.2.3.4"`}},
		{"[example.com]", Allow, []string{"not an IPv6 address"}},
		{"[]", Allow, []string{"not an IPv6 address"}},
		{"::1", Allow, []string{"in brackets", `"[::1]"`}},
		{"fe80::1:0", Allow, []string{"in brackets", `"[fe80::1:0]"`}},
		{"2001:db8::1:443", Allow, []string{"ambiguous", `"[2001:db8::1:443]"`, `"[2001:db8::1]:443"`}},
		{"example.com:443:1", Allow, []string{"too many ':'"}},
		{"a..b", Allow, []string{"empty label"}},
		{"example.com..", Allow, []string{"empty label"}},
		{".example.com", Allow, []string{"leading dot", `"*.example.com"`}},
		{".", Allow, []string{"no host"}},
		{"foo*.com", Allow, []string{"a wildcard must be a whole label", `"foo*"`}},
		{"*foo.com", Allow, []string{"a wildcard must be a whole label"}},
		{"f*o.com", Deny, []string{"a wildcard must be a whole label"}},
		{"**.example.com", Deny, []string{"a wildcard must be a whole label"}},
		{"*.*.example.com", Deny, []string{"only one wildcard"}},
		{"a.*.*.example.com", Deny, []string{"only one wildcard"}},
		{"example.*", Deny, []string{"top-level domain"}},
		{"*.0.0.1", Deny, []string{"wildcard cannot stand in an IP address"}},
		{"1.2.*.4", Deny, []string{"wildcard cannot stand in an IP address"}},
		{"*.1", Deny, []string{"wildcard cannot stand in an IP address"}},
		{"[*::1]", Deny, []string{"wildcard cannot stand in an IP address"}},
		{"127.1", Allow, []string{"dotted-decimal"}},
		{"0x7f.0.0.1", Allow, []string{"dotted-decimal"}},
		{"010.0.0.1", Allow, []string{"dotted-decimal"}},
		{"2130706433", Allow, []string{"dotted-decimal"}},
		{"0x7f000001", Deny, []string{"dotted-decimal"}},
		{"1.2.3.4.5", Allow, []string{"dotted-decimal"}},
		{"256.1.1.1", Allow, []string{"dotted-decimal"}},
		{"example.0x1f", Allow, []string{"dotted-decimal"}},
		{"-foo.com", Allow, []string{`label "-foo" starts or ends with '-'`}},
		{"foo-.com", Allow, []string{"starts or ends with '-'"}},
		{"ex!ample.com", Allow, []string{`contains '!'`, "letters, digits"}},
		{"exa:mple.com:443", Allow, []string{"too many ':'"}},
		{long64 + ".com", Allow, []string{"64 bytes long", "at most 63"}},
		{name254, Allow, []string{"254 bytes long", "at most 253"}},
		{"*", Allow, []string{`"*" would allow every host`, "list the domains the command needs"}},
		{"*:443", Allow, []string{"every host on port 443"}},
		{"*.", Allow, []string{"every host"}},
		{"*.com", Allow, []string{"too broad", `public suffix "com"`, `"*.example.com"`}},
		{"*.com:443", Allow, []string{"too broad", `"*.example.com:443"`}},
		{"*.COM.", Allow, []string{"too broad"}},
		{"*.co.uk", Allow, []string{"too broad", `public suffix "co.uk"`, `"*.example.co.uk"`}},
		{"*.uk", Allow, []string{"too broad", `public suffix "uk"`}},
		{"*.internal", Allow, []string{"too broad", `top-level domain "internal"`}},
		{"*.localhost", Allow, []string{"too broad"}},
		{"foo.*.com", Allow, []string{"too broad", `"com"`, `"foo.*.example.com"`}},
		{"foo.*.co.uk", Allow, []string{"too broad", `public suffix "co.uk"`}},
		{"*.kawasaki.jp", Allow, []string{"too broad", "is a public suffix"}},
		{"a.*.kawasaki.jp", Allow, []string{"too broad"}},
	}
	for _, tt := range tests {
		t.Run(tt.list.String()+"/"+tt.in, func(t *testing.T) {
			err := Check(tt.in, tt.list)
			var pe *PatternError
			if !errors.As(err, &pe) {
				t.Fatalf("Check(%q) = %v, want a *PatternError", tt.in, err)
			}
			if pe.Index != -1 || pe.List != tt.list || pe.Pattern != tt.in {
				t.Errorf("got %+v", pe)
			}
			for _, w := range tt.want {
				if !strings.Contains(pe.Msg, w) {
					t.Errorf("message %q does not contain %q", pe.Msg, w)
				}
			}
		})
	}
}

func TestPatternErrorFormat(t *testing.T) {
	tests := []struct {
		allow, deny []string
		want        string
	}{
		{[]string{"a.com", "b.com", "*.com"}, nil,
			`allowedDomains[2]: "*.com": too broad: it covers every name under the public suffix "com"; name a domain, e.g. "*.example.com"`},
		// The allow list is checked first.
		{[]string{"ok.com", "bad..com"}, []string{"https://x.com"},
			`allowedDomains[1]: "bad..com": empty label between dots; remove the extra dot`},
		{[]string{"ok.com"}, []string{"*.com", "example.com:0"},
			`deniedDomains[1]: "example.com:0": port 0 is out of range; write a port from 1 to 65535`},
	}
	for _, tt := range tests {
		r, err := Compile(tt.allow, tt.deny, nil)
		if r != nil || err == nil || err.Error() != tt.want {
			t.Errorf("Compile(%q, %q) = %v, %v\nwant error %s", tt.allow, tt.deny, r, err, tt.want)
		}
	}
	if got, want := Check("*.com", Allow).Error(), `allowedDomains: "*.com": too broad`; !strings.HasPrefix(got, want) {
		t.Errorf("Check error %q, want prefix %q", got, want)
	}
	if got := List(7).String(); got != "List(7)" {
		t.Errorf("List(7).String() = %q", got)
	}
}

func TestWarnings(t *testing.T) {
	r, err := Compile([]string{"example.com", "*.github.io", "*.example.com"}, []string{"*.github.io"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := r.Warnings()
	if len(w) != 1 || !strings.HasPrefix(w[0], `allowedDomains[1]: "*.github.io" covers sites of unrelated owners under "github.io"`) {
		t.Errorf("Warnings() = %q", w)
	}
	w[0] = "changed"
	if r.Warnings()[0] == "changed" {
		t.Error("Warnings returned the internal slice")
	}
	if (*Rules)(nil).Warnings() != nil {
		t.Error("nil Rules has warnings")
	}
}
