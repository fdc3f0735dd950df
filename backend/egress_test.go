package backend

import (
	"github.com/cordon-sandbox/cordon/hostmatch"
	"testing"
)

func TestEgressCompiles(t *testing.T) {
	if _, err := hostmatch.Compile(append(Baseline, GitHub...), Denied, nil); err != nil {
		t.Fatal(err)
	}
}
