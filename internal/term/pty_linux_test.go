//go:build linux

package term

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitLong bounds every wait for a terminal's output. It is far longer than
// any of them takes, so that a loaded machine does not fail the tests.
const waitLong = 10 * time.Second

// readToEnd reads a terminal's output until the other end is closed (the
// master reads EIO), as it is when the program on it has exited.
func readToEnd(t *testing.T, master *os.File) string {
	t.Helper()
	master.SetReadDeadline(time.Now().Add(waitLong))
	var out strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := master.Read(buf)
		out.Write(buf[:n])
		if errors.Is(err, syscall.EIO) || err == io.EOF {
			return out.String()
		}
		if err != nil {
			t.Fatalf("reading the terminal: %v; output so far: %q", err, out.String())
		}
	}
}

func TestOpenPTY(t *testing.T) {
	master, slave, err := OpenPTY()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer slave.Close()

	if !strings.HasPrefix(slave.Name(), "/dev/pts/") {
		t.Errorf("slave is %s, want /dev/pts/N", slave.Name())
	}
	// The line discipline is in between: "\n" written to the slave reads
	// as "\r\n" (onlcr) at the master. The deadline works only because the
	// master is under Go's poller.
	if _, err := slave.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	master.SetReadDeadline(time.Now().Add(waitLong))
	buf := make([]byte, 64)
	n, err := io.ReadAtLeast(master, buf, len("ping\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(buf[:n]); got != "ping\r\n" {
		t.Errorf("master read %q, want %q", got, "ping\r\n")
	}
}

func TestStart(t *testing.T) {
	tests := []struct {
		name, script string
		cols, rows   uint16
		want         string
	}{
		{"size", "stty size", 80, 24, "24 80"},
		{"other size", "stty size", 132, 50, "50 132"},
		{"stdin, stdout and stderr are the terminal", "test -t 0 && test -t 1 && test -t 2 && echo tty", 80, 24, "tty"},
		// /dev/tty opens only in a process that has a controlling terminal.
		{"controlling terminal", ": </dev/tty && echo ctty", 80, 24, "ctty"},
		{"session leader", `test "$(cut -d" " -f6 /proc/$$/stat)" -eq $$ && echo leader`, 80, 24, "leader"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("/bin/sh", "-c", tt.script)
			master, err := Start(cmd, tt.cols, tt.rows)
			if err != nil {
				t.Fatal(err)
			}
			defer master.Close()
			out := readToEnd(t, master)
			if err := cmd.Wait(); err != nil {
				t.Errorf("%s: %v; output %q", tt.script, err, out)
			}
			if strings.TrimSpace(out) != tt.want {
				t.Errorf("%s printed %q, want %q", tt.script, out, tt.want)
			}
		})
	}
}

func TestResize(t *testing.T) {
	// The script waits for a line, which is sent after the resize.
	cmd := exec.Command("/bin/sh", "-c", "read line; stty size")
	master, err := Start(cmd, 80, 24)
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	if err := Resize(master, 100, 40); err != nil {
		t.Fatal(err)
	}
	if _, err := master.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	out := readToEnd(t, master)
	cmd.Wait()
	if !strings.Contains(out, "40 100") {
		t.Errorf("stty size after Resize(100, 40) printed %q, want 40 100", out)
	}
}

func TestResizeRefusesZero(t *testing.T) {
	master, slave, err := OpenPTY()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer slave.Close()
	for _, size := range [][2]uint16{{0, 24}, {80, 0}} {
		if err := Resize(master, size[0], size[1]); err == nil {
			t.Errorf("Resize(%d, %d) succeeded, want an error", size[0], size[1])
		}
	}
}

func TestStartNotFound(t *testing.T) {
	master, err := Start(exec.Command("/nonexistent/program"), 80, 24)
	if err == nil {
		master.Close()
		t.Fatal("Start of a missing program succeeded")
	}
	if !strings.Contains(err.Error(), "/nonexistent/program") {
		t.Errorf("error %q does not name the program", err)
	}
}
