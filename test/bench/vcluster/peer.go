package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/images"
)

// The peer: vCluster's release, built here from the Go module proxy as its
// release pipeline builds it (Dockerfile.release, chart/, and the
// kubernetes distro image its chart's init container copies binaries
// from).
const (
	// vclusterModule is vCluster's Go module; its syncer is
	// cmd/vcluster ("vcluster start"), its chart the module's chart/.
	vclusterModule = "github.com/loft-sh/vcluster"
	// kineModule is the backing store of vCluster's default (an embedded
	// database: kine over SQLite), run from the distro image as
	// /binaries/kine. The newest kine of the Go module proxy here; the
	// distro image's own build is not public.
	kineModule  = "github.com/k3s-io/kine"
	kineVersion = "v0.17.5"
	// corednsModule is the CoreDNS that vCluster v0.36 deploys in the
	// virtual cluster (pkg/constants/coredns.go of the module:
	// coredns/coredns:1.14.2 for every version it does not map).
	corednsModule  = "github.com/coredns/coredns"
	corednsVersion = "v1.14.2"
)

// The peer's images, in the local registry under the names its chart
// pulls (the registry mirrors ghcr.io).
const (
	// syncerRepository is the open-source syncer image; the chart's
	// default, loft-sh/vcluster-pro, adds closed modules that are not on
	// the Go module proxy (its values.yaml names vcluster-oss for the
	// open-source build).
	syncerRepository  = "loft-sh/vcluster-oss"
	distroRepository  = "loft-sh/kubernetes"
	corednsRepository = "coredns/coredns"
)

// peer is vCluster built and pushed: its chart and the values that point
// its images at the local registry.
type peer struct {
	Chart *chart.Chart
	// Sets are the chart values, as `helm --set` takes them, that name the
	// images built here (see peerSets).
	Sets []string
	// Notes say where the build differs from vCluster's release and why.
	Notes []string
	// Pulls are its images, for prePull.
	Pulls []pulled
}

