//go:build linux

package term

import (
	"strings"
	"testing"
)

func TestParseMessage(t *testing.T) {
	tests := []struct {
		frame   string
		want    message
		wantErr string // a part of the error; "" when the frame is valid
	}{
		{`{"type":"input","data":"ls\r"}`, message{Type: "input", Data: "ls\r"}, ""},
		{`{"type":"input","data":""}`, message{Type: "input"}, ""},
		{`{"type":"input","data":"\u00e9\u001b[A"}`, message{Type: "input", Data: "é\x1b[A"}, ""},
		{`{"type":"resize","cols":80,"rows":24}`, message{Type: "resize", Cols: 80, Rows: 24}, ""},
		{` { "rows" : 1 , "cols" : 1000 , "type" : "resize" } `, message{Type: "resize", Cols: 1000, Rows: 1}, ""},
		{`{"type":"resize","cols":80,"rows":24,"client":"x"}`, message{Type: "resize", Cols: 80, Rows: 24}, ""}, // unknown keys are ignored
		{`{"type":"\u0069nput","data":"x"}`, message{Type: "input", Data: "x"}, ""},

		{`not json`, message{}, "message is not JSON (invalid character"},
		{`{"type":"input"`, message{}, "message is not JSON"},
		{`[1,2]`, message{}, "message is not a JSON object"},
		{`"input"`, message{}, "message is not a JSON object"},
		{`null`, message{}, "message is not a JSON object"},
		{`{}`, message{}, `type is missing; want "input" or "resize"`},
		{`{"Type":"input","data":"x"}`, message{}, "type is missing"}, // keys are case-sensitive
		{`{"type":"paste","data":"x"}`, message{}, `type is "paste"; want "input" or "resize"`},
		{`{"type":7}`, message{}, `type is 7; want "input" or "resize"`},
		{`{"type":"input"}`, message{}, "input: data is missing"},
		{`{"type":"input","data":5}`, message{}, "input: data is 5; want a string"},
		{`{"type":"input","data":null}`, message{}, "input: data is null; want a string"},
		{`{"type":"input","data":["l","s"]}`, message{}, `input: data is ["l","s"]; want a string`},
		{`{"type":"resize","rows":24}`, message{}, "resize: cols is missing; want an integer from 1 to 1000"},
		{`{"type":"resize","cols":80}`, message{}, "resize: rows is missing"},
		{`{"type":"resize","cols":0,"rows":24}`, message{}, "resize: cols is 0; want an integer from 1 to 1000"},
		{`{"type":"resize","cols":80,"rows":1001}`, message{}, "resize: rows is 1001; want an integer from 1 to 1000"},
		{`{"type":"resize","cols":-80,"rows":24}`, message{}, "resize: cols is -80"},
		{`{"type":"resize","cols":80.5,"rows":24}`, message{}, "resize: cols is 80.5"},
		{`{"type":"resize","cols":8e1,"rows":24}`, message{}, "resize: cols is 8e1"},
		{`{"type":"resize","cols":"80","rows":24}`, message{}, `resize: cols is "80"`},
		{`{"type":"resize","cols":80,"rows":null}`, message{}, "resize: rows is null"},
		{`{"type":"resize","cols":99999999999999999999999,"rows":24}`, message{}, "resize: cols is 99999999999999999999999;"},
		{`{"type":"resize","cols":"` + strings.Repeat("x", 100) + `","rows":24}`, message{}, `resize: cols is "` + strings.Repeat("x", 39) + `...; want`},
	}
	for _, tt := range tests {
		got, err := parseMessage([]byte(tt.frame))
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("parseMessage(%s): %v", tt.frame, err)
		case tt.wantErr == "" && got != tt.want:
			t.Errorf("parseMessage(%s) = %+v, want %+v", tt.frame, got, tt.want)
		case tt.wantErr != "" && err == nil:
			t.Errorf("parseMessage(%s) = %+v, want an error with %q", tt.frame, got, tt.wantErr)
		case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
			t.Errorf("parseMessage(%s): %v, want an error with %q", tt.frame, err, tt.wantErr)
		}
	}
}

func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{
		`{"type":"input","data":"ls\r"}`,
		`{"type":"resize","cols":80,"rows":24}`,
		`{"type":"resize","cols":0,"rows":1e3}`,
		`{"type":"input","data":null}`,
		`[{"type":"input"}]`,
		`{"type":"\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMessage(b)
		if err != nil {
			if m != (message{}) {
				t.Errorf("parseMessage(%q) = %+v with error %v", b, m, err)
			}
			return
		}
		switch m.Type {
		case "input":
			if m.Cols != 0 || m.Rows != 0 {
				t.Errorf("parseMessage(%q) = %+v: an input with a size", b, m)
			}
		case "resize":
			if m.Cols < 1 || m.Cols > maxSide || m.Rows < 1 || m.Rows > maxSide || m.Data != "" {
				t.Errorf("parseMessage(%q) = %+v", b, m)
			}
		default:
			t.Errorf("parseMessage(%q) = %+v: type %q", b, m, m.Type)
		}
	})
}
