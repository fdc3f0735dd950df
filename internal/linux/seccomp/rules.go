//go:build linux

package seccomp

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// Rule is one refusal of the filter, as data for the docs and for
// `cordon explain`.
type Rule struct {
	Syscall string // "socket"; "*" for the architecture checks, which match every call
	Arg     string // the argument test, e.g. "domain == AF_UNIX"; "" when every call is refused
	Errno   string // "EPERM" or "ENOSYS": what the call fails with; "KILL_PROCESS": the kernel kills the process (as by SIGSYS); "USER_NOTIF": the create-time guard decides
	Why     string
}

// Rules lists what Build(o) refuses, in the order the program checks it,
// architecture checks first. It returns nil for an Arch that Build refuses.
func Rules(o Options) []Rule {
	a, _, err := archFor(o)
	if err != nil {
		return nil
	}
	out := []Rule{{
		Syscall: "*",
		Arg:     fmt.Sprintf("arch != %s", a.auditName),
		Errno:   "KILL_PROCESS",
		Why:     "a call through another ABI (32-bit, compat) has other syscall numbers, so none of the checks below would apply to it",
	}}
	if a.x32 {
		out = append(out, Rule{
			Syscall: "*",
			Arg:     "nr & __X32_SYSCALL_BIT (0x40000000) != 0",
			Errno:   "KILL_PROCESS",
			Why:     "the x32 ABI shares the x86_64 arch value but adds this bit to every number, which would slip past the number checks below",
		})
	}
	for _, r := range table {
		if !r.appliesTo(a, o) {
			continue
		}
		arg := ""
		if r.test != nil {
			arg = r.test.String()
		}
		errno := unix.ErrnoName(r.errno)
		if r.notifies() {
			errno = "USER_NOTIF"
		}
		out = append(out, Rule{Syscall: r.sys, Arg: arg, Errno: errno, Why: r.why})
	}
	return out
}

// rule is one row of the deny list. A row whose syscall is missing from an
// architecture's number table does not exist there (iopl on arm64) and is
// left out of that architecture's program.
type rule struct {
	sys  string
	test *argTest // nil: refuse every call
	// unixSocket rows are dropped by Options.AllowUnixSockets, and by
	// Options.UnixPaths, which has rows of its own (unixPaths).
	unixSocket bool
	unixPaths  bool
	// guard rows exist only with Options.Guard. Their errno is 0 when the
	// call goes to the guard (SECCOMP_RET_USER_NOTIF): they are not
	// refusals.
	guard bool
	errno unix.Errno
	why   string
}

func (r rule) appliesTo(a *arch, o Options) bool {
	_, ok := a.nr[r.sys]
	unixPaths := o.UnixPaths && o.Guard && !o.AllowUnixSockets
	switch {
	case !ok:
		return false
	case r.unixSocket && (o.AllowUnixSockets || unixPaths && r.sys == "socket" && r.test.val == unix.AF_UNIX):
		return false
	case r.unixPaths:
		return unixPaths
	}
	return !r.guard || o.Guard
}

// notifies: the row hands the call to the guard instead of refusing it.
func (r rule) notifies() bool { return r.guard && r.errno == 0 }

// argTest compares the low 32 bits of one syscall argument. The kernel
// itself uses only those bits of every argument tested here (socket's domain
// and ioctl's request are int and unsigned int in its prototypes; clone's
// flags go through lower_32_bits), so a caller cannot hide a value in the
// high half, and testing that half would only refuse calls the kernel
// treats as harmless.
type argTest struct {
	arg     int    // index into seccomp_data.args
	argName string // the parameter's name in the man page
	op      testOp
	val     uint32
	valName string
	mask    uint32 // opMaskedEq only
}

type testOp int

const (
	opEq       testOp = iota // arg == val
	opAnySet                 // arg & val != 0
	opMaskedEq               // arg & mask == val
	opMaskedNe               // arg & mask != val
)

// matches is the test's meaning, for the reference model and the docs.
func (t *argTest) matches(v uint32) bool {
	switch t.op {
	case opAnySet:
		return v&t.val != 0
	case opMaskedEq:
		return v&t.mask == t.val
	case opMaskedNe:
		return v&t.mask != t.val
	}
	return v == t.val
}