// buildPeer builds vCluster version (its syncer, the distro image with
// Kubernetes binaries.KubernetesVersion and kine, CoreDNS) from the Go
// module proxy into the cache, unless built before, pushes the images to
// the local registry at registry (host:port), and loads the chart. Progress
// goes to log. Errors name the step that failed with its output.
func buildPeer(ctx context.Context, version, registry string, log io.Writer) (*peer, error) {
	dirs, err := downloadModules(ctx, vclusterModule+"@"+version, kineModule+"@"+kineVersion, corednsModule+"@"+corednsVersion)
	if err != nil {
		return nil, err
	}
	out := filepath.Join(binaries.CacheDir(), "vcluster-"+version)
	tag := strings.TrimPrefix(version, "v")
	syncer, kine, coredns := filepath.Join(out, "vcluster"), filepath.Join(out, "kine-"+kineVersion), filepath.Join(out, "coredns-"+corednsVersion)
	builds := []struct {
		what, dir, out, took string
		env, args            []string
	}{
		// Dockerfile.release: CGO_ENABLED=0, the version in the telemetry
		// package.
		{"vCluster " + version + " syncer (cmd/vcluster)", dirs[0], syncer, "5 to 12 minutes", []string{"CGO_ENABLED=0"},
			[]string{"-ldflags", "-s -w -X github.com/loft-sh/vcluster/pkg/telemetry.SyncerVersion=" + tag, "./cmd/vcluster"}},
		// kine's scripts/build: cgo SQLite, statically linked, its tags
		// and CFLAGS; netgo and osusergo added because kine's release is
		// linked against musl, this one against glibc, whose static name
		// lookups need shared libraries the image does not have.
		{"kine " + kineVersion + " (SQLite, cgo)", dirs[1], kine, "4 minutes", []string{"CGO_ENABLED=1", "CGO_CFLAGS=" + kineCFlags},
			[]string{"-tags", "netgo,osusergo,nats,sqlite_unlock_notify,sqlite_vtable,sqlite_stat4,sqlite_preupdate_hook,sqlite_math_functions,sqlite_dbstat,sqlite_column_metadata",
				"-ldflags", "-extldflags -static -s", "."}},
		{"CoreDNS " + corednsVersion, dirs[2], coredns, "2 minutes", []string{"CGO_ENABLED=0"}, []string{"-ldflags", "-s -w", "."}},
	}
	for _, b := range builds {
		if _, err := os.Stat(b.out); err == nil {
			fmt.Fprintf(log, "  %s: cached in %s\n", b.what, b.out)
			continue
		}
		fmt.Fprintf(log, "  building %s from the Go module proxy (about %s cold)\n", b.what, b.took)
		start := time.Now()
		args := append([]string{"build", "-trimpath", "-o", b.out + ".tmp"}, b.args...)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = b.dir
		cmd.Env = append(os.Environ(), append([]string{"GOFLAGS=-mod=mod", "GOWORK=off"}, b.env...)...)
		if o, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build %s: go %s in %s: %w\n%s", b.what, strings.Join(args, " "), b.dir, err, o)
		}
		if err := os.Rename(b.out+".tmp", b.out); err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "  built %s in %.0f s\n", b.what, time.Since(start).Seconds())
	}

	c, err := loader.Load(filepath.Join(dirs[0], "chart"))
	if err != nil {
		return nil, fmt.Errorf("vCluster's chart: %w", err)
	}
	kubeVersion, err := distroTag(c)
	if err != nil {
		return nil, err
	}
	kube, err := buildKubernetes(ctx, kubeVersion, filepath.Join(out, "kubernetes-"+kubeVersion), log)
	if err != nil {
		return nil, err
	}
	busybox := binaries.Node().Busybox
	ca := "/etc/ssl/certs/ca-certificates.crt"
	syncerImg, err := withBusybox(busybox, tag, []images.File{{Path: "/vcluster", Mode: 0o755, Source: syncer}, {Path: "/etc/ssl/certs/ca-certificates.crt", Mode: 0o644, Source: ca}},
		images.Config{Entrypoint: []string{"/vcluster", "start"}})
	if err != nil {
		return nil, err
	}
	distroFiles := []images.File{{Path: "/kubernetes/kine", Mode: 0o755, Source: kine}}
	for _, b := range kubeCommands() {
		distroFiles = append(distroFiles, images.File{Path: "/kubernetes/" + b, Mode: 0o755, Source: filepath.Join(kube, b)})
	}
	distroImg, err := withBusybox(busybox, kubeVersion, distroFiles, images.Config{})
	if err != nil {
		return nil, err
	}
	corednsLayer, err := images.Layer([]images.File{{Path: "/coredns", Mode: 0o755, Source: coredns}, {Path: "/etc/ssl/certs/ca-certificates.crt", Mode: 0o644, Source: ca}})
	if err != nil {
		return nil, err
	}
	corednsImg, err := images.Image([]v1.Layer{corednsLayer}, images.Config{Entrypoint: []string{"/coredns"}})
	if err != nil {
		return nil, err
	}
	corednsTag := strings.TrimPrefix(corednsVersion, "v")
	for _, p := range []struct {
		img       v1.Image
		repo, tag string
	}{{syncerImg, syncerRepository, tag}, {distroImg, distroRepository, kubeVersion}, {corednsImg, corednsRepository, corednsTag}} {
		if _, _, err := images.Push(ctx, p.img, registry, p.repo, []string{p.tag}, true); err != nil {
			return nil, fmt.Errorf("push %s:%s to %s: %w", p.repo, p.tag, registry, err)
		}
	}

	// The release pipeline stamps the version ("version is auto-generated
	// by release pipeline", chart/Chart.yaml); the syncer image's tag
	// defaults to it.
	c.Metadata.Version, c.Metadata.AppVersion = tag, tag
	corednsRef := images.Reference(images.DefaultRegistry, corednsRepository, corednsTag)
	pulls := []pulled{
		{Image: images.Reference(images.DefaultRegistry, syncerRepository, tag), Command: []string{"true"}},
		{Image: images.Reference(images.DefaultRegistry, distroRepository, kubeVersion), Command: []string{"true"}},
		{Image: corednsRef, Command: []string{"/coredns", "-version"}},
	}
	return &peer{Chart: c, Sets: peerSets(corednsRef), Pulls: pulls, Notes: []string{
		"syncer image " + syncerRepository + " (the chart's default vcluster-pro adds closed modules the Go module proxy does not have)",
		"images on Debian's busybox-static and this machine's CA bundle instead of alpine (no registry but the Go module proxy, Debian and npm here)",
		"no ephemeral-storage request or limit on the control plane pod: the local real node offers no ephemeral storage (its kubelet runs with localStorageCapacityIsolation off)",
		"distro image " + distroRepository + ":" + kubeVersion + " (the chart's default) with Kubernetes " + kubeVersion + " built from the Go module proxy, not clustersync's " + binaries.KubernetesVersion +
			" (vCluster " + version + " starts kube-controller-manager with --controllers naming cloud-node-lifecycle, which " + binaries.KubernetesVersion + " no longer has: it exits), kine " + kineVersion +
			" (the distro image's own build is not public), no helm (run only for experimental.deploy charts)",
	}}, nil
}

