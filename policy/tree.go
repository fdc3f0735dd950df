package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// A node is one JSON value with the byte offset it starts at, so that every
// refusal can name the line and column a user has to fix. Objects keep their
// keys in file order; a key given twice is refused while the tree is built,
// because the last-one-wins reading of JSON.parse would let a later,
// forgotten line silently replace a rule.
type node struct {
	kind    kind
	off     int
	members []member // kind == object
	elems   []*node  // kind == array
	str     string   // kind == str
	num     json.Number
	boolean bool
}

type member struct {
	key string
	off int
	val *node
}

type kind int

const (
	object kind = iota
	array
	str
	number
	boolean
	null
)

func (k kind) String() string {
	return [...]string{"an object", "a list", "a string", "a number", "true or false", "null"}[k]
}

// maxDepth bounds nesting so that a hostile file cannot exhaust the stack;
// the deepest real settings value is four levels down.
const maxDepth = 32

// parseTree reads exactly one JSON value from data. Errors carry the offset
// of the offending byte.
func parseTree(data []byte) (*node, error) {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return nil, &offsetError{0, "the file starts with a UTF-8 byte-order mark; save it as plain UTF-8 without a BOM"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := &treeParser{data: data, dec: dec}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if tok, err := dec.Token(); err != io.EOF {
		if err != nil {
			return nil, p.wrap(err)
		}
		return nil, &offsetError{p.start(), fmt.Sprintf("unexpected %v after the settings object; a settings file holds exactly one JSON object", describeToken(tok))}
	}
	return n, nil
}

type treeParser struct {
	data []byte
	dec  *json.Decoder
}

type offsetError struct {
	off int
	msg string
}

func (e *offsetError) Error() string { return e.msg }

// start returns the offset of the next token: the decoder reports where the
// previous token ended, and separators and blanks lie between.
func (p *treeParser) start() int {
	off := int(p.dec.InputOffset())
	for off < len(p.data) {
		switch p.data[off] {
		case ' ', '\t', '\n', '\r', ':', ',':
			off++
			continue
		}
		break
	}
	return off
}

func (p *treeParser) wrap(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := int(se.Offset)
		return &offsetError{off, "not valid JSON: " + se.Error()}
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return &offsetError{len(p.data), "not valid JSON: the file ends in the middle of a value"}
	}
	return &offsetError{p.start(), "not valid JSON: " + err.Error()}
}

func (p *treeParser) value(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, &offsetError{p.start(), fmt.Sprintf("nested deeper than %d levels", maxDepth)}
	}
	off := p.start()
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.wrap(err)
	}
	n := &node{off: off}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n.kind = object
			seen := map[string]int{}
			for p.dec.More() {
				koff := p.start()
				ktok, err := p.dec.Token()
				if err != nil {
					return nil, p.wrap(err)
				}
				key, _ := ktok.(string)
				if prev, dup := seen[key]; dup {
					line, col := lineCol(p.data, prev)
					return nil, &offsetError{koff, fmt.Sprintf("key %q appears twice (first at %d:%d); JSON readers disagree on which one wins, so keep one", key, line, col)}
				}
				seen[key] = koff
				v, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				n.members = append(n.members, member{key, koff, v})
			}
		case '[':
			n.kind = array
			for p.dec.More() {
				v, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, v)
			}
		default:
			return nil, &offsetError{off, fmt.Sprintf("unexpected %q", rune(t))}
		}
		if _, err := p.dec.Token(); err != nil { // the closing delimiter
			return nil, p.wrap(err)
		}
	case string:
		n.kind, n.str = str, t
	case json.Number:
		n.kind, n.num = number, t
	case bool:
		n.kind, n.boolean = boolean, t
	case nil:
		n.kind = null
	}
	return n, nil
}

func describeToken(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		return strconv.Quote(string(rune(t)))
	case string:
		return "string " + strconv.Quote(t)
	default:
		return fmt.Sprint(t)
	}
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, off int) (line, col int) {
	if off > len(data) {
		off = len(data)
	}
	line = 1 + bytes.Count(data[:off], []byte("\n"))
	col = off - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}