func (t *argTest) String() string {
	switch t.op {
	case opAnySet:
		return fmt.Sprintf("%s & (%s) != 0", t.argName, t.valName)
	case opMaskedEq:
		return fmt.Sprintf("%s & %#x == %s", t.argName, t.mask, t.valName)
	case opMaskedNe:
		return fmt.Sprintf("%s & %#x != %s", t.argName, t.mask, t.valName)
	}
	return fmt.Sprintf("%s == %s", t.argName, t.valName)
}

// Values of the tested arguments. They are the same on amd64 and arm64
// (TIOCSTI and TIOCLINUX come from asm-generic/ioctls.h on both).
const (
	// sockTypeMask keeps the socket type and drops SOCK_NONBLOCK and
	// SOCK_CLOEXEC (include/linux/net.h: SOCK_TYPE_MASK).
	sockTypeMask = 0xf

	tiocsti   = 0x5412
	tioclinux = 0x541c

	// CLONE_NEWTIME (0x80) lies inside clone's exit-signal byte (CSIGNAL),
	// where it can only stand for a signal number of 128 or more, which
	// does not exist; testing it refuses no real call.
	cloneNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
		unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWTIME
	cloneNamespacesName = "CLONE_NEWNS|CLONE_NEWCGROUP|CLONE_NEWUTS|CLONE_NEWIPC|CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNET|CLONE_NEWTIME"
)

// Open flags the guard's filter tests; the same on amd64 and arm64
// (asm-generic/fcntl.h; __O_TMPFILE is O_TMPFILE without O_DIRECTORY).
const (
	oCreat   = 0o100
	oTmpfile = 0o20000000
)

const (
	whyCreate    = "creates or renames a name: the create-time guard checks the final path against the filename rules and performs the call itself"
	whyNamespace = "a new namespace could undo the sandbox's mounts and network isolation, and a user namespace opens kernel interfaces that are otherwise root-only"
	whyMount     = "changes the mount tree that is the sandbox's view of the file system"
	whyKeyring   = "the kernel keyring is not isolated by the sandbox: it can hold the user's credentials and is shared with processes outside"
	whyModule    = "loads or unloads kernel code"
	whyQuota     = "changes file system quotas for every user of the file system"
)

