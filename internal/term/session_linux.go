//go:build linux

package term

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

const (
	// hangupGrace is how long the processes of an ending session have to
	// exit after SIGHUP before they get SIGKILL. Shells and editors use it
	// to save history and files.
	hangupGrace = time.Second
	// killWait bounds the wait for processes that got SIGKILL, which only a
	// process stuck in the kernel (state D, a dead NFS server) outlasts.
	killWait = 5 * time.Second
	// pollEvery is how often the session's processes are looked for while
	// waiting for them to exit.
	pollEvery = 10 * time.Millisecond
)

// endSession ends the session that cmd leads: SIGHUP to every process in
// it, SIGKILL after hangupGrace to those still alive. It returns when all
// of them are gone and cmd has been waited for, which closes exited.
//
// The whole session, not only cmd's process group: a shell with job
// control puts each job in a process group of its own, and the kernel's
// hangup reaches only the foreground one. The session is found in /proc
// because no system call signals a session.
func endSession(cmd *exec.Cmd, exited <-chan struct{}) error {
	sid := cmd.Process.Pid
	// signal sends sig (0: none, a probe) to the session's processes and
	// reports whether there were any.
	signal := func(sig syscall.Signal) (alive bool) {
		select {
		case <-exited:
		default:
			alive = true
			// Through os.Process (a pidfd), which cannot hit another
			// process if cmd exits and is waited for meanwhile.
			cmd.Process.Signal(sig)
		}
		for _, pid := range sessionMembers(sid) {
			alive = true
			syscall.Kill(pid, sig)
		}
		return alive
	}
	// gone waits up to d for the session to be empty, sending sig to
	// whatever is still in it each time it looks.
	gone := func(sig syscall.Signal, d time.Duration) bool {
		deadline := time.Now().Add(d)
		for signal(sig) {
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(pollEvery)
		}
		return true
	}
	signal(syscall.SIGHUP)
	signal(syscall.SIGCONT) // as the kernel's hangup does: a stopped job acts on SIGHUP only once it runs
	if gone(0, hangupGrace) || gone(syscall.SIGKILL, killWait) {
		return nil
	}
	return fmt.Errorf("term: processes of session %d still alive %v after SIGKILL: %v", sid, killWait, sessionMembers(sid))
}

// sessionMembers lists the live processes of session sid other than its
// leader, whose pid is sid.
func sessionMembers(sid int) []int {
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range dir {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == sid {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone since ReadDir
		}
		if s, state, err := parseStat(stat); err == nil && s == sid && state != 'Z' {
			pids = append(pids, pid)
		}
	}
	return pids
}

// parseStat reads the session and the state of a process from the text of
// /proc/<pid>/stat: "pid (comm) state ppid pgrp session ...". comm is the
// program's name, which may hold spaces and parentheses; it ends at the
// last ')'.
func parseStat(stat []byte) (session int, state byte, err error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, errors.New("no ')' after comm")
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 4 || len(f[0]) != 1 {
		return 0, 0, errors.New("fewer than 4 fields after comm")
	}
	session, err = strconv.Atoi(string(f[3]))
	if err != nil {
		return 0, 0, fmt.Errorf("session: %w", err)
	}
	return session, f[0][0], nil
}
