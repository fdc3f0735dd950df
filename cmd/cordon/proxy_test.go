package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cordon proxy runs the pair in the foreground: it prints both URLs with
// the session credential, filters by the settings, reports each refusal
// on stderr, and exits 0 on SIGTERM.
func TestCLIProxy(t *testing.T) {
	origin, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer origin.Close()
	go http.Serve(origin, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	dir := t.TempDir()
	f := writeFile(t, dir, "s.json", `{"network": {"allowedDomains": ["`+origin.Addr().String()+`"], "deniedDomains": ["blocked.example"], "deniedDomainReasons": {"blocked.example": "not today"}}}`)
	cmd := exec.Command(cordonBin, "proxy", "-s", f)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	urls := map[string]string{}
	for len(urls) < 2 && sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		urls[k] = strings.TrimSpace(v)
	}
	hu, err := url.Parse(urls["http"])
	if err != nil || hu.User == nil || !strings.HasPrefix(urls["socks"], "socks5h://cordon:") {
		t.Fatalf("printed %q", urls)
	}
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(hu)}, Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + origin.Addr().String() + "/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("allowed through cordon proxy: %v %v", resp, err)
	}
	resp, err = client.Get("http://blocked.example/")
	if err != nil || resp.StatusCode != 403 {
		t.Fatalf("denied through cordon proxy: %v %v", resp, err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	if !strings.Contains(stderr.String(), "cordon: blocked network-outbound blocked.example:80 (not today)") {
		t.Errorf("stderr %q lacks the refusal", stderr.String())
	}
	if r := cordon(t, dir, "proxy", "-s", f, "--http-port", "70000"); r.code != 125 || !strings.Contains(r.stderr, "--http-port 70000 is not a port") {
		t.Errorf("bad port: %+v", r)
	}
}
