package sandbox

import "os"

// Init runs cordon's hidden stages when this process is one: the sandbox's
// PID 1, ssh's ProxyCommand inside it, or the runner of a Manager's
// command. A program that embeds cordon must call it first thing in main,
// before flags are parsed or anything else is started — the sandbox runs
// the program's own binary for these stages, as runc runs itself as
// "runc init". It returns only when this process is none of them.
//
//	func main() {
//		sandbox.Init()
//		...
//	}
func Init() {
	if len(os.Args) < 2 {
		return
	}
	if os.Args[1] == RunArg {
		os.Exit(runStage(os.Args[2:]))
	}
	if code, ok := platformStage(os.Args[1:]); ok {
		os.Exit(code)
	}
}
