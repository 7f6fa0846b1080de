package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/ports"
	"github.com/clustersync/clustersync/internal/registry"
	"github.com/clustersync/clustersync/internal/version"
)

// registryDir is the state folder of the local registry of the host
// cluster in hostDir.
func registryDir(hostDir string) string { return filepath.Join(hostDir, "registry") }

// registryAddr returns the address the local registry of hostDir listens
// on: the one recorded in its state folder, else a loopback port leased
// from the machine's port registry (package ports) to that folder,
// recorded there so that the address stays the same across restarts (the
// node's runtime configuration names it) and no other local server is
// handed the port while the registry is stopped.
func registryAddr(ctx context.Context, hostDir string) (string, error) {
	dir, err := filepath.Abs(registryDir(hostDir))
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	file := filepath.Join(dir, "addr")
	if data, err := os.ReadFile(file); err == nil {
		addr := strings.TrimSpace(string(data))
		_, p, err := net.SplitHostPort(addr)
		port, perr := strconv.Atoi(p)
		if err != nil || perr != nil {
			return "", fmt.Errorf("%s: %q is not host:port", file, addr)
		}
		return addr, ports.Default().Hold(ctx, dir, []int{port})
	}
	leased, err := ports.Default().Reserve(ctx, dir, 1)
	if err != nil {
		return "", err
	}
	addr := "127.0.0.1:" + strconv.Itoa(leased[0])
	return addr, os.WriteFile(file, []byte(addr+"\n"), 0o600)
}

// launchRegistry starts the local registry of hostDir in the background (or
// finds it running) and returns its address. With forPods it also serves
// pulls on the real node's address (registryPodAddr).
func launchRegistry(ctx context.Context, hostDir string, forPods bool) (string, error) {
	addr, err := registryAddr(ctx, hostDir)
	if err != nil {
		return "", err
	}
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	podAddr := ""
	if forPods {
		podAddr = registryPodAddr(addr)
	}
	st, err := registry.Launch(ctx, exe, registryDir(hostDir), addr, podAddr)
	if err != nil {
		return "", err
	}
	return st.Addr, nil
}

// registryPodAddr is where the real node's pods pull from the registry at
// addr (host:port on loopback): the node's address, the same port.
func registryPodAddr(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return net.JoinHostPort(hostcluster.RealNodeIP().String(), port)
}

