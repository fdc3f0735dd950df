package violation

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Caps on each field, in bytes. They bound what one refusal can put in front
// of a person or into an agent's context.
const (
	maxAction    = 64
	maxTarget    = 512
	maxReason    = 500
	maxCommand   = 1000
	maxCommandID = 1000
	maxRaw       = 1000
)

// unsafeRunes are the code points that can change how the text around them
// is displayed, or hide text, without showing themselves. See the package
// comment for the classes.
var unsafeRunes = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x0000, Hi: 0x001f, Stride: 1}, // C0 controls: ESC, CR, LF, BS, ...
		{Lo: 0x007f, Hi: 0x009f, Stride: 1}, // DEL, C1 controls (CSI, NEL)
		{Lo: 0x00ad, Hi: 0x00ad, Stride: 1}, // soft hyphen
		{Lo: 0x061c, Hi: 0x061c, Stride: 1}, // Arabic letter mark
		{Lo: 0x180e, Hi: 0x180e, Stride: 1}, // Mongolian vowel separator
		{Lo: 0x200b, Hi: 0x200f, Stride: 1}, // zero width space, non-joiner, joiner; LRM, RLM
		{Lo: 0x2028, Hi: 0x202e, Stride: 1}, // line, paragraph separators; LRE, RLE, PDF, LRO, RLO
		{Lo: 0x2060, Hi: 0x206f, Stride: 1}, // word joiner, invisible operators; LRI, RLI, FSI, PDI; deprecated format
		{Lo: 0xfeff, Hi: 0xfeff, Stride: 1}, // zero width no-break space (BOM)
		{Lo: 0xfff9, Hi: 0xfffb, Stride: 1}, // interlinear annotation
	},
	R32: []unicode.Range32{
		{Lo: 0xe0000, Hi: 0xe007f, Stride: 1}, // Tags: invisible ASCII
	},
}

// sanitize returns s in display form, at most max bytes long (see the
// package comment). It is idempotent: sanitize(sanitize(s, n), n) ==
// sanitize(s, n), which lets Key accept raw and stored text alike.
func sanitize(s string, max int) string {
	if plainASCII(s) {
		s = strings.TrimLeft(s, " ")
		if len(s) > max {
			s = s[:max]
		}
		return strings.TrimRight(s, " ")
	}
	var b strings.Builder
	b.Grow(min(len(s), max+utf8.UTFMax))
	collapsed := false // the last rune written was a collapsed run
	for i := 0; i < len(s) && b.Len() <= max; {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '<' || r == '>':
			continue
		case unicode.Is(unsafeRunes, r):
			if !collapsed && b.Len() > 0 {
				b.WriteByte(' ')
			}
			collapsed = true
			continue
		case b.Len() == 0 && unicode.IsSpace(r):
			continue
		}
		// An invalid byte decodes as utf8.RuneError, which writes U+FFFD.
		b.WriteRune(r)
		collapsed = false
	}
	out := b.String()
	if len(out) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = out[:cut]
	}
	return strings.TrimRightFunc(out, unicode.IsSpace)
}

// plainASCII reports whether s is printable ASCII without angle brackets,
// the common case, which needs only trimming and the cap.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '<' || c == '>' {
			return false
		}
	}
	return true
}

// clean returns v with every text field sanitized.
func clean(v Violation) Violation {
	v.Action = sanitize(v.Action, maxAction)
	v.Target = sanitize(v.Target, maxTarget)
	v.Reason = sanitize(v.Reason, maxReason)
	v.Command = sanitize(v.Command, maxCommand)
	v.CommandID = sanitize(v.CommandID, maxCommandID)
	v.Raw = sanitize(v.Raw, maxRaw)
	return v
}
