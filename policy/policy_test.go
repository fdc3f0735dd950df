package policy

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

var testEnv = Env{Dir: "/work/proj", Home: "/home/u"}

func parse(t *testing.T, js string) (*Policy, error) {
	t.Helper()
	return Parse([]byte(js), "settings.json", testEnv)
}

// A complete file as srt's documentation writes it loads with srt's meaning.
func TestParseSrtFile(t *testing.T) {
	p, err := parse(t, `{
  "network": {
    "allowedDomains": ["github.com", "*.npmjs.org", "api.example.com:443", "[::1]:8080", "localhost"],
    "deniedDomains": ["evil.example.com", "*:22"],
    "deniedDomainReasons": {"*:22": "no ssh; use https"},
    "allowUnixSockets": ["/var/run/docker.sock"],
    "allowAllUnixSockets": false,
    "allowLocalBinding": true,
    "strictAllowlist": true
  },
  "filesystem": {
    "denyRead": ["~/.ssh", {"path": "/etc/[weird]", "literal": true}],
    "allowRead": ["~/.ssh/known_hosts"],
    "allowWrite": [".", "/tmp/build"],
    "denyWrite": ["src/*.pem", ".env"],
    "allowGitConfig": true
  },
  "ignoreViolations": {"*": ["/usr/bin"], "git push": ["/etc/hosts"]},
  "mandatoryDenySearchDepth": 5,
  "enableWeakerNestedSandbox": false,
  "git": {"safeDirectories": ["/work/proj"]}
}`)
	if err != nil {
		t.Fatal(err)
	}
	s := p.Settings
	if got := s.Network.AllowedDomains; len(got) != 5 || got[1] != "*.npmjs.org" {
		t.Errorf("allowedDomains = %q", got)
	}
	if s.Network.DeniedDomainReasons["*:22"] != "no ssh; use https" || !s.Network.AllowLocalBinding || !s.Network.StrictAllowlist {
		t.Errorf("network = %+v", s.Network)
	}
	if s.MandatoryDenySearchDepth != 5 || !s.Filesystem.AllowGitConfig || s.GitSafeDirectories[0] != "/work/proj" {
		t.Errorf("settings = %+v", s)
	}
	if !reflect.DeepEqual(s.IgnoreViolations["git push"], []string{"/etc/hosts"}) {
		t.Errorf("ignoreViolations = %v", s.IgnoreViolations)
	}
	want := []struct {
		got  Path
		abs  string
		glob bool
	}{
		{p.DenyRead[0], "/home/u/.ssh", false},
		{p.DenyRead[1], "/etc/[weird]", false}, // literal: brackets are a name
		{p.AllowRead[0], "/home/u/.ssh/known_hosts", false},
		{p.AllowWrite[0], "/work/proj", false},
		{p.AllowWrite[1], "/tmp/build", false},
		{p.DenyWrite[0], "/work/proj/src/*.pem", true},
		{p.DenyWrite[1], "/work/proj/.env", false},
	}
	for _, w := range want {
		if w.got.Abs != w.abs || w.got.Glob != w.glob {
			t.Errorf("%q: Abs=%q Glob=%v, want %q %v", w.got.Spec, w.got.Abs, w.got.Glob, w.abs, w.glob)
		}
	}
	if len(p.Warnings) != 0 {
		t.Errorf("warnings: %q", p.Warnings)
	}
}

