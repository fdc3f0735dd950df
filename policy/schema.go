package policy

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/cordon-sandbox/cordon/hostmatch"
)

// How cordon treats each key srt knows. Keys are data, not branching code:
// the tables below are the whole schema, and docs/settings.md is written
// from them.
type status int

const (
	enforced    status = iota // read into Settings and enforced
	macOSOnly                 // read into Settings.MacOS; a note on other systems
	notNeeded                 // srt implementation detail cordon has no use for
	unsupported               // refused unless its value changes nothing (false, empty)
)

type keySpec struct {
	name   string
	status status
	// note says, for notNeeded and unsupported keys, what the key does in
	// srt, so the user knows what they would be giving up.
	note   string
	kind   kind // expected JSON kind for notNeeded/unsupported keys
	decode func(d *decoder, n *node, field string)
}

type decoder struct {
	data     []byte
	file     string
	errs     Errors
	given    map[string]bool
	warnings []string
	notes    []string
}

func (d *decoder) fail(off int, field, format string, args ...any) {
	if len(d.errs) >= maxErrors {
		return
	}
	line, col := lineCol(d.data, off)
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Col: col, Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (d *decoder) settings(root *node, s *Settings) {
	d.object(root, "", topKeys(s))
}

func topKeys(s *Settings) []keySpec {
	return []keySpec{
		{name: "network", decode: func(d *decoder, n *node, f string) { d.object(n, f, networkKeys(&s.Network, &s.MacOS)) }},
		{name: "filesystem", decode: func(d *decoder, n *node, f string) { d.object(n, f, filesystemKeys(&s.Filesystem)) }},
		{name: "ignoreViolations", decode: func(d *decoder, n *node, f string) { s.IgnoreViolations = d.listMap(n, f) }},
		{name: "mandatoryDenySearchDepth", decode: func(d *decoder, n *node, f string) {
			s.MandatoryDenySearchDepth = d.integer(n, f, 1, 10, "use a whole number from 1 to 10 (default 3)")
		}},
		{name: "enableWeakerNestedSandbox", decode: boolInto(&s.EnableWeakerNestedSandbox)},
		{name: "bwrapPath", decode: func(d *decoder, n *node, f string) {
			s.BwrapPath = d.str(n, f)
			if s.BwrapPath != "" && !strings.HasPrefix(s.BwrapPath, "/") {
				d.fail(n.off, f, "%q is not absolute; give the full path (e.g. /usr/bin/bwrap) so that PATH or the working directory cannot substitute another binary", s.BwrapPath)
			}
		}},
		{name: "git", decode: func(d *decoder, n *node, f string) {
			d.object(n, f, []keySpec{{name: "safeDirectories", decode: func(d *decoder, n *node, f string) {
				s.GitSafeDirectories = d.strings(n, f, nil)
			}}})
		}},
		{name: "enableWeakerNetworkIsolation", status: macOSOnly, decode: boolInto(&s.MacOS.EnableWeakerNetworkIsolation)},
		{name: "allowAppleEvents", status: macOSOnly, decode: boolInto(&s.MacOS.AllowAppleEvents)},
		{name: "allowPty", status: macOSOnly, decode: boolInto(&s.MacOS.AllowPty)},
		{name: "ripgrep", status: notNeeded, kind: object, note: "cordon finds protected files without ripgrep"},
		{name: "seccomp", status: notNeeded, kind: object, note: "cordon builds and applies its seccomp filter itself"},
		{name: "socatPath", status: notNeeded, kind: str, note: "cordon bridges the network without socat"},
		{name: "allowNestedUserNamespaces", status: unsupported, kind: boolean, note: "it lets the command create user namespaces, which can undo the write denies"},
		{name: "credentials", status: unsupported, kind: object, note: "it masks credential files and variables and injects them at the proxy"},
		{name: "javaAgentJarPath", status: unsupported, kind: str, note: "it injects a JVM agent so Java honours the proxy"},
		{name: "windows", status: unsupported, kind: object, note: "it configures the Windows backend"},
	}
}

func networkKeys(n *Network, mac *MacOS) []keySpec {
	return []keySpec{
		{name: "allowedDomains", decode: func(d *decoder, v *node, f string) {
			n.AllowedDomains = d.strings(v, f, func(s string) string { return hostError(s, hostmatch.Allow) })
		}},
		{name: "deniedDomains", decode: func(d *decoder, v *node, f string) {
			n.DeniedDomains = d.strings(v, f, func(s string) string { return hostError(s, hostmatch.Deny) })
		}},
		{name: "deniedDomainReasons", decode: func(d *decoder, v *node, f string) { n.DeniedDomainReasons = d.stringMap(v, f) }},
		{name: "deniedResolvedAddresses", decode: func(d *decoder, v *node, f string) {
			n.DeniedResolvedAddresses = d.strings(v, f, func(s string) string {
				if _, err := parseAddressRange(s); err != nil {
					return err.Error()
				}
				return ""
			})
		}},
		{name: "allowUnixSockets", decode: func(d *decoder, v *node, f string) {
			n.AllowUnixSockets = d.strings(v, f, func(s string) string {
				if s == "" {
					return "a socket path cannot be empty"
				}
				return ""
			})
		}},
		{name: "allowAllUnixSockets", decode: boolInto(&n.AllowAllUnixSockets)},
		{name: "allowLocalBinding", decode: boolInto(&n.AllowLocalBinding)},
		{name: "strictAllowlist", decode: boolInto(&n.StrictAllowlist)},
		{name: "httpProxyPort", decode: func(d *decoder, v *node, f string) {
			n.HTTPProxyPort = d.integer(v, f, 1, 65535, "use a port from 1 to 65535, or leave it out to let cordon start its own proxy")
		}},
		{name: "socksProxyPort", decode: func(d *decoder, v *node, f string) {
			n.SOCKSProxyPort = d.integer(v, f, 1, 65535, "use a port from 1 to 65535, or leave it out to let cordon start its own proxy")
		}},
		// cordon always refuses a request whose Host header disagrees with
		// its target, so either value is honoured.
		{name: "requireHostMatch", decode: func(d *decoder, v *node, f string) { d.boolean(v, f) }},
		{name: "allowMachLookup", status: macOSOnly, decode: func(d *decoder, v *node, f string) {
			mac.AllowMachLookup = d.strings(v, f, func(s string) string {
				if strings.Contains(strings.TrimSuffix(s, "*"), "*") {
					return "wildcards are only allowed as a single trailing \"*\" (e.g. \"com.example.*\")"
				}
				return ""
			})
		}},
		{name: "ambiguousRequestTarget", status: notNeeded, kind: str, note: "it only matters with filterRequest, which a settings file cannot hold"},
		{name: "allowPlaintextHeaderSet", status: notNeeded, kind: boolean, note: "it only matters with filterRequest, which a settings file cannot hold"},
		{name: "filterRequest", status: unsupported, kind: -1, note: "it is a JavaScript callback and cannot be written in a settings file"},
		{name: "mitmProxy", status: unsupported, kind: object, note: "it routes hosts through an upstream MITM proxy"},
		{name: "parentProxy", status: unsupported, kind: object, note: "it sends cordon's own outbound traffic through an upstream proxy"},
		{name: "tlsTerminate", status: unsupported, kind: object, note: "it terminates TLS in the proxy"},
		{name: "refuseOpaqueTunnels", status: unsupported, kind: boolean, note: "it refuses tunnels the proxy cannot see into (needs tlsTerminate)"},
		{name: "stripResponseHeaders", status: unsupported, kind: array, note: "it removes response headers in the proxy"},
	}
}

func filesystemKeys(fs *Filesystem) []keySpec {
	return []keySpec{
		{name: "denyRead", decode: func(d *decoder, n *node, f string) { fs.DenyRead = d.entries(n, f, true) }},
		{name: "allowRead", decode: func(d *decoder, n *node, f string) { fs.AllowRead = d.entries(n, f, false) }},
		{name: "allowWrite", decode: func(d *decoder, n *node, f string) { fs.AllowWrite = d.entries(n, f, false) }},
		{name: "denyWrite", decode: func(d *decoder, n *node, f string) { fs.DenyWrite = d.entries(n, f, true) }},
		{name: "allowGitConfig", decode: boolInto(&fs.AllowGitConfig)},
		{name: "disabled", status: unsupported, kind: boolean, note: "it turns every filesystem rule off, the mandatory denies included"},
	}
}

func hostError(s string, list hostmatch.List) string {
	err := hostmatch.Check(s, list)
	if err == nil {
		return ""
	}
	var pe *hostmatch.PatternError
	if errors.As(err, &pe) {
		return pe.Msg
	}
	return err.Error()
}

func boolInto(dst *bool) func(d *decoder, n *node, f string) {
	return func(d *decoder, n *node, f string) { *dst = d.boolean(n, f) }
}

// object decodes n against keys, refusing unknown keys with a suggestion.
func (d *decoder) object(n *node, field string, keys []keySpec) {
	if !d.want(n, field, object) {
		return
	}
	for _, m := range n.members {
		f := join(field, m.key)
		spec := findKey(keys, m.key)
		if spec == nil {
			d.fail(m.off, f, "unknown key%s", suggest(m.key, keys))
			continue
		}
		if m.val.kind == null {
			d.fail(m.val.off, f, "null is not a value here; remove the key to use its default")
			continue
		}
		d.given[f] = true
		switch spec.status {
		case enforced:
			spec.decode(d, m.val, f)
		case macOSOnly:
			spec.decode(d, m.val, f)
			if runtime.GOOS != "darwin" {
				d.notes = append(d.notes, f+" applies on macOS only; ignored on "+runtime.GOOS)
			}
		case notNeeded:
			if spec.kind >= 0 && d.want(m.val, f, spec.kind) {
				d.notes = append(d.notes, f+" is ignored: "+spec.note)
			}
		case unsupported:
			if spec.kind >= 0 && !d.want(m.val, f, spec.kind) {
				continue
			}
			if !inert(m.val) {
				d.fail(m.val.off, f, "not supported yet by cordon (in srt %s); remove the key, or run this file with srt", spec.note)
			}
		}
	}
}

// inert reports whether a value turns a feature off: false, an empty list
// or an empty object. Such a value of an unsupported key changes nothing.
func inert(n *node) bool {
	switch n.kind {
	case boolean:
		return !n.boolean
	case array:
		return len(n.elems) == 0
	case object:
		return len(n.members) == 0
	}
	return false
}

func findKey(keys []keySpec, name string) *keySpec {
	for i := range keys {
		if keys[i].name == name {
			return &keys[i]
		}
	}
	return nil
}

// suggest names the known key closest to a typo, if one is close.
func suggest(key string, keys []keySpec) string {
	best, bestDist := "", math.MaxInt
	for _, k := range keys {
		dist := editDistance(strings.ToLower(key), strings.ToLower(k.name))
		if dist < bestDist {
			best, bestDist = k.name, dist
		}
	}
	if best != "" && (bestDist <= 3 || bestDist <= len(key)/3) {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.name
	}
	sort.Strings(names)
	return "; known keys here: " + strings.Join(names, ", ")
}

// editDistance is the Damerau–Levenshtein distance (adjacent swaps count
// one), so "denyWirte" is one edit from "denyWrite".
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func index(field string, i int) string { return fmt.Sprintf("%s[%d]", field, i) }

func mapKey(field, key string) string { return fmt.Sprintf("%s[%s]", field, strconv.Quote(key)) }

func (d *decoder) want(n *node, field string, k kind) bool {
	if n.kind == k {
		return true
	}
	d.fail(n.off, field, "want %v, got %v%s", k, n.kind, example(k))
	return false
}

func example(k kind) string {
	switch k {
	case array:
		return ` (write a list, e.g. ["example.com"])`
	case boolean:
		return " (write true or false without quotes)"
	case number:
		return " (write a number without quotes)"
	}
	return ""
}

func (d *decoder) boolean(n *node, field string) bool {
	if !d.want(n, field, boolean) {
		return false
	}
	return n.boolean
}

func (d *decoder) str(n *node, field string) string {
	if !d.want(n, field, str) {
		return ""
	}
	return n.str
}

func (d *decoder) integer(n *node, field string, lo, hi int, fix string) int {
	if !d.want(n, field, number) {
		return 0
	}
	f, err := strconv.ParseFloat(string(n.num), 64)
	if err != nil || f != math.Trunc(f) {
		d.fail(n.off, field, "%s is not a whole number; %s", n.num, fix)
		return 0
	}
	if f < float64(lo) || f > float64(hi) {
		d.fail(n.off, field, "%s is out of range; %s", n.num, fix)
		return 0
	}
	return int(f)
}

// strings decodes a list of strings, checking each with check (which
// returns "" or what is wrong).
func (d *decoder) strings(n *node, field string, check func(string) string) []string {
	if !d.want(n, field, array) {
		return nil
	}
	out := make([]string, 0, len(n.elems))
	for i, e := range n.elems {
		f := index(field, i)
		if !d.want(e, f, str) {
			continue
		}
		if check != nil {
			if msg := check(e.str); msg != "" {
				d.fail(e.off, f, "%q: %s", e.str, msg)
				continue
			}
		}
		out = append(out, e.str)
	}
	return out
}

// entries decodes filesystem rules: strings, or {"path": ..., "literal": true}.
func (d *decoder) entries(n *node, field string, deny bool) []Entry {
	if !d.want(n, field, array) {
		return nil
	}
	out := make([]Entry, 0, len(n.elems))
	for i, e := range n.elems {
		f := index(field, i)
		var ent Entry
		switch e.kind {
		case str:
			ent = Entry{Path: e.str}
		case object:
			ok := true
			for _, m := range e.members {
				switch m.key {
				case "path":
					if m.val.kind != str {
						d.fail(m.val.off, f+".path", "want a string, got %v", m.val.kind)
						ok = false
					}
					ent.Path = m.val.str
				case "literal":
					if m.val.kind != boolean || !m.val.boolean {
						d.fail(m.val.off, f+".literal", "must be true (write the path as a plain string when it is a glob)")
						ok = false
					}
					ent.Literal = true
				default:
					d.fail(m.off, join(f, m.key), "unknown key; an entry object is {\"path\": \"...\", \"literal\": true}")
					ok = false
				}
			}
			if ok && (!ent.Literal || findMember(e, "path") == nil) {
				d.fail(e.off, f, "an entry object needs both \"path\" and \"literal\": true")
				ok = false
			}
			if !ok {
				continue
			}
		default:
			d.fail(e.off, f, "want a path string or {\"path\": \"...\", \"literal\": true}, got %v", e.kind)
			continue
		}
		if msg := checkEntry(ent, deny); msg != "" {
			d.fail(e.off, f, "%s", msg)
			continue
		}
		out = append(out, ent)
	}
	return out
}

func findMember(n *node, key string) *member {
	for i := range n.members {
		if n.members[i].key == key {
			return &n.members[i]
		}
	}
	return nil
}

func (d *decoder) stringMap(n *node, field string) map[string]string {
	if !d.want(n, field, object) {
		return nil
	}
	out := make(map[string]string, len(n.members))
	for _, m := range n.members {
		f := mapKey(field, m.key)
		if !d.want(m.val, f, str) {
			continue
		}
		if m.val.str == "" {
			d.fail(m.val.off, f, "a reason cannot be empty; remove the entry to use the generic reason")
			continue
		}
		out[m.key] = m.val.str
	}
	return out
}

func (d *decoder) listMap(n *node, field string) map[string][]string {
	if !d.want(n, field, object) {
		return nil
	}
	out := make(map[string][]string, len(n.members))
	for _, m := range n.members {
		out[m.key] = d.strings(m.val, mapKey(field, m.key), nil)
	}
	return out
}
