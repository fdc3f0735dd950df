package policy

import (
	"errors"
	"fmt"
	"strings"
)

// ErrPolicy is wrapped by every error that means "these settings cannot be
// enforced as written": the caller must not run the command (the CLI exits
// 125). Test with errors.Is(err, policy.ErrPolicy).
var ErrPolicy = errors.New("invalid settings")

// Error is one refusal: which file, where in it, which field, and what to do.
type Error struct {
	File  string // as the user named it; "" for settings built in code
	Line  int    // 1-based; 0 when unknown (settings built in code)
	Col   int
	Field string // JSON path such as network.allowedDomains[2]; "" for the whole file
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

func (e *Error) Unwrap() error { return ErrPolicy }

// Errors is every refusal found in one file, in file order. Its message has
// one line per refusal.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// maxErrors keeps a badly broken file from producing a wall of text; the
// first few are what a user fixes first anyway.
const maxErrors = 10
