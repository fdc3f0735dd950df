//go:build linux

package seccomp

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Options selects the filter's variant.
type Options struct {
	// AllowUnixSockets (settings key network.allowAllUnixSockets) stops
	// refusing socket(AF_UNIX, ...) and socket(AF_VSOCK, ...).
	AllowUnixSockets bool
	// Arch is "amd64" or "arm64"; "" is the running architecture
	// (runtime.GOARCH).
	Arch string
	// Notify makes every refusal a user notification instead of an errno:
	// the process holding the listener (InstallThreadNotify) answers each
	// with the rule's errno (Supervise) and can report it. If that process
	// is gone, the kernel fails the call with ENOSYS: still refused. clone3
	// keeps its plain ENOSYS (a fallback, not a refusal).
	Notify bool
	// Guard adds the create-time guard's calls (open and openat with
	// O_CREAT or O_TMPFILE, creat, mkdir, mknod, rename, link, symlink and
	// their *at forms, umask) as user notifications, and refuses openat2
	// with ENOSYS. The listener's holder must answer them (package guard);
	// if it is gone, the kernel fails them: nothing is created unchecked.
	Guard bool
	// UnixPaths (with Guard, network.allowUnixSockets on Linux): instead of
	// refusing socket(AF_UNIX), hand it, connect and bind to the guard,
	// which allows stream sockets and connects only to the listed paths.
	UnixPaths bool
}

// ErrUnsupportedArch is returned by Build for an architecture it has no
// syscall table for.
var ErrUnsupportedArch = errors.New("seccomp: unsupported architecture")

// Offsets into struct seccomp_data (include/uapi/linux/seccomp.h):
// nr u32 @0, arch u32 @4, instruction_pointer u64 @8, args u64[6] @16.
const (
	offNr   = 0
	offArch = 4
	// offArgs is args[0]. Classic BPF loads 32 bits at a time; on the
	// little-endian amd64 and arm64 the low half of args[i] is at
	// offArgs+8*i. The arch check makes sure no big-endian ABI (aarch64_be
	// has its own AUDIT_ARCH value) gets that far.
	offArgs = 16

	// x32SyscallBit (__X32_SYSCALL_BIT) marks an x32 call on x86_64.
	x32SyscallBit = 0x40000000

	// maxJump is the farthest a conditional jump reaches.
	maxJump = 255
)

// Build returns the classic-BPF program for seccomp(SECCOMP_SET_MODE_FILTER):
// a deny list, in which every call that no rule of Rules(o) matches is
// allowed.
//
// The program is linear: every comparison is followed by the return it
// leads to, so each conditional jump skips at most one return or one small
// argument block, and the program can grow to the kernel's 4096
// instructions without a jump running out of its 8-bit reach.
func Build(o Options) ([]unix.SockFilter, error) {
	a, name, err := archFor(o)
	if err != nil {
		return nil, err
	}
	p := []unix.SockFilter{
		load(offArch),
		jump(unix.BPF_JEQ, a.audit, 1, 0),
		ret(unix.SECCOMP_RET_KILL_PROCESS),
		load(offNr),
	}
	if a.x32 {
		p = append(p,
			jump(unix.BPF_JSET, x32SyscallBit, 0, 1),
			ret(unix.SECCOMP_RET_KILL_PROCESS))
	}
	for _, g := range groupBySyscall(a, o) {
		if g.rows[0].test == nil {
			p = append(p,
				jump(unix.BPF_JEQ, g.nr, 0, 1),
				ret(o.refusal(g.rows[0])))
			continue
		}
		// The argument block ends in returns, so a call that enters it
		// never comes back to the number checks (which could not match:
		// the number is known by then).
		var block []unix.SockFilter
		loaded := -1
		for _, r := range g.rows {
			if r.test.arg != loaded {
				block = append(block, load(uint32(offArgs+8*r.test.arg)))
				loaded = r.test.arg
			}
			op := uint16(unix.BPF_JEQ)
			switch r.test.op {
			case opAnySet:
				op = unix.BPF_JSET
			case opMaskedEq, opMaskedNe:
				// The AND replaces the loaded value: the next row reloads.
				block = append(block, unix.SockFilter{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: r.test.mask})
				loaded = -1
			}
			if r.test.op == opMaskedNe {
				block = append(block, jump(op, r.test.val, 1, 0), ret(o.refusal(r)))
				continue
			}
			block = append(block, jump(op, r.test.val, 0, 1), ret(o.refusal(r)))
		}
		block = append(block, ret(unix.SECCOMP_RET_ALLOW))
		if len(block) > maxJump {
			return nil, fmt.Errorf("seccomp: %s: the argument checks of %s take %d instructions, more than a jump can skip (%d)", name, g.rows[0].sys, len(block), maxJump)
		}
		p = append(p, jump(unix.BPF_JEQ, g.nr, 0, uint8(len(block))))
		p = append(p, block...)
	}
	p = append(p, ret(unix.SECCOMP_RET_ALLOW))
	if len(p) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("seccomp: %s: the filter has %d instructions, more than the kernel takes (%d)", name, len(p), unix.BPF_MAXINSNS)
	}
	return p, nil
}

// group is the rows of one syscall.
type group struct {
	nr   uint32
	rows []rule
}

// groupBySyscall collects the rows that apply to a by syscall, in the order
// each syscall first appears in the table. Each syscall is checked once: a
// second check of the same number would never be reached.
func groupBySyscall(a *arch, o Options) []group {
	var gs []group
	index := map[string]int{}
	for _, r := range table {
		if !r.appliesTo(a, o) {
			continue
		}
		i, ok := index[r.sys]
		if !ok {
			i = len(gs)
			index[r.sys] = i
			gs = append(gs, group{nr: a.nr[r.sys]})
		}
		gs[i].rows = append(gs[i].rows, r)
	}
	return gs
}

// refusal is what the filter returns for a matching rule.
func (o Options) refusal(r rule) uint32 {
	if r.notifies() {
		return unix.SECCOMP_RET_USER_NOTIF
	}
	if o.Notify && r.errno != unix.ENOSYS {
		return unix.SECCOMP_RET_USER_NOTIF
	}
	return refuse(r.errno)
}

func refuse(e unix.Errno) uint32 {
	return unix.SECCOMP_RET_ERRNO | uint32(e)&unix.SECCOMP_RET_DATA
}

func load(off uint32) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
}

func jump(op uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, Jt: jt, Jf: jf, K: k}
}

func ret(k uint32) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k}
}
