package proxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
)

// The relays below move bytes with io.Copy between the raw connections, so
// that between two *net.TCPConn the kernel splices and no byte passes
// through user space. Bytes a bufio.Reader already holds are written first.

// drain writes what br has buffered (at most n bytes; n < 0: all of it) to
// dst and returns how many it wrote.
func drain(dst io.Writer, br *bufio.Reader, n int64) (int64, error) {
	b := int64(br.Buffered())
	if b == 0 || n == 0 {
		return 0, nil
	}
	if n >= 0 && b > n {
		b = n
	}
	p, _ := br.Peek(int(b))
	w, err := dst.Write(p)
	br.Discard(w)
	return int64(w), err
}

// copyN copies exactly n bytes of the stream that br buffers from raw.
func copyN(dst io.Writer, br *bufio.Reader, raw net.Conn, n int64) error {
	done, err := drain(dst, br, n)
	if err != nil {
		return err
	}
	if n -= done; n == 0 {
		return nil
	}
	if br.Buffered() > 0 {
		return errors.New("internal: bytes left in the buffer")
	}
	w, err := io.CopyN(dst, raw, n)
	if err == nil && w != n {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// copyAll copies the stream until EOF.
func copyAll(dst io.Writer, br *bufio.Reader, raw net.Conn) error {
	if _, err := drain(dst, br, -1); err != nil {
		return err
	}
	_, err := io.Copy(dst, raw)
	return err
}

// tunnel joins a and b in both directions until both have finished, then
// closes both. Bytes already buffered from either side (the start of a TLS
// handshake sent right behind a CONNECT) go first. When one side ends its
// stream, the other side's write half is closed, so that protocols that
// half-close (SSH, git) see a clean end.
func tunnel(a net.Conn, abuf *bufio.Reader, b net.Conn, bbuf *bufio.Reader) {
	var wg sync.WaitGroup
	wg.Add(2)
	pipe := func(dst net.Conn, src net.Conn, srcBuf *bufio.Reader) {
		defer wg.Done()
		var err error
		if srcBuf != nil {
			err = copyAll(dst, srcBuf, src)
		} else {
			_, err = io.Copy(dst, src)
		}
		if err != nil {
			// A reset or a write into a closed peer: nothing more can
			// flow either way.
			a.Close()
			b.Close()
			return
		}
		closeWrite(dst)
	}
	go pipe(b, a, abuf)
	go pipe(a, b, bbuf)
	wg.Wait()
	a.Close()
	b.Close()
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

// Join copies between a and b in both directions until both end, then
// closes both (for forwarding to an external proxy).
func Join(a, b net.Conn) { tunnel(a, nil, b, nil) }
