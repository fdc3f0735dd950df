//go:build !linux

package backend

func probeNative(goos string) ProbeResult {
	if goos == "darwin" {
		return ProbeResult{Available: true, Description: "Seatbelt (sandbox-exec) — the macOS kernel's sandbox"}
	}
	return ProbeResult{Available: false, Description: "no OS-native sandbox",
		Hint: "cordon has a native sandbox for Linux (bubblewrap) and macOS (Seatbelt); none for " + goos}
}
