//go:build linux

package guard

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/linux/seccomp"
	"github.com/cordon-sandbox/cordon/violation"
	"golang.org/x/sys/unix"
)

// Unix sockets by path (seccomp.Options.UnixPaths, for
// network.allowUnixSockets). socket(AF_UNIX) is allowed for stream
// sockets only: a stream socket reaches nothing but the one socket it is
// connected to, while a datagram socket can sendto() any path, which the
// guard would have to check on every send. connect and bind come to the
// guard whatever the family (seccomp cannot see the address): it reads
// the address once, checks a unix path, and makes the call itself on a
// copy of the caller's socket (pidfd_getfd), so the caller cannot change
// the address after the check.

const sockaddrMax = 128 // sizeof(struct sockaddr_storage)

// socket answers socket(AF_UNIX, type, protocol): its arguments are values,
// so an allowed call is continued.
func (w *worker) socket(n seccomp.Notif) answer {
	if n.Args[0] != unix.AF_UNIX {
		return w.refusal(n) // AF_VSOCK: a refusal row, in Notify mode
	}
	typ := int(n.Args[1]) & 0xf
	if typ == unix.SOCK_STREAM {
		return answer{cont: true, fd: -1}
	}
	w.g.report(violation.Violation{Action: violation.UnixSocket, Target: fmt.Sprintf("socket(AF_UNIX, type %d)", typ),
		Reason: "only stream unix sockets are allowed (network.allowUnixSockets)",
		Raw:    "a datagram or seqpacket unix socket can send to any socket path"})
	return fail(unix.EPERM)
}

// sockCall is connect and bind.
func (w *worker) sockCall(n seccomp.Notif, t *target, call string) answer {
	sockfd, addr, size := int(int32(n.Args[0])), n.Args[1], int(uint32(n.Args[2]))
	// As the kernel answers: a length that cannot hold the family, or more
	// than a sockaddr_storage, is EINVAL before the pointer is looked at.
	switch {
	case size < 2 || size > sockaddrMax:
		return fail(unix.EINVAL)
	case addr == 0:
		return fail(unix.EFAULT)
	}
	raw, e := w.readBytes(int(n.Pid), addr, size)
	if e != 0 {
		return fail(e)
	}
	if !seccomp.IDValid(w.g.listener, n.ID) {
		return answer{gone: true}
	}
	sock, e := w.takeSocket(t, sockfd)
	if e != 0 {
		return fail(e)
	}
	defer unix.Close(sock)
	if len(raw) < 2 || binary.LittleEndian.Uint16(raw) != unix.AF_UNIX {
		// Not a unix address: made as given, from the copy that was read.
		return w.rawSockCall(call, sock, raw)
	}
	path := raw[2:]
	if len(path) == 0 || path[0] == 0 {
		// Abstract (or autobind): the network namespace already keeps
		// these inside the sandbox; refused all the same.
		w.g.report(violation.Violation{Action: violation.UnixSocket, Target: call + " abstract unix socket",
			Reason: "abstract unix sockets are refused", Raw: fmt.Sprintf("%s %q", call, path)})
		return fail(unix.EPERM)
	}
	if i := strings.IndexByte(string(path), 0); i >= 0 {
		path = path[:i]
	}
	l, e := w.locate(t, unix.AT_FDCWD, -1, string(path))
	if e != 0 {
		return fail(e)
	}
	defer l.close()
	if l.last == "" || l.last == "." || l.last == ".." {
		return fail(unix.ECONNREFUSED)
	}
	if call == "bind" {
		abs := l.abs()
		if v := w.g.judge(abs, kindOther); denied(v) {
			return w.refuse(call, abs, v)
		}
		if e := w.setUmask(t); e != 0 {
			return fail(e)
		}
		return w.unixCall(call, sock, &l)
	}
	// connect follows symlinks to the socket itself.
	fd, e := w.openPath(t, &l)
	if e != 0 {
		return fail(e)
	}
	defer unix.Close(fd)
	real, e := w.fdPath(fd)
	if e != 0 {
		return fail(e)
	}
	if !w.g.unixAllowed(real) {
		w.g.report(violation.Violation{Action: violation.UnixSocket, Target: real,
			Reason: "not in network.allowUnixSockets", Raw: fmt.Sprintf("connect %s (asked for %s)", real, path)})
		return fail(unix.EPERM)
	}
	// The socket file itself, through this process's descriptor of it.
	err := unix.Connect(sock, &unix.SockaddrUnix{Name: w.procSelfFD(fd)})
	return sockResult(err)
}

// unixAllowed: path is a listed socket, or lies inside a listed directory.
func (g *Guard) unixAllowed(path string) bool {
	for _, p := range g.unixSockets {
		if p.Covers(path) >= 0 {
			return true
		}
	}
	return false
}

// unixCall binds sock to l's name, reached through this process's
// descriptor of the directory (no second lookup of the caller's path).
func (w *worker) unixCall(call string, sock int, l *loc) answer {
	name := w.procSelfFD(l.dir) + "/" + l.last
	if len(name) >= 108 {
		return fail(unix.ENAMETOOLONG)
	}
	err := unix.Bind(sock, &unix.SockaddrUnix{Name: name})
	if err == nil {
		if a, ok := w.recheck(call, l, l.abs(), kindOther, func() { unix.Unlinkat(l.dir, l.last, 0) }); !ok {
			return a
		}
	}
	return sockResult(err)
}

func sockResult(err error) answer {
	if err != nil {
		return fail(errno(err))
	}
	return done
}

// takeSocket copies the caller's descriptor sockfd into this process.
func (w *worker) takeSocket(t *target, sockfd int) (int, unix.Errno) {
	if sockfd < 0 {
		return -1, unix.EBADF
	}
	tgid, e := t.process()
	if e != 0 {
		return -1, e
	}
	pidfd, err := unix.PidfdOpen(tgid, 0)
	if err != nil {
		return -1, unix.ESRCH
	}
	defer unix.Close(pidfd)
	fd, err := unix.PidfdGetfd(pidfd, sockfd, 0)
	if err != nil {
		return -1, errno(err)
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		unix.Close(fd)
		return -1, unix.ENOTSOCK
	}
	return fd, 0
}

// readBytes reads size bytes of the caller's memory.
func (w *worker) readBytes(tid int, addr uint64, size int) ([]byte, unix.Errno) {
	buf := make([]byte, size)
	local := []unix.Iovec{{Base: &buf[0], Len: uint64(size)}}
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: size}}
	got, err := unix.ProcessVMReadv(tid, local, remote, 0)
	if err != nil || got != size {
		return nil, unix.EFAULT
	}
	return buf, 0
}
