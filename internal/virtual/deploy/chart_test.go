package deploy

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/lint"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/yaml"

	"github.com/clustersync/clustersync/charts"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/dns"
)

// render runs `helm template` of the embedded chart as release vc1 in ns1.
func render(t *testing.T, sets ...string) map[string]string {
	t.Helper()
	return renderValues(t, "", sets...)
}

func decode[T any](t *testing.T, manifests map[string]string, key string) *T {
	t.Helper()
	m, ok := manifests[key]
	if !ok {
		t.Fatalf("no %s among %v", key, sets.List(sets.KeySet(manifests)))
	}
	var v T
	if err := yaml.UnmarshalStrict([]byte(m), &v); err != nil {
		t.Fatalf("%s: %v\n%s", key, err, m)
	}
	return &v
}

func TestChartLints(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "charts", ChartName)
	vals, _, err := Values(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	linter := lint.All(dir, vals, "ns1", false)
	for _, msg := range linter.Messages {
		if msg.Severity > 1 { // warnings and errors; info is fine
			t.Errorf("helm lint: %s", msg)
		}
	}
}

func TestChartObjects(t *testing.T) {
	m := render(t)
	want := []string{"ServiceAccount/vc-vc1", "Secret/vc-config-vc1", "Service/vc1", "Service/vc1-headless",
		"Role/vc-vc1", "RoleBinding/vc-vc1", "ClusterRole/vc-vc1-v-ns1", "ClusterRoleBinding/vc-vc1-v-ns1", "StatefulSet/vc1",
		"ResourceQuota/vc-vc1", "LimitRange/vc-vc1", "NetworkPolicy/vc-work-vc1", "NetworkPolicy/vc-cp-vc1"}
	if got := sets.List(sets.KeySet(m)); !sets.New(want...).Equal(sets.New(got...)) {
		t.Errorf("objects = %v, want %v", got, want)
	}

	svc := decode[corev1.Service](t, m, "Service/vc1")
	if p := svc.Spec.Ports[0]; p.Port != 443 || p.TargetPort.IntValue() != 8443 {
		t.Errorf("Service port %d -> %s, want 443 -> 8443", p.Port, p.TargetPort.String())
	}
	if svc.Labels["vcluster.loft.sh/managed-by"] != "vc1" {
		t.Errorf("Service labels %v lack vcluster.loft.sh/managed-by=vc1 (the syncer checks it)", svc.Labels)
	}

	cfgSecret := decode[corev1.Secret](t, m, "Secret/vc-config-vc1")
	cfg, err := config.Parse([]byte(cfgSecret.StringData["config.yaml"]))
	if err != nil {
		t.Fatalf("config.yaml of the chart: %v", err)
	}
	if cfg.Syncer.Workers != config.Default().Syncer.Workers {
		t.Errorf("config.yaml syncer.workers = %d, want the default", cfg.Syncer.Workers)
	}

	sts := decode[appsv1.StatefulSet](t, m, "StatefulSet/vc1")
	// The keys Validate keeps the file from replacing are the chart's own.
	if got := sets.List(sets.KeySet(sts.Labels)); !sets.New(config.StatefulSetLabels()...).Equal(sets.New(got...)) {
		t.Errorf("StatefulSet labels %v, config.StatefulSetLabels() %v", got, config.StatefulSetLabels())
	}
	if got := sets.List(sets.KeySet(sts.Spec.Selector.MatchLabels)); !sets.New(config.PodSelectorLabels()...).Equal(sets.New(got...)) {
		t.Errorf("selector labels %v, config.PodSelectorLabels() %v", got, config.PodSelectorLabels())
	}
	spec := sts.Spec.Template.Spec
	var names []string
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		names = append(names, c.Name)
		if c.Image != "ghcr.io/clustersync/clustersync:latest" {
			t.Errorf("container %s image %q", c.Name, c.Image)
		}
		if sc := c.SecurityContext; sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("container %s may escalate privileges", c.Name)
		}
	}
	if got := strings.Join(names, ","); got != "init,etcd,kube-apiserver,kube-controller-manager,syncer,coredns" || len(spec.InitContainers) != 2 {
		t.Errorf("containers %s", got)
	}
	checkDNSWiring(t, spec, sts.Spec.Template.Labels)
	// No start order through startup probes: etcd is a sidecar without
	// one (the kubelet would hold the containers until it passed), and
	// each container that waits for another has a startup probe of its
	// own, so that its liveness probe counts from its start.
	if etcd := spec.InitContainers[1]; etcd.RestartPolicy == nil || *etcd.RestartPolicy != corev1.ContainerRestartPolicyAlways || etcd.StartupProbe != nil {
		t.Errorf("etcd is not a sidecar without a startup probe: restart policy %v, startup probe %+v", etcd.RestartPolicy, etcd.StartupProbe)
	}
	for _, c := range spec.Containers {
		sp, lp := c.StartupProbe, c.LivenessProbe
		if sp == nil || lp == nil || sp.HTTPGet == nil || lp.HTTPGet == nil {
			t.Errorf("%s: startup probe %+v, liveness probe %+v; want both", c.Name, sp, lp)
			continue
		}
		if c.Name == "kube-apiserver" {
			continue // controlPlane.statefulSet.probes: TestChartPodSpec
		}
		if sp.HTTPGet.Path != lp.HTTPGet.Path || sp.HTTPGet.Port != lp.HTTPGet.Port || sp.HTTPGet.Scheme != lp.HTTPGet.Scheme ||
			sp.PeriodSeconds*sp.FailureThreshold != 300 {
			t.Errorf("%s: startup probe %+v, want the liveness probe's endpoint %+v for 300 s", c.Name, sp.HTTPGet, lp.HTTPGet)
		}
	}
	if len(sts.Spec.VolumeClaimTemplates) != 0 || sts.Annotations["clustersync.io/persistence"] != "emptyDir" {
		t.Errorf("without a default StorageClass the data should be an emptyDir: %v", sts.Annotations)
	}

	role := decode[rbacv1.Role](t, m, "Role/vc-vc1")
	for _, r := range role.Rules {
		if sets.New(r.Verbs...).Has("*") || sets.New(r.Resources...).Has("*") {
			t.Errorf("role rule %v uses a wildcard", r)
		}
	}
}

// checkDNSWiring checks that the syncer leads the kube-dns Service to this
// pod (its --dns-selector selects podLabels) and to the port the coredns
// container serves DNS on.
func checkDNSWiring(t *testing.T, spec corev1.PodSpec, podLabels map[string]string) {
	t.Helper()
	flags := map[string]string{}
	var dnsPorts []int32
	for _, c := range spec.Containers {
		switch c.Name {
		case "syncer":
			for _, a := range c.Command {
				if k, v, ok := strings.Cut(a, "="); ok {
					flags[k] = v
				}
			}
		case "coredns":
			for _, p := range c.Ports {
				if strings.HasPrefix(p.Name, "dns") && p.Name != "dns-metrics" {
					dnsPorts = append(dnsPorts, p.ContainerPort)
				}
			}
		}
	}
	sel, err := labels.Parse(flags["--dns-selector"])
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(podLabels)) {
		t.Errorf("syncer --dns-selector %q does not select the pod's labels %v (%v)", flags["--dns-selector"], podLabels, err)
	}
	want := strconv.Itoa(dns.Port)
	if flags["--dns-port"] != want || len(dnsPorts) != 2 || dnsPorts[0] != dns.Port || dnsPorts[1] != dns.Port {
		t.Errorf("syncer --dns-port %q, coredns container DNS ports %v; want %s (UDP and TCP)", flags["--dns-port"], dnsPorts, want)
	}
}

