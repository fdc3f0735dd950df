//go:build linux

package guard

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cordon-sandbox/cordon/policy"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		in, dir, last string
		trailing      bool
	}{
		{"a", "", "a", false},
		{"a/b", "a", "b", false},
		{"/a", "/", "a", false},
		{"/", "/", "", true},
		{"//", "/", "", true},
		{"a/b/", "a", "b", true},
		{"a//b", "a/", "b", false},
		{"../x", "..", "x", false},
		{"/proc/self/fd/3", "/proc/self/fd", "3", false},
		{".", "", ".", false},
	} {
		dir, last, trailing := split(c.in)
		if dir != c.dir || last != c.last || trailing != c.trailing {
			t.Errorf("split(%q) = %q %q %v, want %q %q %v", c.in, dir, last, trailing, c.dir, c.last, c.trailing)
		}
	}
}

func TestKernelSupported(t *testing.T) {
	for rel, want := range map[string]bool{
		"6.18.44-fc-v657": true, "5.14.0": true, "5.15.0-91-generic": true, "5.13.19": false,
		"4.19.0-26-amd64": false, "6.1.0-18-amd64": true, "10.0": true, "5": false, "": false, "x.y": false,
		"5.14-rc1": true,
	} {
		if got := KernelSupported(rel); got != want {
			t.Errorf("KernelSupported(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestOwnsProcPath(t *testing.T) {
	g := &Guard{self: os.Getpid()}
	self := "/proc/" + itoa(os.Getpid())
	for p, want := range map[string]bool{
		self: true, self + "/mem": true, self + "/task/" + itoa(os.Getpid()) + "/mem": true,
		"/proc/999999999": false, "/proc": false, "/proc/sys/kernel": false, "/proc/self": false,
		"/var/proc/" + itoa(os.Getpid()): false,
	} {
		if got := g.ownsProcPath(p); got != want {
			t.Errorf("ownsProcPath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestTTYNr(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]int64{
		"12 (sh) S 1 12 12 34816 12 4194560 0": 34816,
		"12 (a b) c) S 1 12 12 0 12":           0,
	} {
		p := filepath.Join(dir, "stat")
		os.WriteFile(p, []byte(content), 0o644)
		got, err := ttyNr(p)
		if err != nil || got != want {
			t.Errorf("ttyNr(%q) = %d, %v; want %d", content, got, err, want)
		}
	}
}

// TestJudge: the policy's verdict, with git's exceptions and the .git
// addition.
func TestJudge(t *testing.T) {
	p, err := policy.Parse([]byte(`{"filesystem": {"allowWrite": ["."], "denyWrite": ["**/*.pem"]}}`), "s.json", policy.Env{Dir: "/w", Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	g := &Guard{rules: p.CreateRules()}
	for _, c := range []struct {
		path    string
		k       kind
		allowed bool
	}{
		{"/w/a", kindFile, true},
		{"/w/r/.git", kindDir, true},
		{"/w/r/.git", kindFile, false},
		{"/w/r/.git", kindOther, false},
		{"/w/r/.git/hooks", kindDir, true},
		{"/w/r/.git/hooks", kindOther, false},
		{"/w/r/.git/hooks", kindMovedDir, false}, // renamed into place: it has content
		{"/w/r/.git", kindMovedDir, true},        // its content is checked apart (moveInto)
		{"/w/r/.git/hooks/pre-commit.sample", kindFile, true},
		{"/w/r/.git/hooks/pre-commit.sample", kindOther, false},
		{"/w/r/.git/hooks/pre-commit", kindFile, false},
		{"/w/r/.git/hooks/sub", kindDir, false},
		{"/w/hooks", kindDir, true},
		{"/w/.git/config", kindFile, false},
		{"/w/x.pem", kindFile, false},
		{"/etc/x", kindFile, false},
	} {
		v := g.judge(c.path, c.k)
		if v.Allowed != c.allowed {
			t.Errorf("judge(%s, %d) = %+v, want allowed %v", c.path, c.k, v, c.allowed)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
