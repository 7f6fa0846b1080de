package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/instance"
	"github.com/clustersync/clustersync/internal/virtual/translate"
	"github.com/clustersync/clustersync/test/internal/harness"
)

var ctx = context.Background()

// cli runs clustersync with args and returns its combined output; it fails
// t when the command fails.
func cli(t *testing.T, args ...string) string {
	t.Helper()
	out, err := cliErr(args...)
	if err != nil {
		t.Fatalf("clustersync %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func cliErr(args ...string) (string, error) {
	if err := checkKubeconfigOut(args); err != nil {
		return "", err
	}
	return tests.Run(args...)
}

// checkKubeconfigOut refuses a `virtual create` or `virtual connect` that
// would write a context to this machine's ~/.kube/config (the tests run
// with KUBECONFIG unset): each must say where its kubeconfig goes.
func checkKubeconfigOut(args []string) error {
	if len(args) < 2 || args[0] != "virtual" || (args[1] != "create" && args[1] != "connect") {
		return nil
	}
	for _, a := range args[2:] {
		if a == "--" || a == "--local" || a == "--print" || a == "--connect=false" || strings.HasPrefix(a, "--kubeconfig-out") {
			return nil
		}
	}
	return fmt.Errorf("test bug: clustersync %s would write ~/.kube/config; give --kubeconfig-out", strings.Join(args, " "))
}

// devDown runs `dev down` (at the end of a test) and fails t when it
// fails: a teardown that leaves anything behind is a bug.
func devDown(t *testing.T) {
	t.Helper()
	if out, err := cliErr("dev", "down"); err != nil {
		t.Errorf("clustersync dev down: %v\n%s", err, out)
	}
}

func restConfig(t *testing.T, kubeconfig string) *rest.Config {
	return harness.RestConfig(t, kubeconfig)
}

func clientFor(t *testing.T, kubeconfig string) client.Client {
	return harness.ClientFor(t, restConfig(t, kubeconfig))
}

// The life of a virtual cluster through the CLI: create on the local host,
// run a pod, stop and start with the state kept and syncing resumed, then
// delete, which removes every host object it created and nothing else.
func TestVirtualClusterLifecycle(t *testing.T) {
	cli(t, "dev", "up", "--runtime", "fake", "--fake-nodes", "2")
	t.Cleanup(func() { devDown(t) })
	host := clientFor(t, filepath.Join(tests.Dir, "host", "kubeconfig.yaml"))

	out := cli(t, "virtual", "create", "e2e", "--local")
	if !strings.Contains(out, "is running") {
		t.Fatalf("create output:\n%s", out)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cli(t, "virtual", "connect", "e2e", "--kubeconfig-out", kubeconfig)
	virtual := clientFor(t, kubeconfig)
	const hostNS = "vc-e2e"
	tr := translate.Translator{VCluster: "e2e", HostNamespace: hostNS}

	if err := virtual.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "default",
		Annotations: map[string]string{translate.AnnotationForceSync: "true"}}, Data: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	createPod(t, virtual, "before")
	waitRunning(t, virtual, "before")
	hostExists(t, host, &corev1.Pod{}, tr.HostName("before", "default"), hostNS)
	hostExists(t, host, &corev1.ConfigMap{}, tr.HostName("cfg", "default"), hostNS)
	// An object of someone else's in the same host namespace.
	if err := host.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "not-ours", Namespace: hostNS}}); err != nil {
		t.Fatal(err)
	}

	if out := cli(t, "virtual", "list"); !strings.Contains(out, "e2e") || !strings.Contains(out, "Running") {
		t.Fatalf("list output:\n%s", out)
	}
	status := strings.Join(strings.Fields(cli(t, "virtual", "status", "e2e", "-n", "default")), " ")
	for _, want := range []string{"Pod default/before " + hostNS + "/" + tr.HostName("before", "default") + " Running on",
		"ConfigMap default/cfg " + hostNS + "/" + tr.HostName("cfg", "default") + " synced (force-sync)"} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
	// The supervisor keeps the syncer going: killed, and killed again as
	// soon as its successor runs, it comes back, and the virtual cluster
	// keeps running and syncing (an earlier supervisor gave up on the
	// second death and stopped the whole control plane).
	inst, err := instance.Load(tests.Dir, "e2e")
	if err != nil {
		t.Fatal(err)
	}
	killSyncer := func() int {
		t.Helper()
		st, ok := inst.Status()
		if !ok || st.SyncerPID == 0 {
			t.Fatalf("no running syncer in serve.json: %+v", st)
		}
		if err := syscall.Kill(st.SyncerPID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		return st.SyncerPID
	}
	first := killSyncer()
	testenv.Eventually(t, 30*time.Second, func() error {
		if st, ok := inst.Status(); !ok || st.SyncerPID == first || st.SyncerPID == 0 {
			return fmt.Errorf("syncer not restarted yet: %+v", st)
		}
		return nil
	})
	second := killSyncer()
	testenv.Eventually(t, 2*time.Minute, func() error {
		st, ok := inst.Status()
		if !ok {
			return fmt.Errorf("the supervisor stopped")
		}
		if st.SyncerPID == second || st.SyncerPID == first {
			return fmt.Errorf("syncer not restarted yet: %+v", st)
		}
		return nil
	})
	createPod(t, virtual, "after-kills")
	waitRunning(t, virtual, "after-kills")
	hostExists(t, host, &corev1.Pod{}, tr.HostName("after-kills", "default"), hostNS)

	cli(t, "virtual", "stop", "e2e")
	if out := cli(t, "virtual", "list"); !strings.Contains(out, "Stopped") {
		t.Fatalf("list after stop:\n%s", out)
	}
	// The host copies stay while the virtual cluster is stopped.
	hostExists(t, host, &corev1.Pod{}, tr.HostName("before", "default"), hostNS)

	cli(t, "virtual", "start", "e2e")
	var p corev1.Pod
	if err := virtual.Get(ctx, client.ObjectKey{Namespace: "default", Name: "before"}, &p); err != nil {
		t.Fatalf("pod created before the stop is gone after start: %v", err)
	}
	createPod(t, virtual, "after")
	waitRunning(t, virtual, "after")
	hostExists(t, host, &corev1.Pod{}, tr.HostName("after", "default"), hostNS)

	cli(t, "virtual", "delete", "e2e")
	for _, list := range []client.ObjectList{&corev1.PodList{}, &corev1.ServiceList{}, &corev1.ConfigMapList{}, &corev1.SecretList{}, &corev1.ServiceAccountList{}} {
		if err := host.List(ctx, list, client.InNamespace(hostNS), client.MatchingLabels{translate.LabelManagedBy: "e2e"}); err != nil {
			t.Fatal(err)
		}
		if n := len(itemsOf(list)); n != 0 {
			t.Errorf("%T: %d host objects of e2e left after delete: %v", list, n, itemsOf(list))
		}
	}
	if err := host.Get(ctx, client.ObjectKey{Namespace: hostNS, Name: "not-ours"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("an object clustersync did not create was removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(tests.Dir, "virtual", "e2e")); !os.IsNotExist(err) {
		t.Errorf("state folder left after delete (%v)", err)
	}
}

// Bad input is refused with an error that names the problem.
func TestVirtualCreateRejectsBadInput(t *testing.T) {
	out, err := cliErr("virtual", "create", "Not_A_DNS_Label", "--connect=false")
	if err == nil || !strings.Contains(out, "Not_A_DNS_Label") {
		t.Errorf("bad name: err %v, output:\n%s", err, out)
	}
	cfg := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(cfg, []byte("sync:\n  toHost:\n    secrets:\n      all: \"yes\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = cliErr("virtual", "create", "bad", "--config", cfg, "--connect=false")
	if err == nil || !strings.Contains(out, "sync.toHost.secrets.all") {
		t.Errorf("bad config: err %v, output:\n%s", err, out)
	}
	// A vcluster.yaml written for vCluster 0.3x passes the configuration
	// checks, and the keys without effect are named once, before anything
	// is made (here the host is missing, which fails next).
	vcfile := filepath.Join(t.TempDir(), "vcluster.yaml")
	if err := os.WriteFile(vcfile, []byte(`sync:
  toHost:
    pods:
      patches:
        - path: metadata.annotations["example.com/team"]
          expression: '"team-" + value'
          reverseExpression: 'value.slice("team-".length)'
      rewriteHosts:
        initContainer:
          image: {registry: docker.io, repository: library/alpine, tag: "3.20"}
controlPlane:
  backingStore:
    database: {embedded: {enabled: true}}
    etcd: {embedded: {enabled: false}}
  hostPathMapper: {enabled: true}
networking:
  advanced: {clusterDomain: cluster.local}
policies:
  resourceQuota: {enabled: true}
exportKubeConfig:
  context: my-vcluster
`), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "no-such-kubeconfig")
	out, err = cliErr("virtual", "create", "fromvcluster", "-f", vcfile, "--host-kubeconfig", missing, "--connect=false")
	if err == nil || !strings.Contains(out, "Note: accepted, no effect in clustersync (2 keys set to other than vCluster's default):\n"+
		"  clustersync stores in etcd: embedded in the control plane pod, or external (controlPlane.backingStore.etcd): controlPlane.backingStore.database.embedded.enabled\n"+
		"  not implemented in clustersync yet: controlPlane.hostPathMapper.enabled\n") || !strings.Contains(out, missing) {
		t.Errorf("a vCluster 0.3x file: want the no-effect note, then the missing host: err %v, output:\n%s", err, out)
	}
	if out, err := cliErr("virtual", "connect", "missing", "--print"); err == nil || !strings.Contains(out, `virtual cluster "missing" not found`) {
		t.Errorf("unknown cluster: err %v, output:\n%s", err, out)
	}
}

func createPod(t *testing.T, c client.Client, name string) {
	t.Helper()
	grace := int64(1)
	if err := c.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx:1.27"}}, TerminationGracePeriodSeconds: &grace}}); err != nil {
		t.Fatal(err)
	}
}

func waitRunning(t *testing.T, c client.Client, name string) {
	t.Helper()
	testenv.Eventually(t, 90*time.Second, func() error {
		var p corev1.Pod
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &p); err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("pod %s phase %q", name, p.Status.Phase)
		}
		return nil
	})
}

func hostExists(t *testing.T, c client.Client, obj client.Object, name, ns string) {
	t.Helper()
	testenv.Eventually(t, 60*time.Second, func() error { return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj) })
}

