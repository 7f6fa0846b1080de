package images

import (
	"archive/tar"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/virtual/config"
)

func digest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// moduleRoot is the repository's root (this file is internal/images/…).
func moduleRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// The same files give the same layer and image digests, whatever the order
// they are listed in and whatever the files' times on disk.
func TestReproducible(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "bin")
	if err := os.WriteFile(src, []byte("binary"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := []File{{Path: "/usr/local/bin/tool", Mode: 0o755, Source: src}, {Path: "/etc/motd", Mode: 0o644, Data: []byte("hi")}}
	build := func(fs []File) v1.Hash {
		l, err := Layer(fs)
		if err != nil {
			t.Fatal(err)
		}
		img, err := Image([]v1.Layer{l}, Config{Entrypoint: []string{"/usr/local/bin/tool"}})
		if err != nil {
			t.Fatal(err)
		}
		return digest(t, img)
	}
	first := build(files)
	if err := os.Chtimes(src, Epoch.AddDate(30, 0, 0), Epoch.AddDate(30, 0, 0)); err != nil {
		t.Fatal(err)
	}
	if second := build([]File{files[1], files[0]}); second != first {
		t.Errorf("digests differ: %s, %s", first, second)
	}
	if changed := build([]File{files[0], {Path: "/etc/motd", Mode: 0o644, Data: []byte("ho")}}); changed == first {
		t.Error("different content, same digest")
	}
	if _, err := Layer([]File{{Path: "relative", Data: []byte("x")}}); err == nil {
		t.Error("a relative path was accepted")
	}
}

// The three images: built from binaries compiled twice, they have the same
// digest; each is linux/amd64, runs as nonroot and starts its binary.
func TestCatalog(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go binaries")
	}
	ctx := context.Background()
	root := moduleRoot(t)
	build := func(pkg string) string {
		out := filepath.Join(t.TempDir(), filepath.Base(pkg))
		if err := GoBuild(ctx, root, pkg, out, ""); err != nil {
			t.Fatal(err)
		}
		return out
	}
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, pkg  string
		make       func(bin string) (v1.Image, error)
		entrypoint string
	}{
		{"pause", "./internal/images/pause", func(bin string) (v1.Image, error) { return Pause(bin, Meta{Version: "test"}) }, "/pause"},
		{"demo-app", "./examples/demo-app", func(bin string) (v1.Image, error) { return Demo(bin, Meta{Version: "test"}) }, "/demo-app"},
		{"clustersync (pause binary standing in for the control plane)", "./internal/images/pause", func(bin string) (v1.Image, error) {
			return Clustersync(ClustersyncSources{Binary: bin, ControlPlane: []string{bin}, CACertificates: ca, Meta: Meta{Version: "test"}})
		}, "/clustersync"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := tc.make(build(tc.pkg))
			if err != nil {
				t.Fatal(err)
			}
			b, err := tc.make(build(tc.pkg))
			if err != nil {
				t.Fatal(err)
			}
			if digest(t, a) != digest(t, b) {
				t.Errorf("two builds differ: %s, %s", digest(t, a), digest(t, b))
			}
			cf, err := a.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.OS != "linux" || cf.Architecture != "amd64" || cf.Config.User != "65532:65532" || len(cf.Config.Entrypoint) == 0 || cf.Config.Entrypoint[0] != tc.entrypoint {
				t.Errorf("config: os %s arch %s user %q entrypoint %v", cf.OS, cf.Architecture, cf.Config.User, cf.Config.Entrypoint)
			}
			if !cf.Created.Time.Equal(Epoch) {
				t.Errorf("created %s", cf.Created)
			}
		})
	}
}

// A dynamically linked binary is refused by name: the images have no C
// library.
func TestDynamicRefused(t *testing.T) {
	dynamic := "/bin/ls"
	if _, err := os.Stat(dynamic); err != nil {
		t.Skip("no /bin/ls")
	}
	_, err := Pause(dynamic, Meta{Version: "test"})
	if err == nil || !strings.Contains(err.Error(), "/bin/ls is dynamically linked") {
		t.Errorf("err = %v", err)
	}
}

// The busybox image: /bin/busybox and a link to it for each applet, sh as
// its command, root as its user; and its reference is the virtual
// clusters' default rewrite-hosts image.
func TestBusybox(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go binary")
	}
	bin := filepath.Join(t.TempDir(), "busybox") // a static stand-in
	if err := GoBuild(context.Background(), moduleRoot(t), "./internal/images/pause", bin, ""); err != nil {
		t.Fatal(err)
	}
	img, err := Busybox(bin, Meta{Version: BusyboxTag})
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "" || len(cf.Config.Cmd) != 1 || cf.Config.Cmd[0] != "sh" || cf.Config.Env[0] != "PATH=/bin" {
		t.Errorf("config: user %q cmd %v env %v", cf.Config.User, cf.Config.Cmd, cf.Config.Env)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	links := map[string]string{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeSymlink {
			links[h.Name] = h.Linkname
		} else if h.Name == "bin/busybox" && h.Mode != 0o755 {
			t.Errorf("bin/busybox mode %o", h.Mode)
		}
	}
	for _, a := range []string{"sh", "sed"} {
		if links["bin/"+a] != "busybox" {
			t.Errorf("bin/%s links to %q", a, links["bin/"+a])
		}
	}
	if want := Reference(DefaultRegistry, BusyboxRepository, BusyboxTag); config.DefaultRewriteHostsImage != want {
		t.Errorf("the default rewrite-hosts image is %s, the busybox image %s", config.DefaultRewriteHostsImage, want)
	}
	if BusyboxTag != binaries.BusyboxVersion {
		t.Errorf("BusyboxTag %s, binaries.BusyboxVersion %s", BusyboxTag, binaries.BusyboxVersion)
	}
}
