package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/version"
)

// A release binary never mixes versions, the way a user meets it: built
// with a version (as make release links it), it prints that version and
// commit, `virtual create --dry-run` with the example vcluster.yaml
// installs that version's clustersync image and no other, and the
// manager's default agent image is the same.
func TestReleaseVersion(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	const v, commit = "v0.0.0-e2e", "0123abc"
	bin := filepath.Join(t.TempDir(), "clustersync")
	if err := images.GoBuild(context.Background(), root, "./cmd/clustersync", bin, version.LDFlags(v, commit)); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("clustersync %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := run("version"); !strings.HasPrefix(out, "clustersync "+v+" (commit "+commit+")\n") {
		t.Errorf("clustersync version:\n%s", out)
	}
	manifests := run("virtual", "create", "demo", "--dry-run", "-f", filepath.Join(root, "examples", "vcluster", "vcluster.yaml"))
	want := images.Reference(images.DefaultRegistry, images.ClustersyncRepository, v)
	if !strings.Contains(manifests, want) {
		t.Errorf("virtual create --dry-run does not install %s:\n%s", want, manifests)
	}
	if other := images.Reference(images.DefaultRegistry, images.ClustersyncRepository, version.DevImageTag); strings.Contains(manifests, other) {
		t.Errorf("virtual create --dry-run of %s installs %s", v, other)
	}
	if help := run("manager", "--help"); !strings.Contains(help, `agent image in import manifests (default "`+want+`")`) {
		t.Errorf("manager --help does not default --agent-image to %s:\n%s", want, help)
	}
}