// newDevRegistryCommand returns `clustersync dev registry`.
func newDevRegistryCommand() *cobra.Command {
	var dir, addr, podAddr string
	cmd := &cobra.Command{
		Use:   "registry",
		Short: "Serve the local OCI registry in the foreground (`dev up` runs it in the background)",
		Long: `Serve the local OCI registry the local host's container runtime pulls
clustersync's images from: go-containerregistry's registry over plain HTTP,
blobs on disk, manifests kept in a journal so that images survive a restart.
` + "`clustersync dev up`" + ` runs it in the background on a loopback port it keeps in
<dir>/registry/addr and, with the real node, also serves pulls (GET and HEAD
only) for the node's pods on the node's address, the same port (e.g.
10.244.0.1:PORT): a pod can fetch what this machine pushed, such as a chart
of experimental.deploy (oci://10.244.0.1:PORT/charts). ` + "`clustersync dev down`" + ` stops
it and removes its images.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d := dir
			if d == "" {
				d = registryDir(hostDir(""))
			}
			if addr == "" {
				a, err := registryAddr(cmd.Context(), filepath.Dir(d))
				if err != nil {
					return err
				}
				addr = a
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return registry.Serve(ctx, d, addr, podAddr)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "state folder of the registry (default the host cluster's, $CLUSTERSYNC_HOME/host/registry)")
	cmd.Flags().StringVar(&addr, "addr", "", "host:port to listen on (default the address recorded beside --dir, else a free loopback port)")
	cmd.Flags().StringVar(&podAddr, "pod-addr", "", "host:port to serve pulls on (GET and HEAD only) for the real node's pods, bound once that address exists, e.g. 10.244.0.1:PORT (dev up sets it with the real node)")
	return cmd
}

// newDevImageCommand returns `clustersync dev image`.
func newDevImageCommand() *cobra.Command {
	var (
		dir, repo, source, ca, tag string
		latest, conformance        bool
	)
	cmd := &cobra.Command{
		Use:   "image",
		Short: "Build clustersync's images without Docker and push them (the local registry, or --repo)",
		Long: `Build clustersync's container images with go-containerregistry (no container
engine) and push them:

  <registry>/clustersync/clustersync:<tag>  clustersync (static), kube-apiserver,
                                            kube-controller-manager and kube-scheduler (static),
                                            CA certificates, user nonroot (65532)
  <registry>/clustersync/pause:<tag>        the sandbox image of the local real node
  <registry>/clustersync/local-path-helper:<tag>
                                            the local real node's storage helper
  <registry>/clustersync/demo-app:<tag>     the demo web server (examples/demo-app)

Builds are reproducible (same sources, same digests) and linux/amd64. The
registry is the local one of ` + "`clustersync dev up`" + ` (plain HTTP on loopback)
unless --repo names another (credentials from the Docker config). The static
control-plane binaries come from ` + "`hack/build-binaries.sh static`" + `, which
` + "`make image`" + ` runs first. Run it from the clustersync source tree, or give --source.

--conformance builds and pushes, instead, the images the [Conformance] tests of
Kubernetes ` + binaries.KubernetesVersion + ` pull, under their registry.k8s.io paths
(<registry>/e2e-test-images/agnhost:2.66.1, <registry>/pause:3.10.2, …; the local
real node mirrors registry.k8s.io to the local registry): agnhost, nonewprivs,
sample-apiserver and etcd from their Go sources, pause of our own, busybox, nginx
and the DNS-testing userland from Debian packages. ` + "`hack/build-binaries.sh conformance`" + `
builds their inputs (make conformance runs both). Each image is checked before
it is pushed by running its main program once, chrooted in the unpacked image,
which needs root. docs/conformance.md has the list.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			start := time.Now()
			source, err := sourceTree(source)
			if err != nil {
				return err
			}
			reg, insecure := repo, false
			if reg == "" {
				st, ok := registry.Running(registryDir(hostDir(dir)))
				if !ok {
					return fmt.Errorf("no local registry runs for %s: start the host with `clustersync dev up`, or give --repo (or IMAGE_REPO to make image)", hostDir(dir))
				}
				reg, insecure = st.Addr, true
			}
			if conformance {
				if err := pushConformanceImages(cmd.Context(), out, source, reg, insecure); err != nil {
					return err
				}
				fmt.Fprintf(out, "Done in %.1f s.\n", time.Since(start).Seconds())
				return nil
			}
			if tag == "" {
				tag = version.Version()
			}
			tags := []string{tag}
			if latest && tag != "latest" {
				tags = append(tags, "latest")
			}
			if err := buildAndPushImages(cmd.Context(), out, source, reg, insecure, tags, ca); err != nil {
				return err
			}
			fmt.Fprintf(out, "Done in %.1f s.\n", time.Since(start).Seconds())
			return nil
		},
	}
	addDirFlag(cmd, &dir)
	cmd.Flags().StringVar(&repo, "repo", "", "registry host (and optional path) to push to, e.g. ghcr.io/me (default the local registry of --dir)")
	cmd.Flags().StringVar(&source, "source", "", "the clustersync source tree (default the one that holds the current folder)")
	cmd.Flags().StringVar(&ca, "ca-certificates", defaultCABundle, "CA bundle for the clustersync image")
	cmd.Flags().StringVar(&tag, "tag", "", "image tag (default this clustersync's version)")
	cmd.Flags().BoolVar(&latest, "latest", true, "also tag the images latest (the reference --agent-image uses by default)")
	cmd.Flags().BoolVar(&conformance, "conformance", false, "build, check and push the images of the Kubernetes conformance tests instead (registry.k8s.io paths; needs root)")
	return cmd
}

// pushConformanceImages builds the images of the Kubernetes conformance
// tests (images.ConformanceImages) from the inputs of
// `hack/build-binaries.sh conformance` and the pause program of source, checks each (images.CheckImage) and pushes it to reg
// under its registry.k8s.io repository and tag. Errors name the missing
// input with the command that builds it, or the image that failed its
// check with the command's output.
func pushConformanceImages(ctx context.Context, out io.Writer, source, reg string, insecure bool) error {
	start := time.Now()
	set := binaries.Conformance()
	if err := set.Check(); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "clustersync-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	pause := filepath.Join(work, "pause")
	if err := images.GoBuild(ctx, source, "./internal/images/pause", pause, ""); err != nil {
		return err
	}
	built, err := images.ConformanceImages(set, pause)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Checking and pushing the %d images of the Kubernetes conformance tests to %s (as %s/…)\n", len(built), reg, images.KubernetesRegistry)
	for _, c := range built {
		t0 := time.Now()
		if _, err := images.CheckImage(ctx, c.Image, c.Check, 2*time.Minute); err != nil {
			return fmt.Errorf("%s does not work: %w", c.Reference(), err)
		}
		d, size, err := images.Push(ctx, c.Image, reg, c.Repository, []string{c.Tag}, insecure)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  %s  %s  %.1f MB  checked (%s) and pushed in %.1f s\n", c.Reference(), d, float64(size)/1e6,
			strings.Join(c.Check, " "), time.Since(t0).Seconds())
	}
	fmt.Fprintf(out, "Built, checked and pushed in %.1f s.\n", time.Since(start).Seconds())
	return nil
}