// peerSets are the values vCluster's chart is installed with: its
// defaults, but the images built here (all under ghcr.io, which the local
// registry mirrors): the open-source syncer and CoreDNS image coredns;
// and no ephemeral-storage request or limit on the control plane pod (null
// deletes a default in Helm): the local real node runs its kubelet with
// localStorageCapacityIsolation off (this machine's disk reports no file
// system figures), so it offers no ephemeral storage and the default
// request (1Gi) leaves the pod Pending, "Insufficient ephemeral-storage".
func peerSets(coredns string) []string {
	return []string{"controlPlane.statefulSet.image.repository=" + syncerRepository,
		"controlPlane.statefulSet.resources.requests.ephemeral-storage=null",
		"controlPlane.statefulSet.resources.limits.ephemeral-storage=null",
		"controlPlane.coredns.deployment.image=" + coredns}
}

// distroTag is the default tag of the distro image in chart c's values
// (controlPlane.distro.k8s.image.tag), the Kubernetes version it runs.
func distroTag(c *chart.Chart) (string, error) {
	v, err := chartutil.Values(c.Values).PathValue("controlPlane.distro.k8s.image.tag")
	tag, _ := v.(string) // "" when not a string
	if err != nil || !strings.HasPrefix(tag, "v1.") {
		return "", fmt.Errorf("vCluster's chart: controlPlane.distro.k8s.image.tag is %v, not a Kubernetes version (%v)", v, err)
	}
	return tag, nil
}

// kubeCommands are the Kubernetes commands of the distro image.
func kubeCommands() []string {
	return []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"}
}

// buildKubernetes builds kubeCommands of Kubernetes version (e.g.
// "v1.36.0") statically, as Kubernetes releases them, into dir unless
// they are there, and returns dir. It builds in a module of its own
// (dir/src) that requires k8s.io/kubernetes and each of its staging
// modules at the matching v0.x version, which the Kubernetes module's own
// go.mod replaces with folders (`go mod edit -json` reads them); the
// sample-* modules, which nothing here imports and the Go module proxy
// does not serve, are left out.
func buildKubernetes(ctx context.Context, version, dir string, log io.Writer) (string, error) {
	have := 0
	for _, c := range kubeCommands() {
		if _, err := os.Stat(filepath.Join(dir, c)); err == nil {
			have++
		}
	}
	if have == len(kubeCommands()) {
		fmt.Fprintf(log, "  Kubernetes %s: cached in %s\n", version, dir)
		return dir, nil
	}
	fmt.Fprintf(log, "  building Kubernetes %s static %s from the Go module proxy (12 to 20 minutes cold)\n", version, strings.Join(kubeCommands(), ", "))
	start := time.Now()
	kdirs, err := downloadModules(ctx, "k8s.io/kubernetes@"+version)
	if err != nil {
		return "", err
	}
	run := func(dir string, env []string, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), append([]string{"GOWORK=off", "GOFLAGS="}, env...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("go %s in %s: %w\n%s", strings.Join(args, " "), dir, err, out)
		}
		return out, nil
	}
	edit, err := run(kdirs[0], nil, "mod", "edit", "-json")
	if err != nil {
		return "", err
	}
	var mod struct {
		Go      string
		Replace []struct{ Old, New struct{ Path string } }
	}
	if err := json.Unmarshal(edit, &mod); err != nil {
		return "", fmt.Errorf("go.mod of k8s.io/kubernetes@%s: %w", version, err)
	}
	staging := "v0." + strings.TrimPrefix(version, "v1.")
	gomod := "module clustersync.bench/kubernetes\n\ngo " + mod.Go + "\n\nrequire (\n\tk8s.io/kubernetes " + version + "\n"
	for _, r := range mod.Replace {
		if strings.HasPrefix(r.New.Path, "./staging/") && !strings.HasPrefix(r.Old.Path, "k8s.io/sample-") {
			gomod += "\t" + r.Old.Path + " " + staging + "\n"
		}
	}
	gomod += ")\n"
	src := filepath.Join(dir, "src")
	tools := "//go:build tools\n\npackage tools\n\nimport (\n"
	for _, c := range kubeCommands() {
		tools += "\t_ \"k8s.io/kubernetes/cmd/" + c + "\"\n"
	}
	tools += ")\n"
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte(gomod), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "tools.go"), []byte(tools), 0o644); err != nil {
		return "", err
	}
	if _, err := run(src, nil, "mod", "tidy"); err != nil {
		return "", err
	}
	// hack/build-binaries.sh's kube_ldflags: the version the binaries report.
	v := "k8s.io/component-base/version"
	minor := strings.SplitN(strings.TrimPrefix(version, "v1."), ".", 2)[0]
	ldflags := fmt.Sprintf("-s -w -X %s.gitVersion=%s -X %s.gitMajor=1 -X %s.gitMinor=%s -X %s.gitTreeState=clean -X %s.buildDate=1970-01-01T00:00:00Z", v, version, v, v, minor, v, v)
	tmp := filepath.Join(dir, ".tmp")
	args := []string{"build", "-trimpath", "-ldflags", ldflags, "-o", tmp + "/"}
	for _, c := range kubeCommands() {
		args = append(args, "k8s.io/kubernetes/cmd/"+c)
	}
	if _, err := run(src, []string{"CGO_ENABLED=0"}, args...); err != nil {
		return "", err
	}
	for _, c := range kubeCommands() {
		if err := os.Rename(filepath.Join(tmp, c), filepath.Join(dir, c)); err != nil {
			return "", err
		}
	}
	fmt.Fprintf(log, "  built Kubernetes %s in %.0f s\n", version, time.Since(start).Seconds())
	return dir, nil
}

