package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	helmcli "helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/registry"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/manager"
	"github.com/clustersync/clustersync/internal/registered/registration"
	"github.com/clustersync/clustersync/internal/release"
	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/version"
)

// The install path of a user who does not build from source, from a
// release alone: `dev release` (what make release runs, for linux/amd64)
// pushes the charts and images to the local host's registry; then, from a
// folder outside the source tree, with the release's binary (checked
// against checksums.txt) and the user's vcluster.yaml:
//   - `clustersync version` prints the release, `manager --help` defaults
//     the agent image to the release's image, and `virtual create
//     --dry-run` installs that image and no development one;
//   - `helm install --version X oci://…/charts/manager` (Helm's Go SDK)
//     gives a manager whose leader serves, and a cluster imported with
//     the release's `cluster import` turns Active with the release's agent;
//   - `helm install --version X oci://…/charts/virtual-cluster -f
//     vcluster.yaml` and `clustersync virtual create -f vcluster.yaml` give
//     virtual clusters whose pods run on the real node;
//   - every container of all of it runs a released image: its name is one
//     of the release's and its digest the release's index's.
func TestInstallFromRelease(t *testing.T) {
	devUpReal(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	const v = "v0.0.0-e2e"
	chartVersion := version.ChartVersion(v)
	dist := t.TempDir()
	start := time.Now()
	out := cli(t, "dev", "release", "--version", v, "--platforms", "linux/amd64", "--out", dist, "--source", root)
	t.Logf("dev release --platforms linux/amd64: %.1f s\n%s", time.Since(start).Seconds(), out)
	m := regexp.MustCompile(`Pushed oci://(\S+)/charts/manager:`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("dev release names no pushed manager chart:\n%s", out)
	}
	reg := m[1]
	released := releasedImages(t, reg, v)

	// The user's folder, outside the source tree: the release's binary and
	// their vcluster.yaml.
	user := t.TempDir()
	bin := filepath.Join(user, "clustersync")
	installVerified(t, dist, release.BinaryName(release.Platform{OS: "linux", Arch: "amd64"}), bin)
	file := filepath.Join(user, "vcluster.yaml")
	data, err := os.ReadFile(filepath.Join(root, "examples", "vcluster", "vcluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	runErr := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = user, append(os.Environ(), "CLUSTERSYNC_HOME="+tests.Dir, "KUBECONFIG=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := runErr(args...)
		if err != nil {
			t.Fatalf("clustersync %s (the release's): %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	image := images.Reference(images.DefaultRegistry, images.ClustersyncRepository, v)
	if out := run("version"); !strings.HasPrefix(out, "clustersync "+v+" (commit ") {
		t.Errorf("clustersync version:\n%s", out)
	}
	if help := run("manager", "--help"); !strings.Contains(help, `agent image in import manifests (default "`+image+`")`) {
		t.Errorf("manager --help does not default --agent-image to %s:\n%s", image, help)
	}
	manifests := run("virtual", "create", "dry", "--dry-run", "-f", file)
	if !strings.Contains(manifests, image) || strings.Contains(manifests, images.Reference(images.DefaultRegistry, images.ClustersyncRepository, version.DevImageTag)) {
		t.Errorf("virtual create --dry-run of %s does not install %s alone:\n%s", v, image, manifests)
	}

	hostKubeconfig := filepath.Join(tests.Dir, "host", "kubeconfig.yaml")
	host := clientFor(t, hostKubeconfig)
	installHostCRDs(t, hostKubeconfig)
	// --version is the chart's version, the release's without the v (as
	// vCluster's and Rancher's charts are versioned): Helm takes it as the
	// OCI tag, and `--version v0.2.0` finds no chart.
	oci := func(chartName string) *ociChart { return newOCIChart(t, reg, chartName, chartVersion) }

	// The manager, from the OCI chart.
	const mgrNS = "cs-release"
	mgr := oci("manager")
	cfg := mgr.install(t, hostKubeconfig, mgrNS, "mgr", nil)
	leader := func() {
		t.Helper()
		testenv.Eventually(t, 3*time.Minute, func() error {
			_, err := managerLeader(host, mgrNS, "mgr")
			return err
		})
	}
	leader()
	// The local host has no cluster DNS: agents reach the manager at its
	// Service's cluster IP (helm upgrade --set externalURL=…).
	var svc corev1.Service
	if err := host.Get(ctx, client.ObjectKey{Namespace: mgrNS, Name: "mgr"}, &svc); err != nil {
		t.Fatal(err)
	}
	up := action.NewUpgrade(cfg)
	up.Namespace = mgrNS
	if _, err := up.RunWithContext(ctx, "mgr", mgr.chart, map[string]any{"externalURL": "https://" + svc.Spec.ClusterIP}); err != nil {
		t.Fatalf("helm upgrade --set externalURL: %v", err)
	}
	testenv.Eventually(t, 3*time.Minute, func() error {
		var d appsv1.Deployment
		if err := host.Get(ctx, client.ObjectKey{Namespace: mgrNS, Name: "mgr"}, &d); err != nil {
			return err
		}
		if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas != d.Status.Replicas {
			return fmt.Errorf("rollout: %d updated of %d replicas", d.Status.UpdatedReplicas, d.Status.Replicas)
		}
		return nil
	})
	leader()
	importCluster(t, hostKubeconfig, "https://"+svc.Spec.ClusterIP, func() (string, error) {
		return runErr("cluster", "import", "self", "--kubeconfig", hostKubeconfig, "--member", "group:system:masters=cluster-owner")
	})
	scheme, err := manager.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	mc, err := client.New(restConfig(t, hostKubeconfig), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 2*time.Minute, func() error {
		var cl mgmtv1.Cluster
		if err := mc.Get(ctx, client.ObjectKey{Name: "self"}, &cl); err != nil {
			return err
		}
		if cl.Status.Phase != mgmtv1.PhaseActive {
			return fmt.Errorf("cluster self phase %q (agent: %s)", cl.Status.Phase, podStates(host, registration.AgentNamespace))
		}
		return nil
	})

	// A virtual cluster from the OCI chart and the user's vcluster.yaml.
	const helmNS = "vc-rel-helm"
	values, err := chartutil.ReadValuesFile(file)
	if err != nil {
		t.Fatal(err)
	}
	oci("virtual-cluster").install(t, hostKubeconfig, helmNS, "rel-helm", values)
	testenv.Eventually(t, 3*time.Minute, func() error {
		var sts appsv1.StatefulSet
		if err := host.Get(ctx, client.ObjectKey{Namespace: helmNS, Name: "rel-helm"}, &sts); err != nil {
			return err
		}
		if sts.Status.ReadyReplicas < 1 {
			return fmt.Errorf("StatefulSet rel-helm: %d ready (%s)", sts.Status.ReadyReplicas, podStates(host, helmNS))
		}
		return nil
	})
	helmKubeconfig := filepath.Join(user, "rel-helm.kubeconfig")
	run("virtual", "connect", "rel-helm", "-n", helmNS, "--kubeconfig-out", helmKubeconfig)
	releasedWorkload(t, host, clientFor(t, helmKubeconfig), helmNS, v, false)

	// A virtual cluster from the release's `virtual create`.
	const createNS = "vc-rel-cli"
	cliKubeconfig := filepath.Join(user, "rel-cli.kubeconfig")
	start = time.Now()
	out = run("virtual", "create", "rel-cli", "-n", createNS, "-f", file, "--kubeconfig-out", cliKubeconfig)
	t.Logf("virtual create -f vcluster.yaml (the release's): %.1f s\n%s", time.Since(start).Seconds(), out)
	releasedWorkload(t, host, clientFor(t, cliKubeconfig), createNS, v, true)

	for _, ns := range []string{mgrNS, registration.AgentNamespace, helmNS, createNS} {
		onlyReleasedImages(t, host, ns, released)
	}
}

// ociChart is a chart pulled from an OCI registry with Helm's SDK, and the
// registry client that pulled it.
type ociChart struct {
	ref    string
	client *registry.Client
	chart  *chart.Chart
}

// install runs `helm install REL oci://… --version X -n ns
// --create-namespace` of the chart with values into the cluster of
// kubeconfig (Helm's SDK), and returns the Helm configuration it used.
func (c *ociChart) install(t *testing.T, kubeconfig, ns, rel string, values map[string]any) *action.Configuration {
	t.Helper()
	if err := clientFor(t, kubeconfig).Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	cfg := helmConfig(t, kubeconfig, ns)
	cfg.RegistryClient = c.client
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace = rel, ns
	if _, err := in.RunWithContext(ctx, c.chart, values); err != nil {
		t.Fatalf("helm install %s %s --version %s -n %s: %v", rel, c.ref, c.chart.Metadata.Version, ns, err)
	}
	return cfg
}

// newOCIChart pulls chart chartName at version cv from registry reg
// (plain HTTP) as `helm install --version cv oci://reg/charts/NAME`
// does, with Helm's cache in a folder of t.
func newOCIChart(t *testing.T, reg, chartName, cv string) *ociChart {
	t.Helper()
	rc, err := registry.NewClient(registry.ClientOptPlainHTTP())
	if err != nil {
		t.Fatal(err)
	}
	in := action.NewInstall(&action.Configuration{})
	in.SetRegistryClient(rc)
	in.Version, in.PlainHTTP = cv, true
	settings := helmcli.New()
	settings.RepositoryCache, settings.RepositoryConfig = t.TempDir(), filepath.Join(t.TempDir(), "repositories.yaml")
	ref := "oci://" + reg + "/charts/" + chartName
	path, err := in.LocateChart(ref, settings)
	if err != nil {
		t.Fatalf("pull oci://%s/charts/%s --version %s: %v", reg, chartName, cv, err)
	}
	c, err := loader.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Metadata.Version != cv {
		t.Fatalf("oci://%s/charts/%s: version %s, want %s", reg, chartName, c.Metadata.Version, cv)
	}
	return &ociChart{ref: ref, client: rc, chart: c}
}

// installVerified copies file name of release folder dist to dst
// (executable) after checking it against dist's checksums.txt, as
// `sha256sum -c --ignore-missing` would.
func installVerified(t *testing.T, dist, fileName, dst string) {
	t.Helper()
	sums, err := os.ReadFile(filepath.Join(dist, release.ChecksumsName))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dist, fileName))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if want := hex.EncodeToString(sum[:]) + "  " + fileName + "\n"; !strings.Contains(string(sums), want) {
		t.Fatalf("%s: %s has no line %q:\n%s", fileName, release.ChecksumsName, want, sums)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// releasedImages maps each image reference a release's pods name
// (ghcr.io/clustersync/NAME:TAG, for every tag of every image of
// release.Images) to the digest of its index in registry reg.
func releasedImages(t *testing.T, reg, v string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, row := range release.Images(release.ImageInputs{}) {
		for _, tag := range append([]string{v}, row.Tags...) {
			ref, err := name.ParseReference(images.Reference(reg, row.Repository, tag), name.Insecure)
			if err != nil {
				t.Fatal(err)
			}
			d, err := remote.Head(ref)
			if err != nil {
				t.Fatalf("the release's %s: %v", ref, err)
			}
			out[images.Reference(images.DefaultRegistry, row.Repository, tag)] = d.Digest.String()
		}
	}
	return out
}

// releasedWorkload runs the release's demo-app in the virtual cluster of
// host namespace ns (as a StatefulSet with statefulSet, whose pod gets the
// rewrite-hosts init container, else as a Pod) and waits until it is
// ready on the real node.
func releasedWorkload(t *testing.T, host, virtual client.Client, ns, v string, statefulSet bool) {
	t.Helper()
	labels := map[string]string{"app": "web"}
	spec := corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](1),
		Containers: []corev1.Container{{Name: "web", Image: images.Reference(images.DefaultRegistry, images.DemoRepository, v),
			Args:           []string{"serve", "--addr", ":8080"},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 1},
			Resources:      corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}}},
	}
	var obj client.Object = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default", Labels: labels}, Spec: spec}
	if statefulSet {
		obj = &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels}, ServiceName: "web",
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}}}
	}
	testenv.Eventually(t, time.Minute, func() error { return ignoreExists(virtual.Create(ctx, obj)) })
	waitReadyOnRealNode(t, host, ns, 1)
	var pods corev1.PodList
	if err := host.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, "web-") && statefulSet && len(p.Spec.InitContainers) == 0 {
			t.Errorf("host pod %s of the StatefulSet has no rewrite-hosts init container", p.Name)
		}
	}
}

// onlyReleasedImages fails t unless every container of every pod of host
// namespace ns that has started names an image of released and runs its
// digest.
func onlyReleasedImages(t *testing.T, host client.Client, ns string, released map[string]string) {
	t.Helper()
	var pods corev1.PodList
	if err := host.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range pods.Items {
		if p.Spec.NodeName != hostcluster.RealNodeName {
			continue
		}
		for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			if cs.ImageID == "" {
				continue
			}
			n++
			digest, ok := released[cs.Image]
			if !ok {
				t.Errorf("pod %s/%s container %s runs %s, not an image of the release", ns, p.Name, cs.Name, cs.Image)
			} else if !strings.HasSuffix(cs.ImageID, "@"+digest) {
				t.Errorf("pod %s/%s container %s runs %s (%s), not the release's %s", ns, p.Name, cs.Name, cs.Image, cs.ImageID, digest)
			}
		}
	}
	if n == 0 {
		t.Errorf("no container started in namespace %s (%s)", ns, podStates(host, ns))
	}
	t.Logf("namespace %s: %d containers, each a released image", ns, n)
}
