package violation

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// keyRunes is how much of a command's id or text attributes a violation to
// it, as in srt (SANDBOXED_COMMAND_KEY_LENGTH).
const keyRunes = 100

// defaultMax is how many violations a Store keeps when NewStore is given 0.
const defaultMax = 1000

// Key is the attribution key of one command: its id when the caller gave
// one, else its text, cut to the first 100 characters, as srt does. The
// characters are runes, where srt counts UTF-16 code units; the two agree
// outside the astral planes. Key sanitizes both strings first, as the Store
// does to what it keeps, so the raw id and text of a command give the same
// key as the fields of its stored violations; an id that sanitizes to
// nothing counts as no id.
func Key(commandID, commandText string) string {
	return key(sanitize(commandID, maxCommandID), sanitize(commandText, maxCommand))
}

// key is Key on strings already sanitized.
func key(id, text string) string {
	k := id
	if k == "" {
		k = text
	}
	n := 0
	for i := range k {
		if n == keyRunes {
			return k[:i]
		}
		n++
	}
	return k
}

// Store keeps the most recent violations and attributes them to commands.
// Its Add is the Sink the sources are given. A Store is safe for
// concurrent use.
type Store struct {
	ignore map[string][]string // read-only after NewStore

	mu    sync.Mutex
	ring  []entry // oldest at head once full
	head  int
	max   int
	total int
	subs  []*subscription // copied on write, so Add can range over it unlocked
}

type entry struct {
	v   Violation
	key string
}

type subscription struct {
	fn     func(Violation)
	cancel atomic.Bool
}

// NewStore returns a Store that keeps at most max violations, dropping the
// oldest first (max <= 0 means 1000), and suppresses those that the ignore
// rules match (the settings' ignoreViolations; nil for none). NewStore copies
// ignore, so the caller may change its map afterwards.
func NewStore(max int, ignore map[string][]string) *Store {
	if max <= 0 {
		max = defaultMax
	}
	s := &Store{max: max}
	if len(ignore) > 0 {
		s.ignore = make(map[string][]string, len(ignore))
		for k, ps := range ignore {
			s.ignore[k] = append([]string(nil), ps...)
		}
	}
	return s
}

// Add sanitizes v's text fields (see the package comment), sets its Time to
// now if it is zero and, unless the ignore rules suppress it, keeps it and
// passes it to every subscriber. It reports whether v was kept; a
// suppressed violation is not counted by Total.
func (s *Store) Add(v Violation) bool {
	v = clean(v)
	if v.Time.IsZero() {
		v.Time = time.Now()
	}
	if Ignored(s.ignore, v) {
		return false
	}
	e := entry{v: v, key: key(v.CommandID, v.Command)}

	s.mu.Lock()
	if len(s.ring) < s.max {
		s.ring = append(s.ring, e)
	} else {
		s.ring[s.head] = e
		s.head = (s.head + 1) % s.max
	}
	s.total++
	subs := s.subs
	s.mu.Unlock()

	// Outside the lock, so that a subscriber may call back into the Store.
	for _, sub := range subs {
		if !sub.cancel.Load() {
			sub.fn(v)
		}
	}
	return true
}

// Sink returns s.Add as a Sink.
func (s *Store) Sink() Sink {
	return func(v Violation) { s.Add(v) }
}

// For returns the kept violations attributed to key, a value from Key,
// oldest first.
func (s *Store) For(key string) []Violation {
	return s.collect(func(e *entry) bool { return e.key == key })
}

// All returns every kept violation, oldest first.
func (s *Store) All() []Violation {
	return s.collect(func(*entry) bool { return true })
}

func (s *Store) collect(keep func(*entry) bool) []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Violation
	for i := range s.ring {
		if e := &s.ring[(s.head+i)%len(s.ring)]; keep(e) {
			out = append(out, e.v)
		}
	}
	return out
}

// Total returns how many violations s has kept since it was made, those
// since dropped or cleared included; suppressed ones are not counted.
func (s *Store) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// Subscribe arranges for fn to be called with each violation Add keeps from
// now on. fn runs on the goroutine that called Add, outside the Store's
// lock, so it may call the Store but must not block (see Sink), and it may
// run on several goroutines at once. After cancel returns, Adds that start
// later do not call fn; a call already under way may still finish. cancel
// may be called more than once, and from within fn. A nil fn is never
// called.
func (s *Store) Subscribe(fn func(Violation)) (cancel func()) {
	if fn == nil {
		return func() {}
	}
	sub := &subscription{fn: fn}
	s.mu.Lock()
	s.subs = append(s.subs[:len(s.subs):len(s.subs)], sub)
	s.mu.Unlock()
	return func() {
		if sub.cancel.Swap(true) {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		subs := make([]*subscription, 0, len(s.subs))
		for _, o := range s.subs {
			if o != sub {
				subs = append(subs, o)
			}
		}
		s.subs = subs
	}
}

// Clear forgets the kept violations. Total keeps counting from where it
// was, as in srt.
func (s *Store) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ring, s.head = nil, 0
}

// AnnotateStderr returns stderr with, when key has violations, a block
// naming them appended, for agents that read a command's stderr:
//
//	<stderr>
//	<sandbox_violations>
//	blocked network-outbound evil.test:443 (not in allowedDomains)
//	</sandbox_violations>
//
// This is srt's shape: a line break, the opening tag, each Line followed by
// a line break, the closing tag. When key has none, stderr comes back
// unchanged. Sanitizing keeps a violation from closing the block early.
func (s *Store) AnnotateStderr(key, stderr string) string {
	vs := s.For(key)
	if len(vs) == 0 {
		return stderr
	}
	var b strings.Builder
	b.WriteString(stderr)
	b.WriteString("\n<sandbox_violations>\n")
	for _, v := range vs {
		b.WriteString(Line(v))
		b.WriteByte('\n')
	}
	b.WriteString("</sandbox_violations>")
	return b.String()
}

// Ignored reports whether the ignore rules (the settings' ignoreViolations)
// suppress v, with srt's semantics: the patterns under "*" apply to every
// command, those under any other key to violations whose Command contains
// that key, and a pattern suppresses v when v.Target contains it. srt
// matches against the whole violation line; cordon matches the Target, the
// part a user names. Empty keys and patterns match nothing. The Store calls
// Ignored on the sanitized violation.
func Ignored(ignore map[string][]string, v Violation) bool {
	for cmd, patterns := range ignore {
		if cmd != "*" && (cmd == "" || !strings.Contains(v.Command, cmd)) {
			continue
		}
		for _, p := range patterns {
			if p != "" && strings.Contains(v.Target, p) {
				return true
			}
		}
	}
	return false
}
