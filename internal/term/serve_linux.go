//go:build linux

package term

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/net/websocket"
)

const (
	// drainWait bounds the wait for the last output once the session's
	// processes are gone. Only a process outside the session that holds the
	// terminal open makes it expire.
	drainWait = time.Second
	// writeWait bounds each of the last writes to a client that does not
	// read.
	writeWait = 2 * time.Second
)

// Serve bridges the terminal of cmd, started by Start with master as its
// master, to the WebSocket connection ws, in the protocol of the package
// comment, until the process exits, the client goes away or ctx is
// cancelled. Then it ends the session (SIGHUP, then SIGKILL), waits for
// cmd, sends the exit frame, and closes ws and master, whatever the reason
// and the outcome. The caller must not Wait for cmd itself.
//
// master must be as Start returned it: after a call of its Fd method, Serve
// could not stop reading it, and would hang when a process outside the
// session holds the terminal open.
//
// Serve returns nil when the process exited or the client went away,
// ctx.Err() when ctx was cancelled, and an error when the process could
// not be waited for or would not die.
func Serve(ctx context.Context, ws *websocket.Conn, master *os.File, cmd *exec.Cmd) error {
	if cmd.Process == nil {
		ws.Close()
		master.Close()
		return errors.New("term: Serve: the command has not been started; start it with term.Start")
	}

	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	outDone := make(chan struct{})
	go func() {
		pumpOutput(ws, master)
		close(outDone)
	}()
	inDone := make(chan struct{})
	go func() {
		pumpInput(ws, master)
		close(inDone)
	}()

	var err error
	select {
	case <-exited:
	case <-inDone:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if kerr := endSession(cmd, exited); kerr != nil {
		err = kerr
	}
	<-exited // at once unless cmd would not die; then waiting is all there is to do

	// With the session gone the terminal is closed at the other end: the
	// output pump reads what is left and stops.
	select {
	case <-outDone:
	case <-time.After(drainWait):
		master.SetReadDeadline(time.Now())
		ws.SetWriteDeadline(time.Now())
		<-outDone
	}

	ws.SetWriteDeadline(time.Now().Add(writeWait))
	if cmd.ProcessState != nil {
		websocket.JSON.Send(ws, exitMessage{Type: "exit", Code: exitCode(cmd.ProcessState)})
	} else {
		err = fmt.Errorf("term: waiting for %s: %w", cmd.Path, waitErr)
		websocket.JSON.Send(ws, errorMessage{Type: "error", Error: err.Error()})
	}
	ws.Close()                     // ends the input pump's read
	master.SetDeadline(time.Now()) // and its write to a terminal whose buffer is full
	<-inDone
	master.Close()
	return err
}

// pumpOutput sends the terminal's output to the client until the terminal
// is closed at the other end (read EIO) or the read is stopped.
func pumpOutput(ws *websocket.Conn, master *os.File) {
	buf := make([]byte, 32*1024)
	sending := true
	for {
		n, err := master.Read(buf)
		if n > 0 && sending {
			// After a failed write the client is gone; reading on keeps a
			// program from blocking on a full terminal until it is ended.
			sending = websocket.Message.Send(ws, buf[:n]) == nil
		}
		if err != nil {
			return
		}
	}
}

// pumpInput writes the client's input to the terminal and carries out its
// resize messages until the connection ends or the terminal refuses input.
func pumpInput(ws *websocket.Conn, master *os.File) {
	refuse := func(err error) {
		websocket.JSON.Send(ws, errorMessage{Type: "error", Error: err.Error()})
	}
	for {
		var f frame
		err := frames.Receive(ws, &f)
		if errors.Is(err, websocket.ErrFrameTooLarge) {
			refuse(fmt.Errorf("frame is larger than %d bytes; send input in smaller pieces", maxPayload(ws)))
			continue
		}
		if err != nil {
			return
		}
		input := f.data
		if f.text {
			m, err := parseMessage(f.data)
			if err != nil {
				refuse(err)
				continue
			}
			if m.Type == "resize" {
				if err := Resize(master, m.Cols, m.Rows); err != nil {
					refuse(err)
				}
				continue
			}
			input = []byte(m.Data)
		}
		if _, err := master.Write(input); err != nil {
			return
		}
	}
}

func maxPayload(ws *websocket.Conn) int {
	if ws.MaxPayloadBytes > 0 {
		return ws.MaxPayloadBytes
	}
	return websocket.DefaultMaxPayloadBytes
}

// exitCode is a process's exit status as a shell reports it: 128+signal
// when a signal ended it.
func exitCode(ps *os.ProcessState) int {
	if status, ok := ps.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		return 128 + int(status.Signal())
	}
	return ps.ExitCode()
}
