package hostmatch_test

import (
	"fmt"

	"github.com/cordon-sandbox/cordon/hostmatch"
)

func Example() {
	rules, err := hostmatch.Compile(
		[]string{"github.com", "*.github.com", "registry.npmjs.org:443"},
		[]string{"gist.github.com", "*:22"},
		map[string]string{"*:22": "no SSH from the sandbox"},
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, dst := range []struct {
		host string
		port int
	}{
		{"API.GitHub.com.", 443},
		{"github.com", 22},
		{"gist.github.com", 443},
		{"registry.npmjs.org", 80},
	} {
		d := rules.Decide(dst.host, dst.port)
		fmt.Printf("%s:%d allowed=%v rule=%q reason=%q\n", dst.host, dst.port, d.Allowed, d.Rule, d.Reason)
	}
	// Output:
	// API.GitHub.com.:443 allowed=true rule="*.github.com" reason=""
	// github.com:22 allowed=false rule="*:22" reason="no SSH from the sandbox"
	// gist.github.com:443 allowed=false rule="gist.github.com" reason="in deniedDomains"
	// registry.npmjs.org:80 allowed=false rule="" reason="not in allowedDomains"
}

func ExampleCheck() {
	for _, p := range []string{"*.com", "https://example.com/api", "bedrock.*.amazonaws.com", "::1"} {
		fmt.Println(hostmatch.Check(p, hostmatch.Allow))
	}
	// Output:
	// allowedDomains: "*.com": too broad: it covers every name under the public suffix "com"; name a domain, e.g. "*.example.com"
	// allowedDomains: "https://example.com/api": remove the scheme: write the host only, e.g. "example.com"
	// <nil>
	// allowedDomains: "::1": write an IPv6 address in brackets: "[::1]"
}