// defaultCABundle is the CA bundle the clustersync image holds unless
// `dev image --ca-certificates` names another: Debian's.
const defaultCABundle = "/etc/ssl/certs/ca-certificates.crt"

// staticControlPlane returns the static kube-apiserver,
// kube-controller-manager and kube-scheduler the clustersync image holds, from the static
// Kubernetes build of the cache (binaries.Release; $CLUSTERSYNC_STATIC_KUBE_DIR overrides
// it), or an error with the command that builds them.
func staticControlPlane() ([]string, error) {
	controlPlane := binaries.Release().ControlPlane["amd64"]
	for _, b := range controlPlane {
		if _, err := os.Stat(b); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s is missing: build the static control plane with `hack/build-binaries.sh static` (make image does)", b)
		}
	}
	return controlPlane, nil
}

// buildAndPushImages builds clustersync's images (images.BuildAll) from the
// source tree source, the control-plane binaries from staticControlPlane,
// and pushes each to registry reg under every tag of tags (the first is
// the one printed), over plain HTTP when insecure; then the busybox image
// (rewrite-hosts) under images.BusyboxTag, when the cache has its binary.
// ca is the CA bundle the clustersync image holds.
func buildAndPushImages(ctx context.Context, out io.Writer, source, reg string, insecure bool, tags []string, ca string) error {
	start := time.Now()
	controlPlane, err := staticControlPlane()
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "clustersync-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	fmt.Fprintf(out, "Building images (version %s, tags %s) in %s…\n", version.Version(), strings.Join(tags, ", "), work)
	built, err := images.BuildAll(ctx, images.BuildOptions{ModuleDir: source, WorkDir: work, Version: version.Version(), Commit: version.Commit(),
		ControlPlane: controlPlane, CACertificates: ca})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Built in %.1f s; pushing to %s\n", time.Since(start).Seconds(), reg)
	for _, b := range built {
		d, size, err := images.Push(ctx, b.Image, reg, b.Repository, tags, insecure)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  %s  %s  %.1f MB\n", images.Reference(reg, b.Repository, tags[0]), d, float64(size)/1e6)
	}
	bb := images.Reference(reg, images.BusyboxRepository, images.BusyboxTag)
	switch d, size, err := pushBusybox(ctx, reg, insecure); {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(out, "  (no %s: %v)\n", bb, err)
	case err != nil:
		return err
	default:
		fmt.Fprintf(out, "  %s  %s  %.1f MB\n", bb, d, float64(size)/1e6)
	}
	return nil
}

// pushBusybox builds the busybox image (images.Busybox) from the cached
// busybox-static (binaries.NodeSet.Busybox) and pushes it to registry reg
// as images.BusyboxRepository:images.BusyboxTag, over plain HTTP when
// insecure. It returns the image's digest and size, or an error wrapping
// fs.ErrNotExist, with the command that fetches it, when the cache lacks
// the binary.
func pushBusybox(ctx context.Context, reg string, insecure bool) (v1.Hash, int64, error) {
	bin := binaries.Node().Busybox
	if _, err := os.Stat(bin); err != nil {
		return v1.Hash{}, 0, fmt.Errorf("%w; `make binaries` (hack/build-binaries.sh node) fetches it", err)
	}
	img, err := images.Busybox(bin, images.Meta{Version: images.BusyboxTag})
	if err != nil {
		return v1.Hash{}, 0, err
	}
	return images.Push(ctx, img, reg, images.BusyboxRepository, []string{images.BusyboxTag}, insecure)
}

