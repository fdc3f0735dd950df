// Command serveload is bench/serve's load check: it starts `cordon serve`,
// launches N sessions at once, runs one command in each, and reports the
// p50/p99 latency of launch and of exec (request to exit event), the
// daemon's peak RSS, and whether tearing everything down left anything
// behind (processes, descriptors, temporary directories).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	bin := flag.String("cordon", "bin/cordon", "the cordon binary")
	n := flag.Int("sessions", 50, "sessions launched at once")
	backend := flag.String("backend", "native", "backend of the sessions")
	logFile := flag.String("log", "", "write the daemon's log here")
	flag.Parse()
	if *logFile != "" {
		f, err := os.Create(*logFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "serveload:", err)
			os.Exit(1)
		}
		daemonLog = f
		defer f.Close()
	}
	if err := run(*bin, *n, *backend); err != nil {
		fmt.Fprintln(os.Stderr, "serveload:", err)
		os.Exit(1)
	}
}

const token = "serveload-token-0123456789"

// daemonLog receives the daemon's log after its listening line.
var daemonLog io.Writer = io.Discard

func run(bin string, n int, backend string) error {
	work, err := os.MkdirTemp("/var/tmp", "cordon-serveload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	tmpBefore := tempDirs()
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "CORDON_API_TOKEN="+token)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		return err
	}
	defer cmd.Process.Kill()
	base, err := waitListening(stderr)
	if err != nil {
		return err
	}
	fdsBefore := countFDs(cmd.Process.Pid)
	var mu sync.Mutex
	var launch, execs []time.Duration
	var failures []string
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id := fmt.Sprintf("load-%d", i)
			dir := filepath.Join(work, id)
			os.MkdirAll(dir, 0o755)
			t0 := time.Now()
			code, body := call(base, "POST", "/v1/sessions", map[string]any{"sessionId": id, "workspaceId": "load",
				"backend": backend, "bindMounts": []map[string]any{{"hostPath": dir}}})
			l := time.Since(t0)
			if code != 201 {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("%s: launch %d %s", id, code, body))
				mu.Unlock()
				return
			}
			t1 := time.Now()
			exitCode, err := execWait(base, id, []string{"sh", "-c", "echo hello > out.txt && cat out.txt"})
			e := time.Since(t1)
			mu.Lock()
			defer mu.Unlock()
			launch = append(launch, l)
			if err != nil || exitCode != 0 {
				failures = append(failures, fmt.Sprintf("%s: exec %d %v", id, exitCode, err))
				return
			}
			execs = append(execs, e)
		}(i)
	}
	wg.Wait()
	wall := time.Since(start)
	rss := peakRSS(cmd.Process.Pid)
	for i := 0; i < n; i++ {
		call(base, "DELETE", fmt.Sprintf("/v1/sessions/load-%d", i), nil)
	}
	time.Sleep(200 * time.Millisecond)
	children := childCount(cmd.Process.Pid)
	fdsAfter := countFDs(cmd.Process.Pid)
	_, listed := call(base, "GET", "/v1/sessions", nil)
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	leftTmp := newTempDirs(tmpBefore)
	fmt.Printf("sessions: %d launched at once (%s backend), one command each; wall %s\n", n, backend, wall.Round(time.Millisecond))
	fmt.Printf("launch latency  p50 %7.1f ms   p99 %7.1f ms   (POST /v1/sessions)\n", pct(launch, 50), pct(launch, 99))
	fmt.Printf("exec latency    p50 %7.1f ms   p99 %7.1f ms   (POST exec to the exit event on the stream)\n", pct(execs, 50), pct(execs, 99))
	fmt.Printf("daemon peak RSS %.1f MiB\n", float64(rss)/1024)
	fmt.Printf("after DELETE of every session: %d child processes, descriptors %d -> %d, sessions listed %s, temp dirs left %v\n",
		children, fdsBefore, fdsAfter, strings.TrimSpace(listed), leftTmp)
	if len(failures) > 0 {
		return fmt.Errorf("%d failures: %s", len(failures), strings.Join(failures, "; "))
	}
	if children > 0 || fdsAfter > fdsBefore+2 || len(leftTmp) > 0 || !strings.Contains(listed, `"sessions":[]`) {
		return fmt.Errorf("something was left behind")
	}
	return nil
}

var listenLine = regexp.MustCompile(`listening on (http://[0-9.:]+)`)

func waitListening(r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if m := listenLine.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(daemonLog, r)
			return m[1], nil
		}
	}
	return "", fmt.Errorf("cordon serve did not start")
}

func call(base, method, path string, body any) (int, string) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// execWait starts argv and follows the session's stream to its exit.
func execWait(base, session string, argv []string) (int, error) {
	code, body := call(base, "POST", "/v1/sessions/"+session+"/exec", map[string]any{"argv": argv})
	if code != 202 {
		return -1, fmt.Errorf("exec: %d %s", code, body)
	}
	var x struct{ ExecID string }
	json.Unmarshal([]byte(body), &x)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/v1/sessions/"+session+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var e struct {
			Type   string
			ExecID string
			Code   *int
		}
		json.Unmarshal([]byte(line), &e)
		if e.Type == "exit" && e.ExecID == x.ExecID && e.Code != nil {
			return *e.Code, nil
		}
	}
	return -1, fmt.Errorf("the stream ended before the exit event")
}

func pct(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	if i < 1 {
		i = 1
	}
	return float64(s[i-1].Microseconds()) / 1000
}

func peakRSS(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func countFDs(pid int) int {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(ents)
}

// childCount counts the daemon's live descendants.
func childCount(pid int) int {
	out, _ := exec.Command("pgrep", "-P", strconv.Itoa(pid)).Output()
	return len(strings.Fields(string(out)))
}

func tempDirs() map[string]bool {
	m := map[string]bool{}
	ents, _ := filepath.Glob(filepath.Join(os.TempDir(), "cordon-*"))
	for _, e := range ents {
		m[e] = true
	}
	return m
}

func newTempDirs(before map[string]bool) []string {
	var out []string
	for e := range tempDirs() {
		if !before[e] {
			out = append(out, e)
		}
	}
	return out
}