// table is the deny list, in the order the program checks it. The rows with
// an argument test come first: ioctl and clone are frequent, and the kernel
// cannot cache a verdict for them, so they should not have to walk past every
// other number. Every other call's verdict depends on its number only, which
// lets the kernel (5.11+) cache "allowed" for all unlisted syscalls and skip
// the filter for them.
var table = []rule{
	// The create-time guard's calls (Options.Guard). open and openat come
	// first: they are the most frequent calls of all, and only those with
	// O_CREAT or O_TMPFILE leave the kernel; the rest are allowed after
	// two comparisons.
	{sys: "openat", test: &argTest{2, "flags", opAnySet, oCreat | oTmpfile, "O_CREAT|__O_TMPFILE", 0}, guard: true, why: whyCreate},
	{sys: "open", test: &argTest{1, "flags", opAnySet, oCreat | oTmpfile, "O_CREAT|__O_TMPFILE", 0}, guard: true, why: whyCreate},
	{sys: "openat2", guard: true, errno: unix.ENOSYS,
		why: "its flags sit behind a pointer, so the filter cannot tell a creation from a read; ENOSYS makes programs fall back to openat, which is checked"},
	{sys: "creat", guard: true, why: whyCreate},
	{sys: "mkdir", guard: true, why: whyCreate},
	{sys: "mkdirat", guard: true, why: whyCreate},
	{sys: "mknod", guard: true, why: whyCreate},
	{sys: "mknodat", guard: true, why: whyCreate},
	{sys: "rename", guard: true, why: whyCreate},
	{sys: "renameat", guard: true, why: whyCreate},
	{sys: "renameat2", guard: true, why: whyCreate},
	{sys: "link", guard: true, why: whyCreate},
	{sys: "linkat", guard: true, why: whyCreate},
	{sys: "symlink", guard: true, why: whyCreate},
	{sys: "symlinkat", guard: true, why: whyCreate},
	// Unix sockets by path (Options.UnixPaths): socket(AF_UNIX) goes to the
	// guard, which lets stream sockets be made; connect and bind go to it
	// too, for the address behind their pointer.
	{sys: "socket", test: &argTest{0, "domain", opEq, unix.AF_UNIX, "AF_UNIX", 0}, guard: true, unixPaths: true,
		why: "a unix socket reaches services by path; with network.allowUnixSockets the guard allows stream sockets and checks each connect against the list"},
	{sys: "connect", guard: true, unixPaths: true,
		why: "the address is behind a pointer: the guard reads it, checks a unix socket path against network.allowUnixSockets and connects for the caller"},

	// bind always: binding a unix socket creates a name (even a socket
	// from socketpair, which the filter allows, can be bound to a path).
	{sys: "bind", guard: true,
		why: "binding a unix socket creates a name: the guard checks it like any creation and binds for the caller"},

	// umask is passed through (its argument is a value, not a pointer):
	// the guard only notes the new mask, to create files as the caller would.
	{sys: "umask", guard: true, why: "the guard creates files for the caller and must apply the caller's umask"},

	{sys: "ioctl", test: &argTest{1, "request", opEq, tiocsti, "TIOCSTI", 0}, errno: unix.EPERM,
		why: "pushes characters into a terminal's input; on the user's terminal they would run as commands outside the sandbox"},
	{sys: "ioctl", test: &argTest{1, "request", opEq, tioclinux, "TIOCLINUX", 0}, errno: unix.EPERM,
		why: "on a Linux console, pastes the selection into the terminal's input: the same escape as TIOCSTI"},
	{sys: "clone", test: &argTest{0, "flags", opAnySet, cloneNamespaces, cloneNamespacesName, 0}, errno: unix.EPERM,
		why: whyNamespace},
	{sys: "clone3", errno: unix.ENOSYS,
		why: "its flags sit behind a pointer that seccomp cannot read, so the namespace flags cannot be checked; ENOSYS makes glibc and Go fall back to clone, which is checked"},
	{sys: "socket", test: &argTest{0, "domain", opEq, unix.AF_UNIX, "AF_UNIX", 0}, unixSocket: true, errno: unix.EPERM,
		why: "a unix socket reaches services outside the sandbox by path (a container daemon, ssh-agent, D-Bus) around the network proxy; seccomp cannot read the path, so creating one is refused (network.allowAllUnixSockets allows it)"},
	// A datagram or seqpacket socket from socketpair can still sendto() or
	// connect() to a socket by path (/dev/log, a daemon's datagram socket),
	// and the kernel turns SOCK_RAW into SOCK_DGRAM; a stream pair is
	// connected for good and reaches nothing else. So only stream pairs are
	// allowed. Only AF_UNIX implements socketpair: the type alone decides.
	{sys: "socketpair", test: &argTest{1, "type", opMaskedNe, unix.SOCK_STREAM, "SOCK_STREAM", sockTypeMask}, unixSocket: true, errno: unix.EPERM,
		why: "a unix socket pair that is not a stream (datagram, seqpacket, raw) can send to any unix socket by path, around the refusal of socket(AF_UNIX)"},
	{sys: "socket", test: &argTest{0, "domain", opEq, unix.AF_VSOCK, "AF_VSOCK", 0}, unixSocket: true, errno: unix.EPERM,
		why: "a vsock reaches the hypervisor and other virtual machines around the network namespace and the proxy (network.allowAllUnixSockets allows it)"},

	{sys: "io_uring_setup", errno: unix.EPERM, why: "work submitted through io_uring is not seen by seccomp, so it could open the sockets this filter refuses"},
	{sys: "io_uring_enter", errno: unix.EPERM, why: "work submitted through io_uring is not seen by seccomp"},
	{sys: "io_uring_register", errno: unix.EPERM, why: "work submitted through io_uring is not seen by seccomp"},

	{sys: "unshare", errno: unix.EPERM, why: whyNamespace},
	{sys: "setns", errno: unix.EPERM, why: "joining another namespace leaves the sandbox's"},

	{sys: "ptrace", errno: unix.EPERM, why: "a tracer can read and take over another process, and rewrite its syscalls after seccomp checked them"},
	{sys: "process_vm_readv", errno: unix.EPERM, why: "reads another process's memory"},
	{sys: "process_vm_writev", errno: unix.EPERM, why: "writes another process's memory"},
	{sys: "pidfd_getfd", errno: unix.EPERM, why: "takes a copy of another process's file descriptor"},

	{sys: "bpf", errno: unix.EPERM, why: "loads programs into the kernel: a large attack surface"},
	{sys: "keyctl", errno: unix.EPERM, why: whyKeyring},
	{sys: "add_key", errno: unix.EPERM, why: whyKeyring},
	{sys: "request_key", errno: unix.EPERM, why: whyKeyring},
	{sys: "userfaultfd", errno: unix.EPERM, why: "lets a process stall the kernel in the middle of a copy, the usual tool for exploiting kernel races"},
	{sys: "perf_event_open", errno: unix.EPERM, why: "observes other processes and the kernel: a large attack surface"},

	{sys: "mount", errno: unix.EPERM, why: whyMount},
	{sys: "umount2", errno: unix.EPERM, why: whyMount},
	{sys: "pivot_root", errno: unix.EPERM, why: whyMount},
	{sys: "chroot", errno: unix.EPERM, why: whyMount},
	{sys: "fsopen", errno: unix.EPERM, why: whyMount},
	{sys: "fsconfig", errno: unix.EPERM, why: whyMount},
	{sys: "fsmount", errno: unix.EPERM, why: whyMount},
	{sys: "fspick", errno: unix.EPERM, why: whyMount},
	{sys: "move_mount", errno: unix.EPERM, why: whyMount},
	{sys: "open_tree", errno: unix.EPERM, why: whyMount},
	{sys: "open_tree_attr", errno: unix.EPERM, why: whyMount},
	{sys: "mount_setattr", errno: unix.EPERM, why: whyMount},

	{sys: "kexec_load", errno: unix.EPERM, why: "replaces the running kernel"},
	{sys: "kexec_file_load", errno: unix.EPERM, why: "replaces the running kernel"},
	{sys: "init_module", errno: unix.EPERM, why: whyModule},
	{sys: "finit_module", errno: unix.EPERM, why: whyModule},
	{sys: "delete_module", errno: unix.EPERM, why: whyModule},
	{sys: "open_by_handle_at", errno: unix.EPERM, why: "opens a file by its handle, around the mount tree (the \"shocker\" container escape)"},
	{sys: "name_to_handle_at", errno: unix.EPERM, why: "makes the handles open_by_handle_at takes"},
	{sys: "swapon", errno: unix.EPERM, why: "changes the system's swap"},
	{sys: "swapoff", errno: unix.EPERM, why: "changes the system's swap"},
	{sys: "reboot", errno: unix.EPERM, why: "reboots or halts the machine"},
	{sys: "acct", errno: unix.EPERM, why: "switches process accounting for the whole system"},
	{sys: "quotactl", errno: unix.EPERM, why: whyQuota},
	{sys: "quotactl_fd", errno: unix.EPERM, why: whyQuota},
	{sys: "iopl", errno: unix.EPERM, why: "gives direct access to the machine's I/O ports"},
	{sys: "ioperm", errno: unix.EPERM, why: "gives direct access to the machine's I/O ports"},
	{sys: "syslog", errno: unix.EPERM, why: "reads the kernel log (kernel addresses help exploits) and can clear it"},
	{sys: "vhangup", errno: unix.EPERM, why: "hangs up the terminal, which the sandbox shares with the user's shell"},
	{sys: "lookup_dcookie", errno: unix.EPERM, why: "an old kernel profiling interface, of no use to a command"},
	{sys: "uselib", errno: unix.EPERM, why: "an obsolete loader call, of no use to a command and an old source of kernel bugs"},
	{sys: "nfsservctl", errno: unix.EPERM, why: "obsolete NFS server control (gone since Linux 3.1); refused so the number stays closed"},
}

