// Package serve is `cordon serve`: an HTTP API over package backend for
// an agent control server's clients (docs/api.md). Every route but
// /healthz needs the bearer token; bodies and answers are JSON with the
// backend's camelCase field names; session events stream as server-sent
// events, terminals as WebSockets carrying a real PTY.
package serve

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cordon-sandbox/cordon/backend"
)

// MaxSessions and MaxTerminals bound what one daemon keeps at once: each
// holds processes, descriptors and memory on the host.
const (
	MaxSessions  = 512
	MaxTerminals = 128
)

// Server holds the sessions and terminals of one daemon.
type Server struct {
	Port  *backend.Port
	Token string

	mu        sync.Mutex
	sessions  map[string]*backend.Handle
	terminals map[string]*terminal
	closed    bool
	ctx       context.Context // ends with Shutdown
	cancel    context.CancelFunc
}

// New makes a server for port; token is the bearer token clients send.
func New(port *backend.Port, token string) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{Port: port, Token: token, sessions: map[string]*backend.Handle{},
		terminals: map[string]*terminal{}, ctx: ctx, cancel: cancel}
}

// Handler is the API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	auth := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="cordon"`)
				writeError(w, http.StatusUnauthorized, "", "missing or wrong bearer token (Authorization: Bearer <token>)")
				return
			}
			h(w, r)
		}
	}
	mux.HandleFunc("GET /v1/probe", auth(s.probe))
	mux.HandleFunc("POST /v1/sessions", auth(s.createSession))
	mux.HandleFunc("GET /v1/sessions", auth(s.listSessions))
	mux.HandleFunc("GET /v1/sessions/{id}", auth(s.getSession))
	mux.HandleFunc("DELETE /v1/sessions/{id}", auth(s.deleteSession))
	mux.HandleFunc("POST /v1/sessions/{id}/exec", auth(s.exec))
	mux.HandleFunc("GET /v1/sessions/{id}/events", auth(s.events))
	mux.HandleFunc("POST /v1/sessions/{id}/asks/{askId}", auth(s.answer))
	mux.HandleFunc("POST /v1/terminals", auth(s.createTerminal))
	mux.HandleFunc("GET /v1/terminals/{id}/pty", auth(s.terminalPTY))
	mux.HandleFunc("DELETE /v1/terminals/{id}", auth(s.deleteTerminal))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "", "no such route: "+r.Method+" "+r.URL.Path)
	})
	return mux
}

// Shutdown destroys every session and terminal: their processes and
// proxies end, nothing is left behind.
func (s *Server) Shutdown() {
	s.mu.Lock()
	s.closed = true
	hs := make([]*backend.Handle, 0, len(s.sessions))
	for _, h := range s.sessions {
		if h != nil { // nil: still launching; createSession sees closed and destroys it
			hs = append(hs, h)
		}
	}
	ts := make([]*terminal, 0, len(s.terminals))
	for _, t := range s.terminals {
		ts = append(ts, t)
	}
	s.mu.Unlock()
	s.cancel()
	var wg sync.WaitGroup
	for _, h := range hs {
		wg.Add(1)
		go func() { defer wg.Done(); h.Destroy() }()
	}
	for _, t := range ts {
		wg.Add(1)
		go func() { defer wg.Done(); t.close() }()
	}
	wg.Wait()
}

// apiError is every error answer.
type apiError struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, field, msg string) {
	writeJSON(w, code, apiError{Error: msg, Field: field})
}

// fail answers err: a backend.FieldError is the client's (400, with the
// field), an unavailable backend is 409... see each case.
func fail(w http.ResponseWriter, err error) {
	var fe *backend.FieldError
	switch {
	case errors.As(err, &fe):
		writeError(w, http.StatusBadRequest, fe.Field, fe.Msg)
	case errors.Is(err, backend.ErrUnavailable):
		writeError(w, http.StatusConflict, "backend", err.Error())
	case errors.Is(err, backend.ErrNotRunning):
		writeError(w, http.StatusConflict, "", err.Error())
	case errors.Is(err, backend.ErrNoSuchAsk):
		writeError(w, http.StatusNotFound, "askId", err.Error())
	default:
		writeError(w, http.StatusInternalServerError, "", err.Error())
	}
}

const maxBody = 1 << 20

var unknownField = regexp.MustCompile(`unknown field "([^"]*)"`)

