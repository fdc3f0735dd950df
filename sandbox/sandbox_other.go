//go:build !linux

package sandbox

import "github.com/cordon-sandbox/cordon/policy"

func supported(*policy.Policy) error { return ErrUnsupported }

func platformStage([]string) (int, bool) { return 0, false }

func runStage([]string) int { return 125 }
