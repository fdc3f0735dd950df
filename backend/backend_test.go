package backend

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cordon-sandbox/cordon/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Init() // the native backend runs this binary for its stages
	os.Exit(m.Run())
}

func TestFromName(t *testing.T) {
	for in, want := range map[string]Backend{"": None, "none": None, "native": Native, "NATIVE": Native, "docker": Native,
		"microvm": MicroVM, "firecracker": None, " native ": Native} {
		if got := FromName(in); got != want {
			t.Errorf("FromName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseEgress(t *testing.T) {
	if len(Baseline) == 0 || len(GitHub) == 0 || len(Denied) == 0 {
		t.Fatalf("egress.txt: %d baseline, %d github, %d denied", len(Baseline), len(GitHub), len(Denied))
	}
	if _, _, _, err := parseEgress("example.com\n"); err == nil {
		t.Error("an entry before any section was accepted")
	}
	for _, must := range []string{"169.254.169.254", "metadata.google.internal"} {
		found := false
		for _, d := range Denied {
			found = found || d == must
		}
		if !found {
			t.Errorf("%s is not denied", must)
		}
	}
}

func TestScrubbedEnv(t *testing.T) {
	got := ScrubbedEnv([]string{"PATH=/bin", "HOME=/h", "GITHUB_TOKEN=x", "AWS_SECRET_ACCESS_KEY=y", "HTTPS_PROXY=http://evil",
		"LC_ALL=C", "LD_PRELOAD=/x.so", "ANTHROPIC_API_KEY=z", "no-equals"})
	if strings.Join(got, " ") != "PATH=/bin HOME=/h LC_ALL=C" {
		t.Errorf("ScrubbedEnv = %q", got)
	}
}

func TestSpecValidate(t *testing.T) {
	dir := t.TempDir()
	no := false
	for _, c := range []struct {
		name  string
		spec  Spec
		field string
	}{
		{"ok", Spec{SessionID: "s1", WorkspaceID: "w", BindMounts: []BindMount{{HostPath: dir}}}, ""},
		{"no session", Spec{WorkspaceID: "w"}, "sessionId"},
		{"bad session", Spec{SessionID: "../x", WorkspaceID: "w"}, "sessionId"},
		{"no workspace", Spec{SessionID: "s"}, "workspaceId"},
		{"mode", Spec{SessionID: "s", WorkspaceID: "w", Mode: "write"}, "mode"},
		{"relative bind", Spec{SessionID: "s", WorkspaceID: "w", BindMounts: []BindMount{{HostPath: "rel"}}}, "bindMounts[0].hostPath"},
		{"missing bind", Spec{SessionID: "s", WorkspaceID: "w", BindMounts: []BindMount{{HostPath: dir}, {HostPath: dir + "/nope"}}}, "bindMounts[1].hostPath"},
		{"guest", Spec{SessionID: "s", WorkspaceID: "w", BindMounts: []BindMount{{HostPath: dir, GuestPath: "x"}}}, "bindMounts[0].guestPath"},
		{"workdir", Spec{SessionID: "s", WorkspaceID: "w", GuestWorkdir: "w"}, "guestWorkdir"},
		{"protected", Spec{SessionID: "s", WorkspaceID: "w", ProtectedPaths: []string{"x"}}, "protectedPaths[0]"},
		{"state dir", Spec{SessionID: "s", WorkspaceID: "w", RunnerStateDirs: []string{dir + "/nope"}}, "runnerStateDirs[0]"},
		{"egress", Spec{SessionID: "s", WorkspaceID: "w", EgressAllowlist: []string{"ok.example", "*.co.uk"}}, "egressAllowlist[1]"},
		{"access", Spec{SessionID: "s", WorkspaceID: "w", NetworkAccess: "maybe"}, "networkAccess"},
		{"deny with network on", Spec{SessionID: "s", WorkspaceID: "w", NetworkAccess: "deny"}, "networkAccess"},
		{"deny with network off", Spec{SessionID: "s", WorkspaceID: "w", NetworkAccess: "deny", NetworkEnabled: &no}, ""},
		{"ask timeout", Spec{SessionID: "s", WorkspaceID: "w", AskTimeoutSeconds: 7200}, "askTimeoutSeconds"},
	} {
		err := c.spec.Validate()
		fe, _ := err.(*FieldError)
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.field != "" && (fe == nil || fe.Field != c.field):
			t.Errorf("%s: %v, want an error on %s", c.name, err, c.field)
		}
	}
}

func TestChooseBackend(t *testing.T) {
	p := &Port{Probe: map[Backend]ProbeResult{None: {Available: true}, Native: {Available: true}, MicroVM: {Hint: "no kvm"}}}
	var logged []string
	p.Logf = func(f string, a ...any) { logged = append(logged, f) }
	if b, err := p.Choose(""); b != Native || err != nil || len(logged) != 1 {
		t.Errorf("default: %s %v, log %q", b, err, logged)
	}
	if _, err := p.Choose(MicroVM); err == nil || !strings.Contains(err.Error(), "no kvm") {
		t.Errorf("explicit microvm: %v", err)
	}
	p.Probe[Native] = ProbeResult{Hint: "install bubblewrap"}
	if b, _ := p.Choose(""); b != None {
		t.Errorf("default without native: %s", b)
	}
	if _, err := p.Choose(Native); err == nil {
		t.Error("explicit native without bwrap worked")
	}
	p.SandboxOff = true
	if b, err := p.Choose(""); b != None || err != nil {
		t.Errorf("sandbox off: %s %v", b, err)
	}
	if _, err := p.Choose(Native); err == nil {
		t.Error("explicit native with the sandbox off worked")
	}
}

// needNative skips when this host cannot run the native backend.
func needNative(t *testing.T) *Port {
	t.Helper()
	p := NewPort(false, t.Logf)
	if r := p.Probe[Native]; !r.Available {
		t.Skipf("native backend unavailable here: %s", r.Hint)
	}
	return p
}

// workdir is a directory outside /tmp (the sandbox's own /tmp hides the
// host's).
func workdir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "cordon-backend-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	d, _ = filepath.EvalSymlinks(d)
	return d
}

// run runs argv in h and collects its output and exit code.
func run(t *testing.T, h *Handle, script string) (stdout, stderr string, code int, evs []Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, ch, err := h.Exec(ctx, []string{"sh", "-c", script}, ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	code = -1
	for e := range ch {
		evs = append(evs, e)
		switch e.Type {
		case EvStdout:
			stdout += e.Data
		case EvStderr:
			stderr += e.Data
		case EvExit:
			code = *e.Code
		}
	}
	return
}

func TestNativeModes(t *testing.T) {
	p := needNative(t)
	w := workdir(t)
	bind, ro, state := filepath.Join(w, "project"), filepath.Join(w, "docs"), filepath.Join(w, "state")
	other := filepath.Join(w, "elsewhere")
	for _, d := range []string{bind, ro, state, other, bind + "/locked"} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(other, "secret"), []byte("SECRET"), 0o644)
	for _, mode := range []Mode{Chat, Review} {
		t.Run(string(mode), func(t *testing.T) {
			os.RemoveAll(filepath.Join(bind, "made"))
			h, err := p.Launch(context.Background(), Spec{SessionID: "s-" + string(mode), WorkspaceID: "w", Mode: mode,
				BindMounts:      []BindMount{{HostPath: bind}, {HostPath: ro, ReadOnly: true}},
				ProtectedPaths:  []string{bind + "/locked"},
				RunnerStateDirs: []string{state}}, "")
			if err != nil {
				t.Fatal(err)
			}
			defer h.Destroy()
			if h.Backend != Native {
				t.Fatalf("backend %s", h.Backend)
			}
			out, _, code, evs := run(t, h, `
				echo a > made; echo rc1=$?
				echo b > `+ro+`/x; echo rc2=$?
				echo c > locked/x; echo rc3=$?
				echo d > `+state+`/s-`+string(mode)+`; echo rc4=$?
				echo e > .env; echo rc5=$?
				mkdir -p sub-`+string(mode)+`/deep && echo f > sub-`+string(mode)+`/deep/id.pem; echo rc6=$?
				cat `+other+`/secret; echo rc7=$?`)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, out)
			}
			want := map[Mode]string{
				Chat:   "rc1=0 rc2=2 rc3=2 rc4=0 rc5=2 rc6=2 rc7=1",
				Review: "rc1=2 rc2=2 rc3=2 rc4=0 rc5=2 rc6=1 rc7=1",
			}[mode]
			if got := strings.Join(strings.Fields(out), " "); got != want {
				t.Errorf("%s: %s, want %s", mode, got, want)
			}
			if _, err := os.Stat(filepath.Join(bind, ".env")); err == nil {
				t.Errorf("HOLE: .env created in a bind")
			}
			if mode == Chat {
				found := false
				for _, e := range evs {
					found = found || e.Type == EvViolation && e.Violation.Action == "file-create" && strings.HasSuffix(e.Violation.Target, "/.env")
				}
				if !found {
					t.Errorf("no file-create violation for .env in %+v", evs)
				}
			}
			if st, _ := h.State(); st != Warm {
				t.Errorf("state after the command: %s", st)
			}
		})
	}
}

