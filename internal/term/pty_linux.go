//go:build linux

package term

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// OpenPTY opens a new pseudo-terminal and returns both of its ends: the
// master, which the terminal emulator (here, Serve) reads and writes, and
// the slave, which a program uses as its terminal.
//
// The master is in non-blocking mode under Go's poller, so its Read can be
// ended by a deadline or Close; calling its Fd method would undo that.
func OpenPTY() (master, slave *os.File, err error) {
	// O_NOCTTY: a caller that is a session leader without a terminal (a
	// daemon under systemd) would otherwise take this one as its own.
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("term: %w", err)
	}
	var n uint32
	err = control(master, func(fd int) error {
		// A new terminal is locked so that no one opens its slave before
		// its owner is ready (grantpt has nothing to do on devpts).
		if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
			return fmt.Errorf("unlock (TIOCSPTLCK): %w", err)
		}
		var err error
		n, err = unix.IoctlGetUint32(fd, unix.TIOCGPTN)
		if err != nil {
			return fmt.Errorf("get number (TIOCGPTN): %w", err)
		}
		return nil
	})
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("term: /dev/ptmx: %w", err)
	}
	name := "/dev/pts/" + strconv.FormatUint(uint64(n), 10)
	// Opened by hand, not with os.OpenFile, so that the slave stays in
	// blocking mode: the program that gets it expects a blocking terminal.
	fd, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("term: open %s: %w", name, err)
	}
	return master, os.NewFile(uintptr(fd), name), nil
}

// Start runs cmd on a new pseudo-terminal of cols×rows and returns the
// terminal's master. The command's stdin, stdout and stderr are the
// terminal; it runs in a session of its own (SysProcAttr.Setsid, Setctty,
// Ctty; its other SysProcAttr fields are kept, and Setpgid, Foreground and
// Noctty, which contradict these, must be left unset) in which the
// terminal is its controlling terminal.
//
// The caller owns the master and must Wait for cmd; Serve does both.
func Start(cmd *exec.Cmd, cols, rows uint16) (*os.File, error) {
	master, slave, err := OpenPTY()
	if err != nil {
		return nil, err
	}
	// The child has its own copies. Ours would keep the terminal open after
	// the child's session is gone, and the master would never read its end.
	defer slave.Close()
	if err := Resize(master, cols, rows); err != nil {
		master.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	cmd.SysProcAttr.Setctty = true
	cmd.SysProcAttr.Ctty = 0 // a descriptor number in the child: its stdin, the slave
	if err := cmd.Start(); err != nil {
		master.Close()
		return nil, fmt.Errorf("term: %w", err)
	}
	return master, nil
}

// Resize sets the window size of the terminal whose master is given; the
// program on it gets SIGWINCH.
func Resize(master *os.File, cols, rows uint16) error {
	if cols == 0 || rows == 0 {
		return fmt.Errorf("term: window size %dx%d: columns and rows must be at least 1", cols, rows)
	}
	err := control(master, func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: rows})
	})
	if err != nil {
		return fmt.Errorf("term: resize %s to %dx%d: %w", master.Name(), cols, rows, err)
	}
	return nil
}

// control runs op on f's descriptor. It exists because f.Fd() would put a
// pollable file back in blocking mode for good, and Serve could then no
// longer interrupt a Read of the master.
func control(f *os.File, op func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	if err := rc.Control(func(fd uintptr) { opErr = op(int(fd)) }); err != nil {
		return err
	}
	return opErr
}
