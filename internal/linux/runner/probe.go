//go:build linux

package runner

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/cordon-sandbox/cordon/proxy"
	"github.com/cordon-sandbox/cordon/violation"
	"golang.org/x/sys/unix"
)

// FindBwrap returns the bubblewrap binary: the settings' bwrapPath, or
// bwrap on PATH.
func FindBwrap(configured string) (string, error) {
	if configured != "" {
		if st, err := os.Stat(configured); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%w: bwrapPath %q is not an executable file; fix the path or remove the key to use bwrap from PATH", ErrSetup, configured)
		}
		return configured, nil
	}
	p, err := exec.LookPath("bwrap")
	if err != nil {
		return "", fmt.Errorf("%w: bubblewrap (bwrap) is not installed; install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap) or set bwrapPath in the settings", ErrSetup)
	}
	return p, nil
}

// Probe checks that bubblewrap can build a sandbox here: it starts an
// empty one. The error says why not and how to fix it.
func Probe(configured string) error {
	bw, err := FindBwrap(configured)
	if err != nil {
		return err
	}
	out, err := exec.Command(bw, "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
		"--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "/bin/true").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s (%s)%s", ErrSetup, strings.TrimSpace(string(out)), err, Diagnose())
	}
	return nil
}

// Diagnose explains the usual reasons bubblewrap cannot create namespaces,
// each with its fix; "" when none applies.
func Diagnose() string {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	var why []string
	if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1" {
		why = append(why, "AppArmor restricts unprivileged user namespaces (Ubuntu 23.10+); fix: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or give bwrap an AppArmor profile that allows userns")
	}
	if read("/proc/sys/kernel/unprivileged_userns_clone") == "0" {
		why = append(why, "unprivileged user namespaces are disabled; fix: sudo sysctl -w kernel.unprivileged_userns_clone=1")
	}
	if v := read("/proc/sys/user/max_user_namespaces"); v == "0" {
		why = append(why, "user namespaces are disabled (user.max_user_namespaces=0); fix: sudo sysctl -w user.max_user_namespaces=15000")
	}
	if _, err := os.Stat("/.dockerenv"); err == nil {
		why = append(why, "inside a container, namespaces are usually blocked by its seccomp profile; run the container with --security-opt seccomp=unconfined (or a profile allowing clone/unshare) or --privileged")
	}
	if len(why) == 0 {
		return ""
	}
	return "\n" + strings.Join(why, "\n")
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// forwardExternal serves the bridge when the settings name external
// proxies (httpProxyPort/socksProxyPort): each handed connection is joined
// to that port on the host's loopback, and the external proxy filters.
func forwardExternal(bridge *net.UnixConn, httpPort, socksPort int, sink violation.Sink, command string) {
	srv, err := proxy.NewServer(proxy.Config{Sink: sink, Command: command})
	if err != nil {
		return
	}
	defer srv.Close()
	srv.ServeFDsWith(bridge, func(tag byte, c *net.TCPConn) {
		port := httpPort
		if tag == proxy.TagSOCKS {
			port = socksPort
		}
		if port == 0 {
			c.Close()
			return
		}
		up, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			c.Close()
			return
		}
		proxy.Join(c, up)
	})
}
