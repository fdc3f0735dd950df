package policy

import (
	"fmt"
	"strconv"

	"github.com/cordon-sandbox/cordon/hostmatch"
)

// Verdict is the answer to "may the sandboxed command do this?" and the
// rule that decided it, as `cordon explain` prints it.
type Verdict struct {
	Allowed bool
	Field   string // the settings field that decided, e.g. filesystem.denyRead[1]; "" for a default
	Rule    string // the entry as written, or the built-in rule's name
	Why     string // one line for a person
}

func (v Verdict) String() string {
	word := "denied"
	if v.Allowed {
		word = "allowed"
	}
	if v.Field != "" {
		return fmt.Sprintf("%s by %s %q: %s", word, v.Field, v.Rule, v.Why)
	}
	return fmt.Sprintf("%s: %s", word, v.Why)
}

// PrivateTmp is the sandbox's own writable temp directory: every run gets a
// fresh, empty one, discarded when the run ends.
const PrivateTmp = "/tmp"

// absPath expands a path argument the way settings entries are expanded and
// returns its spellings: as given and with symlinks resolved.
func (p *Policy) absPath(path string) ([]string, error) {
	e, err := expand(Entry{Path: path, Literal: true}, p.Env)
	if err != nil {
		return nil, err
	}
	return e.Forms(), nil
}

// CheckRead decides whether the command may read path. The most specific
// matching denyRead or allowRead rule wins; a tie goes to the deny.
func (p *Policy) CheckRead(path string) (Verdict, error) {
	return p.check(path, p.readVerdict)
}

// check judges both spellings of path (as given, symlinks resolved): the
// first denial wins, else the verdict on the path as given.
func (p *Policy) check(path string, verdict func(string) Verdict) (Verdict, error) {
	forms, err := p.absPath(path)
	if err != nil {
		return Verdict{}, err
	}
	var first *Verdict
	for _, f := range forms {
		v := verdict(f)
		if !v.Allowed {
			return v, nil
		}
		if first == nil {
			first = &v
		}
	}
	return *first, nil
}

func (p *Policy) readVerdict(path string) Verdict {
	return readVerdict(p.DenyRead, p.AllowRead, path)
}

// CheckWrite decides whether the command may create or change path. Deny
// rules beat allow rules whatever their specificity.
func (p *Policy) CheckWrite(path string) (Verdict, error) {
	return p.check(path, p.writeVerdict)
}

func (p *Policy) writeVerdict(path string) Verdict {
	return p.CreateRules().Verdict(path)
}

// CheckConnect decides whether the command may connect to host:port (port
// 0: any port).
func (p *Policy) CheckConnect(host string, port int) Verdict {
	d := p.Hosts.Decide(host, port)
	target := host
	if port > 0 {
		target = host + ":" + strconv.Itoa(port)
	}
	switch {
	case d.Allowed:
		return Verdict{Allowed: true, Field: "network.allowedDomains", Rule: d.Rule, Why: target + " is reachable through cordon's proxies"}
	case d.Default:
		return Verdict{Why: target + ": " + d.Reason}
	default:
		return Verdict{Field: "network." + hostmatch.Deny.String(), Rule: d.Rule, Why: d.Reason}
	}
}
