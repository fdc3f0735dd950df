package hostmatch

import (
	"errors"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"example.com", "example.com"},
		{"Example.COM.", "example.com"},
		{"_dmarc.Example.com", "_dmarc.example.com"},
		{"localhost", "localhost"},
		{"123.example.com", "123.example.com"},
		{"1.2.3.4", "1.2.3.4"},
		{"1.2.3.4.", "1.2.3.4"},
		{"::1", "::1"},
		{"[::1]", "::1"},
		{"[0:0:0:0:0:0:0:1]", "::1"},
		{"2001:DB8:0::1", "2001:db8::1"},
		{"::ffff:127.0.0.1", "127.0.0.1"},
		{"[::FFFF:7f00:1]", "127.0.0.1"},
	}
	for _, tt := range tests {
		if got, err := Normalize(tt.in); got != tt.want || err != nil {
			t.Errorf("Normalize(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestNormalizeRefused(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", "empty"},
		{".", "empty label"},
		{"a..b", "empty label"},
		{"example.com..", "empty label"},
		{".example.com", "empty label"},
		{"exa mple.com", `contains ' '`},
		{"*.example.com", `contains '*'`},
		{"bücher.example", "punycode"},
		{"-a.example", "starts or ends with '-'"},
		{"a-.example", "starts or ends with '-'"},
		{strings.Repeat("a", 64) + ".com", "at most 63"},
		{strings.Repeat("a.", 125) + "abcd", "longer than 253"},
		{"fe80::1%eth0", "zone ids"},
		{"[fe80::1%25eth0]", "zone ids"},
		{"[1.2.3.4]", "only IPv6"},
		{"[::1", "missing ']'"},
		{"[::1]:443", "missing ']'"},
		{"example.com:443", "pass the port separately"},
		{"::1::2", "not an IPv6 address"},
		{"127.1", "dotted-decimal"},
		{"0x7f.0.0.1", "dotted-decimal"},
		{"010.0.0.1", "dotted-decimal"},
		{"2130706433", "dotted-decimal"},
		{"1.2.3.4.5", "dotted-decimal"},
	}
	for _, tt := range tests {
		got, err := Normalize(tt.in)
		if got != "" || !errors.Is(err, ErrInvalidHost) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Normalize(%q) = %q, %v; want an ErrInvalidHost containing %q", tt.in, got, err, tt.want)
		}
	}
	_, err := Normalize(strings.Repeat("x", 10000) + " ")
	if err == nil || len(err.Error()) > 300 {
		t.Errorf("error for a long host is %d bytes; want it truncated", len(err.Error()))
	}
}

var decideAllow = []string{
	"example.com",
	"*.example.com",
	"bedrock.*.amazonaws.com",
	"api.service.com:443",
	"*.ports.com:8443",
	"127.0.0.1",
	"[::1]:8080",
	"[2001:db8::1]",
	"[::ffff:10.0.0.1]",
	"localhost",
	"github.com",
	"*.github.com",
	"Mixed.Case.COM.",
	"a.b.*.c.example.org",
	"*.deep.example.org",
	"x.*.deep.example.org",
	"*.example.org:22",
	"example.com:443",
	"*.Example.COM", // a duplicate: the first one written is reported
	"*.sub.example.com",
	"a.*.x.c.example.org",
}

var decideDeny = []string{
	"gist.github.com",
	"*:22",
	"*.evil.example.com",
	"bad.example.com:8080",
	"10.0.0.1",
	"*.github.com:9418",
}

var decideReasons = map[string]string{
	"*:22":            "no SSH from the sandbox",
	"gist.github.com": "gists are out",
	"not.an.entry":    "ignored",
}

