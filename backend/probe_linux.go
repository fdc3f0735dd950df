//go:build linux

package backend

import (
	"os"
	"strings"

	"github.com/cordon-sandbox/cordon/internal/linux/guard"
	"github.com/cordon-sandbox/cordon/internal/linux/runner"
	"golang.org/x/sys/unix"
)

const nativeDescription = "bubblewrap — namespace isolation, no kernel boundary"

func probeNative(string) ProbeResult {
	desc := nativeDescription
	if isWSL() {
		desc += " (WSL2)"
	}
	if _, err := runner.FindBwrap(""); err != nil {
		return ProbeResult{Available: false, RequiresInstall: true, Description: desc,
			Hint: "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap)"}
	}
	if err := runner.Probe(""); err != nil {
		return ProbeResult{Available: false, Description: desc, Hint: err.Error()}
	}
	if !guard.KernelSupported(kernelRelease()) {
		return ProbeResult{Available: false, Description: desc,
			Hint: "the create-time guard needs Linux " + guard.MinKernel + " or newer (this kernel is " + kernelRelease() + "); without it the dispatch policy (no new .env, *.key, *.pem) cannot be enforced"}
	}
	return ProbeResult{Available: true, Description: desc}
}

func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

func isWSL() bool {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	return err == nil && strings.Contains(strings.ToLower(string(b)), "microsoft")
}
