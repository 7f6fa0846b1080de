package charts

import (
	"regexp"
	"testing"
)

// A release's charts carry its version, and every clustersync image they
// deploy (the manager, the agent it installs, the virtual control plane)
// is the release's: a release never mixes versions. A development build's
// charts keep their own version and deploy "latest".
func TestStamp(t *testing.T) {
	image := regexp.MustCompile(`(?:image: |--agent-image=)"?(\S*clustersync/clustersync:[^\s"]+)`)
	for _, tt := range []struct{ version, chartVersion, tag string }{
		{"v0.3.1", "0.3.1", "v0.3.1"},
		{"dev", "0.1.0", "latest"},
	} {
		for _, name := range []string{ManagerName, VirtualClusterName} {
			c, err := Load(name)
			if err != nil {
				t.Fatal(err)
			}
			Stamp(c, tt.version)
			if c.Metadata.Version != tt.chartVersion || c.Metadata.AppVersion != tt.tag {
				t.Errorf("%s stamped %s: version %s appVersion %s, want %s and %s", name, tt.version, c.Metadata.Version, c.Metadata.AppVersion, tt.chartVersion, tt.tag)
			}
			out, err := template(c, "r", "ns", map[string]any{})
			if err != nil {
				t.Fatal(err)
			}
			refs := image.FindAllStringSubmatch(out, -1)
			if len(refs) == 0 {
				t.Fatalf("%s renders no clustersync image:\n%s", name, out)
			}
			for _, m := range refs {
				if want := "ghcr.io/clustersync/clustersync:" + tt.tag; m[1] != want {
					t.Errorf("%s stamped %s deploys %s, want %s", name, tt.version, m[1], want)
				}
			}
		}
	}
}
