//go:build linux

package term

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"golang.org/x/net/websocket"
)

// maxSide is the largest number of columns or rows a client may ask for.
// No screen has more; the bound keeps a client from giving programs sizes
// that make them allocate screen buffers of gigabytes.
const maxSide = 1000

// shapes is what a client's text frame may look like, for error messages.
const shapes = `{"type":"input","data":"..."} or {"type":"resize","cols":N,"rows":N}`

// A message is a client's text frame, validated.
type message struct {
	Type       string // "input" or "resize"
	Data       string // input: the keys typed
	Cols, Rows uint16 // resize: the window size, 1 to maxSide
}

// parseMessage reads a client's text frame. Its error names the field that
// is wrong and what is wanted; it is sent back to the client as it is.
func parseMessage(b []byte) (message, error) {
	var fields map[string]json.RawMessage
	err := json.Unmarshal(b, &fields)
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return message{}, fmt.Errorf("message is not JSON (%v); want %s", err, shapes)
	case err != nil || fields == nil:
		return message{}, fmt.Errorf("message is not a JSON object; want %s", shapes)
	}
	raw, ok := fields["type"]
	if !ok {
		return message{}, fmt.Errorf(`type is missing; want "input" or "resize"`)
	}
	var typ string
	if raw[0] == '"' {
		json.Unmarshal(raw, &typ) // a JSON string decodes
	}
	switch typ {
	case "input":
		raw, ok := fields["data"]
		if !ok {
			return message{}, fmt.Errorf("input: data is missing; want the keys typed, as a string")
		}
		var data string
		if raw[0] != '"' || json.Unmarshal(raw, &data) != nil {
			return message{}, fmt.Errorf("input: data is %s; want a string", clip(raw))
		}
		return message{Type: "input", Data: data}, nil
	case "resize":
		cols, err := side(fields, "cols")
		if err != nil {
			return message{}, err
		}
		rows, err := side(fields, "rows")
		if err != nil {
			return message{}, err
		}
		return message{Type: "resize", Cols: cols, Rows: rows}, nil
	}
	return message{}, fmt.Errorf(`type is %s; want "input" or "resize"`, clip(raw))
}

// side reads the resize field name, an integer from 1 to maxSide.
func side(fields map[string]json.RawMessage, name string) (uint16, error) {
	raw, ok := fields[name]
	if !ok {
		return 0, fmt.Errorf("resize: %s is missing; want an integer from 1 to %d", name, maxSide)
	}
	// raw is a JSON value: Atoi takes exactly the JSON integers (no
	// fraction, exponent, quotes or null) that fit.
	n, err := strconv.Atoi(string(raw))
	if err != nil || n < 1 || n > maxSide {
		return 0, fmt.Errorf("resize: %s is %s; want an integer from 1 to %d", name, clip(raw), maxSide)
	}
	return uint16(n), nil
}

// clip shortens a client's value for quoting in an error message.
func clip(raw []byte) string {
	const max = 40
	if len(raw) <= max {
		return string(raw)
	}
	return string(raw[:max]) + "..."
}

// A frame is one WebSocket frame as received. The frames codec gives it,
// where websocket.Message would lose whether a frame is text or binary.
type frame struct {
	text bool
	data []byte
}

var frames = websocket.Codec{
	Unmarshal: func(data []byte, payloadType byte, v any) error {
		f := v.(*frame)
		f.text = payloadType == websocket.TextFrame
		f.data = data
		return nil
	},
}

// exitMessage and errorMessage are the server's text frames.
type exitMessage struct {
	Type string `json:"type"` // "exit"
	Code int    `json:"code"`
}

type errorMessage struct {
	Type  string `json:"type"` // "error"
	Error string `json:"error"`
}
