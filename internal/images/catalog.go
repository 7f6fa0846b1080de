package images

import (
	"cmp"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The repositories of clustersync's images, under DefaultRegistry or the
// registry `make image` pushes to.
const (
	// ClustersyncRepository holds the clustersync image: the manager, the
	// registered-cluster agent and the virtual control plane.
	ClustersyncRepository = "clustersync/clustersync"
	// PauseRepository holds the sandbox image of the local real node.
	PauseRepository = "clustersync/pause"
	// DemoRepository holds the demo web server (examples/demo-app).
	DemoRepository = "clustersync/demo-app"
	// LocalPathHelperRepository holds the helper of the local real node's
	// storage provisioner (internal/images/localpathhelper).
	LocalPathHelperRepository = "clustersync/local-path-helper"
	// BusyboxRepository holds Debian's busybox-static (Busybox): the
	// default image of the rewrite-hosts init container of virtual
	// clusters' StatefulSet pods, which runs sh and sed.
	BusyboxRepository = "clustersync/busybox"
	// BusyboxTag is the busybox version of BusyboxRepository's image
	// (Debian bookworm's busybox-static 1:1.35.0); the virtual clusters'
	// default rewrite-hosts image (internal/virtual/config) names it.
	BusyboxTag = "1.35.0"
	// DefaultRegistry is where released images live.
	DefaultRegistry = "ghcr.io"
)

// Reference returns registry/repository:tag.
func Reference(registry, repository, tag string) string {
	return registry + "/" + repository + ":" + tag
}

// ControlPlaneDir is where the clustersync image keeps the control-plane
// binaries (kube-apiserver, kube-controller-manager, kube-scheduler).
const ControlPlaneDir = "/usr/local/bin"

// ClustersyncSources are the inputs of the clustersync image.
type ClustersyncSources struct {
	// Binary is a statically linked linux/amd64 clustersync (GoBuild of
	// ./cmd/clustersync).
	Binary string
	// ControlPlane are statically linked binaries copied into
	// ControlPlaneDir under their base names (kube-apiserver,
	// kube-controller-manager, kube-scheduler).
	ControlPlane []string
	// CACertificates is a PEM bundle installed as
	// /etc/ssl/certs/ca-certificates.crt.
	CACertificates string
	// Meta are the image's version, revision and architecture; the
	// binaries must be for that architecture.
	Meta
}

// Meta is what an image of the catalog says of itself: its labels
// org.opencontainers.image.version and .revision (and .source, Source),
// and its architecture.
type Meta struct {
	// Version is the clustersync version it belongs to, e.g. "v0.2.0".
	Version string
	// Revision is the commit it was built from ("" for unknown).
	Revision string
	// Arch is "amd64" or "arm64" (Arches); "" means amd64.
	Arch string
}

// Source is the org.opencontainers.image.source label of clustersync's
// images: where their source lives.
const Source = "https://github.com/clustersync/clustersync"

func (m Meta) arch() string { return cmp.Or(m.Arch, "amd64") }

// Clustersync builds the clustersync image: /clustersync as the entrypoint,
// the control plane in ControlPlaneDir, the CA bundle, and user nonroot
// (65532) to run as. Errors name a binary that is not statically linked
// (it would need a C library the image does not have) or a missing file.
func Clustersync(s ClustersyncSources) (v1.Image, error) {
	for _, bin := range append([]string{s.Binary}, s.ControlPlane...) {
		if err := RequireStatic(bin, s.arch()); err != nil {
			return nil, err
		}
	}
	base, err := Layer(baseFiles(s.CACertificates))
	if err != nil {
		return nil, err
	}
	var cp []File
	for _, bin := range s.ControlPlane {
		cp = append(cp, File{Path: filepath.Join(ControlPlaneDir, filepath.Base(bin)), Mode: 0o755, Source: bin})
	}
	controlPlane, err := Layer(cp)
	if err != nil {
		return nil, err
	}
	app, err := Layer([]File{{Path: "/clustersync", Mode: 0o755, Source: s.Binary}})
	if err != nil {
		return nil, err
	}
	return Image([]v1.Layer{base, controlPlane, app}, Config{
		Entrypoint: []string{"/clustersync"},
		User:       fmt.Sprintf("%d:%d", NonRootUID, NonRootUID),
		Env:        []string{"PATH=" + ControlPlaneDir + ":/usr/bin:/bin", "HOME=/home/nonroot", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
		Labels:     labels("clustersync", s.Meta),
		Arch:       s.arch(),
	})
}

// Pause builds the sandbox image from the static binary of
// internal/images/pause.
func Pause(binary string, m Meta) (v1.Image, error) {
	if err := RequireStatic(binary, m.arch()); err != nil {
		return nil, err
	}
	l, err := Layer([]File{{Path: "/pause", Mode: 0o755, Source: binary}})
	if err != nil {
		return nil, err
	}
	return Image([]v1.Layer{l}, Config{Entrypoint: []string{"/pause"}, User: fmt.Sprintf("%d:%d", NonRootUID, NonRootUID), Labels: labels("pause", m), Arch: m.arch()})
}

// LocalPathHelper builds the image of the local real node's volume folder
// helper from its static binary (internal/images/localpathhelper). It runs
// as root: it makes folders in the node's volume folder, which root owns.
func LocalPathHelper(binary string, m Meta) (v1.Image, error) {
	if err := RequireStatic(binary, m.arch()); err != nil {
		return nil, err
	}
	l, err := Layer([]File{{Path: "/local-path-helper", Mode: 0o755, Source: binary}})
	if err != nil {
		return nil, err
	}
	return Image([]v1.Layer{l}, Config{Entrypoint: []string{"/local-path-helper"}, User: "0:0", Labels: labels("local-path-helper", m), Arch: m.arch()})
}

// BusyboxApplets returns the commands of the Busybox image, each a
// symbolic link to /bin/busybox in /bin: what the rewrite-hosts init
// container (sh, sed) and a user debugging it need.
func BusyboxApplets() []string {
	return []string{"sh", "sed", "cat", "cp", "grep", "ls", "echo", "hostname", "nslookup", "sleep", "env", "true"}
}

// Busybox builds the image of a statically linked busybox (Debian's
// busybox-static, /bin/busybox of its package): /bin/busybox, a link to it
// in /bin for each of BusyboxApplets(), PATH /bin, and /etc/passwd and
// /etc/group. It runs as root, as vCluster's library/alpine default does:
// the rewrite-hosts container writes a copy of /etc/hosts that every
// container of the pod then reads. Errors name a binary that is not
// statically linked.
func Busybox(binary string, m Meta) (v1.Image, error) {
	if err := RequireStatic(binary, m.arch()); err != nil {
		return nil, err
	}
	files := append(baseFiles(""), File{Path: "/bin/busybox", Mode: 0o755, Source: binary})
	for _, a := range BusyboxApplets() {
		files = append(files, File{Path: "/bin/" + a, Link: "busybox"})
	}
	l, err := Layer(files)
	if err != nil {
		return nil, err
	}
	return Image([]v1.Layer{l}, Config{Cmd: []string{"sh"}, Env: []string{"PATH=/bin"}, Labels: labels("busybox", m), Arch: m.arch()})
}

// Demo builds the demo web server's image from the static binary of
// examples/demo-app: `demo-app serve` on :8080 by default.
func Demo(binary string, m Meta) (v1.Image, error) {
	if err := RequireStatic(binary, m.arch()); err != nil {
		return nil, err
	}
	l, err := Layer(append(baseFiles(""), File{Path: "/demo-app", Mode: 0o755, Source: binary}))
	if err != nil {
		return nil, err
	}
	return Image([]v1.Layer{l}, Config{Entrypoint: []string{"/demo-app"}, Cmd: []string{"serve"},
		User: fmt.Sprintf("%d:%d", NonRootUID, NonRootUID), Labels: labels("demo-app", m), Arch: m.arch()})
}

// baseFiles are /etc/passwd and /etc/group with root and nonroot, their
// home folders, /tmp, and the CA bundle when caBundle is set.
func baseFiles(caBundle string) []File {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", NonRootUID, NonRootUID)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", NonRootUID)
	files := []File{
		{Path: "/etc/passwd", Mode: 0o644, Data: []byte(passwd)},
		{Path: "/etc/group", Mode: 0o644, Data: []byte(group)},
		{Path: "/root", Mode: 0o700, Dir: true},
		{Path: "/home/nonroot", Mode: 0o755, Dir: true, Owner: NonRootUID},
		{Path: "/tmp", Mode: 0o1777, Dir: true},
	}
	if caBundle != "" {
		files = append(files, File{Path: "/etc/ssl/certs/ca-certificates.crt", Mode: 0o644, Source: caBundle})
	}
	return files
}

// labels are an image's OCI labels: its title, m's version and revision
// (when known), and Source.
func labels(title string, m Meta) map[string]string {
	l := map[string]string{"org.opencontainers.image.title": title, "org.opencontainers.image.version": m.Version,
		"org.opencontainers.image.source": Source}
	if m.Revision != "" {
		l["org.opencontainers.image.revision"] = m.Revision
	}
	return l
}

// requireStatic fails unless path is an amd64 ELF executable without a
// dynamic loader (RequireStatic).
func requireStatic(path string) error { return RequireStatic(path, "amd64") }

// machines are the ELF machines of Arches.
var machines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// RequireStatic fails unless path is an ELF executable for arch ("amd64",
// "arm64": its ELF machine field) without a dynamic loader (PT_INTERP):
// the images carry no C library, and an arm64 image must not hold an
// amd64 program. Errors name the file and what it is.
func RequireStatic(path, arch string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("images: %s: %w", path, err)
	}
	defer f.Close()
	want, ok := machines[arch]
	if !ok {
		return fmt.Errorf("images: architecture %q: want amd64 or arm64", arch)
	}
	if f.Machine != want {
		return fmt.Errorf("images: %s is a %v executable, not %s (%v)", path, f.Machine, arch, want)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("images: %s is dynamically linked; the image has no C library (build it with CGO_ENABLED=0)", path)
		}
	}
	return nil
}

