// Package devhost runs the clustersync CLI against a local host of its own
// for the benches of test/bench: each bench gets a state folder (home) of
// its own, so `dev up` there starts a host that nothing else uses.
package devhost

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// CLI returns a function that runs binary exe with args, CLUSTERSYNC_HOME
// set to home and no KUBECONFIG, and returns its combined output. Its error
// names the command and carries the output.
func CLI(ctx context.Context, exe, home string) func(args ...string) (string, error) {
	return func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Env = append(os.Environ(), "CLUSTERSYNC_HOME="+home, "KUBECONFIG=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return string(out), fmt.Errorf("clustersync %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return string(out), nil
	}
}
