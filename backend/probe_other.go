//go:build !linux

package backend

func probeNative(goos string) ProbeResult {
	if goos == "darwin" {
		// macOS has the sandbox (Seatbelt), but this build of cordon cannot
		// drive it yet: saying "available" would only fail at launch.
		return ProbeResult{Available: false, Description: "Seatbelt (sandbox-exec) — the macOS kernel's sandbox",
			Hint: "cordon's Seatbelt profiles are not in this build yet; sessions run on none"}
	}
	return ProbeResult{Available: false, Description: "no OS-native sandbox",
		Hint: "cordon has a native sandbox for Linux (bubblewrap) and macOS (Seatbelt); none for " + goos}
}
