package hostmatch

import (
	"fmt"
	"net/netip"
	"strings"
)

// List names the settings list a pattern came from.
type List int

const (
	Allow List = iota // network.allowedDomains
	Deny              // network.deniedDomains
)

// String returns the settings key of the list, without the "network." prefix.
func (l List) String() string {
	switch l {
	case Allow:
		return "allowedDomains"
	case Deny:
		return "deniedDomains"
	}
	return fmt.Sprintf("List(%d)", int(l))
}

// PatternError is a refused entry. Compile and Check return it.
type PatternError struct {
	List    List
	Index   int    // index in that list; -1 when it came from Check
	Pattern string // entry as written
	Msg     string // what is wrong and how to fix it
}

// Error reads `allowedDomains[2]: "*.com": too broad: ...`, or without the
// "[2]" when Index is -1.
func (e *PatternError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("%s: %q: %s", e.List, e.Pattern, e.Msg)
	}
	return fmt.Sprintf("%s[%d]: %q: %s", e.List, e.Index, e.Pattern, e.Msg)
}

// Check validates one pattern as an entry of list, without compiling a rule
// set. It returns nil or a *PatternError with Index -1. Any List value other
// than Deny is checked with the allow list's stricter rules.
func Check(pattern string, list List) error {
	if _, msg := parsePattern(pattern, list); msg != "" {
		return &PatternError{List: list, Index: -1, Pattern: pattern, Msg: msg}
	}
	return nil
}

// Rules is a compiled pair of lists. It is immutable and safe for concurrent
// use. A nil *Rules denies everything.
type Rules struct {
	allow, deny ruleList
	warnings    []string
}

// ruleList is one list indexed by pattern shape. Every index value is the
// position of the first entry written with that key, so duplicates are
// harmless and the reported rule is deterministic. Port 0 in a key means
// "every port".
type ruleList struct {
	entries  []string // as written
	reasons  []string // deny list: deniedDomainReasons per entry
	names    table    // exact names
	middles  table    // a name with "*" in place of one label
	suffixes table    // the base of "*.base"
	addrs    map[netip.AddrPort]int
	global   map[uint16]int // "*" and "*:port"
}

// table is a map from name and port to entry, with enough summary to skip
// most lookups that cannot hit: a host of n labels is only looked up where
// some key has n labels, and a port only where some key has a port.
type table struct {
	m        map[nameKey]int
	withPort bool
	anyPort  bool
	labels   [maxLabels + 1]bool // labels[n]: some key has n labels
}

type nameKey struct {
	name string
	port uint16
}

func (t *table) add(name string, port uint16, i int) {
	addFirst(&t.m, nameKey{name, port}, i)
	t.labels[strings.Count(name, ".")+1] = true
	if port != 0 {
		t.withPort = true
	} else {
		t.anyPort = true
	}
}

func (t *table) find(name string, port uint16) int {
	if t.withPort && port != 0 {
		if i, ok := t.m[nameKey{name, port}]; ok {
			return i
		}
	}
	if t.anyPort {
		if i, ok := t.m[nameKey{name, 0}]; ok {
			return i
		}
	}
	return -1
}

// Compile checks and indexes both lists. reasons is
// network.deniedDomainReasons, keyed by deniedDomains entries as written; keys
// that name no entry are ignored. The first refused entry, allow list first,
// is returned as a *PatternError.
func Compile(allow, deny []string, reasons map[string]string) (*Rules, error) {
	r := &Rules{}
	for i, s := range allow {
		p, msg := parsePattern(s, Allow)
		if msg != "" {
			return nil, &PatternError{List: Allow, Index: i, Pattern: s, Msg: msg}
		}
		if p.warn != "" {
			r.warnings = append(r.warnings, fmt.Sprintf("%s[%d]: %s", Allow, i, p.warn))
		}
		r.allow.add(p, s)
	}
	for i, s := range deny {
		p, msg := parsePattern(s, Deny)
		if msg != "" {
			return nil, &PatternError{List: Deny, Index: i, Pattern: s, Msg: msg}
		}
		r.deny.add(p, s)
		r.deny.reasons = append(r.deny.reasons, reasons[s])
	}
	return r, nil
}

func (l *ruleList) add(p pattern, written string) {
	i := len(l.entries)
	l.entries = append(l.entries, written)
	switch p.kind {
	case exact:
		if p.addr.IsValid() {
			addFirst(&l.addrs, netip.AddrPortFrom(p.addr, p.port), i)
		} else {
			l.names.add(p.key, p.port, i)
		}
	case middle:
		l.middles.add(p.key, p.port, i)
	case suffix:
		l.suffixes.add(p.key, p.port, i)
	case global:
		addFirst(&l.global, p.port, i)
	}
}

