package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/cordon-sandbox/cordon/policy"
	"github.com/cordon-sandbox/cordon/sandbox"
)

// The test binary is the program that embeds cordon: its sandboxes run it
// for their own stages.
func TestMain(m *testing.M) {
	sandbox.Init()
	os.Exit(m.Run())
}

func Example() {
	ctx := context.Background()
	pol, err := policy.Parse([]byte(`{
  "network": {"allowedDomains": ["example.com"]},
  "filesystem": {"allowWrite": []}
}`), "example settings", policy.Env{})
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := sandbox.New(ctx, pol)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	out, err := m.Command(ctx, "sh", "-c", "echo hello from the sandbox; echo x > /etc/cordon-example").CombinedOutput()
	fmt.Print(string(out))
	fmt.Println(err)
	// Output:
	// hello from the sandbox
	// sh: 1: cannot create /etc/cordon-example: Read-only file system
	// exit status 2
}

func ExampleManager_Wrap() {
	pol, _ := policy.New(policy.Settings{}, policy.Env{})
	m, err := sandbox.New(context.Background(), pol)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	argv, env := m.Wrap("make test", sandbox.CommandOptions{ID: "ci-42"})
	fmt.Println(len(argv) > 0 && len(env) > 0, argv[len(argv)-3:])
	// Output: true [/bin/sh -c make test]
}