// GoBuild builds package pkg (a path relative to module folder dir, or an
// import path) into out as a static linux/amd64 binary (GoBuildFor).
func GoBuild(ctx context.Context, dir, pkg, out, ldflags string) error {
	return GoBuildFor(ctx, dir, pkg, out, "linux", "amd64", ldflags)
}

// GoBuildFor builds package pkg (a path relative to module folder dir, or
// an import path) into out as a static binary for goos/goarch ("linux",
// "arm64"), reproducibly: CGO_ENABLED=0, -trimpath, -buildvcs=false and
// -ldflags "-s -w -buildid= <ldflags>", so that two builds of one commit
// with one Go are byte-identical. Errors carry the go command's output.
func GoBuildFor(ctx context.Context, dir, pkg, out, goos, goarch, ldflags string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", strings.TrimSpace("-s -w -buildid= "+ldflags), "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, output)
	}
	return nil
}

// SourceImage is an image of the catalog made of one static program of
// the source tree.
type SourceImage struct {
	// Package is the program, relative to the module folder:
	// "./internal/images/pause".
	Package string
	// Repository is where it goes under a registry (PauseRepository).
	Repository string
	// Build makes the image from the program built for m.Arch.
	Build func(binary string, m Meta) (v1.Image, error)
	// Probes start the image's program to check it runs (a release starts
	// its arm64 images' programs under qemu-user-static).
	Probes []Probe
}

// Probe is one start of a program in an image that must end by itself and
// print Want: a check that the image's executables run on their
// architecture, without a container runtime.
type Probe struct {
	// Args are the command: Args[0] is a path in the image, e.g.
	// "/pause", the rest its arguments.
	Args []string
	// Want is a string the output (stdout and stderr) must hold.
	Want string
}

// SourceImages are the catalog's images of one program each: the real
// node's sandbox and storage helper, and the demo web server. `dev up`
// pushes them, and a release pushes each as a multi-arch index.
func SourceImages() []SourceImage {
	return []SourceImage{
		{"./internal/images/pause", PauseRepository, Pause, []Probe{{[]string{"/pause", "-v"}, "clustersync pause"}}},
		{"./internal/images/localpathhelper", LocalPathHelperRepository, LocalPathHelper, []Probe{{[]string{"/local-path-helper", "-h"}, "volume's folder"}}},
		{"./examples/demo-app", DemoRepository, Demo, []Probe{{[]string{"/demo-app", "get", "-h"}, "service-account"}}},
	}
}
