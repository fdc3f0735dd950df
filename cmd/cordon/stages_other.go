//go:build !linux

package main

func internalStage(args []string) (int, bool) { return 0, false }
