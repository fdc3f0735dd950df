package hostmatch

import (
	"fmt"
	"testing"
)

// rules10k is a mix of the shapes a large managed policy holds: exact names,
// names with ports, leading and middle wildcards, and a few denies.
func rules10k() (allow, deny []string) {
	for i := range 10_000 {
		switch i % 5 {
		case 0:
			allow = append(allow, fmt.Sprintf("host%d.example%d.com", i, i%97))
		case 1:
			allow = append(allow, fmt.Sprintf("api%d.example%d.com:443", i, i%97))
		case 2:
			allow = append(allow, fmt.Sprintf("*.svc%d.example.net", i))
		case 3:
			allow = append(allow, fmt.Sprintf("bedrock.*.region%d.example.org", i))
		case 4:
			deny = append(deny, fmt.Sprintf("*.blocked%d.example.com:%d", i, 1+i%1000))
		}
	}
	return allow, append(deny, "*:22")
}

func BenchmarkDecide(b *testing.B) {
	allow, deny := rules10k()
	r, err := Compile(allow, deny, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, bb := range []struct {
		name, host string
		allowed    bool
	}{
		{"hit", fmt.Sprintf("api%d.example%d.com", 5001, 5001%97), true},
		{"hit-middle", "bedrock.us-east-1.region9998.example.org", true},
		{"miss", "www.example.invalid", false},
		{"deep", "a.b.c.d.e.f.g.svc9997.example.net", true}, // 10 labels
		{"deep-miss", "a.b.c.d.e.f.g.h.i.j", false},
		{"ipv6", "[2001:db8::1]", false},
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r.Decide(bb.host, 443).Allowed != bb.allowed {
					b.Fatalf("Decide(%q) = %+v", bb.host, r.Decide(bb.host, 443))
				}
			}
		})
	}
}

func BenchmarkCompile10k(b *testing.B) {
	allow, deny := rules10k()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(allow, deny, nil); err != nil {
			b.Fatal(err)
		}
	}
}
