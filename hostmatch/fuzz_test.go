package hostmatch

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// FuzzCompile feeds one entry to each list. It must never panic; Check and
// Compile must agree; and an accepted entry must match a host built from it.
func FuzzCompile(f *testing.F) {
	for _, s := range append(append([]string{
		"*", "*:22", "*.com", "a.*.b.c", "[::ffff:1.2.3.4]:80", "example.com.:443",
		"127.0.0.1.", "*.", "[", "[]:1", "a:b:c", "xn--bcher-kva.example",
	}, decideAllow...), decideDeny...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, l := range []List{Allow, Deny} {
			var allow, deny []string
			if l == Allow {
				allow = []string{s}
			} else {
				deny = []string{s}
			}
			r, err := Compile(allow, deny, map[string]string{s: "because"})
			if cerr := Check(s, l); (err == nil) != (cerr == nil) {
				t.Fatalf("%s %q: Compile says %v, Check says %v", l, s, err, cerr)
			}
			if err != nil {
				var pe *PatternError
				if !errors.As(err, &pe) || pe.List != l || pe.Index != 0 || pe.Pattern != s || pe.Msg == "" {
					t.Fatalf("%s %q: error %#v", l, s, err)
				}
				continue
			}
			host, port := sampleHost(s)
			d := r.Decide(host, port)
			want := Decision{Allowed: true, List: Allow, Rule: s}
			if l == Deny {
				want = Decision{List: Deny, Rule: s, Reason: "because"}
			}
			if d != want {
				t.Fatalf("%s %q: Decide(%q, %d) = %+v, want %+v", l, s, host, port, d, want)
			}
		}
	})
}

// sampleHost builds, with plain string operations, a host and port that an
// accepted pattern must match: the host part with brackets dropped and the
// wildcard label replaced by a name.
func sampleHost(s string) (string, int) {
	h, port := s, 443
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		h = s[1:end]
		if p, ok := strings.CutPrefix(s[end+1:], ":"); ok {
			port, _ = strconv.Atoi(p)
		}
	} else if i := strings.IndexByte(s, ':'); i >= 0 {
		h = s[:i]
		port, _ = strconv.Atoi(s[i+1:])
	}
	if strings.TrimSuffix(h, ".") == "*" {
		return "example.com", port
	}
	labels := strings.Split(h, ".")
	for i, l := range labels {
		if l == "*" {
			labels[i] = "x"
		}
	}
	return strings.Join(labels, "."), port
}

// FuzzDecide checks the indexed lookup against a naive scan of every rule on
// every input: the two must agree exactly, and an allowed destination must
// match no deny rule.
func FuzzDecide(f *testing.F) {
	allow := append(append([]string{}, decideAllow...),
		"*.a.b.c.d.e", "a.*.c.d.e", "a.b.*.d.e", "a.b.c.*.e.f", "a.*.c.d.e:443",
		"[2001:db8::2]:443", "1.2.3.4:80", "*.x.y")
	deny := append(append([]string{}, decideDeny...),
		"a.b.*.d.e:8080", "*.c.d.e", "[::1]", "*:9999")
	r, err := Compile(allow, deny, decideReasons)
	if err != nil {
		f.Fatal(err)
	}
	ref := newNaive(f, allow, deny, decideReasons)
	for _, s := range []string{
		"example.com", "a.example.com", "bedrock.x.amazonaws.com", "a.b.c.d.e", "a.x.c.d.e",
		"q.a.b.c.d.e", "a.b.c.x.e.f", "::1", "[::ffff:10.0.0.1]", "127.1", "EXAMPLE.COM.", "x.y", "z.x.y",
	} {
		for _, p := range []int{0, 22, 80, 443, 8080, 9418, -1, 70000} {
			f.Add(s, p)
		}
	}
	f.Fuzz(func(t *testing.T, host string, port int) {
		got := r.Decide(host, port)
		want := ref.decide(host, port)
		if got != want {
			t.Fatalf("Decide(%q, %d) = %+v\nnaive scan says %+v", host, port, got, want)
		}
		if got.Allowed {
			h, _ := parseHost(host)
			for _, p := range ref.deny {
				if p.matches(h, port) {
					t.Fatalf("Decide(%q, %d) allowed, but deny rule %q matches", host, port, p.written)
				}
			}
		}
	})
}

// naive is the reference matcher: it scans every rule and keeps the most
// specific match by the documented precedence.
type naive struct {
	allow, deny []naiveRule
	reasons     map[string]string
}

type naiveRule struct {
	pattern
	written string
	index   int
}

func newNaive(tb testing.TB, allow, deny []string, reasons map[string]string) *naive {
	n := &naive{reasons: reasons}
	for _, list := range []struct {
		l   List
		in  []string
		out *[]naiveRule
	}{{Allow, allow, &n.allow}, {Deny, deny, &n.deny}} {
		for i, s := range list.in {
			p, msg := parsePattern(s, list.l)
			if msg != "" {
				tb.Fatalf("%q: %s", s, msg)
			}
			*list.out = append(*list.out, naiveRule{p, s, i})
		}
	}
	return n
}

func (n *naive) decide(hostname string, port int) Decision {
	if port < 0 || port > 65535 {
		return Decision{Default: true, Reason: "invalid port " + strconv.Itoa(port) + ": want 1 to 65535, or 0 when unknown"}
	}
	h, err := parseHost(hostname)
	if err != nil {
		return Decision{Default: true, Reason: err.Error()}
	}
	if r := best(n.deny, h, port); r != nil {
		reason := n.reasons[r.written]
		if reason == "" {
			reason = "in deniedDomains"
		}
		return Decision{List: Deny, Rule: r.written, Reason: reason}
	}
	if r := best(n.allow, h, port); r != nil {
		return Decision{Allowed: true, List: Allow, Rule: r.written}
	}
	return Decision{Default: true, Reason: "not in allowedDomains"}
}

func best(rules []naiveRule, h host, port int) *naiveRule {
	var b *naiveRule
	for i := range rules {
		r := &rules[i]
		if r.matches(h, port) && (b == nil || r.rank().less(b.rank())) {
			b = r
		}
	}
	return b
}

func (r *naiveRule) matches(h host, port int) bool {
	if r.port != 0 && int(r.port) != port {
		return false
	}
	switch r.kind {
	case global:
		return true
	case exact:
		if h.addr.IsValid() || r.addr.IsValid() {
			return h.addr == r.addr
		}
		return h.name == r.key
	case suffix:
		return !h.addr.IsValid() && strings.HasSuffix(h.name, "."+r.key)
	case middle:
		if h.addr.IsValid() {
			return false
		}
		hl, pl := strings.Split(h.name, "."), strings.Split(r.key, ".")
		if len(hl) != len(pl) {
			return false
		}
		for i := range pl {
			if pl[i] != "*" && pl[i] != hl[i] {
				return false
			}
		}
		return true
	}
	panic("unknown kind")
}

type rank [4]int

func (a rank) less(b rank) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// rank orders by shape, then position (leftmost "*" first, longest base
// first), then port-specific first, then the order written.
func (r *naiveRule) rank() rank {
	pos := 0
	switch r.kind {
	case middle:
		pos = r.star
	case suffix:
		pos = -len(r.key)
	}
	anyPort := 0
	if r.port == 0 {
		anyPort = 1
	}
	return rank{int(r.kind), pos, anyPort, r.index}
}
