package images

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/clustersync/clustersync/internal/binaries"
)

// A folder becomes a layer with its modes (setuid and sticky too), links
// and folders, and CheckImage runs a program of the image chrooted, found
// on the image's PATH, and reports a failing one with its output.
func TestTreeFilesAndCheckImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go binary")
	}
	if os.Geteuid() != 0 {
		t.Skip("checking an image needs root (chroot, mknod)")
	}
	root := t.TempDir()
	if err := GoBuild(context.Background(), moduleRoot(t), "./internal/images/pause", filepath.Join(root, "sbin", "pause"), ""); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Chmod(filepath.Join(root, "sbin", "pause"), 0o755|os.ModeSetuid))
	must(os.MkdirAll(filepath.Join(root, "bin"), 0o755))
	must(os.Symlink("../sbin/pause", filepath.Join(root, "bin", "p")))
	must(os.Mkdir(filepath.Join(root, "tmp"), 0o755))
	must(os.Mkdir(filepath.Join(root, "www"), 0o700))
	must(os.Chown(filepath.Join(root, "www"), 101, 102))
	must(os.Chmod(filepath.Join(root, "tmp"), 0o777|os.ModeSticky))
	files, err := TreeFiles(root)
	must(err)
	got := map[string]File{}
	for _, f := range files {
		got[f.Path] = f
	}
	if f := got["/sbin/pause"]; f.Mode != 0o4755 || f.Source == "" {
		t.Errorf("/sbin/pause: %+v", f)
	}
	if f := got["/bin/p"]; f.Link != "../sbin/pause" {
		t.Errorf("/bin/p: %+v", f)
	}
	if f := got["/tmp"]; !f.Dir || f.Mode != 0o1777 || f.Owner != 0 || f.Group != 0 {
		t.Errorf("/tmp: %+v", f)
	}
	if f := got["/www"]; f.Owner != 101 || f.Group != 102 {
		t.Errorf("/www: %+v", f)
	}
	l, err := Layer(files)
	must(err)
	img, err := Image([]v1.Layer{l}, Config{Env: []string{"PATH=/bin"}})
	must(err)
	out, err := CheckImage(context.Background(), img, []string{"p", "-v"}, time.Minute)
	if err != nil || !strings.Contains(out, "clustersync pause") {
		t.Errorf("p -v: %q, %v", out, err)
	}
	if _, err := CheckImage(context.Background(), img, []string{"missing"}, time.Minute); err == nil || !strings.Contains(err.Error(), "not on the image's PATH /bin") {
		t.Errorf("a missing program: %v", err)
	}
	// Without -v, pause waits for a signal: the timeout names the command.
	if _, err := CheckImage(context.Background(), img, []string{"/sbin/pause"}, time.Second); err == nil || !strings.Contains(err.Error(), "ran longer than 1s") {
		t.Errorf("a program that does not exit: %v", err)
	}
}

// Every conformance image is named by its registry.k8s.io reference, and
// each repository's tags differ in digest (the image-change tests need it).
// The inputs are the ones `hack/build-binaries.sh conformance` builds; the
// test skips without them.
func TestConformanceImages(t *testing.T) {
	s := binaries.Conformance()
	if err := s.Check(); err != nil {
		t.Skip(err)
	}
	if os.Geteuid() != 0 {
		t.Skip("checking an image needs root (chroot, mknod)")
	}
	pause := filepath.Join(t.TempDir(), "pause")
	if err := GoBuild(context.Background(), moduleRoot(t), "./internal/images/pause", pause, ""); err != nil {
		t.Fatal(err)
	}
	imgs, err := ConformanceImages(s, pause)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{} // digest → reference
	refs := map[string]bool{}
	for _, c := range imgs {
		refs[c.Reference()] = true
		d := digest(t, c.Image).String()
		if other, ok := seen[d]; ok {
			t.Errorf("%s and %s have the same digest", c.Reference(), other)
		}
		seen[d] = c.Reference()
		if out, err := CheckImage(context.Background(), c.Image, c.Check, 2*time.Minute); err != nil {
			t.Errorf("%s: %v", c.Reference(), err)
		} else {
			t.Logf("%s: %s", c.Reference(), strings.SplitN(out, "\n", 2)[0])
		}
	}
	for _, ref := range []string{"registry.k8s.io/e2e-test-images/agnhost:2.66.1", "registry.k8s.io/pause:3.10.2", "registry.k8s.io/etcd:3.7.0-0"} {
		if !refs[ref] {
			t.Errorf("no image %s", ref)
		}
	}
}