func TestChartOptions(t *testing.T) {
	m := render(t,
		"controlPlane.statefulSet.persistence.volumeClaim.enabled=true",
		"controlPlane.statefulSet.persistence.volumeClaim.storageClass=fast",
		"controlPlane.statefulSet.image.registry=registry.example.com",
		"controlPlane.statefulSet.image.tag=v1.2.3",
		"controlPlane.statefulSet.imagePullPolicy=IfNotPresent",
		"controlPlane.backingStore.etcd.embedded.enabled=false",
		"controlPlane.backingStore.etcd.external.enabled=true",
		"controlPlane.backingStore.etcd.external.endpoint=https://etcd:2379",
	)
	sts := decode[appsv1.StatefulSet](t, m, "StatefulSet/vc1")
	if n := len(sts.Spec.VolumeClaimTemplates); n != 1 {
		t.Fatalf("%d volume claim templates, want 1", n)
	}
	pvc := sts.Spec.VolumeClaimTemplates[0]
	if pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != "fast" || pvc.Spec.Resources.Requests.Storage().String() != "5Gi" {
		t.Errorf("claim %+v", pvc.Spec)
	}
	for _, c := range slices.Concat(sts.Spec.Template.Spec.InitContainers, sts.Spec.Template.Spec.Containers) {
		if c.Name == "etcd" {
			t.Error("an external etcd still runs the embedded one")
		}
		if c.Image != "registry.example.com/clustersync/clustersync:v1.2.3" || c.ImagePullPolicy != corev1.PullIfNotPresent {
			t.Errorf("%s: image %s, pull policy %q", c.Name, c.Image, c.ImagePullPolicy)
		}
	}
}

