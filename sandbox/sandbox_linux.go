package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"sync"

	"github.com/cordon-sandbox/cordon/internal/linux/initproc"
	"github.com/cordon-sandbox/cordon/internal/linux/runner"
	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/violation"
)

func supported(p *policy.Policy) error {
	_, err := runner.FindBwrap(p.Settings.BwrapPath)
	return err
}

func platformStage(args []string) (int, bool) {
	switch args[0] {
	case initproc.InitArg:
		return initproc.Init(), true
	case initproc.ConnectArg:
		return initproc.Connect(args[1:]), true
	}
	return 0, false
}

// runStage is a Manager's command: it fetches the policy from the Manager,
// runs the command in a sandbox, and reports what is refused.
func runStage(args []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "cordon: "+format+"\n", a...)
		return initproc.ExitFailure
	}
	if len(args) < 4 || args[2] != "--" {
		return fail("%s: usage: SOCKET TOKEN -- COMMAND [ARGS...]", RunArg)
	}
	c, err := net.Dial("unix", args[0])
	if err != nil {
		return fail("cannot reach the sandbox manager: %v", err)
	}
	defer c.Close()
	var mu sync.Mutex
	enc := json.NewEncoder(c)
	send := func(m message) {
		mu.Lock()
		enc.Encode(m)
		mu.Unlock()
	}
	send(message{Token: args[1]})
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var first message
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &first) != nil {
		return fail("the sandbox manager did not answer")
	}
	if first.Error != "" || first.Settings == nil {
		return fail("the sandbox manager refused the command: %s", first.Error)
	}
	pol, err := policy.New(*first.Settings, policy.Env{})
	if err != nil {
		return fail("%v", err)
	}
	updates := make(chan *policy.Policy, 4)
	var (
		askMu   sync.Mutex
		askNext uint64
		waiting = map[uint64]chan answerMsg{}
	)
	go func() {
		defer close(updates)
		defer func() {
			// The manager is gone: whoever waits for an answer is refused.
			askMu.Lock()
			for id, ch := range waiting {
				close(ch)
				delete(waiting, id)
			}
			askMu.Unlock()
		}()
		for sc.Scan() {
			var m message
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			if m.Answer != nil {
				askMu.Lock()
				if ch, ok := waiting[m.Answer.ID]; ok {
					ch <- *m.Answer
					delete(waiting, m.Answer.ID)
				}
				askMu.Unlock()
				continue
			}
			if m.Settings == nil {
				continue
			}
			if p, err := policy.New(*m.Settings, policy.Env{}); err == nil {
				updates <- p
			}
		}
	}()
	var ask func(ctx context.Context, host string, port int) (bool, string)
	if first.Asks {
		ask = func(ctx context.Context, host string, port int) (bool, string) {
			ch := make(chan answerMsg, 1)
			askMu.Lock()
			askNext++
			id := askNext
			waiting[id] = ch
			askMu.Unlock()
			send(message{Ask: &askMsg{ID: id, Host: host, Port: port}})
			select {
			case a, ok := <-ch:
				if !ok {
					return false, "the sandbox manager is gone"
				}
				return a.Allow, a.Reason
			case <-ctx.Done():
				askMu.Lock()
				delete(waiting, id)
				askMu.Unlock()
				return false, "no answer before the connection was given up"
			}
		}
	}
	code, err := runner.Run(runner.Options{
		Policy:  pol,
		Argv:    args[3:],
		Command: first.Command,
		Sink:    func(v violation.Violation) { send(message{Violation: &v}) },
		Updates: updates,
		Ask:     ask,
	})
	if err != nil {
		return fail("%v", err)
	}
	return code
}