// decode reads a JSON body into v, refusing unknown fields, trailing data
// and bodies over 1 MiB, with the field named where it can be.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value in the body")
	}
	if err == nil {
		return true
	}
	var te *json.UnmarshalTypeError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &te):
		// An embedded struct's fields come prefixed with its type name.
		field := strings.TrimPrefix(te.Field, "Spec.")
		writeError(w, http.StatusBadRequest, field, fmt.Sprintf("want a JSON %s, got %s", te.Type, te.Value))
	case errors.As(err, &mbe):
		writeError(w, http.StatusRequestEntityTooLarge, "", fmt.Sprintf("the body is over %d bytes", maxBody))
	case errors.Is(err, io.EOF):
		writeError(w, http.StatusBadRequest, "", "empty body: want a JSON object")
	default:
		field := ""
		if m := unknownField.FindStringSubmatch(err.Error()); m != nil {
			field = m[1]
			err = fmt.Errorf("unknown field %q", field)
		}
		writeError(w, http.StatusBadRequest, field, "bad JSON body: "+err.Error())
	}
	return false
}

func (s *Server) probe(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.Port.Probe)
}

// sessionRequest is POST /v1/sessions: a Spec and, optionally, a backend.
type sessionRequest struct {
	backend.Spec
	Backend *string `json:"backend,omitempty"`
}

// sessionView is a session as the API shows it.
type sessionView struct {
	SessionID string            `json:"sessionId"`
	Backend   backend.Backend   `json:"backend"`
	State     backend.State     `json:"state"`
	Err       string            `json:"err,omitempty"`
	Details   map[string]string `json:"details,omitempty"`
	Spec      backend.Spec      `json:"spec"`
}

func view(h *backend.Handle) sessionView {
	st, err := h.State()
	v := sessionView{SessionID: h.SessionID, Backend: h.Backend, State: st, Details: h.Details, Spec: h.Spec()}
	if err != nil {
		v.Err = err.Error()
	}
	return v
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	var req sessionRequest
	if !decode(w, r, &req) {
		return
	}
	var want backend.Backend
	if req.Backend != nil && *req.Backend != "" {
		// backend.FromName: an unknown name is none. The answer says which
		// backend the session got; the log says why.
		want = backend.FromName(*req.Backend)
		if n := strings.ToLower(strings.TrimSpace(*req.Backend)); n != string(want) && n != "docker" {
			s.Port.Logf("session %q asked for backend %q, which is not one: none", req.SessionID, *req.Backend)
		}
	}
	if err := req.Spec.Validate(); err != nil {
		fail(w, err)
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "", "the daemon is shutting down")
		return
	}
	if len(s.sessions) >= MaxSessions {
		s.mu.Unlock()
		writeError(w, http.StatusTooManyRequests, "", fmt.Sprintf("%d sessions exist, the most one daemon keeps; DELETE some first", MaxSessions))
		return
	}
	if _, dup := s.sessions[req.SessionID]; dup {
		s.mu.Unlock()
		writeError(w, http.StatusConflict, "sessionId", fmt.Sprintf("session %q exists; DELETE it first", req.SessionID))
		return
	}
	s.sessions[req.SessionID] = nil // reserved while it launches
	s.mu.Unlock()
	h, err := s.Port.Launch(r.Context(), req.Spec, want)
	s.mu.Lock()
	if err != nil {
		delete(s.sessions, req.SessionID)
		s.mu.Unlock()
		if h != nil {
			h.Destroy()
		}
		fail(w, err)
		return
	}
	if s.closed {
		delete(s.sessions, req.SessionID)
		s.mu.Unlock()
		h.Destroy()
		writeError(w, http.StatusServiceUnavailable, "", "the daemon is shutting down")
		return
	}
	s.sessions[req.SessionID] = h
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, view(h))
}

func (s *Server) session(w http.ResponseWriter, r *http.Request) *backend.Handle {
	id := r.PathValue("id")
	s.mu.Lock()
	h := s.sessions[id]
	s.mu.Unlock()
	if h == nil {
		writeError(w, http.StatusNotFound, "id", fmt.Sprintf("no session %q", id))
	}
	return h
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	out := []sessionView{}
	for _, h := range s.sessions {
		if h != nil {
			out = append(out, view(h))
		}
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].SessionID < out[j].SessionID })
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out})
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	if h := s.session(w, r); h != nil {
		writeJSON(w, http.StatusOK, view(h))
	}
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	h := s.session(w, r)
	if h == nil {
		return
	}
	h.Destroy()
	s.mu.Lock()
	delete(s.sessions, h.SessionID)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, view(h))
}

