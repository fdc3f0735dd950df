// Package violation records what a sandbox refused, so that a person or an
// embedding agent can see why a command failed.
//
// # What a violation is
//
// A Violation is one refusal: a connection the network proxy would not make
// (NetworkOutbound, Target "host:port"), a file the create-time guard would
// not let appear (FileCreate, Target a path), a syscall the seccomp filter
// stopped (Syscall, Target its name). Every source hands its violations to a
// Sink; a Store is the usual Sink. It keeps the most recent violations (1000
// unless NewStore is told otherwise), counts all of them, and tells
// subscribers about each new one:
//
//	st := violation.NewStore(0, settings.IgnoreViolations)
//	cfg.Sink = st.Sink()
//	... run the command ...
//	stderr = st.AnnotateStderr(violation.Key(id, cmd), stderr)
//
// Line gives the one-line human form of a violation,
//
//	blocked network-outbound evil.test:443 (not in allowedDomains)
//
// AnnotateStderr appends those lines to a command's stderr inside a
// <sandbox_violations> block, the shape Anthropic's sandbox runtime (srt)
// uses and agents already look for, and WriteJSONLines writes violations one
// JSON object a line (cordon --violations FILE).
//
// # Attribution
//
// Each violation carries the command it came from: CommandID when the caller
// gave the command an id, and Command, its text. Key turns the pair into the
// attribution key, the id when there is one and else the text, cut to its
// first 100 characters as srt does. Two commands that share an id, or whose
// texts share their first 100 characters, share a key and so share
// violations; give commands ids when that matters. srt counts UTF-16 code
// units; Key counts runes, so a key never ends in half a character.
//
// # Ignore rules
//
// The settings' ignoreViolations maps a command pattern to a list of
// patterns. The list under "*" applies to every command; the list under any
// other key applies when the violation's command text contains that key. A
// pattern suppresses a violation when the violation's Target contains it, so
// {"*": ["/usr/bin"], "git push": ["github.com:22"]} hides every refusal
// under /usr/bin and, for git push, the refused ssh connection. srt matches
// the whole log line instead; cordon matches the Target because it is the
// part a user names, and because the Reason is cordon's own wording, which
// may change. Matching is plain substring matching, no globs. An empty key or
// pattern matches nothing: a stray "" would otherwise hide every refusal.
// Suppressed violations are neither kept nor counted.
//
// # Sanitizing
//
// Much of a violation is chosen by the sandboxed command: the host it asked
// for, the path it tried to create, the command text it put in the proxy
// credential. Those strings end up on a terminal and in an agent's context,
// so a hostile command could otherwise move the cursor, rewrite the line
// with escape sequences, hide or reorder text with bidi and invisible
// characters, or close the <sandbox_violations> block early and write text
// an agent would take for cordon's. The Store therefore rewrites every text
// field (Action, Target, Reason, Command, CommandID, Raw) when it is added:
//
//   - each run of C0 and C1 controls, DEL, line and paragraph separators
//     (U+2028, U+2029), bidi controls (U+061C, U+200E, U+200F,
//     U+202A–U+202E, U+2066–U+2069), invisible format characters (U+00AD,
//     U+180E, U+200B–U+200D, U+2060–U+2065, U+206A–U+206F, U+FEFF,
//     U+FFF9–U+FFFB) and the Tags block (U+E0000–U+E007F) becomes one space;
//   - bytes that are not UTF-8 become U+FFFD;
//   - '<' and '>' are removed;
//   - leading and trailing white space is trimmed;
//   - each field is cut, at a character boundary, to a cap: Target 512
//     bytes, Reason 500, Command, CommandID and Raw 1000, Action 64.
//
// What a Store returns is thus a display form, not evidence: a path with a
// newline in it is shown with a space. Line applies the same rules, so it is
// safe on a Violation that did not come from a Store.
package violation