// origin answers "ok" on loopback.
func origin(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	return l.Addr().String()
}

func TestNativeNetwork(t *testing.T) {
	p := needNative(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	a, b := origin(t), origin(t)
	w := workdir(t)
	off := false
	launch := func(id string, spec Spec) *Handle {
		spec.SessionID, spec.WorkspaceID, spec.BindMounts = id, "w", []BindMount{{HostPath: w}}
		h, err := p.Launch(context.Background(), spec, Native)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Destroy() })
		return h
	}
	curl := func(h *Handle, target string) string {
		out, _, _, _ := run(t, h, "curl -s -o /dev/null -w '%{http_code}' http://"+target+"/")
		return out
	}
	// Two sessions with different allowlists, side by side.
	ha := launch("a", Spec{EgressAllowlist: []string{a}})
	hb := launch("b", Spec{EgressAllowlist: []string{b}})
	if got := curl(ha, a) + " " + curl(ha, b) + " " + curl(hb, b) + " " + curl(hb, a); got != "200 403 200 403" {
		t.Errorf("a->a a->b b->b b->a: %s", got)
	}
	hoff := launch("off", Spec{NetworkEnabled: &off, EgressAllowlist: []string{a}})
	if got := curl(hoff, a); got != "403" {
		t.Errorf("network off: %s", got)
	}
	// Ask: held while the client is asked; an allow remembered for the session.
	hask := launch("ask", Spec{NetworkAccess: AccessAsk, AskTimeoutSeconds: 20})
	evs, cancel := hask.Subscribe(0)
	defer cancel()
	go func() {
		for e := range evs {
			if e.Type == EvAsk {
				hask.Answer(e.Ask.ID, strings.HasSuffix(a, ":"+strconv.Itoa(e.Ask.Port)), true)
			}
		}
	}()
	if got := curl(hask, a) + " " + curl(hask, b) + " " + curl(hask, a); got != "200 403 200" {
		t.Errorf("ask: a b a: %s", got)
	}
	asks := 0
	ch, cancel2 := hask.Subscribe(0)
	go func() { time.Sleep(time.Second); cancel2() }()
	for e := range ch {
		if e.Type == EvAsk {
			asks++
		}
	}
	if asks != 2 {
		t.Errorf("%d asks, want 2 (the second connection to a was remembered)", asks)
	}
}