// withBusybox is an image of Debian's busybox-static (images.Busybox: sh,
// cp and a few more in /bin) with files on top and config c (PATH /bin
// added), run as root as alpine's images are.
func withBusybox(busybox, version string, files []images.File, c images.Config) (v1.Image, error) {
	base, err := images.Busybox(busybox, images.Meta{Version: version})
	if err != nil {
		return nil, err
	}
	layers, err := base.Layers()
	if err != nil {
		return nil, err
	}
	top, err := images.Layer(files)
	if err != nil {
		return nil, err
	}
	c.Env = append(c.Env, "PATH=/bin")
	return images.Image(append(layers, top), c)
}

// downloadModules downloads module@version paths with `go mod download`
// and returns their folders in the module cache, in order.
func downloadModules(ctx context.Context, mods ...string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "go", append([]string{"mod", "download", "-json"}, mods...)...)
	cmd.Dir = os.TempDir() // outside any module
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go mod download %s: %w\n%s", strings.Join(mods, " "), err, out)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	byPath := map[string]string{}
	for dec.More() {
		var m struct{ Path, Version, Dir, Error string }
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("go mod download: %w", err)
		}
		if m.Error != "" || m.Dir == "" {
			return nil, fmt.Errorf("go mod download %s@%s: %s", m.Path, m.Version, m.Error)
		}
		byPath[m.Path+"@"+m.Version] = m.Dir
	}
	dirs := make([]string, 0, len(mods))
	for _, m := range mods {
		d, ok := byPath[m]
		if !ok {
			return nil, fmt.Errorf("go mod download %s: no folder", m)
		}
		dirs = append(dirs, d)
	}
	return dirs, nil
}

// kineCFlags are kine's SQLite options (scripts/build of its module:
// modernc.org/sqlite's, minus fts, geopoly, json1, zlib and soundex).
const kineCFlags = "-DSQLITE_DEFAULT_MEMSTATUS=0 -DSQLITE_DISABLE_INTRINSIC -DSQLITE_ENABLE_COLUMN_METADATA -DSQLITE_ENABLE_DBPAGE_VTAB " +
	"-DSQLITE_ENABLE_DBSTAT_VTAB -DSQLITE_ENABLE_MATH_FUNCTIONS -DSQLITE_ENABLE_MEMORY_MANAGEMENT -DSQLITE_ENABLE_OFFSET_SQL_FUNC " +
	"-DSQLITE_ENABLE_PREUPDATE_HOOK -DSQLITE_ENABLE_RBU -DSQLITE_ENABLE_RTREE -DSQLITE_ENABLE_SESSION -DSQLITE_ENABLE_SNAPSHOT " +
	"-DSQLITE_ENABLE_STAT4 -DSQLITE_ENABLE_UNLOCK_NOTIFY -DSQLITE_LIKE_DOESNT_MATCH_BLOBS -DSQLITE_THREADSAFE=1 -DSQLITE_WITHOUT_ZONEMALLOC"
