//go:build linux

package term

import "testing"

func TestParseStat(t *testing.T) {
	tests := []struct {
		stat        string
		wantSession int
		wantState   byte
		wantErr     bool
	}{
		{"4242 (sh) S 4200 4242 4242 34816 4242 4194560 ...", 4242, 'S', false},
		{"4243 (sleep) Z 4242 4243 4242 0 -1", 4242, 'Z', false},
		// comm is what the program calls itself: spaces and parentheses.
		{"4244 (a) R (b c) T 1 4244 99 0", 99, 'T', false},
		{"4245 ()) S 1 2 3 4", 3, 'S', false},
		{"", 0, 0, true},
		{"4246 sh S 1 2 3", 0, 0, true},
		{"4247 (sh) S 1 2", 0, 0, true},
		{"4248 (sh) S 1 2 x", 0, 0, true},
		{"4249 (sh) SS 1 2 3", 0, 0, true},
	}
	for _, tt := range tests {
		session, state, err := parseStat([]byte(tt.stat))
		if (err != nil) != tt.wantErr {
			t.Errorf("parseStat(%q): error %v, want error %v", tt.stat, err, tt.wantErr)
			continue
		}
		if session != tt.wantSession || state != tt.wantState {
			t.Errorf("parseStat(%q) = %d, %q; want %d, %q", tt.stat, session, state, tt.wantSession, tt.wantState)
		}
	}
}