// ensureImages pushes to the local registry at reg the images that must be
// there before the real node and `virtual create` run, unless they are
// there already, saying what it pushes and how long it took:
//   - the node's sandbox image and its storage provisioner's helper, built
//     from the clustersync source tree (sourceTree(source); seconds);
//   - the rewrite-hosts image of virtual clusters' StatefulSet pods
//     (images.Busybox, from the cached busybox-static; seconds);
//   - with clustersync, the demo web server (examples/demo-app, tag
//     latest) that docs/virtual-clusters.md runs, and the clustersync
//     image under tag latest, which
//     `virtual create` installs by default (the chart's appVersion): built
//     from the source tree and the static control plane (a link and a
//     push, about 20 seconds, after `make build`).
//
// What cannot be built here (no source tree, a missing binary) is said in
// one line with the command that provides it; only a registry that fails
// is an error.
func ensureImages(ctx context.Context, out io.Writer, source, reg string, clustersync bool) error {
	missing := func(repository, tag string) (bool, error) {
		ok, err := images.Exists(ctx, reg, repository, tag, true)
		if err != nil {
			return false, fmt.Errorf("local registry %s: %w", reg, err)
		}
		return !ok, nil
	}
	// The tags the real node and the docs name; the demo only with
	// clustersync.
	tags := map[string]string{images.PauseRepository: hostcluster.RealNodePauseTag,
		images.LocalPathHelperRepository: hostcluster.RealNodeLocalPathHelperTag}
	if clustersync {
		tags[images.DemoRepository] = "latest"
	}
	for _, ni := range images.SourceImages() {
		tag, ok := tags[ni.Repository]
		if !ok {
			continue
		}
		m, err := missing(ni.Repository, tag)
		if err != nil {
			return err
		}
		if !m {
			continue
		}
		tree, err := sourceTree(source)
		if err != nil {
			fmt.Fprintf(out, "The registry lacks %s and %v: pods that need it wait until `make image` pushes it.\n",
				images.Reference(images.DefaultRegistry, ni.Repository, tag), err)
			continue
		}
		if err := pushSourceImage(ctx, tree, reg, ni.Package, ni.Repository, tag, ni.Build); err != nil {
			return err
		}
		fmt.Fprintf(out, "Pushed %s\n", images.Reference(reg, ni.Repository, tag))
	}

	busybox := images.Reference(images.DefaultRegistry, images.BusyboxRepository, images.BusyboxTag)
	m, err := missing(images.BusyboxRepository, images.BusyboxTag)
	if err != nil {
		return err
	}
	if m {
		switch _, _, err := pushBusybox(ctx, reg, true); {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(out, "No %s (the rewrite-hosts image of StatefulSet pods in virtual clusters): %v.\n", busybox, err)
		case err != nil:
			return err
		default:
			fmt.Fprintf(out, "Pushed %s (Debian's busybox-static; the rewrite-hosts image of StatefulSet pods)\n", busybox)
		}
	}

	if !clustersync {
		return nil
	}
	tag := version.ImageTag(version.Version()) // what the embedded chart deploys
	ref := images.Reference(images.DefaultRegistry, images.ClustersyncRepository, tag)
	m, err = missing(images.ClustersyncRepository, tag)
	if err != nil || !m {
		return err
	}
	tree, err := sourceTree(source)
	if err != nil {
		fmt.Fprintf(out, "The registry lacks %s, which `virtual create` installs, and %v: run `make image` from the clustersync source tree.\n", ref, err)
		return nil
	}
	controlPlane, err := staticControlPlane()
	if err != nil {
		fmt.Fprintf(out, "The registry lacks %s, which `virtual create` installs: %v.\n", ref, err)
		return nil
	}
	start := time.Now()
	fmt.Fprintf(out, "Building %s from %s, which `virtual create` installs (about 20 seconds after `make build`)…\n", ref, tree)
	work, err := os.MkdirTemp("", "clustersync-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	img, err := images.BuildClustersync(ctx, images.BuildOptions{ModuleDir: tree, WorkDir: work, Version: version.Version(), Commit: version.Commit(),
		ControlPlane: controlPlane, CACertificates: defaultCABundle})
	if err != nil {
		return err
	}
	if _, _, err := images.Push(ctx, img, reg, images.ClustersyncRepository, []string{tag}, true); err != nil {
		return err
	}
	fmt.Fprintf(out, "Pushed %s in %.1f s (`make image` rebuilds it after a change of the source).\n", ref, time.Since(start).Seconds())
	return nil
}

// pushSourceImage builds package pkg of the clustersync source tree
// source as a static binary, makes an image of it with build and pushes
// that to the local registry reg as repository:tag.
func pushSourceImage(ctx context.Context, source, reg, pkg, repository, tag string, build func(binary string, m images.Meta) (v1.Image, error)) error {
	work, err := os.MkdirTemp("", "clustersync-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	bin := filepath.Join(work, filepath.Base(pkg))
	if err := images.GoBuild(ctx, source, pkg, bin, ""); err != nil {
		return err
	}
	img, err := build(bin, images.Meta{Version: version.Version(), Revision: version.Commit()})
	if err != nil {
		return err
	}
	_, _, err = images.Push(ctx, img, reg, repository, []string{tag}, true)
	return err
}

// sourceTree returns the clustersync source tree: dir when given (an error
// when it is not one), else the nearest folder at or above the current one
// that holds cmd/clustersync and internal/images.
func sourceTree(dir string) (string, error) {
	isTree := func(d string) bool {
		for _, sub := range []string{"cmd/clustersync", "internal/images/pause", "go.mod"} {
			if _, err := os.Stat(filepath.Join(d, sub)); err != nil {
				return false
			}
		}
		return true
	}
	if dir != "" {
		if !isTree(dir) {
			return "", fmt.Errorf("--source %s: not the clustersync source tree (no cmd/clustersync, internal/images/pause, go.mod)", dir)
		}
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if isTree(d) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%s is not in the clustersync source tree (give --source)", wd)
		}
	}
}
