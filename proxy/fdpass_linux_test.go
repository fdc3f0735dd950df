package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"
)

func socketpair(t *testing.T) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	a, b, err := NewBridge()
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

// The bridge's path: a TCP connection accepted elsewhere is handed over
// as a descriptor and served by the proxy as if it had connected itself.
func TestServeFDs(t *testing.T) {
	e := htStart(t, nil, nil, nil, nil)
	proxySide, bridgeSide := socketpair(t)
	defer bridgeSide.Close()
	served := make(chan error, 1)
	go func() { served <- e.pair.ServeFDs(proxySide) }()

	// The "sandbox" listener the bridge accepts on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	hand := func(tag byte) net.Conn {
		client, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		accepted, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		f, err := accepted.(*net.TCPConn).File()
		if err != nil {
			t.Fatal(err)
		}
		if err := SendConn(bridgeSide, tag, int(f.Fd())); err != nil {
			t.Fatal(err)
		}
		f.Close()
		accepted.Close() // the bridge keeps nothing
		return client
	}
	client := hand(TagHTTP)
	defer client.Close()
	fmt.Fprintf(client, "GET http://%s/hello HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: %s\r\n\r\n", e.origin, e.origin, basicAuth(User("bridged"), e.token))
	resp, err := http.ReadResponse(bufio.NewReader(client), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("bridged HTTP: %v %v", resp, err)
	}
	sc := hand(TagSOCKS)
	defer sc.Close()
	sc.Write([]byte{5, 1, 2})
	reply := make([]byte, 2)
	if _, err := io.ReadFull(sc, reply); err != nil || reply[1] != 2 {
		t.Fatalf("bridged SOCKS: %v %v", reply, err)
	}

	// A descriptor that is not a TCP socket, or an unknown tag, is closed
	// unserved: the peer of a handed unix socket sees EOF.
	a, b, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	SendConn(bridgeSide, TagHTTP, int(b.Fd()))
	b.Close()
	a.SetReadDeadline(time.Now().Add(3 * time.Second))
	if n, err := a.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("a handed pipe was kept: %d %v", n, err)
	}
	us, uc := socketpair(t)
	f, _ := uc.File()
	SendConn(bridgeSide, TagHTTP, int(f.Fd()))
	f.Close()
	uc.Close()
	us.SetReadDeadline(time.Now().Add(3 * time.Second))
	if n, err := us.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("a handed unix socket was kept: %d %v", n, err)
	}
	bad := hand('X')
	bad.SetReadDeadline(time.Now().Add(3 * time.Second))
	if n, err := bad.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("an unknown tag was served: %d %v", n, err)
	}
	bad.Close()

	// EOF on the channel ends ServeFDs; Close ends it too.
	bridgeSide.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("ServeFDs: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("ServeFDs did not return when the bridge closed")
	}
}
