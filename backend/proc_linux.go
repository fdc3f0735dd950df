//go:build linux

package backend

import "syscall"

// procAttr: a process group of its own, and SIGKILL when the daemon dies,
// however it dies. For native that ends the whole sandbox (the runner's
// bubblewrap dies with the runner, and the sandbox with its PID 1); for
// none, only the command itself: what it started in the background
// outlives a daemon killed with SIGKILL (Destroy and a normal shutdown kill
// the whole group).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
