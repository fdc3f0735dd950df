package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args     []string
		verb     string
		argv     []string
		settings string
		err      string
	}{
		{args: []string{"echo", "hi"}, argv: []string{"echo", "hi"}},
		// Everything after the first non-flag word is the command's, flags too.
		{args: []string{"sh", "-c", "x"}, argv: []string{"sh", "-c", "x"}},
		{args: []string{"ls", "-s", "x"}, argv: []string{"ls", "-s", "x"}},
		{args: []string{"-s", "f.json", "--", "ls", "-l"}, argv: []string{"ls", "-l"}, settings: "f.json"},
		{args: []string{"--settings=f.json", "-d", "ls"}, argv: []string{"ls"}, settings: "f.json"},
		{args: []string{"-c", "echo $0 $1", "a", "b"}, argv: []string{"/bin/sh", "-c", "echo $0 $1", "a", "b"}},
		{args: []string{"-c", "explain"}, argv: []string{"/bin/sh", "-c", "explain"}},
		{args: []string{"explain", "-s", "f", "connect", "x:1"}, verb: "explain", argv: nil},
		{args: []string{"-s", "f.json", "explain"}, verb: "explain", settings: "f.json"},
		{args: []string{"--", "explain"}, argv: []string{"explain"}},
		{args: []string{"--", "version"}, argv: []string{"version"}},
		{args: []string{"version"}, verb: "version"},
		{args: []string{"-h"}, verb: "help"},
		{args: []string{}, err: "no command given"},
		{args: []string{"-s"}, err: "flag needs an argument"},
		{args: []string{"--bogus", "ls"}, err: "flag provided but not defined: -bogus"},
		{args: []string{"-c", ""}, err: "-c needs a non-empty shell string"},
	}
	for _, tc := range tests {
		inv, err := parseArgs(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if inv.verb != tc.verb || !reflect.DeepEqual(inv.argv, tc.argv) || inv.g.settings != tc.settings {
			t.Errorf("%q: verb=%q argv=%q settings=%q, want %q %q %q", tc.args, inv.verb, inv.argv, inv.g.settings, tc.verb, tc.argv, tc.settings)
		}
	}
}

func TestSplitHostPort(t *testing.T) {
	tests := []struct {
		in   string
		host string
		port int
		err  bool
	}{
		{"example.com", "example.com", 0, false},
		{"example.com:443", "example.com", 443, false},
		{"[::1]:8080", "::1", 8080, false},
		{"[::1]", "::1", 0, false},
		{"::1", "", 0, true},
		{"example.com:0", "", 0, true},
		{"example.com:99999", "", 0, true},
		{"example.com:x", "", 0, true},
		{"", "", 0, true},
	}
	for _, tc := range tests {
		h, p, err := splitHostPort(tc.in)
		if (err != nil) != tc.err || h != tc.host || p != tc.port {
			t.Errorf("%q: %q %d %v", tc.in, h, p, err)
		}
	}
}

// The end-to-end tests below run the real binary.

var cordonBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cordon-cli-test")
	if err != nil {
		panic(err)
	}
	cordonBin = filepath.Join(dir, "cordon")
	build := exec.Command("go", "build", "-o", cordonBin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		panic("building cordon: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

func cordon(t *testing.T, dir string, args ...string) result {
	t.Helper()
	return runCordon(t, dir, nil, nil, args...)
}

// runCordon runs the built binary in dir with an empty home (no
// ~/.srt-settings.json unless a test writes one), extra environment (later
// entries win) and stdin.
func runCordon(t *testing.T, dir string, stdin io.Reader, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(cordonBin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "HOME="+t.TempDir()), env...)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCLIVersionAndHelp(t *testing.T) {
	dir := t.TempDir()
	if r := cordon(t, dir, "version"); r.code != 0 || !strings.HasPrefix(r.stdout, "cordon ") {
		t.Errorf("version: %+v", r)
	}
	if r := cordon(t, dir, "-h"); r.code != 0 || !strings.Contains(r.stdout, "usage:") {
		t.Errorf("-h: %+v", r)
	}
	if r := cordon(t, dir); r.code != 125 || !strings.Contains(r.stderr, "no command given") {
		t.Errorf("no command: %+v", r)
	}
}

// Bad settings never run the command: exit 125 and one line naming the
// file, the position, the field and the fix.
func TestCLIRefusesBadSettings(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	tests := []struct {
		name, content string
		want          []string
	}{
		{"typo", "{\n  \"network\": {\"allowedDomain\": []}\n}", []string{"typo.json:2:15: network.allowedDomain: unknown key; did you mean \"allowedDomains\"?"}},
		{"unsupported", `{"credentials": {"envVars": [{"name": "X", "mode": "deny"}]}}`, []string{"credentials: not supported yet"}},
		{"empty", ``, []string{"empty.json: the file is empty"}},
		{"broken", `{"network": [}`, []string{"broken.json:1:", "not valid JSON"}},
		{"range", `{"mandatoryDenySearchDepth": 42}`, []string{"mandatoryDenySearchDepth: 42 is out of range"}},
		{"broad", `{"network": {"allowedDomains": ["*.co.uk"]}}`, []string{`network.allowedDomains[0]: "*.co.uk"`}},
	}
	for _, tc := range tests {
		f := writeFile(t, dir, tc.name+".json", tc.content)
		for _, args := range [][]string{
			{"-s", f, "--", "touch", marker},
			{"-s", f, "-c", "touch " + marker},
			{"explain", "-s", f},
		} {
			r := cordon(t, dir, args...)
			if r.code != 125 {
				t.Errorf("%s %q: exit %d, want 125; stderr %q", tc.name, args, r.code, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, "cordon: ") || !strings.Contains(r.stderr, w) {
					t.Errorf("%s %q: stderr %q lacks %q", tc.name, args, r.stderr, w)
				}
			}
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%s: the command ran despite bad settings", tc.name)
		}
	}
	r := cordon(t, dir, "-s", filepath.Join(dir, "nope.json"), "true")
	if r.code != 125 || !strings.Contains(r.stderr, "nope.json: no such file") {
		t.Errorf("missing settings file: %+v", r)
	}
}

// An unreadable or invalid ~/.srt-settings.json is refused, never replaced
// by the defaults.
func TestCLIDefaultSettingsFile(t *testing.T) {
	dir := t.TempDir()
	home := t.TempDir()
	writeFile(t, home, ".srt-settings.json", `{"network": {"allowedDomains": ["example.com"], "deniedDomain": []}}`)
	cmd := exec.Command(cordonBin, "explain")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 125 || !strings.Contains(string(out), ".srt-settings.json:1:") {
		t.Errorf("invalid default settings: %v %s", err, out)
	}
	writeFile(t, home, ".srt-settings.json", `{"network": {"allowedDomains": ["example.com"]}}`)
	cmd = exec.Command(cordonBin, "explain", "connect", "example.com:443")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "allowed") {
		t.Errorf("default settings file not used: %v %s", err, out)
	}
}

// Without bubblewrap cordon refuses, naming the package to install; it
// never runs the command unsandboxed.
func TestCLINeverRunsUnsandboxed(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	cmd := exec.Command(cordonBin, "/usr/bin/touch", marker)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + dir, "HOME=" + dir}
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 125 || !strings.Contains(string(out), "apt-get install bubblewrap") {
		t.Errorf("without bwrap: %v %s", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran without a sandbox")
	}
}

func TestCLIExplain(t *testing.T) {
	dir := t.TempDir()
	f := writeFile(t, dir, "s.json", `{
  "network": {"allowedDomains": ["api.example.com:443", "*.npmjs.org"], "deniedDomains": ["evil.npmjs.org"],
              "deniedDomainReasons": {"evil.npmjs.org": "typosquat mirror"}},
  "filesystem": {"denyRead": ["~/.ssh"], "allowWrite": ["."], "denyWrite": [".env"]}
}`)
	r := cordon(t, dir, "explain", "-s", f)
	if r.code != 0 {
		t.Fatalf("explain: %+v", r)
	}
	for _, w := range []string{"settings: " + f, "allow api.example.com:443", "deny  evil.npmjs.org (typosquat mirror)", "hidden", "/.ssh", "writable  " + dir, "mandatory denies", ".bashrc"} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("explain output lacks %q:\n%s", w, r.stdout)
		}
	}
	verdicts := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"explain", "-s", f, "connect", "api.example.com:443"}, 0, "allowed"},
		{[]string{"-s", f, "explain", "connect", "api.example.com:80"}, 1, "denied"},
		{[]string{"explain", "-s", f, "connect", "evil.npmjs.org:443"}, 1, "typosquat mirror"},
		{[]string{"explain", "-s", f, "connect", "registry.npmjs.org"}, 0, `"*.npmjs.org"`},
		{[]string{"explain", "-s", f, "read", "~/.ssh/id_ed25519"}, 1, "filesystem.denyRead[0]"},
		{[]string{"explain", "-s", f, "read", "/etc/hostname"}, 0, "allowed"},
		{[]string{"explain", "-s", f, "write", "src/x.go"}, 0, "filesystem.allowWrite[0]"},
		{[]string{"explain", "-s", f, "write", ".env"}, 1, "filesystem.denyWrite[0]"},
		{[]string{"explain", "-s", f, "write", "sub/.bashrc"}, 1, "mandatory deny"},
		{[]string{"explain", "-s", f, "write", "/usr/bin/x"}, 1, "not in filesystem.allowWrite"},
	}
	for _, v := range verdicts {
		r := cordon(t, dir, v.args...)
		if r.code != v.code || !strings.Contains(r.stdout, v.want) {
			t.Errorf("%q: exit %d %q %q; want exit %d containing %q", v.args, r.code, r.stdout, r.stderr, v.code, v.want)
		}
	}
	for _, bad := range [][]string{
		{"explain", "-s", f, "connect"},
		{"explain", "-s", f, "connect", "::1"},
		{"explain", "-s", f, "delete", "x"},
		{"explain", "-s", f, "-c", "x"},
	} {
		if r := cordon(t, dir, bad...); r.code != 125 || !strings.Contains(r.stderr, "cordon: explain") {
			t.Errorf("%q: %+v", bad, r)
		}
	}
}

// With no settings file the secure defaults apply, and explain shows them.
func TestCLIExplainDefaults(t *testing.T) {
	dir := t.TempDir()
	r := cordon(t, dir, "explain")
	if r.code != 0 || !strings.Contains(r.stdout, "settings: built-in defaults") ||
		!strings.Contains(r.stdout, "no allowed domains") || !strings.Contains(r.stdout, "writable  "+dir) {
		t.Errorf("defaults: %+v", r)
	}
	if r := cordon(t, dir, "explain", "connect", "example.com:443"); r.code != 1 {
		t.Errorf("defaults allow the network: %+v", r)
	}
	if r := cordon(t, dir, "explain", "write", "/etc/x"); r.code != 1 {
		t.Errorf("defaults allow writes outside the working directory: %+v", r)
	}
}