func TestDecide(t *testing.T) {
	r, err := Compile(decideAllow, decideDeny, decideReasons)
	if err != nil {
		t.Fatal(err)
	}
	allowed := func(rule string) Decision { return Decision{Allowed: true, List: Allow, Rule: rule} }
	denied := func(rule, reason string) Decision { return Decision{List: Deny, Rule: rule, Reason: reason} }
	byDefault := Decision{Default: true, Reason: "not in allowedDomains"}
	tests := []struct {
		name string
		host string
		port int
		want Decision
	}{
		{"exact", "example.com", 80, allowed("example.com")},
		{"exact, unknown port", "example.com", 0, allowed("example.com")},
		{"exact with the port beats exact without", "example.com", 443, allowed("example.com:443")},
		{"case and trailing dot", "EXAMPLE.Com.", 443, allowed("example.com:443")},
		{"rule written in mixed case", "mixed.case.com", 1, allowed("Mixed.Case.COM.")},
		{"wildcard, one label", "www.example.com", 80, allowed("*.example.com")},
		{"wildcard, two labels", "a.b.example.com", 80, allowed("*.example.com")},
		{"lookalike suffix", "notexample.com", 80, byDefault},
		{"name as a prefix", "example.com.evil.net", 80, byDefault},
		{"middle wildcard", "bedrock.us-east-1.amazonaws.com", 443, allowed("bedrock.*.amazonaws.com")},
		{"middle wildcard, two labels", "bedrock.a.b.amazonaws.com", 443, byDefault},
		{"middle wildcard, no label", "bedrock.amazonaws.com", 443, byDefault},
		{"middle wildcard, extra label in front", "x.bedrock.us-east-1.amazonaws.com", 443, byDefault},
		{"middle wildcard deep", "a.b.y.c.example.org", 443, allowed("a.b.*.c.example.org")},
		{"leftmost middle wildcard first", "a.b.x.c.example.org", 443, allowed("a.*.x.c.example.org")},
		{"longest suffix base first", "a.sub.example.com", 443, allowed("*.sub.example.com")},
		{"middle beats suffix", "x.q.deep.example.org", 443, allowed("x.*.deep.example.org")},
		{"suffix under middle", "y.deep.example.org", 443, allowed("*.deep.example.org")},
		{"port rule, right port", "api.service.com", 443, allowed("api.service.com:443")},
		{"port rule, wrong port", "api.service.com", 80, byDefault},
		{"port rule, unknown port", "api.service.com", 0, byDefault},
		{"wildcard port rule", "x.ports.com", 8443, allowed("*.ports.com:8443")},
		{"wildcard port rule, apex", "ports.com", 8443, byDefault},
		{"wildcard port rule, wrong port", "x.ports.com", 443, byDefault},
		{"IPv4", "127.0.0.1", 80, allowed("127.0.0.1")},
		{"IPv4, other address", "127.0.0.2", 80, byDefault},
		{"localhost is a name", "localhost", 80, allowed("localhost")},
		{"localhost with a dot", "LOCALHOST.", 80, allowed("localhost")},
		{"IPv6", "::1", 8080, allowed("[::1]:8080")},
		{"IPv6 bracketed", "[::1]", 8080, allowed("[::1]:8080")},
		{"IPv6 long form", "[0:0:0:0:0:0:0:1]", 8080, allowed("[::1]:8080")},
		{"IPv6 wrong port", "::1", 80, byDefault},
		{"IPv6 upper case", "2001:DB8:0::1", 1, allowed("[2001:db8::1]")},
		{"IPv4-mapped host", "::ffff:127.0.0.1", 80, allowed("127.0.0.1")},
		{"IPv4-mapped host, hex", "[::ffff:7f00:1]", 80, allowed("127.0.0.1")},
		{"IPv4-mapped rule, deny wins", "10.0.0.1", 80, denied("10.0.0.1", "in deniedDomains")},
		{"IPv4-mapped host, deny wins", "::ffff:10.0.0.1", 80, denied("10.0.0.1", "in deniedDomains")},
		{"wildcard never matches an address", "1.2.3.4", 80, byDefault},
		{"deny over allow, with reason", "gist.github.com", 443, denied("gist.github.com", "gists are out")},
		{"allow beside the deny", "api.github.com", 443, allowed("*.github.com")},
		{"deny *:22 over an exact allow", "github.com", 22, denied("*:22", "no SSH from the sandbox")},
		{"deny *:22 over a port allow", "x.example.org", 22, denied("*:22", "no SSH from the sandbox")},
		{"deny *:22 covers addresses", "127.0.0.1", 22, denied("*:22", "no SSH from the sandbox")},
		{"deny *:22, unknown port", "github.com", 0, allowed("github.com")},
		{"deny, wildcard port", "api.github.com", 9418, denied("*.github.com:9418", "in deniedDomains")},
		{"deny, wildcard", "x.evil.example.com", 443, denied("*.evil.example.com", "in deniedDomains")},
		{"deny wildcard skips the apex", "evil.example.com", 443, allowed("*.example.com")},
		{"deny port rule, right port", "bad.example.com", 8080, denied("bad.example.com:8080", "in deniedDomains")},
		{"deny port rule, other port", "bad.example.com", 80, allowed("*.example.com")},
		{"deny port rule, unknown port", "bad.example.com", 0, allowed("*.example.com")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Decide(tt.host, tt.port); got != tt.want {
				t.Errorf("Decide(%q, %d) = %+v\nwant %+v", tt.host, tt.port, got, tt.want)
			}
		})
	}
}

