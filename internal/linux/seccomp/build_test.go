//go:build linux

package seccomp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompData is struct seccomp_data as the kernel hands it to the filter.
type seccompData struct {
	nr   uint32
	arch uint32
	ip   uint64
	args [6]uint64
}

// bytes lays d out as the kernel does on amd64 and arm64 (little-endian):
// nr u32 @0, arch u32 @4, instruction_pointer u64 @8, args u64[6] @16.
func (d seccompData) bytes() []byte {
	b := make([]byte, 64)
	le := binary.LittleEndian
	le.PutUint32(b[0:], d.nr)
	le.PutUint32(b[4:], d.arch)
	le.PutUint64(b[8:], d.ip)
	for i, a := range d.args {
		le.PutUint64(b[16+8*i:], a)
	}
	return b
}

// vm runs a program in golang.org/x/net/bpf's VM, an interpreter written
// apart from this package, so that a wrong opcode or jump is not checked
// against the same mistake.
type vm struct{ m *bpf.VM }

func newVM(t testing.TB, prog []unix.SockFilter) vm {
	t.Helper()
	ins := make([]bpf.Instruction, len(prog))
	for i, f := range prog {
		ins[i] = bpf.RawInstruction{Op: f.Code, Jt: f.Jt, Jf: f.Jf, K: f.K}.Disassemble()
	}
	m, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatalf("x/net/bpf refuses the program: %v", err)
	}
	return vm{m}
}

// run returns the filter's verdict on d. x/net/bpf is a packet filter and
// loads words big-endian, where seccomp loads them in native order; so each
// 32-bit word of the little-endian seccomp_data is byte-swapped in place.
// An aligned 4-byte load, the only load Build emits (TestProgramShape),
// then reads the value the kernel's load would.
func (v vm) run(t testing.TB, d seccompData) uint32 {
	t.Helper()
	b := d.bytes()
	for i := 0; i < len(b); i += 4 {
		binary.BigEndian.PutUint32(b[i:], binary.LittleEndian.Uint32(b[i:]))
	}
	r, err := v.m.Run(b)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return uint32(r)
}

// verdict names a seccomp return value, for readable failures.
func verdict(r uint32) string {
	switch {
	case r == unix.SECCOMP_RET_ALLOW:
		return "ALLOW"
	case r == unix.SECCOMP_RET_KILL_PROCESS:
		return "KILL_PROCESS"
	case r&unix.SECCOMP_RET_ACTION_FULL == unix.SECCOMP_RET_ERRNO:
		return "ERRNO|" + unix.ErrnoName(unix.Errno(r&unix.SECCOMP_RET_DATA))
	}
	return fmt.Sprintf("%#x", r)
}