func addFirst[K comparable](m *map[K]int, k K, i int) {
	if *m == nil {
		*m = make(map[K]int)
	}
	if _, dup := (*m)[k]; !dup {
		(*m)[k] = i
	}
}

// Empty reports whether there are no allow rules, so every connection is denied.
func (r *Rules) Empty() bool {
	return r == nil || len(r.allow.entries) == 0
}

// Warnings lists accepted allow entries a user may not mean: wildcards over a
// suffix on the private section of the public suffix list ("*.github.io"),
// which cover sites of unrelated owners. Each reads
// `allowedDomains[3]: "*.github.io" covers ...`, the same shape as a
// PatternError, so the caller can prefix it the same way.
func (r *Rules) Warnings() []string {
	if r == nil {
		return nil
	}
	return append([]string(nil), r.warnings...)
}

// Decision is the verdict on one destination.
type Decision struct {
	Allowed bool
	List    List   // which list decided; meaningless when Default is true
	Default bool   // no rule matched (or the destination is malformed): denied
	Rule    string // the entry as written that decided; "" when Default
	Reason  string // for a denial: why, in words a user reads; "" when allowed
}

// Decide says whether a connection to host:port is allowed. host is as the
// client sent it (see Normalize); port is 1 to 65535, or 0 when unknown, in
// which case only port-less patterns match.
//
// Deny beats allow. When several rules of the deciding list match, the most
// specific is reported: an exact name or address, then a middle wildcard (the
// "*" furthest left first), then a "*." wildcard (longest base first), then
// "*"; at each step a pattern with the port beats one without, and among
// duplicates the first written wins.
func (r *Rules) Decide(host string, port int) Decision {
	if port < 0 || port > 65535 {
		return Decision{Default: true, Reason: fmt.Sprintf("invalid port %d: want 1 to 65535, or 0 when unknown", port)}
	}
	h, err := parseHost(host)
	if err != nil {
		return Decision{Default: true, Reason: err.Error()}
	}
	if r != nil {
		if i := r.deny.match(h, uint16(port)); i >= 0 {
			reason := r.deny.reasons[i]
			if reason == "" {
				reason = "in deniedDomains"
			}
			return Decision{List: Deny, Rule: r.deny.entries[i], Reason: reason}
		}
		if i := r.allow.match(h, uint16(port)); i >= 0 {
			return Decision{Allowed: true, List: Allow, Rule: r.allow.entries[i]}
		}
	}
	return Decision{Default: true, Reason: "not in allowedDomains"}
}

// match returns the index of the most specific entry matching h on port, or -1.
// It costs a few map lookups per label of h and allocates nothing.
func (l *ruleList) match(h host, port uint16) int {
	if h.addr.IsValid() {
		// Wildcards never match an address: "*.example.com" says nothing
		// about 1.2.3.4.
		if port != 0 {
			if i, ok := l.addrs[netip.AddrPortFrom(h.addr, port)]; ok {
				return i
			}
		}
		if i, ok := l.addrs[netip.AddrPortFrom(h.addr, 0)]; ok {
			return i
		}
		return l.matchGlobal(port)
	}
	name := h.name
	if i := l.names.find(name, port); i >= 0 {
		return i
	}
	n := strings.Count(name, ".") + 1
	if t := &l.middles; t.labels[n] {
		// Try name with each middle label in turn replaced by "*". The
		// key is built on the stack; a map index with string(bytes) in
		// a struct literal does not allocate.
		var buf [maxName]byte
		start := strings.IndexByte(name, '.') + 1
		for {
			end := strings.IndexByte(name[start:], '.')
			if end < 0 {
				break // the last label: a wildcard never stands there
			}
			end += start
			b := append(append(append(buf[:0], name[:start]...), '*'), name[end:]...)
			if t.withPort && port != 0 {
				if i, ok := t.m[nameKey{string(b), port}]; ok {
					return i
				}
			}
			if t.anyPort {
				if i, ok := t.m[nameKey{string(b), 0}]; ok {
					return i
				}
			}
			start = end + 1
		}
	}
	for base := name; n > 1; n-- {
		base = base[strings.IndexByte(base, '.')+1:]
		if l.suffixes.labels[n-1] {
			if i := l.suffixes.find(base, port); i >= 0 {
				return i
			}
		}
	}
	return l.matchGlobal(port)
}

func (l *ruleList) matchGlobal(port uint16) int {
	if port != 0 {
		if i, ok := l.global[port]; ok {
			return i
		}
	}
	if i, ok := l.global[0]; ok {
		return i
	}
	return -1
}