// SyscallName returns the name the filter knows syscall nr by on o's
// architecture, or "".
func SyscallName(o Options, nr uint32) string {
	a, _, err := archFor(o)
	if err != nil {
		return ""
	}
	return a.name[nr]
}

// arch describes one architecture the filter is built for.
type arch struct {
	audit     uint32 // seccomp_data.arch of a native call
	auditName string
	// x32: numbers with __X32_SYSCALL_BIT set are x32 calls, which arrive
	// with the x86_64 arch value.
	x32  bool
	nr   map[string]uint32
	name map[uint32]string // nr inverted, filled at init
}

func init() {
	for _, a := range arches {
		a.name = make(map[uint32]string, len(a.nr))
		for n, nr := range a.nr {
			a.name[nr] = n
		}
	}
}

// Syscall numbers, per architecture: the unix.SYS_* constants only describe
// the architecture this binary was built for, and Build takes any. amd64
// numbers are from arch/x86/entry/syscalls/syscall_64.tbl; arm64 uses the
// generic table, include/uapi/asm-generic/unistd.h, which has no iopl,
// ioperm or uselib. Tests compare each table with unix.SYS_* when run on
// that architecture.
var arches = map[string]*arch{
	"amd64": {
		audit:     unix.AUDIT_ARCH_X86_64,
		auditName: "AUDIT_ARCH_X86_64",
		x32:       true,
		nr: map[string]uint32{
			"open":              2,
			"openat":            257,
			"openat2":           437,
			"creat":             85,
			"mkdir":             83,
			"mkdirat":           258,
			"mknod":             133,
			"mknodat":           259,
			"rename":            82,
			"renameat":          264,
			"renameat2":         316,
			"link":              86,
			"linkat":            265,
			"symlink":           88,
			"symlinkat":         266,
			"umask":             95,
			"connect":           42,
			"bind":              49,
			"ioctl":             16,
			"clone":             56,
			"clone3":            435,
			"socket":            41,
			"socketpair":        53,
			"io_uring_setup":    425,
			"io_uring_enter":    426,
			"io_uring_register": 427,
			"unshare":           272,
			"setns":             308,
			"ptrace":            101,
			"process_vm_readv":  310,
			"process_vm_writev": 311,
			"pidfd_getfd":       438,
			"bpf":               321,
			"keyctl":            250,
			"add_key":           248,
			"request_key":       249,
			"userfaultfd":       323,
			"perf_event_open":   298,
			"mount":             165,
			"umount2":           166,
			"pivot_root":        155,
			"chroot":            161,
			"fsopen":            430,
			"fsconfig":          431,
			"fsmount":           432,
			"fspick":            433,
			"move_mount":        429,
			"open_tree":         428,
			"open_tree_attr":    467,
			"mount_setattr":     442,
			"kexec_load":        246,
			"kexec_file_load":   320,
			"init_module":       175,
			"finit_module":      313,
			"delete_module":     176,
			"open_by_handle_at": 304,
			"name_to_handle_at": 303,
			"swapon":            167,
			"swapoff":           168,
			"reboot":            169,
			"acct":              163,
			"quotactl":          179,
			"quotactl_fd":       443,
			"iopl":              172,
			"ioperm":            173,
			"syslog":            103,
			"vhangup":           153,
			"lookup_dcookie":    212,
			"uselib":            134,
			"nfsservctl":        180,
		},
	},
	"arm64": {
		audit:     unix.AUDIT_ARCH_AARCH64,
		auditName: "AUDIT_ARCH_AARCH64",
		nr: map[string]uint32{
			"openat":            56,
			"openat2":           437,
			"mkdirat":           34,
			"mknodat":           33,
			"renameat":          38,
			"renameat2":         276,
			"linkat":            37,
			"symlinkat":         36,
			"umask":             166,
			"connect":           203,
			"bind":              200,
			"ioctl":             29,
			"clone":             220,
			"clone3":            435,
			"socket":            198,
			"socketpair":        199,
			"io_uring_setup":    425,
			"io_uring_enter":    426,
			"io_uring_register": 427,
			"unshare":           97,
			"setns":             268,
			"ptrace":            117,
			"process_vm_readv":  270,
			"process_vm_writev": 271,
			"pidfd_getfd":       438,
			"bpf":               280,
			"keyctl":            219,
			"add_key":           217,
			"request_key":       218,
			"userfaultfd":       282,
			"perf_event_open":   241,
			"mount":             40,
			"umount2":           39,
			"pivot_root":        41,
			"chroot":            51,
			"fsopen":            430,
			"fsconfig":          431,
			"fsmount":           432,
			"fspick":            433,
			"move_mount":        429,
			"open_tree":         428,
			"open_tree_attr":    467,
			"mount_setattr":     442,
			"kexec_load":        104,
			"kexec_file_load":   294,
			"init_module":       105,
			"finit_module":      273,
			"delete_module":     106,
			"open_by_handle_at": 265,
			"name_to_handle_at": 264,
			"swapon":            224,
			"swapoff":           225,
			"reboot":            142,
			"acct":              89,
			"quotactl":          60,
			"quotactl_fd":       443,
			"syslog":            116,
			"vhangup":           58,
			"lookup_dcookie":    18,
			"nfsservctl":        42,
		},
	},
}

// archFor resolves o.Arch ("" is the running architecture).
func archFor(o Options) (*arch, string, error) {
	name := o.Arch
	if name == "" {
		name = runtime.GOARCH
	}
	a, ok := arches[name]
	if !ok {
		return nil, name, fmt.Errorf("%w %q: cordon's filter is built for amd64 and arm64", ErrUnsupportedArch, name)
	}
	return a, name, nil
}
