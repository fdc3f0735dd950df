package backend

import (
	"strconv"
	"sync"
	"time"
)

// Event is one thing that happened in a session, in order (Seq).
type Event struct {
	Seq       uint64          `json:"seq"`
	Type      string          `json:"type"` // see the Ev* constants
	SessionID string          `json:"sessionId"`
	ExecID    string          `json:"execId,omitempty"`
	Data      string          `json:"data,omitempty"` // stdout/stderr text
	Code      *int            `json:"code,omitempty"` // exit: the exit status (128+signal when killed)
	Reason    string          `json:"reason,omitempty"`
	State     State           `json:"state,omitempty"`
	Violation *ViolationEvent `json:"violation,omitempty"`
	Ask       *AskEvent       `json:"ask,omitempty"`
	Time      time.Time       `json:"time"`
}

// Event types.
const (
	EvState     = "state"     // the session's state changed (State)
	EvStarting  = "starting"  // an exec is being started
	EvReady     = "ready"     // it runs
	EvStdout    = "stdout"    // Data
	EvStderr    = "stderr"    // Data
	EvExit      = "exit"      // it ended: Code
	EvKilled    = "killed"    // it was killed: Reason (an exit follows)
	EvViolation = "violation" // something it tried was refused
	EvAsk       = "ask"       // a destination outside the allowlist waits for an answer (Ask)
	EvGap       = "gap"       // the subscriber fell behind the bounded buffer: Data says how many events were lost
)

// ViolationEvent is a refusal, as violation.Violation has it.
type ViolationEvent struct {
	Action string `json:"action"`
	Target string `json:"target"`
	Reason string `json:"reason,omitempty"`
	Raw    string `json:"raw,omitempty"`
}

// AskEvent is a question for the client: may the session reach Host:Port?
// Answer it with Handle.Answer(ID, ...).
type AskEvent struct {
	ID   string `json:"askId"`
	Host string `json:"host"`
	Port int    `json:"port"`
}

// maxEvents bounds a session's buffer of past events.
const maxEvents = 10000

// eventLog keeps a session's events, the last maxEvents of them, and feeds
// subscribers from any point still in the buffer, so a client that
// subscribes after starting an exec misses nothing.
type eventLog struct {
	mu     sync.Mutex
	cond   *sync.Cond
	events []Event
	first  uint64 // Seq of events[0]
	next   uint64 // Seq of the next event
	closed bool
	max    int
	// gone closes a second after close: a subscriber that has not taken
	// the remaining events by then is dropped (it never reads).
	gone chan struct{}
}

func newEventLog(max int) *eventLog {
	l := &eventLog{first: 1, next: 1, max: max, gone: make(chan struct{})}
	l.cond = sync.NewCond(&l.mu)
	return l
}

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	e.Seq = l.next
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	l.next++
	l.events = append(l.events, e)
	if len(l.events) > l.max {
		drop := len(l.events) - l.max
		l.events = append(l.events[:0:0], l.events[drop:]...)
		l.first += uint64(drop)
	}
	l.cond.Broadcast()
}

// close ends every subscription once it has delivered what is buffered.
func (l *eventLog) close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		time.AfterFunc(time.Second, func() { close(l.gone) })
	}
	l.cond.Broadcast()
	l.mu.Unlock()
}

// subscribe returns the events from Seq from (0 or 1: from the start of
// the buffer) on, then each new one, until cancel or close.
func (l *eventLog) subscribe(from uint64) (<-chan Event, func()) {
	ch := make(chan Event, 64)
	stop := make(chan struct{})
	var once sync.Once
	cancel := func() {
		once.Do(func() {
			close(stop)
			l.mu.Lock()
			l.cond.Broadcast()
			l.mu.Unlock()
		})
	}
	go func() {
		defer close(ch)
		cur := from
		for {
			l.mu.Lock()
			for cur >= l.next && !l.closed && !stopped(stop) {
				l.cond.Wait()
			}
			if stopped(stop) || cur >= l.next && l.closed {
				l.mu.Unlock()
				return
			}
			var batch []Event
			if cur == 0 {
				cur = 1
			}
			if cur < l.first {
				batch = append(batch, Event{Type: EvGap, Data: strconv.FormatUint(l.first-cur, 10), Time: time.Now().UTC()})
				cur = l.first
			}
			batch = append(batch, l.events[cur-l.first:]...)
			cur = l.next
			l.mu.Unlock()
			for _, e := range batch {
				select {
				case ch <- e:
				case <-stop:
					return
				case <-l.gone:
					return
				}
			}
		}
	}()
	return ch, cancel
}

func stopped(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