func TestDecideInvalid(t *testing.T) {
	r, err := Compile([]string{"*.example.com"}, []string{"evil.com"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host   string
		port   int
		reason string
	}{
		{"", 443, "invalid host name: "},
		{"a b.example.com", 443, "invalid host name: "},
		{"fe80::1%eth0", 443, "zone ids"},
		{"127.1", 443, "dotted-decimal"},
		{"x.example.com", -1, "invalid port -1"},
		{"x.example.com", 65536, "invalid port 65536"},
	}
	for _, tt := range tests {
		d := r.Decide(tt.host, tt.port)
		if d.Allowed || !d.Default || d.Rule != "" || !strings.Contains(d.Reason, tt.reason) {
			t.Errorf("Decide(%q, %d) = %+v; want a default denial with a reason containing %q", tt.host, tt.port, d, tt.reason)
		}
	}
}

func TestNilAndEmpty(t *testing.T) {
	var nilRules *Rules
	want := Decision{Default: true, Reason: "not in allowedDomains"}
	if got := nilRules.Decide("example.com", 443); got != want {
		t.Errorf("nil Rules: Decide = %+v", got)
	}
	if !nilRules.Empty() {
		t.Error("nil Rules is not Empty")
	}
	empty, err := Compile(nil, []string{"*"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !empty.Empty() {
		t.Error("Rules without allow entries is not Empty")
	}
	if got := empty.Decide("example.com", 443); got.Allowed || got.Rule != "*" {
		t.Errorf("deny * : Decide = %+v", got)
	}
	none, err := Compile(nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := none.Decide("example.com", 443); got != want {
		t.Errorf("no rules: Decide = %+v", got)
	}
	some, err := Compile([]string{"example.com"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if some.Empty() {
		t.Error("Rules with an allow entry is Empty")
	}
}

// TestDecideAllocs holds Decide to its promise of not allocating on the paths
// a proxy takes for every connection.
func TestDecideAllocs(t *testing.T) {
	r, err := Compile(decideAllow, decideDeny, decideReasons)
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"x.q.deep.example.org", "a.b.c.d.e.f.g.h.i.j", "127.0.0.1", "::1", "github.com"} {
		if n := testing.AllocsPerRun(100, func() { r.Decide(host, 443) }); n != 0 {
			t.Errorf("Decide(%q) allocates %v times", host, n)
		}
	}
}

func TestDecideGlobalPrecedence(t *testing.T) {
	r, err := Compile([]string{"example.com"}, []string{"*", "*:22", "*:22", "example.com:22"},
		map[string]string{"*": "nothing leaves"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		port int
		rule string
	}{
		{22, "example.com:22"}, // an exact name beats "*"
		{80, "*"},
		{0, "*"},
	}
	for _, tt := range tests {
		if d := r.Decide("example.com", tt.port); d.Allowed || d.Rule != tt.rule {
			t.Errorf("Decide(example.com, %d) = %+v, want denied by %q", tt.port, d, tt.rule)
		}
	}
	if d := r.Decide("other.example", 22); d.Rule != "*:22" || d.Reason != "in deniedDomains" {
		t.Errorf("port 22: %+v, want denied by *:22", d)
	}
	if d := r.Decide("[::1]", 80); d.Rule != "*" || d.Reason != "nothing leaves" {
		t.Errorf("address: %+v, want denied by *", d)
	}
}
