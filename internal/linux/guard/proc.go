//go:build linux

package guard

import (
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// procInfo is what the guard needs to know of a calling thread.
type procInfo struct {
	tgid    int
	umask   int
	pidfd   int   // -1: not cached
	checked int64 // when pidfd was last seen alive (monotonic ns)
}

// procCache remembers each calling thread's process and umask, so a
// creation does not cost a read of /proc/TID/status (about 15 µs). An
// entry holds a pidfd of the thread: once the thread has exited, its TID
// may name another thread, and the entry is dropped. umask(2) is notified
// (and continued) so the cache follows every change.
type procCache struct {
	mu sync.Mutex
	m  map[int]*procInfo
}

const maxCached = 4096

// pidfdThread is PIDFD_THREAD (O_EXCL, Linux 6.9): a pidfd of a thread
// that is not its process's leader.
const pidfdThread = unix.O_EXCL

func (c *procCache) get(tid int) (procInfo, unix.Errno) {
	c.mu.Lock()
	if e := c.m[tid]; e != nil {
		// A TID is only reused after the kernel has handed out every other
		// PID of the namespace (it allocates them in a cycle), which takes
		// far longer than a millisecond: an entry seen alive that recently
		// needs no new look. (The poll is non-blocking; holding the lock
		// keeps the pidfd from being closed under it.)
		now := nanotime()
		if now-e.checked < int64(time.Millisecond) || alive(e.pidfd) {
			e.checked = now
			info := *e
			c.mu.Unlock()
			return info, 0
		}
		delete(c.m, tid)
		unix.Close(e.pidfd)
	}
	c.mu.Unlock()
	pidfd, err := unix.PidfdOpen(tid, 0)
	if err == unix.EINVAL || err == unix.ENOENT {
		// Not a thread-group leader (EINVAL before 6.9, ENOENT since).
		pidfd, err = unix.PidfdOpen(tid, pidfdThread)
	}
	if err != nil {
		pidfd = -1
	}
	info, ee := readStatus(tid)
	if ee != 0 {
		if pidfd >= 0 {
			unix.Close(pidfd)
		}
		return procInfo{}, ee
	}
	info.pidfd = -1
	if pidfd >= 0 {
		// Alive after the read: the status was this thread's.
		if !alive(pidfd) {
			unix.Close(pidfd)
			return info, 0
		}
		info.pidfd = pidfd
		info.checked = nanotime()
		c.mu.Lock()
		if len(c.m) >= maxCached {
			c.sweepLocked()
		}
		if old := c.m[tid]; old == nil && len(c.m) < maxCached {
			c.m[tid] = &info
			c.mu.Unlock()
			return info, 0
		}
		c.mu.Unlock()
		unix.Close(pidfd)
		info.pidfd = -1
	}
	return info, 0
}

// setUmask records a umask(2) call of tid, which changes the umask of
// every thread of its process (they share it).
func (c *procCache) setUmask(tid, mask int) {
	info, e := c.get(tid)
	if e != 0 {
		return
	}
	c.mu.Lock()
	for _, p := range c.m {
		if p.tgid == info.tgid {
			p.umask = mask
		}
	}
	c.mu.Unlock()
}

func (c *procCache) sweepLocked() {
	for tid, e := range c.m {
		if !alive(e.pidfd) {
			delete(c.m, tid)
			unix.Close(e.pidfd)
		}
	}
}

// alive: the thread behind pidfd has not exited (a pidfd polls readable
// once it has).
func alive(pidfd int) bool {
	if pidfd < 0 {
		return false
	}
	p := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(p, 0)
	return err == nil && n == 0
}

// readStatus reads Tgid and Umask from /proc/TID/status.
func readStatus(tid int) (procInfo, unix.Errno) {
	var buf [512]byte
	fd, err := unix.Open("/proc/"+strconv.Itoa(tid)+"/status", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return procInfo{}, unix.ESRCH
	}
	n, err := unix.Read(fd, buf[:])
	unix.Close(fd)
	if err != nil || n <= 0 {
		return procInfo{}, unix.ESRCH
	}
	info := procInfo{tgid: -1, umask: -1}
	b := buf[:n]
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		line := string(b[:i])
		if i < len(b) {
			i++
		}
		b = b[i:]
		if v, ok := field(line, "Umask:"); ok {
			if m, err := strconv.ParseInt(v, 8, 32); err == nil {
				info.umask = int(m)
			}
		} else if v, ok := field(line, "Tgid:"); ok {
			if t, err := strconv.Atoi(v); err == nil {
				info.tgid = t
			}
		}
		if info.umask >= 0 && info.tgid >= 0 {
			return info, 0
		}
	}
	return procInfo{}, unix.ESRCH
}

func field(line, name string) (string, bool) {
	if len(line) < len(name) || line[:len(name)] != name {
		return "", false
	}
	v := line[len(name):]
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	return v, true
}

var epoch = time.Now()

// nanotime is a monotonic clock in nanoseconds.
func nanotime() int64 { return int64(time.Since(epoch)) }
