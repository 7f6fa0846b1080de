package release

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/clustersync/clustersync/internal/testenv/ocitest"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/clustersync/clustersync/internal/images"
)

// Each program image of a release is one tag for linux/amd64 and
// linux/arm64: a node of either architecture pulls an image of its own,
// labelled with the release and its commit.
func TestSourceImages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go code")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	reg := ocitest.Registry(t)
	refs, err := SourceImages(context.Background(), root, t.TempDir(), "v0.2.0", "0123abc", reg, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != len(images.SourceImages()) {
		t.Fatalf("pushed %v", refs)
	}
	for _, r := range refs {
		ref, err := name.ParseReference(r, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		for _, arch := range images.Arches() {
			img, err := remote.Image(ref, remote.WithPlatform(v1.Platform{OS: "linux", Architecture: arch}))
			if err != nil {
				t.Fatalf("%s for %s: %v", r, arch, err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.Architecture != arch || cf.Config.Labels["org.opencontainers.image.version"] != "v0.2.0" || cf.Config.Labels["org.opencontainers.image.revision"] != "0123abc" {
				t.Errorf("%s for %s: arch %s, labels %v", r, arch, cf.Architecture, cf.Config.Labels)
			}
		}
	}
}
