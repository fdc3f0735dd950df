package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Load checks. They assert that nothing grows; the figures they log are
// for docs/proxy.md (go test ./proxy -run Load -v).

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

func settle(want int, f func() int) int {
	got := f()
	for i := 0; i < 100 && got > want; i++ {
		time.Sleep(20 * time.Millisecond)
		got = f()
	}
	return got
}

func vmHWM() string {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:"))
		}
	}
	return "?"
}

// echoServer echoes every connection on loopback.
func echoServer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return l.Addr().String()
}

// 1,000 tunnels open at once, each used, then all closed: goroutines and
// descriptors return to where they were.
func TestLoadThousandTunnels(t *testing.T) {
	if testing.Short() {
		t.Skip("load test; skipped with -short")
	}
	echo := echoServer(t)
	e := htStart(t, []string{echo}, nil, nil, nil)
	auth := basicAuth(User("load"), e.token)
	runtime.GC()
	g0, fd0 := runtime.NumGoroutine(), openFDs(t)
	const n = 1000
	conns := make([]net.Conn, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c, err := net.Dial("tcp", e.pair.HTTPAddr())
			if err != nil {
				errs <- err
				return
			}
			conns[i] = c
			c.SetDeadline(time.Now().Add(30 * time.Second))
			fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nProxy-Authorization: %s\r\n\r\n", echo, auth)
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
			if err != nil || resp.StatusCode != 200 {
				errs <- fmt.Errorf("tunnel %d: %v %v", i, resp, err)
				return
			}
			msg := fmt.Sprintf("ping %d\n", i)
			io.WriteString(c, msg)
			if got, err := br.ReadString('\n'); err != nil || got != msg {
				errs <- fmt.Errorf("tunnel %d echoed %q %v", i, got, err)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	open := time.Since(start)
	gPeak, fdPeak := runtime.NumGoroutine(), openFDs(t)
	for _, c := range conns {
		c.Close()
	}
	g1 := settle(g0+2, runtime.NumGoroutine)
	fd1 := settle(fd0, func() int { return openFDs(t) })
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	// Each open tunnel holds two sockets in the proxy and, while both
	// directions splice, two pipes (four descriptors) from Go's pipe pool.
	t.Logf("%d tunnels opened and echoed in %v; goroutines %d → %d → %d; fds %d → %d → %d; heap in use after %.1f MiB; peak RSS of the test process (clients, proxy and echo server) %s",
		n, open.Round(time.Millisecond), g0, gPeak, g1, fd0, fdPeak, fd1, float64(ms.HeapInuse)/(1<<20), vmHWM())
	if g1 > g0+2 {
		t.Errorf("goroutines leaked: %d before, %d after", g0, g1)
	}
	if fd1 > fd0 {
		t.Errorf("descriptors leaked: %d before, %d after", fd0, fd1)
	}
}

// 10,000 short requests, one connection each (the worst case: a decision,
// a dial and a teardown per request).
func TestLoadShortRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("load test; skipped with -short")
	}
	e := htStart(t, nil, nil, nil, nil)
	const total, workers = 10000, 32
	client := e.client("load")
	client.Transport.(*http.Transport).DisableKeepAlives = true
	g0 := runtime.NumGoroutine()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed int
	next := make(chan int, total)
	for i := 0; i < total; i++ {
		next <- i
	}
	close(next)
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				resp, err := client.Get("http://" + e.origin + "/hello")
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if err != nil || resp.StatusCode != 200 {
					mu.Lock()
					failed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if failed > 0 {
		t.Fatalf("%d of %d requests failed", failed, total)
	}
	t.Logf("%d requests (new connection each, %d at a time) in %v: %.0f requests/s", total, workers, elapsed.Round(time.Millisecond), total/elapsed.Seconds())
	client.CloseIdleConnections()
	if g := settle(g0+2, runtime.NumGoroutine); g > g0+2 {
		t.Errorf("goroutines leaked: %d before, %d after", g0, g)
	}
}
