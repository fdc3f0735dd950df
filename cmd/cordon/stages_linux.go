package main

import "github.com/cordon-sandbox/cordon/internal/linux/initproc"

// internalStage runs cordon's hidden in-sandbox stages (see package
// initproc). It is checked before anything else in main, as runc checks
// for "init": one binary, no helper files.
func internalStage(args []string) (int, bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch args[0] {
	case initproc.InitArg:
		return initproc.Init(), true
	case initproc.ConnectArg:
		return initproc.Connect(args[1:]), true
	}
	return 0, false
}
