package backend

import (
	_ "embed"
	"fmt"
	"strings"
)

//go:embed egress.txt
var egressData string

// Egress lists, from egress.txt: Baseline (LLM providers, git hosting,
// package registries), GitHub, and Denied, which beats every allow.
var (
	Baseline, GitHub, Denied []string
)

func init() {
	var err error
	if Baseline, GitHub, Denied, err = parseEgress(egressData); err != nil {
		panic(err) // the embedded file is checked by the tests
	}
}

// parseEgress reads the sections of egress.txt: "# [allow] …",
// "# [github] …" and "# [deny] …" start them.
func parseEgress(data string) (allow, github, deny []string, err error) {
	var cur *[]string
	for i, line := range strings.Split(data, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "# [allow]"):
			cur = &allow
		case strings.HasPrefix(line, "# [github]"):
			cur = &github
		case strings.HasPrefix(line, "# [deny]"):
			cur = &deny
		case line == "" || strings.HasPrefix(line, "#"):
		case cur == nil:
			return nil, nil, nil, fmt.Errorf("egress.txt:%d: %q comes before any section", i+1, line)
		default:
			*cur = append(*cur, line)
		}
	}
	return allow, github, deny, nil
}

// Allowlist is the session's allowlist: empty when the network is off,
// else the baseline, GitHub and the spec's own entries.
func (s *Spec) Allowlist() []string {
	if !s.networkOn() {
		return nil
	}
	out := append(append([]string(nil), Baseline...), GitHub...)
	return append(out, s.EgressAllowlist...)
}
