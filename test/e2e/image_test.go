package e2e

import (
	"archive/tar"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/proc"
	"github.com/clustersync/clustersync/internal/registry"
)

// standInControlPlane builds static stand-ins for kube-apiserver,
// kube-controller-manager and kube-scheduler (the sandbox program), so that tests of the
// clustersync image do not need the 15-minute static control-plane build,
// points CLUSTERSYNC_STATIC_KUBE_DIR at them and returns the source tree.
func standInControlPlane(t *testing.T) string {
	t.Helper()
	static := t.TempDir()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		if err := images.GoBuild(ctx, root, "./internal/images/pause", filepath.Join(static, n), ""); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("CLUSTERSYNC_STATIC_KUBE_DIR", static)
	return root
}

// `dev up` starts the local registry, `dev image` builds the three images
// and pushes them there, the clustersync binary in the pushed image runs,
// and `dev down` stops the registry and removes its images.
func TestDevImage(t *testing.T) {
	root := standInControlPlane(t)

	out := cli(t, "dev", "up", "--runtime", "fake", "--fake-nodes", "0")
	t.Cleanup(func() { devDown(t) })
	m := regexp.MustCompile(`Registry: +http://(127\.0\.0\.1:\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("dev up does not print the registry:\n%s", out)
	}
	addr := m[1]
	if st := cli(t, "dev", "status"); !strings.Contains(st, "Registry:    http://"+addr) {
		t.Errorf("dev status does not show the registry:\n%s", st)
	}

	out = cli(t, "dev", "image", "--source", root, "--tag", "e2e")
	for _, repo := range []string{images.ClustersyncRepository, images.PauseRepository, images.DemoRepository} {
		if !strings.Contains(out, addr+"/"+repo+":e2e  sha256:") {
			t.Errorf("dev image does not report %s:\n%s", repo, out)
		}
	}

	// The clustersync binary of the pushed image (pulled by its latest tag,
	// the one --agent-image names by default) runs and knows its version.
	ref, err := name.ParseReference(addr+"/"+images.ClustersyncRepository+":latest", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil || cf.Config.User != "65532:65532" || cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Fatalf("config %+v (%v)", cf, err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "clustersync")
	found := map[string]bool{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			found[h.Name] = true
			if h.Name == "clustersync" {
				f, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := io.Copy(f, tr); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
		}
		rc.Close()
	}
	for _, want := range []string{"clustersync", "usr/local/bin/kube-apiserver", "usr/local/bin/kube-controller-manager", "etc/ssl/certs/ca-certificates.crt", "etc/passwd"} {
		if !found[want] {
			t.Errorf("the clustersync image lacks %s", want)
		}
	}
	// The image's clustersync is this clustersync's version and commit,
	// whatever the tag.
	v, err := exec.Command(bin, "version").CombinedOutput()
	if want, _, _ := strings.Cut(cli(t, "version"), "\n"); err != nil || !strings.HasPrefix(string(v), want+"\n") {
		t.Errorf("the image's clustersync version: %v\n%s\nwant %s", err, v, want)
	}

	st, ok := registry.Running(filepath.Join(tests.Dir, "host", "registry"))
	if !ok {
		t.Fatal("no registry status")
	}
	cli(t, "dev", "down")
	if proc.Alive(st.PID) {
		t.Errorf("registry (pid %d) still runs after dev down", st.PID)
	}
	if _, err := os.Stat(filepath.Join(tests.Dir, "host", "registry")); !os.IsNotExist(err) {
		t.Errorf("registry state left after dev down (%v)", err)
	}
}