func TestValuesErrorsNamePaths(t *testing.T) {
	file := filepath.Join(t.TempDir(), "vc.yaml")
	if err := os.WriteFile(file, []byte("sync:\n  toHost:\n    pods:\n      enabled: maybe\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := Values([]string{file}, []string{"controlPlane.nope=1"})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"sync.toHost.pods.enabled", "controlPlane.nope"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// The Role follows the kinds' switches (the generated rules of
// internal/virtual/resources): a kind that is on gets every verb it uses,
// a kind switched off only list and delete (to clean up its host copies).
func TestChartRoleFollowsKinds(t *testing.T) {
	verbs := func(role *rbacv1.Role, resource string) sets.Set[string] {
		out := sets.New[string]()
		for _, r := range role.Rules {
			if slices.Contains(r.Resources, resource) && slices.Contains(r.APIGroups, "") {
				out.Insert(r.Verbs...)
			}
		}
		return out
	}
	on := decode[rbacv1.Role](t, render(t), "Role/vc-vc1")
	for _, res := range []string{"pods", "services", "endpoints", "persistentvolumeclaims", "configmaps", "secrets"} {
		if got := verbs(on, res); !got.HasAll("get", "list", "watch", "create", "update", "patch", "delete") {
			t.Errorf("defaults: %s verbs %v, want all the syncer uses", res, sets.List(got))
		}
	}
	off := decode[rbacv1.Role](t, render(t, "sync.toHost.endpoints.enabled=false", "sync.fromHost.events.enabled=false"), "Role/vc-vc1")
	if got := verbs(off, "endpoints"); !got.Equal(sets.New("list", "delete")) {
		t.Errorf("endpoints switched off: verbs %v, want list and delete only", sets.List(got))
	}
	if got := verbs(off, "events"); got.Len() != 0 {
		t.Errorf("events switched off: verbs %v, want none (no host copies to clean)", sets.List(got))
	}
	if got := verbs(off, "pods"); !got.Has("create") {
		t.Errorf("pods are still on: verbs %v", sets.List(got))
	}
}

// Custom resource entries get their rules from the values: every verb on
// a sync.toHost entry's objects in the host namespace, get on the enabled
// entries' CRDs, and read on a sync.fromHost entry's objects.
func TestChartRoleCustomResources(t *testing.T) {
	m := render(t, "sync.toHost.customResources.widgets\\.example\\.com.enabled=true",
		"sync.toHost.customResources.off\\.example\\.com.enabled=false",
		"sync.fromHost.customResources.gadgets\\.example\\.org.enabled=true")
	role := decode[rbacv1.Role](t, m, "Role/vc-vc1")
	has := func(rules []rbacv1.PolicyRule, group, resource string, names []string, verbs ...string) bool {
		for _, r := range rules {
			if slices.Equal(r.APIGroups, []string{group}) && slices.Equal(r.Resources, []string{resource}) &&
				slices.Equal(r.ResourceNames, names) && sets.New(r.Verbs...).HasAll(verbs...) {
				return true
			}
		}
		return false
	}
	if !has(role.Rules, "example.com", "widgets", nil, "get", "list", "watch", "create", "update", "patch", "delete") {
		t.Errorf("Role has no rule for widgets.example.com: %+v", role.Rules)
	}
	if has(role.Rules, "example.com", "off", nil, "get") {
		t.Errorf("Role has a rule for a disabled entry: %+v", role.Rules)
	}
	cr := decode[rbacv1.ClusterRole](t, m, "ClusterRole/vc-vc1-v-ns1")
	if !has(cr.Rules, "apiextensions.k8s.io", "customresourcedefinitions", []string{"widgets.example.com", "gadgets.example.org"}, "get") {
		t.Errorf("ClusterRole cannot get the two CRDs: %+v", cr.Rules)
	}
	if !has(cr.Rules, "example.org", "gadgets", nil, "get", "list", "watch") {
		t.Errorf("ClusterRole cannot read gadgets.example.org: %+v", cr.Rules)
	}
	plain := decode[rbacv1.ClusterRole](t, render(t), "ClusterRole/vc-vc1-v-ns1")
	if has(plain.Rules, "apiextensions.k8s.io", "customresourcedefinitions", nil) {
		t.Errorf("defaults grant CRD access: %+v", plain.Rules)
	}
}

// The ClusterRole reads host nodes in every configuration (fake nodes take
// the host node's labels too) and may patch them only with real nodes and
// syncBackChanges both on.
func TestChartClusterRoleNodes(t *testing.T) {
	tests := []struct {
		name string
		sets []string
		want []string
	}{
		{"defaults (fake nodes)", nil, []string{"get", "list", "watch"}},
		{"real nodes", []string{"sync.fromHost.nodes.enabled=true"}, []string{"get", "list", "watch"}},
		{"syncBackChanges without real nodes", []string{"sync.fromHost.nodes.syncBackChanges=true"}, []string{"get", "list", "watch"}},
		{"real nodes with syncBackChanges", []string{"sync.fromHost.nodes.enabled=true", "sync.fromHost.nodes.syncBackChanges=true"},
			[]string{"get", "list", "patch", "watch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			role := decode[rbacv1.ClusterRole](t, render(t, tt.sets...), "ClusterRole/vc-vc1-v-ns1")
			got := sets.New[string]()
			for _, r := range role.Rules {
				if slices.Contains(r.Resources, "nodes") && slices.Contains(r.APIGroups, "") {
					got.Insert(r.Verbs...)
				}
			}
			if !got.Equal(sets.New(tt.want...)) {
				t.Errorf("verbs on nodes %v, want %v", sets.List(got), tt.want)
			}
		})
	}
}

// The storage kinds read from the host (true, false or "auto") get their
// ClusterRole rules for true only: "auto" means off in clustersync, though
// Helm's `if` takes the string for true.
func TestChartClusterRoleStorageFromHost(t *testing.T) {
	// storage renders the chart with values and returns the storage.k8s.io
	// resources the ClusterRole may read.
	storage := func(values ...string) sets.Set[string] {
		role := decode[rbacv1.ClusterRole](t, render(t, values...), "ClusterRole/vc-vc1-v-ns1")
		got := sets.New[string]()
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, "storage.k8s.io") && sets.New(r.Verbs...).HasAll("get", "list", "watch") {
				got.Insert(r.Resources...)
			}
		}
		return got
	}
	keys := []string{"storageClasses", "csiNodes", "csiDrivers"}
	all := func(value string) []string {
		var out []string
		for _, k := range keys {
			out = append(out, "sync.fromHost."+k+".enabled="+value)
		}
		return out
	}
	if got := storage(); got.Len() != 0 {
		t.Errorf("defaults (auto): storage rules %v, want none", sets.List(got))
	}
	if got := storage(all("auto")...); got.Len() != 0 {
		t.Errorf("auto: storage rules %v, want none", sets.List(got))
	}
	if got := storage(all("false")...); got.Len() != 0 {
		t.Errorf("false: storage rules %v, want none", sets.List(got))
	}
	if got, want := storage(all("true")...), sets.New("storageclasses", "csinodes", "csidrivers"); !got.Equal(want) {
		t.Errorf("true: read rules on %v, want %v", sets.List(got), sets.List(want))
	}
	if got := storage("sync.fromHost.csiDrivers.enabled=true"); !got.Equal(sets.New("csidrivers")) {
		t.Errorf("csiDrivers true alone: read rules on %v", sets.List(got))
	}
	// "auto" follows the virtual scheduler, as in vCluster.
	scheduler := []string{"controlPlane.advanced.virtualScheduler.enabled=true", "sync.fromHost.nodes.enabled=true"}
	if got, want := storage(scheduler...), sets.New("storageclasses", "csinodes", "csidrivers", "csistoragecapacities"); !got.Equal(want) {
		t.Errorf("auto with the virtual scheduler: read rules on %v, want %v", sets.List(got), sets.List(want))
	}
	if got := storage(append(all("false"), append(scheduler, "sync.fromHost.csiStorageCapacities.enabled=false")...)...); got.Len() != 0 {
		t.Errorf("false with the virtual scheduler: storage rules %v, want none", sets.List(got))
	}
}

// The virtual scheduler is a container of the control plane pod, only
// when it is enabled.
func TestChartVirtualScheduler(t *testing.T) {
	containers := func(sets ...string) []string {
		sts := decode[appsv1.StatefulSet](t, render(t, sets...), "StatefulSet/vc1")
		var names []string
		for _, c := range sts.Spec.Template.Spec.Containers {
			names = append(names, c.Name)
		}
		return names
	}
	if got := containers(); slices.Contains(got, "kube-scheduler") {
		t.Errorf("defaults: containers %v include kube-scheduler", got)
	}
	sts := decode[appsv1.StatefulSet](t, render(t, "controlPlane.advanced.virtualScheduler.enabled=true", "sync.fromHost.nodes.enabled=true"), "StatefulSet/vc1")
	i := slices.IndexFunc(sts.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == "kube-scheduler" })
	if i < 0 {
		t.Fatalf("virtualScheduler.enabled: no kube-scheduler container")
	}
	c := sts.Spec.Template.Spec.Containers[i]
	if want := []string{"/clustersync", "virtual", "component", "kube-scheduler"}; !slices.Equal(c.Command[:4], want) {
		t.Errorf("kube-scheduler command %v, want %v…", c.Command, want)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Port.IntValue() != 10259 {
		t.Errorf("kube-scheduler liveness probe %+v, want /healthz on 10259", c.LivenessProbe)
	}
	if c.Resources.Requests.Cpu().String() != "50m" || c.Resources.Requests.Memory().String() != "64Mi" {
		t.Errorf("kube-scheduler requests %v, want 50m and 64Mi (statefulset.yaml's comment, docs/security.md)", c.Resources.Requests)
	}
	// vCluster's other spelling does the same, and the ClusterRole lets
	// the syncer read what the scheduler needs.
	m := render(t, "controlPlane.distro.k8s.scheduler.enabled=true", "sync.fromHost.nodes.enabled=true")
	if got := containers("controlPlane.distro.k8s.scheduler.enabled=true", "sync.fromHost.nodes.enabled=true"); !slices.Contains(got, "kube-scheduler") {
		t.Errorf("distro.k8s.scheduler.enabled: containers %v lack kube-scheduler", got)
	}
	if cr := m["ClusterRole/vc-vc1-v-ns1"]; !strings.Contains(cr, "storageclasses") {
		t.Errorf("distro.k8s.scheduler.enabled: the ClusterRole does not read storage classes (auto with the virtual scheduler):\n%s", cr)
	}
	cfg, err := config.Parse([]byte("controlPlane:\n  distro: {k8s: {scheduler: {enabled: true}}}\n"))
	if err == nil || !strings.Contains(err.Error(), "controlPlane.distro.k8s.scheduler.enabled: needs sync.fromHost.nodes.enabled: true") {
		t.Errorf("distro.k8s.scheduler.enabled without nodes: %v, %v", cfg, err)
	}
}

// `helm install` of the chart checks values.schema.json (generated from the
// configuration types): a key in neither clustersync's nor vCluster's
// sections is refused, a vCluster section and an image object pass.
func TestChartSchema(t *testing.T) {
	_, err := charts.Render(ChartName, "vc1", "ns1", map[string]any{"sync": map[string]any{"toHost": map[string]any{"podz": map[string]any{}}}})
	if err == nil || !strings.Contains(err.Error(), "podz") {
		t.Errorf("an unknown key: %v, want an error naming it", err)
	}
	_, err = charts.Render(ChartName, "vc1", "ns1", map[string]any{"syncer": map[string]any{"workers": "many"}})
	if err == nil || !strings.Contains(err.Error(), "workers") {
		t.Errorf("a string for an integer: %v, want an error naming the key", err)
	}
	_, err = charts.Render(ChartName, "vc1", "ns1", map[string]any{
		"networking": map[string]any{"advanced": map[string]any{"clusterDomain": "cluster.local"}},
		"sync": map[string]any{"toHost": map[string]any{"pods": map[string]any{"patches": []any{},
			"rewriteHosts": map[string]any{"initContainer": map[string]any{"image": map[string]any{"repository": "library/alpine", "tag": "3.20"}}}}}},
	})
	if err != nil {
		t.Errorf("a vCluster file's keys: %v", err)
	}
}

// controlPlane.statefulSet.labels, .annotations and .pods go on the
// StatefulSet and its pod, beside the chart's own; what the file gives
// of the chart's own keys is refused by Values, and left out by the chart
// for `helm install` (the selector stays the chart's).
func TestChartStatefulSetMetadata(t *testing.T) {
	m := render(t,
		"controlPlane.statefulSet.labels.team=a",
		"controlPlane.statefulSet.annotations.example\\.com/owner=ops",
		"controlPlane.statefulSet.pods.labels.tier=control",
		"controlPlane.statefulSet.pods.annotations.example\\.com/scrape=yes",
	)
	sts := decode[appsv1.StatefulSet](t, m, "StatefulSet/vc1")
	if sts.Labels["team"] != "a" || sts.Labels["app"] != "vcluster" || sts.Annotations["example.com/owner"] != "ops" || sts.Annotations["clustersync.io/persistence"] == "" {
		t.Errorf("StatefulSet labels %v, annotations %v", sts.Labels, sts.Annotations)
	}
	pod := sts.Spec.Template.ObjectMeta
	if pod.Labels["tier"] != "control" || pod.Labels["release"] != "vc1" || pod.Annotations["example.com/scrape"] != "yes" || pod.Annotations["checksum/config"] == "" {
		t.Errorf("pod labels %v, annotations %v", pod.Labels, pod.Annotations)
	}

	// As `helm install -f` takes it, with no CLI to check it first.
	m, err := charts.Render(ChartName, "vc1", "ns1", map[string]any{"controlPlane": map[string]any{
		"statefulSet": map[string]any{"labels": map[string]any{"release": "other", "team": "a"}, "pods": map[string]any{"labels": map[string]any{"app": "other"}}},
		"service":     map[string]any{"labels": map[string]any{"vcluster.loft.sh/managed-by": "other", "team": "a"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	sts = decode[appsv1.StatefulSet](t, m, "StatefulSet/vc1")
	if sel := sts.Spec.Template.Labels["app"]; sel != "vcluster" {
		t.Errorf("the chart let the file replace the selector label: app=%s", sel)
	}
	if sts.Labels["release"] != "vc1" || sts.Labels["team"] != "a" {
		t.Errorf("StatefulSet labels %v: want the chart's release and the file's team", sts.Labels)
	}
	if svc := decode[corev1.Service](t, m, "Service/vc1"); svc.Labels["vcluster.loft.sh/managed-by"] != "vc1" || svc.Labels["team"] != "a" {
		t.Errorf("Service labels %v: want the chart's managed-by and the file's team", svc.Labels)
	}
	file := filepath.Join(t.TempDir(), "vc.yaml")
	if err := os.WriteFile(file, []byte("controlPlane:\n  statefulSet:\n    pods:\n      labels: {app: other, ok: \"not ok!\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = Values([]string{file}, nil)
	for _, want := range []string{"controlPlane.statefulSet.pods.labels[app]: clustersync sets this key itself (app, release)",
		`controlPlane.statefulSet.pods.labels[ok]: invalid value "not ok!"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Values: %v, want %s", err, want)
		}
	}
}

// controlPlane.statefulSet.scheduling, dnsPolicy, dnsConfig,
// runtimeClassName and hostAliases go into the pod spec as written, and
// what Kubernetes would refuse in them is refused by Values with its path.
func TestChartScheduling(t *testing.T) {
	file := filepath.Join(t.TempDir(), "vc.yaml")
	if err := os.WriteFile(file, []byte(`controlPlane:
  statefulSet:
    scheduling:
      nodeSelector: {disk: ssd}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]
      tolerations: [{key: dedicated, operator: Equal, value: control, effect: NoSchedule}]
      priorityClassName: system-cluster-critical
      podManagementPolicy: OrderedReady
      topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]
    dnsPolicy: None
    dnsConfig: {nameservers: [10.0.0.10], searches: [example.com]}
    runtimeClassName: gvisor
    hostAliases: [{ip: 10.0.0.1, hostnames: [registry.internal]}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	vals, _, err := Values([]string{file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := charts.Render(ChartName, "vc1", "ns1", vals)
	if err != nil {
		t.Fatal(err)
	}
	sts := decode[appsv1.StatefulSet](t, m, "StatefulSet/vc1")
	spec := sts.Spec.Template.Spec
	if spec.NodeSelector["disk"] != "ssd" || spec.Affinity == nil || spec.Affinity.NodeAffinity == nil ||
		len(spec.Tolerations) != 1 || spec.Tolerations[0].Value != "control" || spec.PriorityClassName != "system-cluster-critical" ||
		len(spec.TopologySpreadConstraints) != 1 || sts.Spec.PodManagementPolicy != appsv1.OrderedReadyPodManagement {
		t.Errorf("scheduling not in the pod spec: %+v, policy %s", spec, sts.Spec.PodManagementPolicy)
	}
	if spec.DNSPolicy != corev1.DNSNone || spec.DNSConfig == nil || spec.DNSConfig.Nameservers[0] != "10.0.0.10" ||
		spec.RuntimeClassName == nil || *spec.RuntimeClassName != "gvisor" || len(spec.HostAliases) != 1 || spec.HostAliases[0].IP != "10.0.0.1" {
		t.Errorf("DNS, runtime class, host aliases not in the pod spec: %+v", spec)
	}
	if d := decode[appsv1.StatefulSet](t, render(t), "StatefulSet/vc1"); d.Spec.Template.Spec.Affinity != nil || d.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
		t.Errorf("defaults: affinity %v, policy %s", d.Spec.Template.Spec.Affinity, d.Spec.PodManagementPolicy)
	}

	if err := os.WriteFile(file, []byte("controlPlane:\n  statefulSet:\n    scheduling:\n      tolerations: [{key: a, efect: NoSchedule}]\n      podManagementPolicy: Sometimes\n    dnsPolicy: None\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = Values([]string{file}, nil)
	for _, want := range []string{`controlPlane.statefulSet.scheduling.tolerations[0]: not a Kubernetes Toleration: unknown field "efect"`,
		`controlPlane.statefulSet.scheduling.podManagementPolicy: must be Parallel or OrderedReady, got "Sometimes"`,
		`controlPlane.statefulSet.dnsConfig.nameservers: required with dnsPolicy None`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Values: %v\nwant %s", err, want)
		}
	}
}

// The rest of controlPlane.statefulSet reaches the pod as vCluster's chart
// puts it in its one container, spread over clustersync's: env, workingDir,
// the container security context and addVolumeMounts in every control
// plane container, resources in the syncer's, probes in kube-apiserver's,
// init and sidecar containers after the chart's, volumes, claims and the
// retention policy on the StatefulSet.
func TestChartPodSpec(t *testing.T) {
	m := renderValues(t, `controlPlane:
  statefulSet:
    env: [{name: HTTPS_PROXY, value: "http://proxy:3128"}]
    workingDir: /tmp
    enableServiceLinks: false
    resources: {limits: {memory: 3Gi}}
    security:
      podSecurityContext: {fsGroup: 2000, supplementalGroups: [3000]}
      containerSecurityContext: {runAsUser: 1000, capabilities: {add: [NET_BIND_SERVICE]}}
    probes:
      livenessProbe: {enabled: false}
      startupProbe: {failureThreshold: 600, initialDelaySeconds: 5}
    initContainers: [{name: wait, image: "busybox:1", command: ["true"]}]
    sidecarContainers: [{name: log, image: "busybox:1", command: [sleep, infinity]}]
    persistence:
      volumeClaim: {enabled: false, retentionPolicy: Delete}
      dataVolume: [{name: data, hostPath: {path: /var/lib/vc1-data}}]
      addVolumes: [{name: ca, secret: {secretName: "{{ .Release.Name }}-ca"}}]
      addVolumeMounts: [{name: ca, mountPath: /etc/ssl/extra, readOnly: true}]
      volumeClaimTemplates: [{metadata: {name: audit}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}]
`)
	sts := decode[appsv1.StatefulSet](t, m, "StatefulSet/vc1")
	spec := sts.Spec.Template.Spec
	if sc := spec.SecurityContext; sc == nil || *sc.FSGroup != 2000 || *sc.RunAsUser != 65532 || !*sc.RunAsNonRoot || len(sc.SupplementalGroups) != 1 {
		t.Errorf("pod security context %+v: want the file's fsGroup and groups over the chart's", sc)
	}
	names := func(cs []corev1.Container) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	if got := names(spec.InitContainers); !slices.Equal(got, []string{"init", "etcd", "wait"}) {
		t.Errorf("init containers %v", got)
	}
	if got := names(spec.Containers); !slices.Equal(got, []string{"kube-apiserver", "kube-controller-manager", "syncer", "coredns", "log"}) {
		t.Errorf("containers %v", got)
	}
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		if c.Name == "wait" || c.Name == "log" {
			if c.SecurityContext != nil || len(c.VolumeMounts) != 0 || len(c.Env) != 0 {
				t.Errorf("%s: the file's container got the chart's settings: %+v", c.Name, c)
			}
			continue
		}
		if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "HTTPS_PROXY" }) || c.WorkingDir != "/tmp" {
			t.Errorf("%s: env %v, workingDir %q", c.Name, c.Env, c.WorkingDir)
		}
		if sc := c.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 1000 || !*sc.ReadOnlyRootFilesystem ||
			!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || !slices.Equal(sc.Capabilities.Add, []corev1.Capability{"NET_BIND_SERVICE"}) {
			t.Errorf("%s: security context %+v", c.Name, sc)
		}
		if !slices.ContainsFunc(c.VolumeMounts, func(v corev1.VolumeMount) bool { return v.Name == "ca" && v.MountPath == "/etc/ssl/extra" }) {
			t.Errorf("%s: mounts %v", c.Name, c.VolumeMounts)
		}
		switch c.Name {
		case "syncer":
			if q := c.Resources.Limits[corev1.ResourceMemory]; q.String() != "3Gi" {
				t.Errorf("syncer memory limit %s, want the file's 3Gi", q.String())
			}
		case "kube-apiserver":
			if c.LivenessProbe != nil || c.StartupProbe == nil || c.StartupProbe.FailureThreshold != 600 || c.StartupProbe.InitialDelaySeconds != 5 ||
				c.StartupProbe.PeriodSeconds != 1 || c.ReadinessProbe == nil || c.ReadinessProbe.PeriodSeconds != 1 {
				t.Errorf("kube-apiserver probes: liveness %+v, startup %+v, readiness %+v", c.LivenessProbe, c.StartupProbe, c.ReadinessProbe)
			}
		}
	}
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	if d := vols["data"]; d.HostPath == nil || d.HostPath.Path != "/var/lib/vc1-data" {
		t.Errorf("data volume %+v, want the file's dataVolume", d)
	}
	if ca := vols["ca"]; ca.Secret == nil || ca.Secret.SecretName != "vc1-ca" {
		t.Errorf("added volume %+v", ca)
	}
	if len(sts.Spec.VolumeClaimTemplates) != 1 || sts.Spec.VolumeClaimTemplates[0].Name != "audit" ||
		sts.Spec.PersistentVolumeClaimRetentionPolicy == nil || sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted != appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
		t.Errorf("claims %v, retention %+v", sts.Spec.VolumeClaimTemplates, sts.Spec.PersistentVolumeClaimRetentionPolicy)
	}
	if spec.EnableServiceLinks == nil || *spec.EnableServiceLinks {
		t.Errorf("enableServiceLinks %v", spec.EnableServiceLinks)
	}

	// The names config.ControlPlaneContainers and ControlPlaneVolumes
	// reserve are the chart's.
	all := decode[appsv1.StatefulSet](t, render(t, "controlPlane.advanced.virtualScheduler.enabled=true", "sync.fromHost.nodes.enabled=true"), "StatefulSet/vc1")
	if got := names(slices.Concat(all.Spec.Template.Spec.InitContainers, all.Spec.Template.Spec.Containers)); !slices.Equal(got, config.ControlPlaneContainers()) {
		t.Errorf("the chart's containers %v, config.ControlPlaneContainers %v", got, config.ControlPlaneContainers())
	}
	for _, c := range all.Spec.Template.Spec.Containers {
		for _, v := range c.VolumeMounts {
			if config.ControlPlaneVolumes()[v.Name] != v.MountPath {
				t.Errorf("%s mounts %s at %s; config.ControlPlaneVolumes has %v", c.Name, v.Name, v.MountPath, config.ControlPlaneVolumes())
			}
		}
		for _, e := range c.Env {
			if !slices.Contains(config.ControlPlaneEnv(), e.Name) {
				t.Errorf("%s has variable %s; config.ControlPlaneEnv has %v", c.Name, e.Name, config.ControlPlaneEnv())
			}
		}
	}
}

// Every vCluster release's values.yaml, as `vcluster create` starts from
// it, gives the control plane StatefulSet clustersync gives with no file:
// vCluster's image, resources, root user and probe timings mean
// clustersync's (config.VClusterDefaultMeansOurs), in the chart as in the
// configuration.
func TestChartTakesVClusterValues(t *testing.T) {
	spec := func(m map[string]string) string {
		sts := decode[appsv1.StatefulSet](t, m, "StatefulSet/vc1")
		delete(sts.Spec.Template.Annotations, "checksum/config")
		out, err := yaml.Marshal(sts)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	want := spec(render(t))
	k := config.VCluster()
	for _, r := range k.Releases {
		data, err := yaml.Marshal(k.Values(r))
		if err != nil {
			t.Fatal(err)
		}
		if got := spec(renderValues(t, string(data))); got != want {
			t.Errorf("vCluster %s values.yaml: the StatefulSet differs from the chart's default:\n%s", r, lineDiff(want, got))
		}
	}
}

// lineDiff lists the lines of got not in want (+) and of want not in got (-).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range g {
		if !slices.Contains(w, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	for _, l := range w {
		if !slices.Contains(g, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	return b.String()
}

// controlPlane.service and .ingress make the API server's Service and
// Ingress as vCluster's chart does, with the chart's ports and selector;
// the quota makes room for the Service's own node port and load balancer.
func TestChartExposure(t *testing.T) {
	m := renderValues(t, `controlPlane:
  service:
    labels: {team: a}
    annotations: {service.beta.kubernetes.io/aws-load-balancer-type: nlb}
    httpsNodePort: 31443
    spec: {type: LoadBalancer, externalTrafficPolicy: Local, loadBalancerSourceRanges: [10.0.0.0/8]}
  ingress:
    enabled: true
    host: vc1.example.org
`)
	svc := decode[corev1.Service](t, m, "Service/vc1")
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal ||
		len(svc.Spec.LoadBalancerSourceRanges) != 1 || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].NodePort != 31443 || svc.Spec.Ports[0].TargetPort.IntVal != 8443 ||
		svc.Spec.Selector["release"] != "vc1" || svc.Labels["team"] != "a" || svc.Labels["vcluster.loft.sh/managed-by"] != "vc1" ||
		svc.Annotations["service.beta.kubernetes.io/aws-load-balancer-type"] != "nlb" {
		t.Errorf("Service %+v", svc)
	}
	in := decode[networkingv1.Ingress](t, m, "Ingress/vc1")
	if len(in.Spec.Rules) != 1 || in.Spec.Rules[0].Host != "vc1.example.org" || in.Annotations["nginx.ingress.kubernetes.io/ssl-passthrough"] != "true" ||
		in.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Port.Name != "https" {
		t.Errorf("Ingress %+v", in)
	}
	q := decode[corev1.ResourceQuota](t, m, "ResourceQuota/vc-vc1")
	if n, lb := q.Spec.Hard["services.nodeports"], q.Spec.Hard["services.loadbalancers"]; n.Value() != 1 || lb.Value() != 2 {
		t.Errorf("quota services.nodeports %s, services.loadbalancers %s: want the defaults (0, 1) plus the API server's Service", n.String(), lb.String())
	}

	def := render(t)
	if _, ok := def["Ingress/vc1"]; ok {
		t.Error("an Ingress without controlPlane.ingress.enabled")
	}
	if s := decode[corev1.Service](t, def, "Service/vc1"); s.Spec.Type != corev1.ServiceTypeClusterIP || s.Spec.Ports[0].NodePort != 0 {
		t.Errorf("default Service %+v", s.Spec)
	}
	if q := decode[corev1.ResourceQuota](t, def, "ResourceQuota/vc-vc1"); q.Spec.Hard.Name("services.nodeports", "").Value() != 0 {
		t.Errorf("default quota %v", q.Spec.Hard)
	}

	file := filepath.Join(t.TempDir(), "vc.yaml")
	if err := os.WriteFile(file, []byte("controlPlane:\n  service:\n    enabled: false\n    httpsNodePort: 30001\n    spec: {type: ExternalName, selector: {a: b}}\n  ingress: {enabled: true, host: \"\", pathType: Any}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := Values([]string{file}, nil)
	for _, want := range []string{"controlPlane.service.enabled: must be true", `controlPlane.service.spec.type: must be ClusterIP, NodePort or LoadBalancer, got "ExternalName"`,
		"controlPlane.service.spec.selector: is the chart's", "controlPlane.service.httpsNodePort: needs spec.type NodePort or LoadBalancer",
		"controlPlane.ingress.host: required", `controlPlane.ingress.pathType: must be ImplementationSpecific, Prefix or Exact, got "Any"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Values: %v\nwant %s", err, want)
		}
	}
}

// exportKubeConfig's Secrets in other namespaces: the syncer may write
// Secrets there (a Role and RoleBinding in each), and nowhere else.
func TestChartExportKubeConfigRBAC(t *testing.T) {
	m := renderValues(t, "exportKubeConfig:\n  additionalSecrets: [{namespace: ci}, {name: other, namespace: ci}, {name: here}, {namespace: argo}]\n")
	for _, ns := range []string{"ci", "argo"} {
		role := decode[rbacv1.Role](t, m, "Role/vc-vc1-kubeconfig/"+ns)
		if role.Namespace != ns || len(role.Rules) != 1 || role.Rules[0].Resources[0] != "secrets" {
			t.Errorf("Role in %s: %+v", ns, role)
		}
		rb := decode[rbacv1.RoleBinding](t, m, "RoleBinding/vc-vc1-kubeconfig/"+ns)
		if rb.Subjects[0].Name != "vc-vc1" || rb.Subjects[0].Namespace != "ns1" {
			t.Errorf("RoleBinding in %s: %+v", ns, rb)
		}
	}
	for key := range m {
		if strings.HasPrefix(key, "Role/vc-vc1-kubeconfig") && key != "Role/vc-vc1-kubeconfig/ci" && key != "Role/vc-vc1-kubeconfig/argo" {
			t.Errorf("unexpected %s", key)
		}
	}
}

// controlPlane.advanced: the control plane's ServiceAccount (its name in
// the pod and the bindings), the headless Service's metadata, annotations
// on every object, and a PodDisruptionBudget.
func TestChartAdvanced(t *testing.T) {
	m := renderValues(t, `controlPlane:
  advanced:
    serviceAccount: {name: cp-identity, imagePullSecrets: [{name: registry}], labels: {team: a}}
    headlessService: {labels: {scrape: "no"}, annotations: {example.com/headless: "yes"}}
    globalMetadata: {annotations: {example.com/owner: ops}}
    podDisruptionBudget: {enabled: true, maxUnavailable: 0}
  ingress: {enabled: true, host: vc1.example.org}
`)
	sa := decode[corev1.ServiceAccount](t, m, "ServiceAccount/cp-identity")
	if len(sa.ImagePullSecrets) != 1 || sa.Labels["team"] != "a" || sa.Annotations["example.com/owner"] != "ops" {
		t.Errorf("ServiceAccount %+v", sa)
	}
	if n := decode[appsv1.StatefulSet](t, m, "StatefulSet/vc1").Spec.Template.Spec.ServiceAccountName; n != "cp-identity" {
		t.Errorf("pod runs as %s", n)
	}
	if s := decode[rbacv1.RoleBinding](t, m, "RoleBinding/vc-vc1").Subjects[0].Name; s != "cp-identity" {
		t.Errorf("RoleBinding subject %s", s)
	}
	h := decode[corev1.Service](t, m, "Service/vc1-headless")
	if h.Labels["scrape"] != "no" || h.Annotations["example.com/headless"] != "yes" || h.Annotations["example.com/owner"] != "ops" {
		t.Errorf("headless Service metadata %v %v", h.Labels, h.Annotations)
	}
	for _, key := range []string{"StatefulSet/vc1", "Service/vc1", "Ingress/vc1", "PodDisruptionBudget/vc1"} {
		var obj struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(m[key]), &obj); err != nil || obj.Metadata.Annotations["example.com/owner"] != "ops" {
			t.Errorf("%s: annotations %v (%v), want globalMetadata's", key, obj.Metadata.Annotations, err)
		}
	}
	pdb := decode[policyv1.PodDisruptionBudget](t, m, "PodDisruptionBudget/vc1")
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 || pdb.Spec.Selector.MatchLabels["release"] != "vc1" {
		t.Errorf("PodDisruptionBudget %+v: maxUnavailable 0 is unset, as in vCluster's chart, so minAvailable 1", pdb.Spec)
	}
	if _, ok := render(t)["PodDisruptionBudget/vc1"]; ok {
		t.Error("a PodDisruptionBudget by default")
	}
	none := renderValues(t, "controlPlane:\n  advanced:\n    serviceAccount: {enabled: false, name: existing}\n")
	if _, ok := none["ServiceAccount/existing"]; ok {
		t.Error("a ServiceAccount with enabled false")
	}
}

// policies.networkPolicy in vCluster 0.31's shape gives the policies its
// older shape gives: workload.publicEgress for outgoingConnections,
// workload.egress and controlPlane.egress for the extra rules; and the
// ingress rules of the new shape are added.
func TestChartNetworkPolicyShapes(t *testing.T) {
	rule := "{to: [{ipBlock: {cidr: 192.0.2.0/24}}], ports: [{port: 5432, protocol: TCP}]}"
	old := renderValues(t, "policies:\n  networkPolicy:\n    outgoingConnections: {ipBlock: {cidr: 203.0.113.0/24, except: [203.0.113.8/29]}}\n"+
		"    extraWorkloadRules: ["+rule+"]\n    extraControlPlaneRules: ["+rule+"]\n")
	current := renderValues(t, "policies:\n  networkPolicy:\n    workload:\n      publicEgress: {enabled: true, cidr: 203.0.113.0/24, except: [203.0.113.8/29]}\n"+
		"      egress: ["+rule+"]\n    controlPlane:\n      egress: ["+rule+"]\n")
	for _, key := range []string{"NetworkPolicy/vc-work-vc1", "NetworkPolicy/vc-cp-vc1"} {
		a, b := decode[networkingv1.NetworkPolicy](t, old, key), decode[networkingv1.NetworkPolicy](t, current, key)
		if !reflect.DeepEqual(a.Spec, b.Spec) {
			t.Errorf("%s differs between the shapes:\n%s", key, lineDiff(old[key], current[key]))
		}
		if n := len(a.Spec.Egress); n < 2 || a.Spec.Egress[n-1].Ports[0].Port.IntVal != 5432 {
			t.Errorf("%s: egress %v lacks the extra rule", key, a.Spec.Egress)
		}
	}
	if w := decode[networkingv1.NetworkPolicy](t, old, "NetworkPolicy/vc-work-vc1"); !slices.ContainsFunc(w.Spec.Egress, func(r networkingv1.NetworkPolicyEgressRule) bool {
		return len(r.To) == 1 && r.To[0].IPBlock != nil && r.To[0].IPBlock.CIDR == "203.0.113.0/24" && len(r.To[0].IPBlock.Except) == 1
	}) {
		t.Errorf("no public egress rule of 203.0.113.0/24: %v", w.Spec.Egress)
	}

	off := renderValues(t, "policies:\n  networkPolicy:\n    workload:\n      publicEgress: {enabled: false}\n      ingress: [{from: [{namespaceSelector: {matchLabels: {team: ingress}}}]}]\n"+
		"    controlPlane:\n      ingress: [{from: [{namespaceSelector: {matchLabels: {team: monitoring}}}], ports: [{port: 9153}]}]\n")
	w := decode[networkingv1.NetworkPolicy](t, off, "NetworkPolicy/vc-work-vc1")
	for _, r := range w.Spec.Egress {
		for _, to := range r.To {
			if to.IPBlock != nil && to.IPBlock.CIDR == "0.0.0.0/0" {
				t.Errorf("publicEgress.enabled false still allows %v", to.IPBlock)
			}
		}
	}
	if last := w.Spec.Ingress[len(w.Spec.Ingress)-1]; last.From[0].NamespaceSelector.MatchLabels["team"] != "ingress" {
		t.Errorf("workload.ingress not added: %v", w.Spec.Ingress)
	}
	cp := decode[networkingv1.NetworkPolicy](t, off, "NetworkPolicy/vc-cp-vc1")
	if last := cp.Spec.Ingress[len(cp.Spec.Ingress)-1]; last.From[0].NamespaceSelector.MatchLabels["team"] != "monitoring" {
		t.Errorf("controlPlane.ingress not added: %v", cp.Spec.Ingress)
	}
}

// rbac: extraRules add to the chart's rules, overwriteRules replace them,
// enabled false leaves the Role or ClusterRole out.
func TestChartRBAC(t *testing.T) {
	const extra = "{apiGroups: [example.com], resources: [widgets], verbs: [get]}"
	m := renderValues(t, "rbac:\n  role: {extraRules: ["+extra+"]}\n  clusterRole: {overwriteRules: ["+extra+"]}\n")
	role := decode[rbacv1.Role](t, m, "Role/vc-vc1")
	def := decode[rbacv1.Role](t, render(t), "Role/vc-vc1")
	if len(role.Rules) != len(def.Rules)+1 || role.Rules[len(role.Rules)-1].Resources[0] != "widgets" {
		t.Errorf("Role rules %v: want the chart's %d and the extra one", role.Rules, len(def.Rules))
	}
	if cr := decode[rbacv1.ClusterRole](t, m, "ClusterRole/vc-vc1-v-ns1"); len(cr.Rules) != 1 || cr.Rules[0].Resources[0] != "widgets" {
		t.Errorf("ClusterRole rules %v: want only the overwriting one", cr.Rules)
	}
	off := renderValues(t, "rbac:\n  role: {enabled: false}\n  clusterRole: {enabled: false}\n")
	for _, key := range []string{"Role/vc-vc1", "RoleBinding/vc-vc1", "ClusterRole/vc-vc1-v-ns1", "ClusterRoleBinding/vc-vc1-v-ns1"} {
		if _, ok := off[key]; ok {
			t.Errorf("%s with enabled false", key)
		}
	}
	if _, ok := off["StatefulSet/vc1"]; !ok {
		t.Error("no StatefulSet")
	}
}

// vCluster's image, however the file spells it, means clustersync's, also
// under `helm install` (no CLI to check the file first).
func TestChartVClusterImage(t *testing.T) {
	for _, image := range []map[string]any{
		{"registry": "ghcr.io", "repository": "loft-sh/vcluster-pro", "tag": ""},
		{"registry": "", "repository": "ghcr.io/loft-sh/vcluster", "tag": "0.36.1"},
		{"registry": "registry.example.com:5000", "repository": "loft-sh/vcluster-oss", "tag": "0.30.0"},
	} {
		m, err := charts.Render(ChartName, "vc1", "ns1", map[string]any{"controlPlane": map[string]any{"statefulSet": map[string]any{"image": image}}})
		if err != nil {
			t.Fatal(err)
		}
		sts := decode[appsv1.StatefulSet](t, m, "StatefulSet/vc1")
		if got := sts.Spec.Template.Spec.Containers[0].Image; !strings.HasPrefix(got, "ghcr.io/clustersync/clustersync:") {
			t.Errorf("image %v: the pod runs %s, want clustersync's", image, got)
		}
	}
	m, err := charts.Render(ChartName, "vc1", "ns1", map[string]any{"controlPlane": map[string]any{"statefulSet": map[string]any{
		"image": map[string]any{"registry": "mirror.example.com", "repository": "clustersync/clustersync", "tag": "v1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := decode[appsv1.StatefulSet](t, m, "StatefulSet/vc1").Spec.Template.Spec.Containers[0].Image; got != "mirror.example.com/clustersync/clustersync:v1" {
		t.Errorf("a mirror of clustersync's image: the pod runs %s", got)
	}
}

// controlPlane.advanced.defaultImageRegistry is the registry of the
// control plane image, in the chart as in ControlPlaneImage (which the CLI
// checks the local registry for).
func TestChartDefaultImageRegistry(t *testing.T) {
	for _, file := range []string{
		"controlPlane: {advanced: {defaultImageRegistry: registry.example.com/mirror}}\n",
		"controlPlane: {advanced: {defaultImageRegistry: registry.example.com/mirror}, statefulSet: {image: {repository: loft-sh/vcluster-pro, tag: 0.36.1}}}\n",
		"controlPlane: {statefulSet: {image: {registry: mirror.example.com, repository: clustersync/clustersync, tag: v1}}}\n",
	} {
		m := renderValues(t, file)
		got := decode[appsv1.StatefulSet](t, m, "StatefulSet/vc1").Spec.Template.Spec.Containers[0].Image
		cfg, err := config.Parse([]byte(file))
		if err != nil {
			t.Fatal(err)
		}
		want, err := ControlPlaneImage(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got != want || (strings.Contains(file, "defaultImageRegistry") && !strings.HasPrefix(got, "registry.example.com/mirror/clustersync/clustersync:")) {
			t.Errorf("%s: the pod runs %s, ControlPlaneImage says %s", file, got, want)
		}
	}
}

// The Gateway API's rules follow its keys: the umbrella grants Gateways and
// HTTPRoutes in the host namespace, the host's GatewayClasses and the CRDs
// by name cluster-wide; sync.fromHost.gateways a Role to read Gateways in
// each mapped host namespace.
func TestChartGatewayAPIRBAC(t *testing.T) {
	m := render(t, "sync.toHost.gatewayApi.enabled=true", "sync.fromHost.gateways.enabled=true",
		"sync.fromHost.gateways.mappings.byName.edge/public=shared/edge")
	has := func(rules []rbacv1.PolicyRule, group, resource string, names []string, verbs ...string) bool {
		return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
			return slices.Equal(r.APIGroups, []string{group}) && slices.Equal(r.Resources, []string{resource}) &&
				slices.Equal(r.ResourceNames, names) && sets.New(r.Verbs...).HasAll(verbs...)
		})
	}
	role := decode[rbacv1.Role](t, m, "Role/vc-vc1")
	for _, res := range []string{"gateways", "httproutes"} {
		if !has(role.Rules, "gateway.networking.k8s.io", res, nil, "get", "list", "watch", "create", "update", "patch", "delete") {
			t.Errorf("Role cannot write %s: %+v", res, role.Rules)
		}
	}
	if has(role.Rules, "gateway.networking.k8s.io", "tlsroutes", nil, "create") {
		t.Errorf("the umbrella grants TLSRoutes: %+v", role.Rules)
	}
	cr := decode[rbacv1.ClusterRole](t, m, "ClusterRole/vc-vc1-v-ns1")
	if !has(cr.Rules, "gateway.networking.k8s.io", "gatewayclasses", nil, "get", "list", "watch") ||
		!has(cr.Rules, "apiextensions.k8s.io", "customresourcedefinitions", []string{"gateways.gateway.networking.k8s.io", "gatewayclasses.gateway.networking.k8s.io", "referencegrants.gateway.networking.k8s.io"}, "get") {
		t.Errorf("ClusterRole cannot read GatewayClasses or the CRDs: %+v", cr.Rules)
	}
	edge := decode[rbacv1.Role](t, m, "Role/vc-vc1-from-host-gateways/edge")
	if edge.Namespace != "edge" || !has(edge.Rules, "gateway.networking.k8s.io", "gateways", nil, "get", "list", "watch") {
		t.Errorf("Role in the mapped namespace: %s %+v", edge.Namespace, edge.Rules)
	}
	plain := decode[rbacv1.ClusterRole](t, render(t), "ClusterRole/vc-vc1-v-ns1")
	if has(plain.Rules, "gateway.networking.k8s.io", "gatewayclasses", nil) {
		t.Errorf("defaults grant GatewayClasses: %+v", plain.Rules)
	}
}

// networking.advanced.proxyKubelets: the control plane Service gets the
// kubelet port (byHostname), the ClusterRole nodes/proxy (either key), the
// NetworkPolicies let the tenant's pods reach port 10250; none of it by
// default.
func TestChartProxyKubelets(t *testing.T) {
	kubeletPort := func(m map[string]string) bool {
		svc := decode[corev1.Service](t, m, "Service/vc1")
		return slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == 10250 && p.TargetPort.IntValue() == 10250 })
	}
	nodesProxy := func(m map[string]string) bool {
		cr := decode[rbacv1.ClusterRole](t, m, "ClusterRole/vc-vc1-v-ns1")
		return slices.ContainsFunc(cr.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.Resources, "nodes/proxy") && slices.Contains(r.Verbs, "get")
		})
	}
	opened := func(m map[string]string) bool {
		cp := decode[networkingv1.NetworkPolicy](t, m, "NetworkPolicy/vc-cp-vc1")
		return slices.ContainsFunc(cp.Spec.Ingress, func(r networkingv1.NetworkPolicyIngressRule) bool {
			return slices.ContainsFunc(r.Ports, func(p networkingv1.NetworkPolicyPort) bool { return p.Port != nil && p.Port.IntValue() == 10250 })
		})
	}
	plain := render(t)
	if kubeletPort(plain) || nodesProxy(plain) || opened(plain) {
		t.Errorf("by default: kubelet port %v, nodes/proxy %v, port 10250 open %v; want none", kubeletPort(plain), nodesProxy(plain), opened(plain))
	}
	byName := render(t, "networking.advanced.proxyKubelets.byHostname=true")
	if !kubeletPort(byName) || !nodesProxy(byName) || !opened(byName) {
		t.Errorf("byHostname: kubelet port %v, nodes/proxy %v, port 10250 open %v; want all", kubeletPort(byName), nodesProxy(byName), opened(byName))
	}
	byIP := render(t, "networking.advanced.proxyKubelets.byIP=true")
	if kubeletPort(byIP) || !nodesProxy(byIP) || !opened(byIP) {
		t.Errorf("byIP: kubelet port %v, nodes/proxy %v, port 10250 open %v; want no port, the rest", kubeletPort(byIP), nodesProxy(byIP), opened(byIP))
	}
}