func TestDefaults(t *testing.T) {
	for _, js := range []string{`{}`, `{"network": {}}`, `{"filesystem": {}}`} {
		p, err := parse(t, js)
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		if len(p.Settings.Network.AllowedDomains) != 0 || p.Hosts.Decide("example.com", 443).Allowed {
			t.Errorf("%s: network is open by default", js)
		}
		if len(p.AllowWrite) != 1 || p.AllowWrite[0].Abs != testEnv.Dir {
			t.Errorf("%s: allowWrite = %+v, want the working directory", js, p.AllowWrite)
		}
		if len(p.DenyRead) == 0 || p.DenyRead[0].Abs != "/home/u/.ssh" {
			t.Errorf("%s: denyRead = %+v, want the secret stores", js, p.DenyRead)
		}
		if p.Settings.MandatoryDenySearchDepth != 3 {
			t.Errorf("%s: depth %d", js, p.Settings.MandatoryDenySearchDepth)
		}
	}
	// Explicit empty lists mean what they say: no writes, no hidden paths.
	p, err := parse(t, `{"filesystem": {"allowWrite": [], "denyRead": []}}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.AllowWrite) != 0 || len(p.DenyRead) != 0 {
		t.Errorf("explicit empty lists were replaced by defaults: %+v %+v", p.AllowWrite, p.DenyRead)
	}
	d, err := Default(testEnv)
	if err != nil || d.Source != DefaultSource || len(d.Warnings) != 0 {
		t.Fatalf("Default: %v %v", d, err)
	}
	for _, dir := range []string{"/", "/home/u"} {
		d, _ := Default(Env{Dir: dir, Home: "/home/u"})
		if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "a broad place") {
			t.Errorf("defaults from %s: warnings %q", dir, d.Warnings)
		}
	}
}

// Every refusal names the field and says what to do.
func TestRefusals(t *testing.T) {
	tests := []struct {
		name, js string
		want     []string // substrings of the message
	}{
		{"empty", ``, []string{"settings.json: the file is empty"}},
		{"blank", " \n\t ", []string{"empty"}},
		{"invalid json", `{"network": }`, []string{"settings.json:1:13:", "not valid JSON"}},
		{"truncated", `{"network": {"allowedDomains": [`, []string{"ends in the middle"}},
		{"bom", "\xef\xbb\xbf{}", []string{"byte-order mark"}},
		{"comment", "{ // x\n}", []string{"not valid JSON"}},
		{"trailing data", `{} {}`, []string{"after the settings object"}},
		{"not an object", `["network"]`, []string{"want an object, got a list"}},
		{"duplicate key", "{\"network\": {},\n \"network\": {}}", []string{"settings.json:2:2", `"network" appears twice (first at 1:2)`}},
		{"unknown top", `{"networks": {}}`, []string{"networks: unknown key; did you mean \"network\"?"}},
		{"typo allowedDomain", `{"network": {"allowedDomain": ["a.com"]}}`, []string{"network.allowedDomain: unknown key", `did you mean "allowedDomains"`}},
		{"typo denyWirte", `{"filesystem": {"denyWirte": []}}`, []string{"filesystem.denyWirte", `did you mean "denyWrite"`}},
		{"far unknown", `{"filesystem": {"zzzzzzzzzzzzz": []}}`, []string{"known keys here: allowGitConfig, allowRead"}},
		{"credentials", `{"credentials": {"files": []}}`, []string{"credentials: not supported yet by cordon"}},
		{"tlsTerminate", `{"network": {"tlsTerminate": {}}}`, []string{}}, // empty object is inert
		{"tlsTerminate set", `{"network": {"tlsTerminate": {"caCertPath": "/x"}}}`, []string{"network.tlsTerminate: not supported yet"}},
		{"mitmProxy", `{"network": {"mitmProxy": {"socketPath": "/s", "domains": ["a.com"]}}}`, []string{"network.mitmProxy: not supported yet"}},
		{"parentProxy", `{"network": {"parentProxy": {"http": "http://p:3128"}}}`, []string{"network.parentProxy: not supported yet"}},
		{"windows", `{"windows": {"sandboxUser": "x"}}`, []string{"windows: not supported yet"}},
		{"filterRequest", `{"network": {"filterRequest": "x"}}`, []string{"JavaScript callback"}},
		{"disabled true", `{"filesystem": {"disabled": true}}`, []string{"filesystem.disabled: not supported yet"}},
		{"disabled false", `{"filesystem": {"disabled": false}}`, nil},
		{"refuseOpaqueTunnels wrong type", `{"network": {"refuseOpaqueTunnels": "no"}}`, []string{"want true or false, got a string"}},
		{"nested userns", `{"allowNestedUserNamespaces": true}`, []string{"not supported yet", "user namespaces"}},
		{"list wanted", `{"network": {"allowedDomains": "github.com"}}`, []string{"network.allowedDomains: want a list, got a string", `["example.com"]`}},
		{"string in list wanted", `{"network": {"allowedDomains": [1]}}`, []string{"network.allowedDomains[0]: want a string, got a number"}},
		{"bool wanted", `{"network": {"allowLocalBinding": "true"}}`, []string{"network.allowLocalBinding: want true or false, got a string", "without quotes"}},
		{"number wanted", `{"mandatoryDenySearchDepth": "3"}`, []string{"mandatoryDenySearchDepth: want a number, got a string"}},
		{"depth zero", `{"mandatoryDenySearchDepth": 0}`, []string{"0 is out of range; use a whole number from 1 to 10"}},
		{"depth high", `{"mandatoryDenySearchDepth": 11}`, []string{"11 is out of range"}},
		{"depth negative", `{"mandatoryDenySearchDepth": -1}`, []string{"-1 is out of range"}},
		{"depth fraction", `{"mandatoryDenySearchDepth": 2.5}`, []string{"2.5 is not a whole number"}},
		{"depth huge", `{"mandatoryDenySearchDepth": 1e400}`, []string{"not a whole number"}},
		{"port zero", `{"network": {"httpProxyPort": 0}}`, []string{"network.httpProxyPort: 0 is out of range; use a port from 1 to 65535"}},
		{"port high", `{"network": {"socksProxyPort": 65536}}`, []string{"network.socksProxyPort: 65536 is out of range"}},
		{"null", `{"network": {"allowedDomains": null}}`, []string{"network.allowedDomains: null is not a value here"}},
		{"too broad", `{"network": {"allowedDomains": ["ok.example.com", "*.com"]}}`, []string{`network.allowedDomains[1]: "*.com":`, "broad"}},
		{"star in allow", `{"network": {"allowedDomains": ["*"]}}`, []string{`network.allowedDomains[0]: "*"`}},
		{"co.uk", `{"network": {"allowedDomains": ["*.co.uk"]}}`, []string{`"*.co.uk"`}},
		{"unbracketed v6", `{"network": {"allowedDomains": ["::1"]}}`, []string{`"::1"`, "bracket"}},
		{"url", `{"network": {"allowedDomains": ["https://github.com"]}}`, []string{`"https://github.com"`}},
		{"empty reason", `{"network": {"deniedDomains": ["a.com"], "deniedDomainReasons": {"a.com": ""}}}`, []string{`network.deniedDomainReasons["a.com"]: a reason cannot be empty`}},
		{"bad resolved", `{"network": {"deniedResolvedAddresses": ["10.0.0.0/33"]}}`, []string{"network.deniedResolvedAddresses[0]", "CIDR"}},
		{"empty path", `{"filesystem": {"denyRead": [""]}}`, []string{"filesystem.denyRead[0]: a path cannot be empty"}},
		{"path number", `{"filesystem": {"allowWrite": [7]}}`, []string{"filesystem.allowWrite[0]: want a path string or"}},
		{"object no literal", `{"filesystem": {"denyRead": [{"path": "/x"}]}}`, []string{`needs both "path" and "literal": true`}},
		{"object literal false", `{"filesystem": {"denyRead": [{"path": "/x", "literal": false}]}}`, []string{"filesystem.denyRead[0].literal: must be true"}},
		{"object extra key", `{"filesystem": {"denyRead": [{"path": "/x", "literal": true, "glob": true}]}}`, []string{"filesystem.denyRead[0].glob: unknown key"}},
		{"inert deny glob", `{"filesystem": {"denyWrite": ["/etc/*/"]}}`, []string{`ends in "/", so it can match no path`, `"/etc/*"`}},
		{"bad glob", `{"filesystem": {"denyRead": ["/x/[a"]}}`, []string{"not a valid glob", "literal"}},
		{"tilde no home", `{"filesystem": {"denyRead": ["~/x"]}}`, nil}, // home is set in testEnv
		{"relative bwrap", `{"bwrapPath": "bwrap"}`, []string{"bwrapPath", "not absolute"}},
		{"mach wildcard", `{"network": {"allowMachLookup": ["a.*.b"]}}`, []string{"single trailing"}},
		{"ignoreViolations shape", `{"ignoreViolations": {"*": "/x"}}`, []string{`ignoreViolations["*"]: want a list`}},
		{"deep", strings.Repeat(`{"a":`, 40) + strings.Repeat(`}`, 40), []string{"nested deeper"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.js)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("want accepted, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want an error containing %q", tc.want)
			}
			if !errors.Is(err, ErrPolicy) {
				t.Errorf("error does not wrap ErrPolicy: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\n does not contain %q", err, w)
				}
			}
		})
	}
}

func TestErrorsAreCollectedInFileOrder(t *testing.T) {
	_, err := parse(t, "{\n \"netwrok\": {},\n \"filesystem\": {\"denyRead\": \"x\"},\n \"allowPty\": 1\n}")
	var es Errors
	if !errors.As(err, &es) || len(es) != 3 {
		t.Fatalf("want 3 errors, got %v", err)
	}
	for i, line := range []int{2, 3, 4} {
		if es[i].Line != line {
			t.Errorf("error %d at line %d, want %d: %v", i, es[i].Line, line, es[i])
		}
	}
}

func TestNotesAndWarnings(t *testing.T) {
	p, err := parse(t, `{"allowPty": true, "ripgrep": {"command": "rg"}, "socatPath": "/usr/bin/socat",
		"network": {"allowedDomains": ["*.github.io"], "deniedDomains": ["a.com"], "deniedDomainReasons": {"b.com": "typo"}, "allowMachLookup": ["com.x.*"]}}`)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(p.Notes, "\n")
	for _, w := range []string{"ripgrep is ignored", "socatPath is ignored"} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes %q lack %q", notes, w)
		}
	}
	if runtime.GOOS != "darwin" && !strings.Contains(notes, "allowPty applies on macOS only") {
		t.Errorf("notes %q lack the macOS note", notes)
	}
	warn := strings.Join(p.Warnings, "\n")
	for _, w := range []string{`"b.com"`, "never applies", `"*.github.io"`} {
		if !strings.Contains(warn, w) {
			t.Errorf("warnings %q lack %q", warn, w)
		}
	}
	if !p.Settings.MacOS.AllowPty || p.Settings.MacOS.AllowMachLookup[0] != "com.x.*" {
		t.Errorf("macOS keys not kept: %+v", p.Settings.MacOS)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json: no such file") {
		t.Errorf("missing file: %v", err)
	}
	good := filepath.Join(dir, "s.json")
	os.WriteFile(good, []byte(`{"network": {"allowedDomains": ["example.com"]}}`), 0o600)
	p, err := Load(good)
	if err != nil || p.Source != good {
		t.Fatalf("Load: %v %v", p, err)
	}
	if os.Getuid() != 0 {
		os.Chmod(good, 0)
		if _, err := Load(good); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("unreadable: %v", err)
		}
	}
	// LoadDefault: a missing ~/.srt-settings.json means the defaults.
	t.Setenv("HOME", dir)
	p, err = LoadDefault(Env{Dir: dir})
	if err != nil || p.Source != DefaultSource {
		t.Fatalf("LoadDefault without a file: %v %v", p, err)
	}
	os.WriteFile(filepath.Join(dir, ".srt-settings.json"), []byte(`{"bogus": 1}`), 0o600)
	if _, err := LoadDefault(Env{Dir: dir}); err == nil || !strings.Contains(err.Error(), "bogus: unknown key") {
		t.Errorf("an invalid default file must be refused, not replaced by defaults: %v", err)
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name string
		s    Settings
		want string
	}{
		{"depth", Settings{MandatoryDenySearchDepth: 12}, "mandatoryDenySearchDepth: 12 is out of range"},
		{"port", Settings{Network: Network{HTTPProxyPort: 70000}}, "network.httpProxyPort"},
		{"host", Settings{Network: Network{AllowedDomains: []string{"a.com", "*"}}}, "network.allowedDomains[1]"},
		{"path", Settings{Filesystem: Filesystem{DenyWrite: []Entry{{Path: ""}}}}, "filesystem.denyWrite[0]: a path cannot be empty"},
		{"socket", Settings{Network: Network{AllowUnixSockets: []string{""}}}, "network.allowUnixSockets[0]"},
		{"tilde without home", Settings{Filesystem: Filesystem{DenyRead: []Entry{{Path: "~/.ssh"}}}}, "home directory is unknown"},
	}
	for _, tc := range tests {
		env := testEnv
		if tc.name == "tilde without home" {
			env.Home = "relative"
		}
		_, err := New(tc.s, env)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrPolicy) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.MkdirAll(filepath.Join(real, "sub"), 0o755)
	os.Symlink(real, filepath.Join(dir, "link"))
	real, _ = filepath.EvalSymlinks(real) // the temp dir may itself be a link
	env := Env{Dir: dir, Home: "/home/u"}
	tests := []struct {
		in        Entry
		abs, res  string
		glob      bool
		wantError string
	}{
		{Entry{Path: "~"}, "/home/u", "", false, ""},
		{Entry{Path: "~/.ssh/"}, "/home/u/.ssh", "", false, ""},
		{Entry{Path: "~user/x"}, filepath.Join(dir, "~user/x"), "", false, ""},
		{Entry{Path: "sub"}, filepath.Join(dir, "sub"), "", false, ""},
		{Entry{Path: "./a/../b"}, filepath.Join(dir, "b"), "", false, ""},
		{Entry{Path: "/x//y/./z/"}, "/x/y/z", "", false, ""},
		{Entry{Path: "/"}, "/", "", false, ""},
		{Entry{Path: "link/sub"}, filepath.Join(dir, "link/sub"), filepath.Join(real, "sub"), false, ""},
		{Entry{Path: "link/missing/file"}, filepath.Join(dir, "link/missing/file"), filepath.Join(real, "missing/file"), false, ""},
		{Entry{Path: "link/*.pem"}, filepath.Join(dir, "link/*.pem"), filepath.Join(real, "*.pem"), true, ""},
		{Entry{Path: "/a/**/b?"}, "/a/**/b?", "", true, ""},
		{Entry{Path: "/a/[x]", Literal: true}, "/a/[x]", "", false, ""},
	}
	for _, tc := range tests {
		got, err := expand(tc.in, env)
		if err != nil {
			t.Errorf("%+v: %v", tc.in, err)
			continue
		}
		res := tc.res
		if res == "" {
			res = tc.abs
		}
		if got.Abs != tc.abs || got.Resolved != res || got.Glob != tc.glob {
			t.Errorf("%+v: got Abs=%q Resolved=%q Glob=%v, want %q %q %v", tc.in, got.Abs, got.Resolved, got.Glob, tc.abs, res, tc.glob)
		}
	}
}

func TestVerdicts(t *testing.T) {
	p, err := parse(t, `{
  "network": {"allowedDomains": ["*.example.com", "api.other.com:443"], "deniedDomains": ["bad.example.com"],
              "deniedDomainReasons": {"bad.example.com": "known exfil host"}},
  "filesystem": {
    "denyRead": ["~/.ssh", "~/secrets/deep/**", "/data/**/*.key"],
    "allowRead": ["~/.ssh/known_hosts", "~/secrets"],
    "allowWrite": [".", "/srv/out"],
    "denyWrite": ["./.env", "**/*.pem"]
  }
}`)
	if err != nil {
		t.Fatal(err)
	}
	type check struct {
		op, arg string
		allowed bool
		want    string
	}
	checks := []check{
		{"read", "/etc/passwd", true, "allowed everywhere"},
		{"read", "~/.ssh/id_rsa", false, "filesystem.denyRead[0]"},
		{"read", "/home/u/.ssh", false, "filesystem.denyRead[0]"},
		{"read", "~/.ssh/known_hosts", true, "filesystem.allowRead[0]"},
		{"read", "~/secrets/a", true, "allowRead[1]"},
		{"read", "~/secrets/deep/x", false, "denyRead[1]"}, // more specific deny inside the allow
		{"read", "/data/a/b/c.key", false, "denyRead[2]"},
		{"read", "/data/a/b/c.txt", true, ""},
		{"write", "src/main.go", true, "filesystem.allowWrite[0]"},
		{"write", "/srv/out/x", true, "allowWrite[1]"},
		{"write", "/etc/passwd", false, "not in filesystem.allowWrite"},
		{"write", ".env", false, "filesystem.denyWrite[0]"},
		{"write", "keys/server.pem", false, "denyWrite[1]"},
		{"write", ".bashrc", false, "mandatory deny"},
		{"write", "a/b/c/.zshrc", false, "mandatory deny"},
		{"write", ".git/hooks/pre-commit", false, ".git/hooks"},
		{"write", ".git/config", false, ".git/config"},
		{"write", ".git/objects/ab", true, ""},
		{"write", ".claude/agents/x.md", false, ".claude/agents"},
		{"write", ".claude/settings.json", true, ""},
		{"write", "/tmp/scratch", true, "private /tmp"},
		{"write", "~/.ssh/x", false, "hidden by a read rule"},
		{"connect", "a.example.com:443", true, "*.example.com"},
		{"connect", "example.com:443", false, "not in allowedDomains"},
		{"connect", "bad.example.com:443", false, "known exfil host"},
		{"connect", "api.other.com:443", true, ""},
		{"connect", "api.other.com:80", false, ""},
	}
	for _, c := range checks {
		var v Verdict
		switch c.op {
		case "read":
			v, err = p.CheckRead(c.arg)
		case "write":
			v, err = p.CheckWrite(c.arg)
		case "connect":
			host, port, _ := strings.Cut(c.arg, ":")
			n := 0
			for _, r := range port {
				n = n*10 + int(r-'0')
			}
			v = p.CheckConnect(host, n)
		}
		if err != nil {
			t.Errorf("%s %s: %v", c.op, c.arg, err)
			continue
		}
		if v.Allowed != c.allowed || !strings.Contains(v.String(), c.want) {
			t.Errorf("%s %s: got %v, want allowed=%v containing %q", c.op, c.arg, v, c.allowed, c.want)
		}
	}
	// allowGitConfig lifts only .git/config.
	p2, _ := parse(t, `{"filesystem": {"allowGitConfig": true}}`)
	if v, _ := p2.CheckWrite(".git/config"); !v.Allowed {
		t.Errorf("allowGitConfig: %v", v)
	}
	if v, _ := p2.CheckWrite(".git/hooks/x"); v.Allowed {
		t.Errorf("allowGitConfig opened hooks: %v", v)
	}
}

// A symlink inside a writable root that points at a denied path is judged
// by where it leads.
func TestVerdictFollowsSymlinks(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	work := filepath.Join(dir, "work")
	os.MkdirAll(secret, 0o755)
	os.MkdirAll(work, 0o755)
	os.Symlink(secret, filepath.Join(work, "s"))
	p, err := New(Settings{Filesystem: Filesystem{
		DenyRead:   []Entry{{Path: secret}},
		AllowWrite: []Entry{{Path: work}},
	}}, Env{Dir: work, Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := p.CheckRead("s/key"); v.Allowed {
		t.Errorf("read through a symlink into a denied dir: %v", v)
	}
	if v, _ := p.CheckWrite("s/key"); v.Allowed {
		t.Errorf("write through a symlink out of the writable root: %v", v)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"network": {"allowedDomains": ["a.com", "*.b.org:443"], "deniedDomains": ["*:22"]}, "filesystem": {"denyRead": ["~/.ssh"], "allowWrite": ["."], "denyWrite": [{"path": "x[1]", "literal": true}]}}`))
	f.Add([]byte(`{"mandatoryDenySearchDepth": 3.0, "ignoreViolations": {"*": []}}`))
	f.Add([]byte(`{"network": {"allowedDomains": ["[::1]:80"], "deniedResolvedAddresses": ["10.0.0.0/8"]}}`))
	f.Add([]byte(`{"a": [1, 2, {"b": null}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data, "f.json", testEnv)
		if err != nil {
			if !errors.Is(err, ErrPolicy) {
				t.Fatalf("error does not wrap ErrPolicy: %v", err)
			}
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if p == nil || p.Hosts == nil {
			t.Fatal("nil policy without an error")
		}
		// What was accepted must stay decidable.
		p.CheckConnect("example.com", 443)
		if _, err := p.CheckWrite("x"); err != nil {
			t.Fatal(err)
		}
	})
}
