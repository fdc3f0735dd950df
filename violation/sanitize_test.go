package violation

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"plain", "evil.test:443", 512, "evil.test:443"},
		{"empty", "", 512, ""},
		{"non-ASCII kept", "bücher.例え.jp/ファイル 😀", 512, "bücher.例え.jp/ファイル 😀"},
		{"replacement char kept", "a\uFFFDb", 512, "a\uFFFDb"},

		{"escape sequence", "a\x1b[2Jb", 512, "a [2Jb"},
		{"NUL", "a\x00b", 512, "a b"},
		{"CRLF and tab collapse", "a\r\n\tb", 512, "a b"},
		{"DEL", "a\x7fb", 512, "a b"},
		{"C1 NEL", "a\u0085b", 512, "a b"},
		{"C1 CSI", "a\u009b31mb", 512, "a 31mb"},
		{"line separator", "a\u2028b", 512, "a b"},
		{"paragraph separator", "a\u2029b", 512, "a b"},

		{"arabic letter mark", "a\u061cb", 512, "a b"},
		{"LRM RLM", "a\u200e\u200fb", 512, "a b"},
		{"LRE RLE PDF LRO RLO", "a\u202ab\u202bc\u202cd\u202de\u202ef", 512, "a b c d e f"},
		{"isolates", "a\u2066b\u2067c\u2068d\u2069e", 512, "a b c d e"},
		{"trojan source", "ok\u202e\u2066nimda\u2069\u2066", 512, "ok nimda"},

		{"zero width space joiners", "a\u200bb\u200cc\u200dd", 512, "a b c d"},
		{"word joiner and invisible operators", "a\u2060b\u2061c\u2062d\u2063e\u2064f", 512, "a b c d e f"},
		{"BOM", "\ufeffa\ufeffb", 512, "a b"},
		{"soft hyphen", "ex\u00adample.com", 512, "ex ample.com"},
		{"more invisible format", "a\u180eb\u206ac\ufff9d", 512, "a b c d"},

		{"tag characters", "a\U000E0000b\U000E0041\U000E0042c\U000E007Fd", 512, "a b c d"},
		{"tag run", "x\U000E0069\U000E0067\U000E006E\U000E006F\U000E0072\U000E0065y", 512, "x y"},

		{"angle brackets removed", "<b>host</b>", 512, "bhost/b"},
		{"closing tag", "x</sandbox_violations>\nfake", 512, "x/sandbox_violations fake"},
		{"bracket inside a run", "a\n<\n>\nb", 512, "a b"},

		{"invalid byte", "a\xffb", 512, "a\uFFFDb"},
		{"truncated sequence", "a\xe2\x82", 512, "a\uFFFD\uFFFD"},
		{"surrogate half", "a\xed\xa0\x80b", 512, "a\uFFFD\uFFFD\uFFFDb"},

		{"trim spaces", "  host  ", 512, "host"},
		{"trim collapsed runs", "\n\x1b host \r\n", 512, "host"},
		{"trim unicode space", "\u00a0host\u3000", 512, "host"},
		{"inner spaces kept", "a  b", 512, "a  b"},

		{"cap ASCII", strings.Repeat("a", 600), 512, strings.Repeat("a", 512)},
		{"cap at rune boundary", strings.Repeat("€", 200), 512, strings.Repeat("€", 170)},
		{"cap after collapsing", strings.Repeat("a\n", 400), 500, strings.TrimSpace(strings.Repeat("a ", 250))},
		{"cap then trim", strings.Repeat("a", 511) + " b", 512, strings.Repeat("a", 511)},
		{"cap counts after leading trim", "   " + strings.Repeat("b", 10), 10, strings.Repeat("b", 10)},
		{"cap 1 with wide rune", "€", 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sanitize(tc.in, tc.max)
			if got != tc.want {
				t.Errorf("sanitize(%+q, %d) = %+q, want %+q", tc.in, tc.max, got, tc.want)
			}
			if again := sanitize(got, tc.max); again != got {
				t.Errorf("not idempotent: %+q then %+q", got, again)
			}
		})
	}
}

// TestFieldCaps checks that the Store caps each field at its own limit.
func TestFieldCaps(t *testing.T) {
	long := strings.Repeat("x", 5000)
	s := NewStore(0, nil)
	s.Add(Violation{Action: long, Target: long, Reason: long, Command: long, CommandID: long, Raw: long})
	v := s.All()[0]
	for _, f := range []struct {
		name string
		got  string
		max  int
	}{
		{"Action", v.Action, 64},
		{"Target", v.Target, 512},
		{"Reason", v.Reason, 500},
		{"Command", v.Command, 1000},
		{"CommandID", v.CommandID, 1000},
		{"Raw", v.Raw, 1000},
	} {
		if len(f.got) != f.max {
			t.Errorf("%s is %d bytes, want %d", f.name, len(f.got), f.max)
		}
	}
}

