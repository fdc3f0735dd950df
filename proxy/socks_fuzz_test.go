package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/cordon-sandbox/cordon/hostmatch"
)

type skNoResolver struct{}

func (skNoResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return nil, errors.New("no DNS in this test")
}

// FuzzSOCKSHandshake feeds arbitrary bytes, as a client, to HandleSOCKS on
// two Servers, one with a token and one without. Nothing can be reached:
// every address and every name but *.resolve.test is refused, and those
// do not resolve. HandleSOCKS must not panic, and must return soon after
// the client has sent its bytes and gone.
func FuzzSOCKSHandshake(f *testing.F) {
	const token = "fuzz-token"
	login := slices.Concat([]byte{5, 1, methodPassword, 1, 1, 'u', byte(len(token))}, []byte(token))
	noAuth := []byte{5, 1, methodNone}
	for _, req := range [][]byte{
		skReq(cmdConnect, skV4("192.0.2.1"), 443),
		skReq(cmdConnect, skV6("2001:db8::1"), 443),
		skReq(cmdConnect, skName("a.resolve.test"), 80),
		skReq(cmdConnect, skName("github.com"), 22),
		slices.Concat(skReq(cmdConnect, skName("github.com"), 22), []byte("SSH-2.0-x\r\n\x00\x00\x00\x0c\x0a\x14"), make([]byte, 10)),
		skReq(2, skV4("192.0.2.1"), 443),
		skReq(cmdConnect, []byte{9, 1, 2}, 80),
		skReq(cmdConnect, skName(""), 80),
	} {
		f.Add(slices.Concat(login, req))
		f.Add(slices.Concat(noAuth, req))
	}
	f.Add([]byte{4, 1, 0, 80, 192, 0, 2, 1, 0})
	f.Add([]byte{5, 0})
	f.Add([]byte{5, 1, methodPassword, 1, 255})

	rules, err := hostmatch.Compile([]string{"*.resolve.test"}, []string{"*:22"}, map[string]string{"*:22": "no SSH"})
	if err != nil {
		f.Fatal(err)
	}
	var servers []*Server
	for _, tok := range []string{token, ""} {
		s, err := NewServer(Config{Rules: rules, Token: tok, Resolver: skNoResolver{},
			HandshakeTimeout: 200 * time.Millisecond, DialTimeout: 200 * time.Millisecond})
		if err != nil {
			f.Fatal(err)
		}
		servers = append(servers, s)
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		for _, s := range servers {
			client, server := net.Pipe()
			done := make(chan struct{})
			go func() {
				defer close(done)
				defer server.Close()
				s.HandleSOCKS(server)
			}()
			go io.Copy(io.Discard, client) // the replies; ends when client is closed
			client.SetWriteDeadline(time.Now().Add(2 * time.Second))
			client.Write(data) // returns once HandleSOCKS has read it all, or hung up
			client.Close()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("HandleSOCKS still running 5 s after the client left, on %x", data)
			}
		}
	})
}