func itemsOf(list client.ObjectList) []string {
	objs, _ := meta.ExtractList(list)
	names := make([]string, 0, len(objs))
	for _, o := range objs {
		if m, err := meta.Accessor(o); err == nil {
			names = append(names, m.GetName())
		}
	}
	return names
}

// `virtual create --dry-run` is the check to run on a vcluster.yaml in CI:
// with no host at all, the values.yaml of vCluster's newest release passes
// and the objects create would install come out on standard output as
// YAML (the StatefulSet in the host namespace among them), with no note;
// a file the control plane would refuse exits 1 with the reason, and
// nothing on standard output; upgrade --dry-run checks the same way.
func TestVirtualDryRun(t *testing.T) {
	k := config.VCluster()
	newest := k.Releases[len(k.Releases)-1]
	data, err := yaml.Marshal(k.Values(newest))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "vcluster.yaml")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "no-such-kubeconfig")
	for _, verb := range []string{"create", "upgrade"} {
		start := time.Now()
		stdout, stderr, code := tests.Output("virtual", verb, "team-a", "-f", file, "--dry-run", "--host-kubeconfig", missing)
		t.Logf("virtual %s --dry-run of vCluster %s's values.yaml: %.2f s", verb, newest, time.Since(start).Seconds())
		if code != 0 || stderr != "" {
			t.Fatalf("virtual %s --dry-run: exit %d, stderr:\n%s", verb, code, stderr)
		}
		var kinds []string
		dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(stdout), 4096)
		for {
			var obj unstructured.Unstructured
			if err := dec.Decode(&obj.Object); err != nil {
				if err != io.EOF {
					t.Fatalf("virtual %s --dry-run: standard output is not YAML: %v\n%s", verb, err, stdout)
				}
				break
			}
			if obj.Object == nil {
				continue
			}
			kinds = append(kinds, obj.GetKind()+"/"+obj.GetName())
			if obj.GetKind() == "StatefulSet" && (obj.GetName() != "team-a" || obj.GetNamespace() != "vc-team-a") {
				t.Errorf("StatefulSet %s/%s, want vc-team-a/team-a", obj.GetNamespace(), obj.GetName())
			}
		}
		if !slices.Contains(kinds, "StatefulSet/team-a") || !slices.Contains(kinds, "Service/team-a") {
			t.Errorf("virtual %s --dry-run printed %v", verb, kinds)
		}
	}

	bad := filepath.Join(t.TempDir(), "ha.yaml")
	if err := os.WriteFile(bad, []byte("controlPlane:\n  statefulSet:\n    highAvailability: {replicas: 3}\nexportKubeConfig: {contxt: team-a}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := tests.Output("virtual", "create", "team-a", "-f", bad, "--dry-run")
	if code != 1 || stdout != "" ||
		!strings.Contains(stderr, "controlPlane.statefulSet.highAvailability.replicas: 3: clustersync runs one control plane pod") ||
		!strings.Contains(stderr, "exportKubeConfig.contxt: unknown key; did you mean context?") {
		t.Errorf("a refused file: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}