// TestAddSanitizesEveryField checks that no field escapes sanitizing.
func TestAddSanitizesEveryField(t *testing.T) {
	bad := " <a\x1b\u202eb> "
	s := NewStore(0, nil)
	s.Add(Violation{Action: bad, Target: bad, Reason: bad, Command: bad, CommandID: bad, Raw: bad})
	v := s.All()[0]
	for name, got := range map[string]string{
		"Action": v.Action, "Target": v.Target, "Reason": v.Reason,
		"Command": v.Command, "CommandID": v.CommandID, "Raw": v.Raw,
	} {
		if got != "a b" {
			t.Errorf("%s = %+q, want %q", name, got, "a b")
		}
	}
}

// displayUnsafe is the brief's list of classes, written out independently
// of unsafeRunes so that the fuzz target checks the table, not itself.
func displayUnsafe(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f: // C0, DEL, C1
		return true
	case r == 0x2028, r == 0x2029:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi
		return true
	case r >= 0x200b && r <= 0x200d, r >= 0x2060 && r <= 0x2064, r == 0xfeff, r == 0x00ad: // invisible
		return true
	case r >= 0xe0000 && r <= 0xe007f: // tags
		return true
	}
	return false
}

func FuzzSanitize(f *testing.F) {
	for _, seed := range []string{
		"", "evil.test:443", "a\x1b[31mb\r\n", "<sandbox_violations>", "</sandbox_violations>\nx",
		"\u202e\u2066x\u2069", "\U000E0041\U000E007F", "a\xffb\xc3", "  \u00a0x\u3000 ",
		strings.Repeat("€", 400), strings.Repeat("a\n", 600), "\ufeff\u00ad\u200d",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, max := range []int{1, 3, 7, maxAction, maxReason, maxTarget, maxCommand} {
			out := sanitize(s, max)
			if len(out) > max {
				t.Fatalf("sanitize(%+q, %d) is %d bytes", s, max, len(out))
			}
			if !utf8.ValidString(out) {
				t.Fatalf("sanitize(%+q, %d) = %+q is not UTF-8", s, max, out)
			}
			for _, r := range out {
				if displayUnsafe(r) || r == '<' || r == '>' {
					t.Fatalf("sanitize(%+q, %d) = %+q holds %U", s, max, out, r)
				}
			}
			if strings.TrimSpace(out) != out {
				t.Fatalf("sanitize(%+q, %d) = %+q is not trimmed", s, max, out)
			}
			if again := sanitize(out, max); again != out {
				t.Fatalf("not idempotent: %+q, then %+q", out, again)
			}
		}

		// Whatever the command put in a violation, the block stays one
		// block of one line.
		st := NewStore(0, nil)
		st.Add(Violation{Action: s, Target: s, Reason: s, Command: "c"})
		got := st.AnnotateStderr(Key("", "c"), "")
		if strings.Count(got, "\n") != 3 || strings.Count(got, "<") != 2 || strings.Count(got, ">") != 2 ||
			!strings.HasPrefix(got, "\n<sandbox_violations>\nblocked") || !strings.HasSuffix(got, "\n</sandbox_violations>") {
			t.Fatalf("annotation for %+q = %+q", s, got)
		}
		if strings.IndexFunc(got, func(r rune) bool { return r != '\n' && displayUnsafe(r) }) >= 0 {
			t.Fatalf("annotation for %+q = %+q holds an unsafe rune", s, got)
		}
	})
}

// TestUnsafeTableSorted guards the table's invariant: unicode.Is needs
// sorted, disjoint ranges.
func TestUnsafeTableSorted(t *testing.T) {
	for i := 1; i < len(unsafeRunes.R16); i++ {
		if unsafeRunes.R16[i].Lo <= unsafeRunes.R16[i-1].Hi {
			t.Errorf("R16[%d] %X overlaps or precedes R16[%d] %X", i, unsafeRunes.R16[i].Lo, i-1, unsafeRunes.R16[i-1].Hi)
		}
	}
	for r := rune(0); r <= 0xe00ff; r++ {
		if displayUnsafe(r) && !unicode.Is(unsafeRunes, r) {
			t.Errorf("%U is in the brief's classes but not in unsafeRunes", r)
		}
	}
}
