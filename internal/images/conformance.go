package images

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/clustersync/clustersync/internal/binaries"
)

// KubernetesRegistry is the registry the Kubernetes end-to-end tests pull
// their images from; the local real node mirrors it to the local registry
// (internal/hostcluster), where make conformance pushes
// ConformanceImages under the same repository paths.
const KubernetesRegistry = "registry.k8s.io"

// ConformanceImage is one image the [Conformance] tests of Kubernetes
// v1.37.0 pull (k8s.io/kubernetes/test/utils/image/manifest.go), built
// here without a container engine.
type ConformanceImage struct {
	// Repository is its path under KubernetesRegistry, e.g.
	// "e2e-test-images/agnhost".
	Repository string
	// Tag is the tag the tests name, e.g. "2.66.1".
	Tag string
	// Image is the image.
	Image v1.Image
	// Check is a command that runs the image's main program once and exits
	// 0 when the image works (CheckImage runs it).
	Check []string
}

// Reference is KubernetesRegistry/Repository:Tag, the name the tests use.
func (c ConformanceImage) Reference() string {
	return Reference(KubernetesRegistry, c.Repository, c.Tag)
}

// ConformanceImages builds every image the [Conformance] tests pull, from
// the programs and userlands of s (hack/build-binaries.sh conformance) and
// the static pause program (internal/images/pause):
//
//   - e2e-test-images/agnhost:2.66.1 and :2.55: /agnhost (entrypoint,
//     command pause), /agnhost-2, porter's certificate, on the agnhost
//     userland (dig, nc, curl, ip, socat, iperf, bash, busybox applets).
//   - e2e-test-images/busybox:1.37.0-2: Debian's busybox with its applets.
//   - e2e-test-images/nginx:1.27.0-2 and :1.28.0-2: Debian's nginx on :80.
//   - e2e-test-images/glibc-dns-testing:2.1.1: Debian's required packages
//     and dnsutils.
//   - e2e-test-images/nautilus:1.8 and kitten:1.8: agnhost with their pages,
//     serving them (test-webserver).
//   - e2e-test-images/nonewprivs:1.4: the setuid-root nnp on busybox.
//   - e2e-test-images/sample-apiserver:1.29.2 and etcd:3.7.0-0: the static
//     servers.
//   - pause:3.10.2: the pause program.
//
// Images of two tags differ in their version label, so the tests that
// change an image see another digest. Errors name a missing input.
func ConformanceImages(s binaries.ConformanceSet, pause string) ([]ConformanceImage, error) {
	// tree is the layer of a folder: a userland of s.Userland, or the
	// pages in s.Files.
	tree := func(dir string) (v1.Layer, error) {
		files, err := TreeFiles(dir)
		if err != nil {
			return nil, err
		}
		return Layer(files)
	}
	userlandPath := "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	agnhostBase, err := tree(filepath.Join(s.Userland, "agnhost"))
	if err != nil {
		return nil, err
	}
	agnhostProgram, err := Layer([]File{
		{Path: "/agnhost", Mode: 0o755, Source: s.Agnhost},
		{Path: "/agnhost-2", Link: "agnhost"},
		{Path: "/localhost.crt", Mode: 0o644, Source: filepath.Join(s.Files, "porter", "localhost.crt")},
		{Path: "/localhost.key", Mode: 0o644, Source: filepath.Join(s.Files, "porter", "localhost.key")},
		{Path: "/uploads", Mode: 0o777, Dir: true},
	})
	if err != nil {
		return nil, err
	}
	busybox, err := tree(filepath.Join(s.Userland, "busybox"))
	if err != nil {
		return nil, err
	}
	nginx, err := tree(filepath.Join(s.Userland, "nginx"))
	if err != nil {
		return nil, err
	}
	dns, err := tree(filepath.Join(s.Userland, "glibc-dns-testing"))
	if err != nil {
		return nil, err
	}
	nautilus, err := tree(filepath.Join(s.Files, "nautilus"))
	if err != nil {
		return nil, err
	}
	kitten, err := tree(filepath.Join(s.Files, "kitten"))
	if err != nil {
		return nil, err
	}
	for _, bin := range []string{s.Agnhost, s.Nonewprivs, s.SampleAPIServer, s.Etcd, pause} {
		if err := requireStatic(bin); err != nil {
			return nil, err
		}
	}
	nnp, err := Layer([]File{{Path: "/usr/local/bin/nnp", Mode: 0o4755, Source: s.Nonewprivs}})
	if err != nil {
		return nil, err
	}
	sampleAPIServer, err := Layer([]File{{Path: "/sample-apiserver", Mode: 0o755, Source: s.SampleAPIServer}})
	if err != nil {
		return nil, err
	}
	etcdLayer, err := Layer([]File{{Path: "/usr/local/bin/etcd", Mode: 0o755, Source: s.Etcd}, {Path: "/tmp", Mode: 0o1777, Dir: true}})
	if err != nil {
		return nil, err
	}
	pauseLayer, err := Layer([]File{{Path: "/pause", Mode: 0o755, Source: pause}})
	if err != nil {
		return nil, err
	}

	agnhostCheck := []string{"/bin/sh", "-c", "/agnhost --help >/dev/null && dig -v && nc -h 2>&1 | head -1 && curl --version | head -1 && ip -V && socat -V | head -1 && wget --help 2>&1 | head -1"}
	type spec struct {
		repository string
		tags       []string
		layers     []v1.Layer
		config     Config
		check      []string
	}
	specs := []spec{
		{"e2e-test-images/agnhost", []string{"2.66.1", "2.55"}, []v1.Layer{agnhostBase, agnhostProgram},
			Config{Entrypoint: []string{"/agnhost"}, Cmd: []string{"pause"}, Env: []string{userlandPath}}, agnhostCheck},
		{"e2e-test-images/busybox", []string{"1.37.0-2"}, []v1.Layer{busybox},
			Config{Cmd: []string{"sh"}, Env: []string{userlandPath}}, []string{"/bin/sh", "-c", "echo ok && ls / >/dev/null && wget --help 2>&1 | head -1"}},
		{"e2e-test-images/nginx", []string{"1.27.0-2", "1.28.0-2"}, []v1.Layer{nginx},
			Config{Cmd: []string{"nginx", "-g", "daemon off;"}, Env: []string{userlandPath}}, []string{"nginx", "-t"}},
		{"e2e-test-images/glibc-dns-testing", []string{"2.1.1"}, []v1.Layer{dns},
			Config{Cmd: []string{"bash"}, Env: []string{userlandPath}}, []string{"dig", "-v"}},
		{"e2e-test-images/nautilus", []string{"1.8"}, []v1.Layer{agnhostBase, agnhostProgram, nautilus},
			Config{Entrypoint: []string{"/agnhost"}, Cmd: []string{"test-webserver"}, Env: []string{userlandPath}}, []string{"/bin/sh", "-c", "test -s /nautilus.jpg && test -s /data.json && /agnhost test-webserver --help >/dev/null"}},
		{"e2e-test-images/kitten", []string{"1.8"}, []v1.Layer{agnhostBase, agnhostProgram, kitten},
			Config{Entrypoint: []string{"/agnhost"}, Cmd: []string{"test-webserver"}, Env: []string{userlandPath}}, []string{"/bin/sh", "-c", "test -s /kitten.jpg && test -s /data.json && /agnhost test-webserver --help >/dev/null"}},
		{"e2e-test-images/nonewprivs", []string{"1.4"}, []v1.Layer{busybox, nnp},
			Config{Cmd: []string{"nnp"}, Env: []string{userlandPath}}, []string{"/usr/local/bin/nnp"}},
		{"e2e-test-images/sample-apiserver", []string{"1.29.2"}, []v1.Layer{sampleAPIServer},
			Config{Entrypoint: []string{"/sample-apiserver"}}, []string{"/sample-apiserver", "--help"}},
		{"etcd", []string{"3.7.0-0"}, []v1.Layer{etcdLayer},
			Config{Cmd: []string{"/usr/local/bin/etcd"}, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}}, []string{"/usr/local/bin/etcd", "--version"}},
		{"pause", []string{"3.10.2"}, []v1.Layer{pauseLayer},
			Config{Entrypoint: []string{"/pause"}, User: "65535:65535"}, []string{"/pause", "-v"}},
	}
	var out []ConformanceImage
	for _, sp := range specs {
		for _, tag := range sp.tags {
			c := sp.config
			c.Labels = labels(path.Base(sp.repository), Meta{Version: tag})
			img, err := Image(sp.layers, c)
			if err != nil {
				return nil, fmt.Errorf("images: %s:%s: %w", sp.repository, tag, err)
			}
			out = append(out, ConformanceImage{Repository: sp.repository, Tag: tag, Image: img, Check: sp.check})
		}
	}
	return out, nil
}

// TreeFiles lists the folder root as the Files of a layer: root is the
// image's /, each entry keeps its permission bits (setuid, setgid and
// sticky included), its owner and group, and a symbolic link its target.
// Devices, sockets and pipes are left out (the runtime makes /dev).
// Errors name the path that cannot be read.
func TreeFiles(root string) ([]File, error) {
	var files []File
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		f := File{Path: "/" + filepath.ToSlash(rel), Mode: tarMode(info.Mode())}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			f.Owner, f.Group = int(st.Uid), int(st.Gid)
			if f.Group == f.Owner {
				f.Group = 0
			}
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			if f.Link, err = os.Readlink(p); err != nil {
				return err
			}
		case info.IsDir():
			f.Dir = true
		case info.Mode().IsRegular():
			f.Source = p
		default:
			return nil
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("images: %w", err)
	}
	return files, nil
}

// tarMode is m's permission bits as a tar header's mode (c_ISUID 04000,
// c_ISGID 02000, c_ISVTX 01000).
func tarMode(m fs.FileMode) int64 {
	mode := int64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}
