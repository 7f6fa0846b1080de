package main

import (
	"testing"

	"github.com/clustersync/clustersync/internal/hosted/clouds"
)

// Every cloud of the table of clouds has its emulator command,
// `clustersync dev <key>`, which docs/hosted.md's walkthroughs start.
func TestEveryCloudHasADevCommand(t *testing.T) {
	dev := newDevCommand()
	for _, d := range clouds.All() {
		cmd, _, err := dev.Find([]string{d.Key})
		if err != nil || cmd == dev || cmd.Name() != d.Key {
			t.Errorf("cloud %s: no `clustersync dev %s` (found %q, %v)", d.Name, d.Key, cmd.Name(), err)
		}
	}
}
