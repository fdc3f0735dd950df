//go:build !linux

package serve

import "net/http"

// Terminals need a PTY and a native sandbox: Linux only in this build.

type terminal struct{}

func (t *terminal) close() {}

func (s *Server) createTerminal(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotImplemented, "", "terminals are not available on this system yet")
}

func (s *Server) terminalPTY(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotImplemented, "", "terminals are not available on this system yet")
}

func (s *Server) deleteTerminal(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotFound, "id", "no such terminal")
}