func TestNoneBackendScrubsEnvironment(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghp_secret")
	t.Setenv("HTTPS_PROXY", "http://evil.example:8080")
	p := NewPort(true, t.Logf)
	h, err := p.Launch(context.Background(), Spec{SessionID: "n", WorkspaceID: "w"}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Destroy()
	if h.Backend != None {
		t.Fatalf("backend %s with the sandbox off", h.Backend)
	}
	out, _, code, _ := run(t, h, "env")
	if code != 0 || strings.Contains(out, "ghp_secret") || strings.Contains(out, "evil.example") || !strings.Contains(out, "PATH=") {
		t.Errorf("env in none (exit %d):\n%s", code, out)
	}
	if _, err := p.Launch(context.Background(), Spec{SessionID: "n2", WorkspaceID: "w"}, Native); err == nil {
		t.Error("native launched with the sandbox off")
	}
}

// Destroy kills what runs and leaves nothing; the stream replays from the
// start for a late subscriber and ends.
func TestDestroyAndReplay(t *testing.T) {
	p := NewPort(true, t.Logf)
	h, err := p.Launch(context.Background(), Spec{SessionID: "d", WorkspaceID: "w"}, None)
	if err != nil {
		t.Fatal(err)
	}
	_, ch, err := h.Exec(context.Background(), []string{"sh", "-c", "echo started; sleep 60"}, ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for e := range ch {
		if e.Type == EvStdout {
			break
		}
	}
	if st, _ := h.State(); st != Active {
		t.Errorf("state while running: %s", st)
	}
	done := make(chan struct{})
	go func() { h.Destroy(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Destroy did not return")
	}
	var types []string
	late, cancel := h.Subscribe(0)
	defer cancel()
	for e := range late {
		types = append(types, e.Type)
	}
	got := strings.Join(types, " ")
	if !strings.HasPrefix(got, "state state state starting ready stdout") || !strings.HasSuffix(got, "killed exit state state") {
		t.Errorf("events: %s", got)
	}
	if _, _, err := h.Exec(context.Background(), []string{"true"}, ExecOptions{}); err != ErrNotRunning {
		t.Errorf("Exec after Destroy: %v", err)
	}
	if out, _ := exec.Command("pgrep", "-f", "sleep 60").Output(); len(out) > 0 {
		t.Errorf("left running: %s", out)
	}
}

// Commands whose channels nobody reads, and subscriptions never cancelled,
// leave no goroutine once the session is destroyed.
func TestNoGoroutineLeft(t *testing.T) {
	before := runtime.NumGoroutine()
	p := NewPort(true, t.Logf)
	for i := 0; i < 5; i++ {
		h, err := p.Launch(context.Background(), Spec{SessionID: "g" + strconv.Itoa(i), WorkspaceID: "w"}, None)
		if err != nil {
			t.Fatal(err)
		}
		h.Subscribe(0) // never read, never cancelled
		for j := 0; j < 10; j++ {
			if _, _, err := h.Exec(context.Background(), []string{"sh", "-c", "for i in $(seq 1 40); do echo $i; sleep 0.001; done"}, ExecOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(100 * time.Millisecond)
		h.Destroy()
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}
