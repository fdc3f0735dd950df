package bwrap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordon-sandbox/cordon/policy"
)

// tree makes files (ending in "/" for directories) under a fresh root.
func tree(t *testing.T, paths ...string) string {
	t.Helper()
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	for _, p := range paths {
		full := filepath.Join(root, p)
		if strings.HasSuffix(p, "/") {
			os.MkdirAll(full, 0o755)
			continue
		}
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.WriteFile(full, []byte("x"), 0o644)
	}
	return root
}

func build(t *testing.T, root string, fsys policy.Filesystem) Result {
	t.Helper()
	return buildIn(t, root, root, fsys)
}

func buildIn(t *testing.T, root, cwd string, fsys policy.Filesystem) Result {
	t.Helper()
	pol, err := policy.New(policy.Settings{Filesystem: fsys}, policy.Env{Dir: cwd, Home: filepath.Join(root, "home")})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Build(Plan{Policy: pol, Self: "/usr/bin/cordon", UID: 1000, GID: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// mountsOf renders the mount operations as "op path" lines, in order.
func mountsOf(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--bind", "--ro-bind":
			out = append(out, args[i]+" "+args[i+1]+" "+args[i+2])
			i += 2
		case "--tmpfs", "--remount-ro", "--proc", "--dev":
			out = append(out, args[i]+" "+args[i+1])
			i++
		case "--perms", "--uid", "--gid", "--chdir", "--setenv", "--json-status-fd", "--cap-drop":
			i++
		}
	}
	return out
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func TestBuildLayout(t *testing.T) {
	root := tree(t, "work/src/main.go", "work/.env", "work/secrets/key", "work/secrets/pub/id.pub",
		"work/.git/hooks/", "work/.git/config", "work/sub/.bashrc", "work/.ssh/id", "out/")
	w := filepath.Join(root, "work")
	res := build(t, root, policy.Filesystem{
		AllowWrite: []policy.Entry{{Path: w}, {Path: filepath.Join(root, "out")}, {Path: filepath.Join(root, "missing")}},
		DenyRead:   []policy.Entry{{Path: filepath.Join(w, "secrets")}, {Path: filepath.Join(w, ".ssh")}},
		AllowRead:  []policy.Entry{{Path: filepath.Join(w, "secrets/pub")}},
		DenyWrite:  []policy.Entry{{Path: filepath.Join(w, "*.go"), Literal: false}, {Path: filepath.Join(w, ".env")}},
	})
	m := mountsOf(res.Args)
	want := []string{
		"--ro-bind / /", "--dev /dev", "--proc /proc", "--tmpfs /tmp",
		"--bind " + w + " " + w,
		"--bind " + root + "/out " + root + "/out",
		"--tmpfs " + w + "/secrets",                          // hidden
		"--bind " + w + "/secrets/pub " + w + "/secrets/pub", // re-opened, writable (in allowWrite)
		"--ro-bind /dev/null " + w + "/.env",                 // denyWrite file... hidden? no: read-only
		"--tmpfs " + w + "/.ssh",
		"--ro-bind " + w + "/.git/hooks " + w + "/.git/hooks",
		"--ro-bind " + w + "/.git/config " + w + "/.git/config",
		"--ro-bind " + w + "/sub/.bashrc " + w + "/sub/.bashrc",
		"--remount-ro " + w + "/secrets",
		"--ro-bind /usr/bin/cordon " + InitPath,
	}
	want[8] = "--ro-bind " + w + "/.env " + w + "/.env"
	for _, x := range want {
		if indexOf(m, x) < 0 {
			t.Errorf("missing %q in\n%s", x, strings.Join(m, "\n"))
		}
	}
	// Order: parents before children, hides before their re-opens, the
	// re-open before the remount.
	order := [][2]string{
		{"--bind " + w + " " + w, "--tmpfs " + w + "/secrets"},
		{"--tmpfs " + w + "/secrets", "--bind " + w + "/secrets/pub " + w + "/secrets/pub"},
		{"--bind " + w + "/secrets/pub " + w + "/secrets/pub", "--remount-ro " + w + "/secrets"},
	}
	for _, o := range order {
		if a, b := indexOf(m, o[0]), indexOf(m, o[1]); a < 0 || b < 0 || a > b {
			t.Errorf("%q must come before %q:\n%s", o[0], o[1], strings.Join(m, "\n"))
		}
	}
	// Directories between a writable root and a protected path are mount
	// points, so they cannot be renamed aside (mv .git x; mkdir -p .git/hooks).
	for _, pin := range []string{w + "/.git", w + "/sub"} {
		if indexOf(m, "--bind "+pin+" "+pin) < 0 {
			t.Errorf("ancestor %s of a protected path is not pinned:\n%s", pin, strings.Join(m, "\n"))
		}
	}
	// The glob expanded to the file that exists now.
	if indexOf(m, "--ro-bind "+w+"/src/main.go "+w+"/src/main.go") >= 0 {
		t.Errorf("*.go (one component) must not match src/main.go")
	}
	// Nothing is mounted that changes nothing: ~/.ssh/id under a hidden
	// dir, the secrets' key.
	for _, x := range m {
		if strings.Contains(x, "/secrets/key") || strings.Contains(x, ".ssh/id") {
			t.Errorf("redundant mount %q", x)
		}
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "missing") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// Build creates nothing on the host: a protected name, settings file,
// denyWrite or denyRead path that does not exist gets no mount (bubblewrap
// would create its mount point on the host, and a run killed by SIGKILL
// would leave it there). The create-time guard refuses such names instead.
func TestBuildCreatesNothingForMissingNames(t *testing.T) {
	tests := []struct {
		name    string
		have    []string // the tree under the writable root w
		missing []string // names under w that must get no mount
	}{
		{"protected files at the top", []string{"src/main.go"},
			[]string{".bashrc", ".bash_profile", ".zshrc", ".profile", ".gitconfig", ".gitmodules", ".ripgreprc", ".mcp.json"}},
		{"protected directories at the top", nil,
			[]string{".vscode", ".idea", ".claude", ".claude/commands", ".claude/agents"}},
		{"no .git", []string{"README"},
			[]string{".git", ".git/hooks", ".git/config", ".git/config.worktree", ".git/commondir"}},
		{".git without hooks or config", []string{".git/HEAD", ".git/objects/"},
			[]string{".git/hooks", ".git/config", ".git/config.worktree", ".git/commondir"}},
		{".claude without commands or agents", []string{".claude/settings.json"},
			[]string{".claude/commands", ".claude/agents"}},
		{"below the top", []string{"sub/x", "a/b/.git/"},
			[]string{"sub/.bashrc", "sub/.vscode", "a/b/.mcp.json", "a/b/.git/hooks", "a/b/.git/config"}},
		{"settings files", []string{"home/"},
			[]string{"cordon.json", "home/.srt-settings.json"}},
		{"denyWrite and denyRead paths", []string{"keep/"},
			[]string{".env", "secret", "keep/id.pem"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := tree(t, append([]string{"w/"}, prefixed("w/", tc.have)...)...)
			w := root + "/w"
			pol, err := policy.New(policy.Settings{Filesystem: policy.Filesystem{
				AllowWrite: []policy.Entry{{Path: w}},
				DenyWrite:  []policy.Entry{{Path: w + "/.env"}, {Path: w + "/keep/*.pem"}},
				DenyRead:   []policy.Entry{{Path: w + "/secret"}},
			}}, policy.Env{Dir: w, Home: w + "/home"})
			if err != nil {
				t.Fatal(err)
			}
			pol.SourceFile = w + "/cordon.json"
			before := listTree(t, root)
			res, err := Build(Plan{Policy: pol, Self: "/usr/bin/cordon", UID: 1000, GID: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if after := listTree(t, root); strings.Join(after, "\n") != strings.Join(before, "\n") {
				t.Errorf("Build changed the host tree:\nbefore %q\nafter  %q", before, after)
			}
			for _, n := range tc.missing {
				p := w + "/" + n
				for _, a := range res.Args {
					if a == p || strings.HasPrefix(a, p+"/") {
						t.Errorf("missing %s is mounted:\n%s", n, strings.Join(mountsOf(res.Args), "\n"))
						break
					}
				}
			}
			// Every mount point is one that exists: bubblewrap would
			// create any other on the host.
			for _, dst := range mountPoints(res.Args) {
				if strings.HasPrefix(dst, root) && !exists(dst) {
					t.Errorf("mount point %s does not exist on the host", dst)
				}
			}
		})
	}
}

func prefixed(prefix string, names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, prefix+n)
	}
	return out
}

// listTree lists every path under root, sorted.
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		out = append(out, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mountPoints are the destinations of the mount operations in args.
func mountPoints(args []string) []string {
	var out []string
	for _, m := range mountsOf(args) {
		f := strings.Fields(m)
		out = append(out, f[len(f)-1])
	}
	return out
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func TestBuildFlags(t *testing.T) {
	root := tree(t, "w/")
	pol, _ := policy.New(policy.Settings{Filesystem: policy.Filesystem{AllowWrite: []policy.Entry{{Path: root + "/w"}}}}, policy.Env{Dir: root + "/w", Home: root})
	for _, ns := range []bool{true, false} {
		res, err := Build(Plan{Policy: pol, Self: "/x/cordon", UID: 1000, GID: 1001, NewSession: ns, StatusFD: 5})
		if err != nil {
			t.Fatal(err)
		}
		a := strings.Join(res.Args, " ")
		for _, f := range []string{"--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--die-with-parent", "--as-pid-1",
			"--cap-drop ALL", "--uid 1000 --gid 1001", "--chdir " + root + "/w", "--clearenv", "--json-status-fd 5"} {
			if !strings.Contains(a, f) {
				t.Errorf("args lack %q: %s", f, a)
			}
		}
		if strings.Contains(a, "--new-session") != ns {
			t.Errorf("NewSession=%v: %s", ns, a)
		}
	}
}

// Host paths under the sandbox's own /tmp are not exposed unless a
// writable root the user named holds them.
func TestBuildPrivateTmp(t *testing.T) {
	if !strings.HasPrefix(os.TempDir(), "/tmp") {
		t.Skip("temp dir is not under /tmp")
	}
	root := tree(t, "a/secret", "w/")
	res := buildIn(t, root, root+"/w", policy.Filesystem{
		AllowWrite: []policy.Entry{{Path: root + "/w"}},
		DenyWrite:  []policy.Entry{{Path: root + "/a/secret"}},
	})
	for _, x := range mountsOf(res.Args) {
		if strings.Contains(x, root+"/a") {
			t.Errorf("a host /tmp path outside any writable root is mounted: %q", x)
		}
	}
}

func TestBuildGlobLimit(t *testing.T) {
	root := tree(t, "w/a.pem", "w/b.pem", "w/c.pem")
	pol, _ := policy.New(policy.Settings{Filesystem: policy.Filesystem{
		AllowWrite: []policy.Entry{{Path: root + "/w"}},
		DenyWrite:  []policy.Entry{{Path: root + "/w/*.pem"}},
	}}, policy.Env{Dir: root, Home: root})
	_, err := Build(Plan{Policy: pol, Self: "/x", MaxGlobMatches: 2})
	if err == nil || !strings.Contains(err.Error(), "filesystem.denyWrite[0]") || !strings.Contains(err.Error(), "more than 2") {
		t.Fatalf("want a refusal of the broad glob, got %v", err)
	}
}

// A writable root reached through a symlink inside another writable root
// may have been planted by an earlier run: it is not made writable.
func TestBuildPlantedSymlink(t *testing.T) {
	root := tree(t, "w/", "outside/", "trusted/", "ro/")
	os.Symlink(root+"/outside", root+"/w/build")   // inside a writable root
	os.Symlink(root+"/outside", root+"/elsewhere") // in a directory the caller can write
	os.Symlink(root+"/trusted", root+"/ro/link")   // in a directory the caller cannot write
	os.Symlink(root+"/outside", root+"/w/out-x")   // a glob's match, planted
	os.Chmod(root+"/ro", 0o555)
	t.Cleanup(func() { os.Chmod(root+"/ro", 0o755) })
	res := buildIn(t, root, root+"/w", policy.Filesystem{AllowWrite: []policy.Entry{
		{Path: root + "/w"}, {Path: root + "/w/build"}, {Path: root + "/elsewhere"}, {Path: root + "/ro/link"},
		{Path: root + "/w/out*"},
	}})
	m := mountsOf(res.Args)
	if indexOf(m, "--bind "+root+"/outside "+root+"/outside") >= 0 {
		t.Errorf("a planted symlink made its target writable:\n%s", strings.Join(m, "\n"))
	}
	if os.Getuid() != 0 { // root can write every directory: it follows no symlink
		if indexOf(m, "--bind "+root+"/trusted "+root+"/trusted") < 0 {
			t.Errorf("a symlink in a directory the caller cannot write must be followed:\n%s", strings.Join(m, "\n"))
		}
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "w/out-x") {
		t.Errorf("the planted glob match is not reported: %q", res.Warnings)
	}
	if len(res.Warnings) < 2 || !strings.Contains(strings.Join(res.Warnings, "\n"), "w/build") || !strings.Contains(strings.Join(res.Warnings, "\n"), "elsewhere") {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// A protected name that is a symlink inside a writable root cannot be
// protected (the link can be replaced): Build refuses, naming it.
func TestBuildRefusesSymlinkedProtectedNames(t *testing.T) {
	for _, link := range []string{".bashrc", ".git", ".mcp.json", "cordon.json"} {
		root := tree(t, "w/", "elsewhere/.git/hooks/", "elsewhere/file")
		target := root + "/elsewhere/file"
		if link == ".git" {
			target = root + "/elsewhere/.git"
		}
		os.Symlink(target, root+"/w/"+link)
		pol, err := policy.New(policy.Settings{Filesystem: policy.Filesystem{AllowWrite: []policy.Entry{{Path: root + "/w"}}}},
			policy.Env{Dir: root + "/w", Home: root})
		if err != nil {
			t.Fatal(err)
		}
		pol.SourceFile = root + "/w/cordon.json"
		_, err = Build(Plan{Policy: pol, Self: "/x"})
		if err == nil || !strings.Contains(err.Error(), root+"/w/"+link+" is a symlink") {
			t.Errorf("%s: want a refusal naming the symlink, got %v", link, err)
		}
	}
}

// A working directory under /tmp is mounted even when no rule names it:
// the sandbox's own /tmp would hide it and bubblewrap could not chdir.
func TestBuildWorkingDirUnderTmp(t *testing.T) {
	root := tree(t, "w/")
	if !strings.HasPrefix(root, "/tmp/") {
		t.Skip("temp dir is not under /tmp")
	}
	res := buildIn(t, root, root+"/w", policy.Filesystem{})
	if m := mountsOf(res.Args); indexOf(m, "--ro-bind "+root+"/w "+root+"/w") < 0 {
		t.Errorf("the working directory is not mounted:\n%s", strings.Join(m, "\n"))
	}
}