type execRequest struct {
	Argv  []string `json:"argv"`
	Cwd   string   `json:"cwd,omitempty"`
	Env   envList  `json:"env,omitempty"`
	Stdin string   `json:"stdin,omitempty"`
}

// envList is ["K=V", ...] or {"K": "V", ...}.
type envList []string

func (e *envList) UnmarshalJSON(b []byte) error {
	var list []string
	if err := json.Unmarshal(b, &list); err == nil {
		*e = list
		return nil
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return &json.UnmarshalTypeError{Value: "neither a list nor an object", Type: reflect.TypeOf(list)}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		*e = append(*e, k+"="+m[k])
	}
	return nil
}

func (s *Server) exec(w http.ResponseWriter, r *http.Request) {
	h := s.session(w, r)
	if h == nil {
		return
	}
	var req execRequest
	if !decode(w, r, &req) {
		return
	}
	// The command outlives this request: it ends with the session.
	id, ch, err := h.Exec(s.ctx, req.Argv, backend.ExecOptions{Cwd: req.Cwd, Env: req.Env, Stdin: req.Stdin})
	if err != nil {
		fail(w, err)
		return
	}
	// Clients read the session's stream; this command's own copy is drained.
	go func() {
		for range ch {
		}
	}()
	writeJSON(w, http.StatusAccepted, map[string]string{"execId": id, "sessionId": h.SessionID})
}

// events streams the session's events as server-sent events: "event:" is
// the event type, "id:" its seq, "data:" the event as JSON. It starts from
// the oldest event still buffered, or after Last-Event-ID (or ?from=SEQ),
// and ends when the session is destroyed or the client goes away.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	h := s.session(w, r)
	if h == nil {
		return
	}
	var from uint64
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "Last-Event-ID", fmt.Sprintf("%q is not an event id", v))
			return
		}
		from = n + 1
	}
	if v := r.URL.Query().Get("from"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "from", fmt.Sprintf("%q is not an event seq", v))
			return
		}
		from = n
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "", "streaming is not supported here")
		return
	}
	ch, cancel := h.Subscribe(from)
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				return
			}
			writeEvent(w, e)
			// Send what is queued together: one flush for a burst of output.
			for more := true; more; {
				select {
				case e, ok := <-ch:
					if !ok {
						fl.Flush()
						return
					}
					writeEvent(w, e)
				default:
					more = false
				}
			}
			fl.Flush()
		case <-keepalive.C:
			io.WriteString(w, ": keep-alive\n\n")
			fl.Flush()
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		}
	}
}

// writeEvent writes e as one server-sent event: its seq as the id (gap
// events have none), its type as the event name, itself as the data.
func writeEvent(w io.Writer, e backend.Event) {
	b, _ := json.Marshal(e)
	if e.Seq > 0 {
		fmt.Fprintf(w, "id: %d\n", e.Seq)
	}
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.Type, b)
}

// answerRequest is {"decision": "allow"|"deny"}; {"answer": ...} and
// {"allow": true|false} are taken too.
type answerRequest struct {
	Decision string `json:"decision,omitempty"`
	Answer   string `json:"answer,omitempty"`
	Allow    *bool  `json:"allow,omitempty"`
	Remember bool   `json:"remember,omitempty"`
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	h := s.session(w, r)
	if h == nil {
		return
	}
	var req answerRequest
	if !decode(w, r, &req) {
		return
	}
	decision := req.Decision
	if decision == "" {
		decision = req.Answer
	}
	if decision == "" && req.Allow != nil {
		decision = "deny"
		if *req.Allow {
			decision = "allow"
		}
	}
	if decision != "allow" && decision != "deny" {
		writeError(w, http.StatusBadRequest, "decision", fmt.Sprintf("%q: want allow or deny", decision))
		return
	}
	req.Decision = decision
	if err := h.Answer(r.PathValue("askId"), req.Decision == "allow", req.Remember); err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"askId": r.PathValue("askId"), "decision": req.Decision})
}
