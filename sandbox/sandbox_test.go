package sandbox_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/sandbox"
	"github.com/cordon-sandbox/cordon/violation"
)

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range append([]string{"bwrap"}, tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed; the library tests run real sandboxes", tool)
		}
	}
}

// origin serves "ok" on loopback and returns its host:port.
func origin(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	return l.Addr().String()
}

func manager(t *testing.T, s policy.Settings) *sandbox.Manager {
	t.Helper()
	pol, err := policy.New(s, policy.Env{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := sandbox.New(context.Background(), pol)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func TestCommandStatusAndStdio(t *testing.T) {
	need(t)
	m := manager(t, policy.Settings{})
	cmd := m.Command(context.Background(), "sh", "-c", "read x; echo got:$x; echo err >&2; exit 3")
	cmd.Stdin = strings.NewReader("input\n")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || out.String() != "got:input\n" || errb.String() != "err\n" {
		t.Fatalf("%v %q %q", err, out.String(), errb.String())
	}
	if err := m.Command(context.Background(), "no-such-command-xyz").Run(); err == nil || err.(*exec.ExitError).ExitCode() != 127 {
		t.Errorf("not found: %v", err)
	}
}

// Each command's refusals are attributed to its id (or text), and a
// command can be allowed a host that others are not.
func TestViolationsAndPerCommandDomains(t *testing.T) {
	need(t, "curl")
	o := origin(t)
	m := manager(t, policy.Settings{Network: policy.Network{DeniedDomains: []string{"evil.example"}}})
	ctx := context.Background()
	curl := func(opts sandbox.CommandOptions, url string) string {
		out, _ := m.CommandWith(ctx, opts, "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", url).Output()
		return string(out)
	}
	if got := curl(sandbox.CommandOptions{ID: "a", AllowDomains: []string{o}}, "http://"+o+"/"); got != "200" {
		t.Errorf("AllowDomains for one command: %q", got)
	}
	if got := curl(sandbox.CommandOptions{ID: "b"}, "http://"+o+"/"); got != "403" {
		t.Errorf("another command reached the host allowed only for the first: %q", got)
	}
	curl(sandbox.CommandOptions{ID: "b"}, "http://evil.example/")
	vs := m.Violations(violation.Key("b", ""))
	var targets []string
	for _, v := range vs {
		if v.Action == violation.NetworkOutbound {
			targets = append(targets, v.Target)
		}
	}
	if len(targets) != 2 || targets[0] != o || targets[1] != "evil.example:80" {
		t.Errorf("violations of b: %+v", vs)
	}
	for _, v := range m.Violations(violation.Key("a", "")) {
		if v.Action == violation.NetworkOutbound {
			t.Errorf("a has b's violation: %+v", v)
		}
	}
	ann := m.AnnotateStderr(violation.Key("b", ""), "curl: (56) ...")
	if !strings.Contains(ann, "<sandbox_violations>") || !strings.Contains(ann, "evil.example:80") {
		t.Errorf("AnnotateStderr: %q", ann)
	}
	// A refused unix socket is reported too, and annotated for the agent.
	if _, err := exec.LookPath("python3"); err == nil {
		m.CommandWith(ctx, sandbox.CommandOptions{ID: "u"}, "python3", "-c", "import socket\ntry: socket.socket(socket.AF_UNIX)\nexcept OSError: pass").Run()
		if ann := m.AnnotateStderr(violation.Key("u", ""), ""); !strings.Contains(ann, "blocked unix-socket socket(domain == AF_UNIX)") {
			t.Errorf("AnnotateStderr for a unix socket: %q", ann)
		}
	}
	// Without an id, the command text is the key.
	m.Command(ctx, "curl", "-sS", "http://nope.example/").Run()
	if len(m.Violations(violation.Key("", "curl -sS http://nope.example/"))) == 0 {
		t.Errorf("no violation under the command text: %+v", m.AllViolations())
	}
}

// Update applies to running commands' network rules at once.
func TestUpdateWhileRunning(t *testing.T) {
	need(t, "curl")
	o := origin(t)
	dir := t.TempDir()
	m := manager(t, policy.Settings{Filesystem: policy.Filesystem{AllowWrite: []policy.Entry{{Path: dir}}}})
	cmd := m.Command(context.Background(), "sh", "-c", fmt.Sprintf(
		`curl -sS -o /dev/null -w '%%{http_code} ' http://%s/; touch %s/first; while [ ! -e %s/go ]; do sleep 0.05; done; curl -sS -o /dev/null -w '%%{http_code}' http://%s/`,
		o, dir, dir, o))
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(dir, "first")); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	pol, _ := policy.New(policy.Settings{Network: policy.Network{AllowedDomains: []string{o}}}, policy.Env{})
	if err := m.Update(pol); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	cmd.Wait()
	if out.String() != "403 200" {
		t.Errorf("before and after Update: %q, want 403 then 200", out.String())
	}
}

// Managers with different policies side by side share nothing; Close is
// idempotent and refuses later use.
func TestManagersAreIndependent(t *testing.T) {
	need(t, "curl")
	o := origin(t)
	open := manager(t, policy.Settings{Network: policy.Network{AllowedDomains: []string{o}}})
	shut := manager(t, policy.Settings{})
	var wg sync.WaitGroup
	got := make([]string, 2)
	for i, m := range []*sandbox.Manager{open, shut} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, _ := m.Command(context.Background(), "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "http://"+o+"/").Output()
			got[i] = string(out)
		}()
	}
	wg.Wait()
	if got[0] != "200" || got[1] != "403" {
		t.Errorf("open, shut: %q", got)
	}
	for _, v := range open.AllViolations() {
		if v.Action == violation.NetworkOutbound {
			t.Errorf("the open manager recorded the other's refusal: %+v", v)
		}
	}
	shut.Close()
	if err := shut.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := shut.Update(nil); err == nil {
		t.Error("Update(nil) accepted")
	}
	if err := shut.Command(context.Background(), "true").Run(); err == nil {
		t.Error("a command ran after Close")
	}
}

// With SetAsk, a destination no rule allows is asked about (holding the
// connection); a "no" is a refusal with the answer's reason, deny rules
// are never asked about, and Subscribe sees each refusal.
func TestAsk(t *testing.T) {
	need(t, "curl")
	yes, no := origin(t), origin(t)
	m := manager(t, policy.Settings{Network: policy.Network{DeniedDomains: []string{"evil.example"}}})
	var mu sync.Mutex
	var asked []string
	m.SetAsk(func(ctx context.Context, key, host string, port int) (bool, string) {
		mu.Lock()
		asked = append(asked, fmt.Sprintf("%s %s:%d", key, host, port))
		mu.Unlock()
		if net.JoinHostPort(host, strconv.Itoa(port)) == yes {
			return true, ""
		}
		return false, "the user said no"
	})
	var seen []violation.Violation
	cancel := m.Subscribe(func(v violation.Violation) {
		mu.Lock()
		seen = append(seen, v)
		mu.Unlock()
	})
	defer cancel()
	ctx := context.Background()
	curl := func(url string) string {
		out, _ := m.CommandWith(ctx, sandbox.CommandOptions{ID: "job"}, "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", url).Output()
		return string(out)
	}
	if got := curl("http://" + yes + "/"); got != "200" {
		t.Errorf("allowed when asked: %q", got)
	}
	if got := curl("http://" + no + "/"); got != "403" {
		t.Errorf("refused when asked: %q", got)
	}
	if got := curl("http://evil.example/"); got != "403" {
		t.Errorf("denied domain: %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || !strings.HasPrefix(asked[0], "job ") || !strings.HasSuffix(asked[1], no) {
		t.Errorf("asked: %q (the deny rule must not be asked about)", asked)
	}
	var reasons []string
	for _, v := range seen {
		if v.Action == violation.NetworkOutbound {
			reasons = append(reasons, v.Target+": "+v.Reason)
		}
	}
	if len(reasons) != 2 || reasons[0] != no+": the user said no" {
		t.Errorf("violations seen: %q", reasons)
	}
}
