package violation

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    Violation
		want string
	}{
		{"network", Violation{Action: NetworkOutbound, Target: "evil.test:443", Reason: "not in allowedDomains"},
			"blocked network-outbound evil.test:443 (not in allowedDomains)"},
		{"file create", Violation{Action: FileCreate, Target: "/home/u/.bashrc", Reason: "mandatory deny .bashrc"},
			"blocked file-create /home/u/.bashrc (mandatory deny .bashrc)"},
		{"no reason", Violation{Action: Syscall, Target: "ptrace"}, "blocked syscall ptrace"},
		{"no target", Violation{Action: UnixSocket, Reason: "unix sockets are off"}, "blocked unix-socket (unix sockets are off)"},
		{"nothing", Violation{}, "blocked"},
		{"sanitizes what it is given", Violation{Action: "file-write\n", Target: "/tmp/a\nb<c>", Reason: "\x1b[2Jr"},
			"blocked file-write /tmp/a bc ([2Jr)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Line(tc.v); got != tc.want {
				t.Errorf("Line = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWriteJSONLines(t *testing.T) {
	s := NewStore(0, nil)
	when := time.Date(2026, 3, 4, 5, 6, 7, 890, time.FixedZone("x", 3600))
	for _, v := range []Violation{
		{Time: when, Action: NetworkOutbound, Target: "evil.test:443", Reason: "not in allowedDomains & not local",
			Command: "curl \"evil.test\"", CommandID: "tool-9", Raw: "CONNECT evil.test:443"},
		{Action: FileCreate, Target: "/home/ü/.bashrc\n"},
		{Action: Syscall, Target: "ptrace", Raw: "\xff"},
	} {
		s.Add(v)
	}
	want := s.All()

	var buf bytes.Buffer
	if err := WriteJSONLines(&buf, want); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(buf.String(), "\n") || strings.Count(buf.String(), "\n") != len(want) {
		t.Fatalf("want %d newline-ended lines, got %q", len(want), buf.String())
	}
	if !strings.Contains(buf.String(), " & not local") {
		t.Errorf("'&' escaped: %s", buf.String())
	}

	var got []Violation
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var v Violation
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, v)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d violations, wrote %d", len(got), len(want))
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Time) {
			t.Errorf("[%d] Time %v, want %v", i, got[i].Time, want[i].Time)
		}
		got[i].Time, want[i].Time = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestWriteJSONLinesKeys(t *testing.T) {
	var buf bytes.Buffer
	full := Violation{Time: time.Unix(1, 0).UTC(), Action: "a", Target: "t", Reason: "r", Command: "c", CommandID: "i", Raw: "w"}
	if err := WriteJSONLines(&buf, []Violation{full, {Action: "a", Target: "t"}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	for i, want := range [][]string{
		{"action", "command", "commandId", "raw", "reason", "target", "time"},
		{"action", "target", "time"},
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &m); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !reflect.DeepEqual(keys, want) {
			t.Errorf("line %d keys %v, want %v", i, keys, want)
		}
	}
}

type failWriter struct{}

var errDiskFull = errors.New("disk full")

func (failWriter) Write([]byte) (int, error) { return 0, errDiskFull }

func TestWriteJSONLinesError(t *testing.T) {
	err := WriteJSONLines(failWriter{}, []Violation{{Target: "x"}})
	if !errors.Is(err, errDiskFull) || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("err = %v, want one wrapping %v and naming line 1", err, errDiskFull)
	}
	if err := WriteJSONLines(failWriter{}, nil); err != nil {
		t.Errorf("nothing to write: err = %v", err)
	}
}
