package backend

import "strings"

// envAllowed are the variables a command inherits from the daemon's
// environment: what programs need to run and print, nothing that carries a
// credential (tokens, keys, cloud profiles), a proxy override, or a path a
// tool would load code from (LD_PRELOAD, PYTHONPATH, NODE_OPTIONS, ...).
var envAllowed = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"LANG": true, "LANGUAGE": true, "TERM": true, "COLORTERM": true, "TZ": true,
	"TMPDIR": true, "NO_COLOR": true,
}

// ScrubbedEnv keeps the allowed variables of env (and LC_*).
func ScrubbedEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		if ok && (envAllowed[k] || strings.HasPrefix(k, "LC_")) {
			out = append(out, kv)
		}
	}
	return out
}
