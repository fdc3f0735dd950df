//go:build linux

// Package term serves interactive terminals: it runs a command on a
// pseudo-terminal of its own and bridges that terminal to one WebSocket
// connection, the way `cordon serve` offers a shell to a browser.
//
//	http.Handle("/term", websocket.Handler(func(ws *websocket.Conn) {
//		cmd := exec.Command("/bin/sh")
//		master, err := term.Start(cmd, 80, 24) // cols, rows
//		if err != nil { ... }
//		err = term.Serve(ws.Request().Context(), ws, master, cmd)
//		// the process and everything it left on the terminal are gone,
//		// master and ws are closed
//	}))
//
// Start gives the command a session of its own with the terminal as its
// controlling terminal, so ^C, ^Z, job control and SIGWINCH work as in any
// terminal emulator. OpenPTY and Resize are the parts it is made of.
//
// # Protocol
//
// Server to client:
//
//   - Binary frame: terminal output, the bytes as the program wrote them.
//     A frame may end inside a UTF-8 sequence or an escape sequence; a
//     client feeds the frames to its terminal emulator in order.
//   - Text frame {"type":"exit","code":N}: the process has ended. N is its
//     exit status, or 128+signal when a signal ended it (129 for the SIGHUP
//     of a session that ends before its process, 137 for SIGKILL). It comes
//     after the last output, and the server closes the connection after it.
//   - Text frame {"type":"error","error":"..."}: a client frame was refused;
//     the text names the field that is wrong and what is wanted, such as
//     `resize: cols is 0; want an integer from 1 to 1000`. The session
//     continues as if the frame had not been sent.
//
// Client to server:
//
//   - Binary frame: keyboard input, written to the terminal as it is
//     (Enter is "\r", as a terminal sends it).
//   - Text frame {"type":"input","data":"..."}: the same, for clients that
//     send only text; data is a JSON string.
//   - Text frame {"type":"resize","cols":N,"rows":N}: the window has a new
//     size. cols and rows are integers from 1 to 1000; the program gets
//     SIGWINCH.
//
// Keys other than these are ignored, so a client may add its own; key
// names are case-sensitive. A frame larger than the connection's
// MaxPayloadBytes (32 MiB unless the caller sets it) is refused with an
// error frame.
//
// # End of a session
//
// A session ends when the process exits, when the client closes the
// connection (or it breaks), or when Serve's context is cancelled. Then
// every process still in the terminal's session gets SIGHUP, and SIGKILL
// one second later if it is still alive; Serve waits for the process, sends
// the rest of the output and the exit frame, closes the connection and the
// terminal, and returns. Nothing it started is left running: no goroutine,
// no file descriptor, no process of the session.
//
// What it cannot do: a process that left the session (setsid, as daemons
// do) is not the terminal's any more and is not killed; if such a process
// keeps the terminal open, the output it writes after the session ends is
// not sent.
package term
