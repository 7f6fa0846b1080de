package release

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/testenv/ocitest"
)

// imagesEnv skips t in -short mode (it builds Go code), and returns the
// source tree, the machine's qemu-aarch64-static (which make binaries
// fetches: t fails without it rather than leave arm64 images unstarted)
// and an in-process registry.
func imagesEnv(t *testing.T) (root, qemu, reg string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds Go code")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if qemu = binaries.Release().QemuAarch64; qemu == "" {
		t.Fatal("no qemu-aarch64-static: run `make binaries` (hack/build-binaries.sh fetches Debian's qemu-user-static)")
	}
	return root, qemu, ocitest.Registry(t)
}

// Each program image of a release is one tag for linux/amd64 and
// linux/arm64: a node of either architecture pulls an image of its own,
// labelled with the release and its commit; pulled back, each holds one
// static executable of its architecture, which starts (arm64 under qemu).
func TestSourceImages(t *testing.T) {
	root, q, reg := imagesEnv(t)
	var rows []Image
	for _, row := range Images(ImageInputs{ModuleDir: root, Work: t.TempDir(), Version: "v0.2.0", Commit: "0123abc"}) {
		for _, si := range images.SourceImages() {
			if si.Repository == row.Repository {
				rows = append(rows, row)
			}
		}
	}
	if len(rows) != len(images.SourceImages()) {
		t.Fatalf("Images has %d of the %d source images", len(rows), len(images.SourceImages()))
	}
	pushed, err := PushImages(context.Background(), rows, images.Arches(), "v0.2.0", reg, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pushed {
		ref, err := name.ParseReference(p.Ref, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		for _, arch := range images.Arches() {
			img, err := remote.Image(ref, remote.WithPlatform(v1.Platform{OS: "linux", Architecture: arch}))
			if err != nil {
				t.Fatalf("%s for %s: %v", p.Ref, arch, err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.Architecture != arch || cf.Config.Labels["org.opencontainers.image.version"] != "v0.2.0" || cf.Config.Labels["org.opencontainers.image.revision"] != "0123abc" {
				t.Errorf("%s for %s: arch %s, labels %v", p.Ref, arch, cf.Architecture, cf.Config.Labels)
			}
		}
		checked, err := Check(context.Background(), p.Ref, true, p.Image.Probes, t.TempDir(), runtime.GOARCH, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(checked) != 2 {
			t.Fatalf("%s: checked %+v", p.Ref, checked)
		}
		for _, c := range checked {
			if c.Executables != 1 || c.Probes != len(p.Image.Probes) || c.Skipped != "" {
				t.Errorf("%s for %s: %+v", p.Ref, c.Arch, c)
			}
		}
	}
}

// Check refuses an arm64 image that holds an amd64 program, and a probe
// whose output is not what it wants; without an emulator it says the
// arm64 probes did not run.
func TestCheckRefuses(t *testing.T) {
	root, q, reg := imagesEnv(t)
	work := t.TempDir()
	bins := map[string]string{}
	for _, arch := range images.Arches() {
		bins[arch] = filepath.Join(work, "pause-"+arch)
		if err := images.GoBuildFor(context.Background(), root, "./internal/images/pause", bins[arch], "linux", arch, ""); err != nil {
			t.Fatal(err)
		}
	}
	// An image labelled arm64 that holds the amd64 program, assembled
	// below images.Pause (which refuses it).
	wrong := func(_ context.Context, arch string) (v1.Image, error) {
		l, err := images.Layer([]images.File{{Path: "/pause", Mode: 0o755, Source: bins["amd64"]}})
		if err != nil {
			return nil, err
		}
		return images.Image([]v1.Layer{l}, images.Config{Entrypoint: []string{"/pause"}, Arch: arch})
	}
	right := func(_ context.Context, arch string) (v1.Image, error) {
		return images.Pause(bins[arch], images.Meta{Arch: arch})
	}
	pushed, err := PushImages(context.Background(), []Image{{Repository: "t/wrong", Build: wrong}, {Repository: "t/right", Build: right}}, images.Arches(), "v0.2.0", reg, true)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Check(context.Background(), pushed[0].Ref, true, nil, work, "amd64", q)
	if err == nil || !strings.Contains(err.Error(), "for arm64") || !strings.Contains(err.Error(), "pause is a EM_X86_64 executable, not arm64") {
		t.Errorf("an amd64 program in the arm64 image: %v", err)
	}
	bad := []images.Probe{{Args: []string{"/pause", "-v"}, Want: "something else"}}
	if _, err = Check(context.Background(), pushed[1].Ref, true, bad, work, "amd64", q); err == nil || !strings.Contains(err.Error(), `lacks "something else"`) {
		t.Errorf("a probe with the wrong output: %v", err)
	}
	good := []images.Probe{{Args: []string{"/pause", "-v"}, Want: "clustersync pause"}}
	checked, err := Check(context.Background(), pushed[1].Ref, true, good, work, "amd64", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(checked) != 2 || checked[0].Probes != 1 || checked[1].Probes != 0 || !strings.Contains(checked[1].Skipped, "no emulator for arm64") {
		t.Errorf("without an emulator: %+v", checked)
	}
}
