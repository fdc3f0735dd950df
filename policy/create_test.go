package policy

import (
	"strings"
	"testing"
)

func TestHasComponents(t *testing.T) {
	for _, c := range []struct {
		rel, name string
		want      bool
	}{
		{".bashrc", ".bashrc", true},
		{"a/.bashrc", ".bashrc", true},
		{"a/.bashrc/x", ".bashrc", true},
		{"a/x.bashrc", ".bashrc", false},
		{"a/.bashrc.bak", ".bashrc", false},
		{".git/hooks/pre-commit", ".git/hooks", true},
		{"r/.git/hooks", ".git/hooks", true},
		{"r/.git/hooksx", ".git/hooks", false},
		{"r/x.git/hooks", ".git/hooks", false},
		{"r/.git/x/hooks", ".git/hooks", false},
		{".gitx/.git/config", ".git/config", true},
		{"", ".bashrc", false},
		{"a/b", "", false},
	} {
		if got := hasComponents(c.rel, c.name); got != c.want && c.name != "" {
			t.Errorf("hasComponents(%q, %q) = %v, want %v", c.rel, c.name, got, c.want)
		}
	}
}

// FuzzHasComponents checks hasComponents against splitting both sides.
func FuzzHasComponents(f *testing.F) {
	f.Add("a/.git/hooks/x", ".git/hooks")
	f.Add("..git/hooks", ".git/hooks")
	f.Fuzz(func(t *testing.T, rel, name string) {
		if name == "" || strings.Contains(name, "//") || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") {
			return
		}
		parts, want := strings.Split(rel, "/"), strings.Split(name, "/")
		ref := false
		for i := 0; i+len(want) <= len(parts) && !ref; i++ {
			ok := true
			for j := range want {
				if parts[i+j] != want[j] {
					ok = false
					break
				}
			}
			ref = ok
		}
		if got := hasComponents(rel, name); got != ref {
			t.Errorf("hasComponents(%q, %q) = %v, splitting says %v", rel, name, got, ref)
		}
	})
}

func TestCreateRulesVerdict(t *testing.T) {
	env := Env{Dir: "/w", Home: "/home/u"}
	p, err := Parse([]byte(`{"filesystem": {"allowWrite": [".", "/out"], "denyWrite": ["**/*.pem", "/w/conf/**", "/w/secret.txt"], "denyRead": ["/w/hidden"]}}`), "s.json", env)
	if err != nil {
		t.Fatal(err)
	}
	r := p.CreateRules()
	for _, c := range []struct {
		path, field, rule string
		allowed           bool
	}{
		{"/w/a.txt", "filesystem.allowWrite[0]", ".", true},
		{"/w/a/b/c/.bashrc", "mandatory deny", ".bashrc", false},
		{"/out/.vscode/tasks.json", "mandatory deny", ".vscode", false},
		{"/w/r/.git/hooks/pre-commit", "mandatory deny", ".git/hooks", false},
		{"/w/r/.git/config", "mandatory deny", ".git/config", false},
		{"/w/r/.git/HEAD", "filesystem.allowWrite[0]", ".", true},
		{"/w/x/y/key.pem", "filesystem.denyWrite[0]", "**/*.pem", false},
		{"/w/conf", "filesystem.denyWrite[1]", "/w/conf/**", false},
		{"/w/conf/a/b", "filesystem.denyWrite[1]", "/w/conf/**", false},
		{"/w/secret.txt", "filesystem.denyWrite[2]", "/w/secret.txt", false},
		{"/w/hidden/new", "filesystem.denyRead[0]", "/w/hidden", false},
		{"/w/s.json", "filesystem.allowWrite[0]", ".", true}, // not the settings file in force: that is SourceFile, which Parse leaves unset
		{"/home/u/.srt-settings.json", "settings file", "/home/u/.srt-settings.json", false},
		{"/etc/passwd", "", "", false},
		{"/tmp/x", "", "", true},
		{"/w", "filesystem.allowWrite[0]", ".", true},
	} {
		v := r.Verdict(c.path)
		if v.Allowed != c.allowed || v.Field != c.field || v.Rule != c.rule {
			t.Errorf("%s: %+v, want allowed=%v %s %q", c.path, v, c.allowed, c.field, c.rule)
		}
	}
}