const (
	allow = unix.SECCOMP_RET_ALLOW
	kill  = unix.SECCOMP_RET_KILL_PROCESS
	eperm = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	enosy = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

// Numbers of syscalls the filter must allow, for the table below. Like the
// deny list's, the amd64 ones are checked against unix.SYS_* on amd64.
var allowedNr = map[string]map[string]uint32{
	"amd64": {"read": 0, "write": 1, "open": 2, "openat": 257, "getpid": 39, "socketpair": 53,
		"connect": 42, "execve": 59, "fork": 57, "vfork": 58, "personality": 135, "kcmp": 312, "seccomp": 317},
	"arm64": {"read": 63, "write": 64, "openat": 56, "getpid": 172, "socketpair": 199,
		"connect": 203, "execve": 221, "personality": 92, "kcmp": 272, "seccomp": 277},
}

// refusedNames is the deny list as the brief gives it, written out apart
// from the table so that a row dropped from the table fails a test.
var refusedNames = []string{
	"ioctl", "clone", "clone3", "socket", "socketpair",
	"io_uring_setup", "io_uring_enter", "io_uring_register", "unshare", "setns",
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
	"bpf", "keyctl", "add_key", "request_key", "userfaultfd", "perf_event_open",
	"mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick",
	"move_mount", "open_tree", "open_tree_attr", "mount_setattr",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"open_by_handle_at", "name_to_handle_at", "swapon", "swapoff", "reboot", "acct",
	"quotactl", "quotactl_fd", "syslog", "vhangup", "lookup_dcookie", "nfsservctl",
}

// x86Only are the refused syscalls that do not exist on arm64.
var x86Only = []string{"iopl", "ioperm", "uselib"}

var allArches = []string{"amd64", "arm64"}

func TestFilterVerdicts(t *testing.T) {
	const (
		afInet, afInet6, afNetlink = 2, 10, 16
		sigchld                    = uint64(unix.SIGCHLD)
		tcgets, tiocswinsz         = 0x5401, 0x5414
		threadFlags                = unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND |
			unix.CLONE_THREAD | unix.CLONE_SYSVSEM | unix.CLONE_SETTLS | unix.CLONE_PARENT_SETTID | unix.CLONE_CHILD_CLEARTID
	)
	type row struct {
		name string
		sys  string // looked up in the arch's tables
		nr   uint32 // used when sys is ""
		arch uint32 // 0: the program's own
		args [6]uint64
		want uint32
	}
	for _, archName := range allArches {
		a := arches[archName]
		other := arches["arm64"].audit
		if archName == "arm64" {
			other = arches["amd64"].audit
		}
		rows := []row{
			// socket: the domain's low 32 bits, as the kernel's int sees it.
			{name: "socket AF_UNIX", sys: "socket", args: [6]uint64{unix.AF_UNIX, unix.SOCK_STREAM}, want: eperm},
			{name: "socket AF_UNIX datagram", sys: "socket", args: [6]uint64{unix.AF_UNIX, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC}, want: eperm},
			{name: "socket AF_VSOCK", sys: "socket", args: [6]uint64{unix.AF_VSOCK, unix.SOCK_STREAM}, want: eperm},
			{name: "socket AF_UNIX with junk in the high bits", sys: "socket", args: [6]uint64{0xdead_beef_0000_0001}, want: eperm},
			{name: "socket AF_INET", sys: "socket", args: [6]uint64{afInet, unix.SOCK_STREAM}, want: allow},
			{name: "socket AF_INET6", sys: "socket", args: [6]uint64{afInet6, unix.SOCK_DGRAM}, want: allow},
			{name: "socket AF_NETLINK", sys: "socket", args: [6]uint64{afNetlink, unix.SOCK_RAW}, want: allow},
			{name: "socket AF_UNIX as the type, not the domain", sys: "socket", args: [6]uint64{afInet, unix.AF_UNIX}, want: allow},
			{name: "socketpair AF_UNIX", sys: "socketpair", args: [6]uint64{unix.AF_UNIX, unix.SOCK_STREAM}, want: allow},
			{name: "socketpair stream with flags", sys: "socketpair", args: [6]uint64{unix.AF_UNIX, unix.SOCK_STREAM | unix.SOCK_CLOEXEC | unix.SOCK_NONBLOCK}, want: allow},
			{name: "socketpair datagram", sys: "socketpair", args: [6]uint64{unix.AF_UNIX, unix.SOCK_DGRAM}, want: eperm},
			{name: "socketpair datagram with flags", sys: "socketpair", args: [6]uint64{unix.AF_UNIX, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC}, want: eperm},
			{name: "socketpair seqpacket", sys: "socketpair", args: [6]uint64{unix.AF_UNIX, unix.SOCK_SEQPACKET | unix.SOCK_NONBLOCK}, want: eperm},
			{name: "socketpair raw (the kernel makes it datagram)", sys: "socketpair", args: [6]uint64{unix.AF_UNIX, unix.SOCK_RAW}, want: eperm},
			{name: "socketpair stream in the low bits, junk above", sys: "socketpair", args: [6]uint64{unix.AF_UNIX, 0xffff_0000_0000_0001}, want: allow},
			{name: "connect", sys: "connect", want: allow},

			// clone: flags are the first argument on both arches.
			{name: "clone thread", sys: "clone", args: [6]uint64{threadFlags}, want: allow},
			{name: "clone fork", sys: "clone", args: [6]uint64{sigchld}, want: allow},
			{name: "clone as Go's os/exec", sys: "clone", args: [6]uint64{unix.CLONE_VFORK | unix.CLONE_VM | unix.CLONE_PIDFD | sigchld}, want: allow},
			{name: "clone CLONE_NEWUSER", sys: "clone", args: [6]uint64{unix.CLONE_NEWUSER | sigchld}, want: eperm},
			{name: "clone CLONE_NEWNS", sys: "clone", args: [6]uint64{unix.CLONE_NEWNS}, want: eperm},
			{name: "clone CLONE_NEWCGROUP", sys: "clone", args: [6]uint64{unix.CLONE_NEWCGROUP}, want: eperm},
			{name: "clone CLONE_NEWUTS", sys: "clone", args: [6]uint64{unix.CLONE_NEWUTS}, want: eperm},
			{name: "clone CLONE_NEWIPC", sys: "clone", args: [6]uint64{unix.CLONE_NEWIPC}, want: eperm},
			{name: "clone CLONE_NEWPID", sys: "clone", args: [6]uint64{unix.CLONE_NEWPID}, want: eperm},
			{name: "clone CLONE_NEWNET", sys: "clone", args: [6]uint64{unix.CLONE_NEWNET}, want: eperm},
			{name: "clone CLONE_NEWTIME", sys: "clone", args: [6]uint64{unix.CLONE_NEWTIME}, want: eperm},
			{name: "clone thread plus CLONE_NEWNET", sys: "clone", args: [6]uint64{threadFlags | unix.CLONE_NEWNET}, want: eperm},
			// The kernel takes lower_32_bits(flags); these bits never reach it.
			{name: "clone CLONE_NEWUSER in the high 32 bits only", sys: "clone", args: [6]uint64{unix.CLONE_NEWUSER << 32}, want: allow},
			{name: "clone namespace flag in a later argument", sys: "clone", args: [6]uint64{sigchld, unix.CLONE_NEWUSER}, want: allow},
			{name: "clone3", sys: "clone3", want: enosy},
			{name: "clone3 with args", sys: "clone3", args: [6]uint64{0x7fff_0000_1000, 88}, want: enosy},

			// ioctl: the request's low 32 bits, as the kernel's unsigned int sees it.
			{name: "ioctl TIOCSTI", sys: "ioctl", args: [6]uint64{0, tiocsti, 0x7fff_0000}, want: eperm},
			{name: "ioctl TIOCLINUX", sys: "ioctl", args: [6]uint64{0, tioclinux}, want: eperm},
			{name: "ioctl 0x1_00005412 (low 32 bits are TIOCSTI)", sys: "ioctl", args: [6]uint64{0, 1<<32 | tiocsti}, want: eperm},
			{name: "ioctl 0x5412_00000000 (the kernel sees request 0)", sys: "ioctl", args: [6]uint64{0, tiocsti << 32}, want: allow},
			{name: "ioctl TCGETS", sys: "ioctl", args: [6]uint64{0, tcgets}, want: allow},
			{name: "ioctl TIOCSWINSZ", sys: "ioctl", args: [6]uint64{1, tiocswinsz}, want: allow},
			{name: "ioctl TIOCSTI as the fd, not the request", sys: "ioctl", args: [6]uint64{tiocsti, tcgets}, want: allow},

			{name: "read", sys: "read", want: allow},
			{name: "write", sys: "write", want: allow},
			{name: "openat", sys: "openat", want: allow},
			{name: "execve", sys: "execve", want: allow},
			{name: "personality", sys: "personality", args: [6]uint64{0xffffffff}, want: allow},
			{name: "kcmp", sys: "kcmp", want: allow},
			{name: "seccomp (a further filter can only refuse more)", sys: "seccomp", want: allow},
			{name: "number past every table", nr: 1000, want: allow},

			// Architecture checks.
			{name: "read through another arch", sys: "read", arch: other, want: kill},
			{name: "i386 (int 0x80) socketcall", nr: 102, arch: unix.AUDIT_ARCH_I386, want: kill},
			{name: "32-bit ARM", nr: 3, arch: unix.AUDIT_ARCH_ARM, want: kill},
			{name: "arch 0", sys: "read", arch: 0xffff_ffff, want: kill},
		}
		if archName == "amd64" {
			rows = append(rows,
				row{name: "open", sys: "open", want: allow},
				row{name: "fork", sys: "fork", want: allow},
				row{name: "vfork", sys: "vfork", want: allow},
				row{name: "x32 read", nr: x32SyscallBit | 0, want: kill},
				row{name: "x32 socket", nr: x32SyscallBit | 41, want: kill},
				row{name: "x32 execve (512+ range)", nr: x32SyscallBit | 520, want: kill},
				row{name: "syscall(-1)", nr: 0xffff_ffff, want: kill},
			)
		} else {
			// arm64 has no x32: the bit makes a number no syscall has,
			// which the kernel answers with ENOSYS.
			rows = append(rows, row{name: "number with the x32 bit", nr: x32SyscallBit | 198, want: allow})
		}
		// Every unconditional refusal, with and without arguments.
		for _, r := range table {
			if r.test != nil || !r.appliesTo(a, Options{}) {
				continue
			}
			rows = append(rows,
				row{name: r.sys, sys: r.sys, want: refuse(r.errno)},
				row{name: r.sys + " with args", sys: r.sys, args: [6]uint64{1, 2, 3, 1 << 40, ^uint64(0), 6}, want: refuse(r.errno)})
		}

		for _, opts := range []Options{{Arch: archName}, {Arch: archName, AllowUnixSockets: true}} {
			prog, err := Build(opts)
			if err != nil {
				t.Fatal(err)
			}
			m := newVM(t, prog)
			for _, r := range rows {
				t.Run(fmt.Sprintf("%s/allowUnix=%v/%s", archName, opts.AllowUnixSockets, r.name), func(t *testing.T) {
					d := seccompData{nr: r.nr, arch: r.arch, args: r.args, ip: 0x7f00_dead_beef}
					if r.sys != "" {
						n, ok := a.nr[r.sys]
						if !ok {
							n, ok = allowedNr[archName][r.sys]
						}
						if !ok {
							t.Fatalf("no %s number for %s", archName, r.sys)
						}
						d.nr = n
					}
					if r.arch == 0 {
						d.arch = a.audit
					}
					want := r.want
					if opts.AllowUnixSockets && (r.sys == "socket" && (uint32(r.args[0]) == unix.AF_UNIX || uint32(r.args[0]) == unix.AF_VSOCK) || r.sys == "socketpair") {
						want = allow
					}
					if got := m.run(t, d); got != want {
						t.Errorf("nr %d arch %#x args %#x: %s, want %s", d.nr, d.arch, d.args, verdict(got), verdict(want))
					}
				})
			}
		}
	}
}

// TestProgramShape checks the program against the rules the kernel's
// loader (seccomp_check_filter) and the run helper above rely on: only
// aligned 32-bit loads inside seccomp_data, only the opcodes Build means to
// emit, jumps that stay inside the program, and a return at the end.
func TestProgramShape(t *testing.T) {
	for _, archName := range allArches {
		for _, opts := range []Options{{Arch: archName}, {Arch: archName, AllowUnixSockets: true}} {
			prog, err := Build(opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s allowUnixSockets=%v: %d instructions", archName, opts.AllowUnixSockets, len(prog))
			if len(prog) > unix.BPF_MAXINSNS {
				t.Errorf("%d instructions", len(prog))
			}
			for i, f := range prog {
				switch f.Code {
				case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
					if f.K%4 != 0 || f.K >= 64 {
						t.Errorf("%s[%d]: load at %d", archName, i, f.K)
					}
				case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
					if i+1+int(max(f.Jt, f.Jf)) >= len(prog) {
						t.Errorf("%s[%d]: jump past the end", archName, i)
					}
				case unix.BPF_RET | unix.BPF_K:
				case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
				default:
					t.Errorf("%s[%d]: unexpected opcode %#x", archName, i, f.Code)
				}
			}
			if last := prog[len(prog)-1]; last.Code != unix.BPF_RET|unix.BPF_K || last.K != allow {
				t.Errorf("%s: program does not end in RET ALLOW: %+v", archName, last)
			}
		}
	}
}

// TestUnlistedSyscallsCacheable walks the program the way the kernel's
// seccomp action cache does (seccomp_is_const_allow, Linux 5.11+), knowing
// only nr and arch: for every syscall that no rule names, the walk must
// reach RET ALLOW without loading an argument, so that the kernel skips the
// filter for those calls altogether.
func TestUnlistedSyscallsCacheable(t *testing.T) {
	for _, archName := range allArches {
		a := arches[archName]
		prog, err := Build(Options{Arch: archName})
		if err != nil {
			t.Fatal(err)
		}
		listed := map[uint32]bool{}
		for _, n := range a.nr {
			listed[n] = true
		}
		for nr := uint32(0); nr < 600; nr++ {
			if listed[nr] {
				continue
			}
			var acc uint32
			for pc := 0; pc < len(prog); pc++ {
				f := prog[pc]
				switch f.Code {
				case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
					switch f.K {
					case offNr:
						acc = nr
					case offArch:
						acc = a.audit
					default:
						t.Fatalf("%s nr %d: loads seccomp_data+%d; the kernel cannot cache it", archName, nr, f.K)
					}
				case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
					pc += int(pick(acc == f.K, f.Jt, f.Jf))
				case unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
					pc += int(pick(acc&f.K != 0, f.Jt, f.Jf))
				case unix.BPF_RET | unix.BPF_K:
					if f.K != allow {
						t.Errorf("%s nr %d: %s", archName, nr, verdict(f.K))
					}
					pc = len(prog)
				}
			}
		}
	}
}

func pick(c bool, a, b uint8) uint8 {
	if c {
		return a
	}
	return b
}

// TestRefusedSet checks that each architecture's program covers exactly the
// brief's deny list: a row dropped from the table, or a syscall missing from
// one architecture's number table, fails here.
func TestRefusedSet(t *testing.T) {
	for _, archName := range allArches {
		var got []string
		for _, g := range groupBySyscall(arches[archName], Options{}) {
			got = append(got, g.rows[0].sys)
		}
		want := slices.Clone(refusedNames)
		if archName == "amd64" {
			want = append(want, x86Only...)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s refuses %v\nwant %v", archName, got, want)
		}
	}
}

// TestTableConsistent checks the table's own rules: each number table names
// only syscalls the table uses, no two syscalls share a number, and a
// syscall is either refused outright by one row or tested by argument only.
func TestTableConsistent(t *testing.T) {
	inTable := map[string]bool{}
	for _, r := range table {
		inTable[r.sys] = true
		if r.why == "" {
			t.Errorf("%s: no why", r.sys)
		}
		if unix.ErrnoName(r.errno) == "" && !r.notifies() {
			t.Errorf("%s: errno %d has no name", r.sys, r.errno)
		}
	}
	for archName, a := range arches {
		seen := map[uint32]string{}
		for name, nr := range a.nr {
			if !inTable[name] {
				t.Errorf("%s: number for %s, which no rule uses", archName, name)
			}
			if prev, dup := seen[nr]; dup {
				t.Errorf("%s: %s and %s both %d", archName, prev, name, nr)
			}
			seen[nr] = name
		}
		for _, g := range groupBySyscall(a, Options{}) {
			uncond := 0
			for _, r := range g.rows {
				if r.test == nil {
					uncond++
				}
			}
			if uncond > 0 && len(g.rows) > 1 {
				t.Errorf("%s: refused outright and also by argument", g.rows[0].sys)
			}
		}
	}
}

func TestBuildArch(t *testing.T) {
	_, err := Build(Options{Arch: "mips64"})
	if !errors.Is(err, ErrUnsupportedArch) {
		t.Errorf("Build(mips64): %v, want ErrUnsupportedArch", err)
	}
	if Rules(Options{Arch: "mips64"}) != nil {
		t.Error("Rules(mips64) is not nil")
	}
	if _, ok := arches[runtime.GOARCH]; !ok {
		t.Skipf("no filter for GOARCH %s", runtime.GOARCH)
	}
	def, err := Build(Options{})
	if err != nil {
		t.Fatal(err)
	}
	native, _ := Build(Options{Arch: runtime.GOARCH})
	if !slices.Equal(def, native) {
		t.Error(`Build with Arch "" is not Build with runtime.GOARCH`)
	}
}

// TestRules checks that Rules describes what Build does: each listed
// refusal without an argument test is what the program answers for that
// syscall, and AllowUnixSockets removes exactly the socket rules.
func TestRules(t *testing.T) {
	for _, archName := range allArches {
		a := arches[archName]
		strict := Rules(Options{Arch: archName})
		loose := Rules(Options{Arch: archName, AllowUnixSockets: true})
		prog, _ := Build(Options{Arch: archName})
		m := newVM(t, prog)
		var sockets []string
		for _, r := range strict {
			if r.Syscall == "" || r.Errno == "" || r.Why == "" {
				t.Errorf("%s: incomplete rule %+v", archName, r)
			}
			if r.Syscall == "socket" {
				sockets = append(sockets, r.Arg)
			}
			if r.Syscall == "*" || r.Arg != "" {
				continue
			}
			got := m.run(t, seccompData{nr: a.nr[r.Syscall], arch: a.audit})
			if verdict(got) != "ERRNO|"+r.Errno {
				t.Errorf("%s: rule %s %s, program says %s", archName, r.Syscall, r.Errno, verdict(got))
			}
		}
		if want := []string{"domain == AF_UNIX", "domain == AF_VSOCK"}; !slices.Equal(sockets, want) {
			t.Errorf("%s: socket rules %q, want %q", archName, sockets, want)
		}
		if len(loose) != len(strict)-3 || slices.ContainsFunc(loose, func(r Rule) bool { return r.Syscall == "socket" || r.Syscall == "socketpair" }) {
			t.Errorf("%s: AllowUnixSockets rules: %d of %d, socket rules left", archName, len(loose), len(strict))
		}
		kills := 0
		for _, r := range strict {
			if r.Errno == "KILL_PROCESS" {
				kills++
			}
		}
		if want := map[string]int{"amd64": 2, "arm64": 1}[archName]; kills != want {
			t.Errorf("%s: %d KILL_PROCESS rules, want %d", archName, kills, want)
		}
	}
}

// checkNumbers compares an architecture's deny-list and allowed-syscall
// tables with want (unix.SYS_* of that architecture), both ways.
func checkNumbers(t *testing.T, archName string, want map[string]uint32) {
	t.Helper()
	got := map[string]uint32{}
	for n, nr := range arches[archName].nr {
		got[n] = nr
	}
	for n, nr := range allowedNr[archName] {
		got[n] = nr
	}
	for n, w := range want {
		if g, ok := got[n]; !ok {
			t.Errorf("%s: no number for %s", archName, n)
		} else if g != w {
			t.Errorf("%s: %s is %d, unix.SYS_%s is %d", archName, n, g, n, w)
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			t.Errorf("%s: %s is not checked against unix.SYS_*", archName, n)
		}
	}
}

// reference decides a call straight from the table, the way the program is
// meant to: the model the fuzz target holds the program to.
func reference(a *arch, o Options, d seccompData) uint32 {
	if d.arch != a.audit || a.x32 && d.nr&x32SyscallBit != 0 {
		return kill
	}
	for _, r := range table {
		if !r.appliesTo(a, o) || a.nr[r.sys] != d.nr {
			continue
		}
		if r.test == nil {
			return refuse(r.errno)
		}
		v := uint32(d.args[r.test.arg])
		if r.test.matches(v) {
			return refuse(r.errno)
		}
	}
	return allow
}

// FuzzFilter holds both architectures' programs, with and without
// AllowUnixSockets, to the reference model on any seccomp_data. The fuzzer
// picks the number and argument values from the table by index, so it
// meets the interesting cases without guessing 32-bit constants, and adds
// its own high halves and noise.
func FuzzFilter(f *testing.F) {
	f.Add(uint8(0), uint16(0), uint8(0), uint32(0), uint64(0), uint64(0), uint64(0))
	f.Add(uint8(1), uint16(3), uint8(1), uint32(0), uint64(1<<32), uint64(5), uint64(0))
	f.Add(uint8(2), uint16(2), uint8(2), uint32(x32SyscallBit), uint64(0), uint64(0), uint64(0))
	f.Add(uint8(3), uint16(6), uint8(3), uint32(0), uint64(0xffff_ffff_0000_0000), uint64(0), uint64(1))

	type variant struct {
		a    *arch
		o    Options
		prog vm
	}
	var vs []variant
	for _, name := range allArches {
		for _, allowUnix := range []bool{false, true} {
			o := Options{Arch: name, AllowUnixSockets: allowUnix}
			prog, err := Build(o)
			if err != nil {
				f.Fatal(err)
			}
			vs = append(vs, variant{arches[name], o, newVM(f, prog)})
		}
	}
	var vals []uint32
	for _, r := range table {
		if r.test != nil {
			vals = append(vals, r.test.val, r.test.val|0x100)
		}
	}

	f.Fuzz(func(t *testing.T, which uint8, sysIdx uint16, archSel uint8, nrXor uint32, hi, noise, argSel uint64) {
		v := vs[int(which)%len(vs)]
		d := seccompData{arch: v.a.audit}
		switch archSel % 4 {
		case 1:
			d.arch = unix.AUDIT_ARCH_I386
		case 2:
			d.arch ^= uint32(noise)
		}
		r := table[int(sysIdx)%len(table)]
		d.nr = v.a.nr[r.sys] ^ nrXor
		for i := range d.args {
			d.args[i] = hi<<32 | uint64(vals[int(argSel>>(8*i))%len(vals)])
			if noise>>i&1 != 0 {
				d.args[i] ^= noise
			}
		}
		if got, want := v.prog.run(t, d), reference(v.a, v.o, d); got != want {
			t.Errorf("%+v on %+v: program %s, table %s", v.o, d, verdict(got), verdict(want))
		}
	})
}
