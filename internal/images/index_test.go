package images

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clustersync/clustersync/internal/testenv/ocitest"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// One tag holds an image per architecture: the index names each one's
// platform, a registry serves it, and a node of each architecture gets its
// own image from it.
func TestIndex(t *testing.T) {
	var imgs []v1.Image
	for _, arch := range Arches() {
		l, err := Layer([]File{{Path: "/arch", Mode: 0o644, Data: []byte(arch)}})
		if err != nil {
			t.Fatal(err)
		}
		img, err := Image([]v1.Layer{l}, Config{Entrypoint: []string{"/x"}, Arch: arch})
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, img)
	}
	idx, err := Index(imgs...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Index(imgs[0], imgs[0]); err == nil || !strings.Contains(err.Error(), "linux/amd64") {
		t.Errorf("two amd64 images in one index: %v", err)
	}
	reg := ocitest.Registry(t)
	if _, err := PushIndex(context.Background(), idx, reg, "clustersync/test", []string{"v0.2.0"}, true); err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(Reference(reg, "clustersync/test", "v0.2.0"), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	for i, arch := range Arches() {
		img, err := remote.Image(ref, remote.WithPlatform(v1.Platform{OS: "linux", Architecture: arch}))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := img.Digest()
		want, _ := imgs[i].Digest()
		if got != want {
			t.Errorf("linux/%s pulls %s, want %s", arch, got, want)
		}
	}
}

// An image's executables are checked for the image's architecture: an
// arm64 build passes for arm64 and is refused for amd64, naming both.
func TestRequireStaticArch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go code")
	}
	out := filepath.Join(t.TempDir(), "pause")
	if err := GoBuildFor(context.Background(), moduleRoot(t), "./internal/images/pause", out, "linux", "arm64", ""); err != nil {
		t.Fatal(err)
	}
	if err := RequireStatic(out, "arm64"); err != nil {
		t.Errorf("arm64 build for arm64: %v", err)
	}
	if err := RequireStatic(out, "amd64"); err == nil || !strings.Contains(err.Error(), "EM_AARCH64") || !strings.Contains(err.Error(), "amd64") {
		t.Errorf("arm64 build for amd64: %v", err)
	}
	// The catalog's images check the same and say what they are.
	if _, err := Pause(out, Meta{Version: "v0.2.0"}); err == nil {
		t.Error("an amd64 pause image holds an arm64 program")
	}
	img, err := Pause(out, Meta{Version: "v0.2.0", Revision: "0123abc", Arch: "arm64"})
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	l := cf.Config.Labels
	if cf.Architecture != "arm64" || l["org.opencontainers.image.version"] != "v0.2.0" || l["org.opencontainers.image.revision"] != "0123abc" ||
		l["org.opencontainers.image.source"] != Source {
		t.Errorf("arm64 pause image: arch %s, labels %v", cf.Architecture, l)
	}
}
