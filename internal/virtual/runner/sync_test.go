package runner_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// A pod that mounts a ConfigMap and a PVC and reads a Secret through env
// lands on the host with every reference translated, and becomes Running
// in the virtual cluster with the host's node and IP.
func TestPodWithReferencesRuns(t *testing.T) {
	ns := env.NewNamespace(t)
	// A host volume for the claim to bind to: the host binds and schedules.
	pvName := "pv-" + ns
	create(t, env.HostClient, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName:              "manual-" + ns,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/" + pvName}},
		},
	})
	t.Cleanup(func() {
		_ = env.HostClient.Delete(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pvName}})
	})

	create(t, env.VirtualClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config", Namespace: ns}, Data: map[string]string{"index.html": "hi"}})
	create(t, env.VirtualClient, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-secret", Namespace: ns}, StringData: map[string]string{"password": "s3cret"}})
	class := "manual-" + ns
	create(t, env.VirtualClient, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: &class,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	})
	create(t, env.VirtualClient, pod("web", ns, func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}},
			{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
		}
		p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "web-secret"}, Key: "password"}}}}
	}))

	v := runningPod(t, "web", ns)
	hp := hostObject(t, &corev1.Pod{}, "web", ns)

	// Host side: translated names, bookkeeping, no host credentials.
	ann := hp.Annotations
	if ann[translate.AnnotationObjectName] != "web" || ann[translate.AnnotationObjectNamespace] != ns ||
		ann[translate.AnnotationObjectUID] != string(v.UID) || ann[translate.AnnotationObjectKind] != "/v1, Kind=Pod" {
		t.Errorf("host pod bookkeeping annotations = %v", ann)
	}
	if hp.Labels[translate.LabelManagedBy] != env.Name || hp.Labels[translate.LabelNamespace] != ns {
		t.Errorf("host pod labels = %v", hp.Labels)
	}
	byName := map[string]corev1.Volume{}
	for _, vol := range hp.Spec.Volumes {
		byName[vol.Name] = vol
	}
	if got, want := byName["config"].ConfigMap.Name, env.HostKey("web-config", ns).Name; got != want {
		t.Errorf("configMap volume = %q, want %q", got, want)
	}
	if got, want := byName["data"].PersistentVolumeClaim.ClaimName, env.HostKey("data", ns).Name; got != want {
		t.Errorf("claim = %q, want %q", got, want)
	}
	if got, want := hp.Spec.Containers[0].Env[0].ValueFrom.SecretKeyRef.Name, env.HostKey("web-secret", ns).Name; got != want {
		t.Errorf("secretKeyRef = %q, want %q", got, want)
	}
	if hp.Spec.AutomountServiceAccountToken == nil || *hp.Spec.AutomountServiceAccountToken || hp.Spec.ServiceAccountName != "vc-workload-"+env.Name {
		t.Errorf("host pod service account %q automount %v", hp.Spec.ServiceAccountName, hp.Spec.AutomountServiceAccountToken)
	}
	if hp.Spec.DNSPolicy != corev1.DNSNone || hp.Spec.DNSConfig == nil || len(hp.Spec.DNSConfig.Nameservers) == 0 {
		t.Errorf("host pod DNS = %v %+v", hp.Spec.DNSPolicy, hp.Spec.DNSConfig)
	}
	if len(hp.Spec.HostAliases) == 0 || !strings.Contains(strings.Join(hp.Spec.HostAliases[0].Hostnames, ","), "kubernetes.default.svc") {
		t.Errorf("host pod hostAliases = %+v", hp.Spec.HostAliases)
	}
	// Virtual side: the host's node, IP and phase.
	if v.Spec.NodeName != hp.Spec.NodeName || v.Status.PodIP != hp.Status.PodIP {
		t.Errorf("virtual node/IP %s/%s, host %s/%s", v.Spec.NodeName, v.Status.PodIP, hp.Spec.NodeName, hp.Status.PodIP)
	}
	var node corev1.Node
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: v.Spec.NodeName}, &node); err != nil || node.Labels[translate.LabelFakeNode] != "true" {
		t.Errorf("fake node %s: %v %v", v.Spec.NodeName, err, node.Labels)
	}
	// The referenced objects are on the host with their data.
	hs := hostObject(t, &corev1.Secret{}, "web-secret", ns)
	if string(hs.Data["password"]) != "s3cret" {
		t.Errorf("host secret data = %q", hs.Data)
	}
	hostObject(t, &corev1.ConfigMap{}, "web-config", ns)
	testenv.Eventually(t, wait, func() error {
		var pvc corev1.PersistentVolumeClaim
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data"}, &pvc); err != nil {
			return err
		}
		if pvc.Status.Phase != corev1.ClaimBound {
			return fmt.Errorf("virtual claim phase %q", pvc.Status.Phase)
		}
		return nil
	})
}

// An unreferenced Secret stays off the host; it is synced when a pod starts
// using it and removed from the host when the pod goes.
func TestSelectiveSecretSync(t *testing.T) {
	ns := env.NewNamespace(t)
	create(t, env.VirtualClient, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "lonely", Namespace: ns}, StringData: map[string]string{"k": "v"}})
	create(t, env.VirtualClient, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "forced", Namespace: ns,
		Annotations: map[string]string{translate.AnnotationForceSync: "true"}}})
	hostObject(t, &corev1.Secret{}, "forced", ns)
	neverOnHost(t, &corev1.Secret{}, "lonely", ns, 3*time.Second)

	create(t, env.VirtualClient, pod("user", ns, func(p *corev1.Pod) {
		p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "lonely"}}}}
	}))
	hs := hostObject(t, &corev1.Secret{}, "lonely", ns)
	if string(hs.Data["k"]) != "v" {
		t.Errorf("host secret data = %q", hs.Data)
	}
	if err := env.VirtualClient.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "user", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	hostGone(t, &corev1.Secret{}, "lonely", ns)
	hostObject(t, &corev1.Secret{}, "forced", ns) // still wanted
}

// A virtual Service gets the clusterIP of its host copy, and its selector
// picks only this virtual cluster's pods of its namespace on the host.
func TestServiceTakesHostClusterIP(t *testing.T) {
	ns := env.NewNamespace(t)
	create(t, env.VirtualClient, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}},
	})
	hs := hostObject(t, &corev1.Service{}, "web", ns)
	testenv.Eventually(t, wait, func() error {
		var v corev1.Service
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &v); err != nil {
			return err
		}
		if v.Spec.ClusterIP != hs.Spec.ClusterIP {
			return fmt.Errorf("virtual clusterIP %s, host %s", v.Spec.ClusterIP, hs.Spec.ClusterIP)
		}
		return nil
	})
	want := map[string]string{"app": "web", translate.LabelManagedBy: env.Name, translate.LabelNamespace: ns}
	if fmt.Sprint(hs.Spec.Selector) != fmt.Sprint(want) {
		t.Errorf("host selector = %v, want %v", hs.Spec.Selector, want)
	}
}

// A label a host controller adds to a host object survives the syncer, and
// a virtual label change still reaches the host.
func TestHostLabelSurvives(t *testing.T) {
	ns := env.NewNamespace(t)
	create(t, env.VirtualClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: ns, Labels: map[string]string{"tier": "a"},
		Annotations: map[string]string{translate.AnnotationForceSync: "true"}}})
	h := hostObject(t, &corev1.ConfigMap{}, "cfg", ns)
	patched := h.DeepCopy()
	patched.Labels["host-controller.example.com/scanned"] = "yes"
	if err := env.HostClient.Patch(ctx, patched, client.MergeFrom(h)); err != nil {
		t.Fatal(err)
	}
	var v corev1.ConfigMap
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cfg"}, &v); err != nil {
		t.Fatal(err)
	}
	v2 := v.DeepCopy()
	v2.Labels["tier"] = "b"
	if err := env.VirtualClient.Patch(ctx, v2, client.MergeFrom(&v)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		var got corev1.ConfigMap
		if err := env.HostClient.Get(ctx, env.HostKey("cfg", ns), &got); err != nil {
			return err
		}
		if got.Labels["tier"] != "b" || got.Labels["host-controller.example.com/scanned"] != "yes" {
			return fmt.Errorf("host labels %v", got.Labels)
		}
		return nil
	})
}

// Deleting the host pod deletes the virtual pod, and the Deployment makes a
// new one that runs; deleting a virtual pod deletes its host pod.
func TestPodDeletionBothWays(t *testing.T) {
	ns := env.NewNamespace(t)
	create(t, env.VirtualClient, deployment("app", ns, 1))
	var first corev1.Pod
	testenv.Eventually(t, wait, func() error {
		pods := virtualPods(t, ns, "app")
		if len(pods) != 1 || pods[0].Status.Phase != corev1.PodRunning {
			return fmt.Errorf("%d pods", len(pods))
		}
		first = pods[0]
		return nil
	})
	hostPod := hostObject(t, &corev1.Pod{}, first.Name, ns)
	if err := env.HostClient.Delete(ctx, hostPod); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		pods := virtualPods(t, ns, "app")
		if len(pods) != 1 || pods[0].Name == first.Name || pods[0].Status.Phase != corev1.PodRunning {
			names := []string{}
			for _, p := range pods {
				names = append(names, p.Name+"/"+string(p.Status.Phase))
			}
			return fmt.Errorf("virtual pods %v, want one new Running pod replacing %s", names, first.Name)
		}
		first = pods[0]
		return nil
	})

	// Now from the virtual side: a plain pod deleted in the virtual cluster.
	create(t, env.VirtualClient, pod("solo", ns, nil))
	runningPod(t, "solo", ns)
	hostObject(t, &corev1.Pod{}, "solo", ns)
	if err := env.VirtualClient.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "solo", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	hostGone(t, &corev1.Pod{}, "solo", ns)
	testenv.Eventually(t, wait, func() error {
		err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "solo"}, &corev1.Pod{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("virtual pod still there (%v)", err)
	})
}

// A pod deleted and made again under its name is a new pod: the syncer
// must not take the earlier pod's host pod, which it deleted, for the new
// one's and remove the new pod as if its host pod had been evicted. Each
// round holds the old pod with a finalizer until the syncer has finished
// its deletion (host pod gone, virtual grace period 0), then releases it and
// creates the new pod at once. The syncer meets the new pod while it still
// remembers the old one only when it is slow to see the old one go (the
// chaos suite, on a loaded machine, did); the rule itself is
// syncer.TestSeenForIsPerVirtualObject. This checks the user's sequence.
func TestPodRecreatedUnderItsName(t *testing.T) {
	ns := env.NewNamespace(t)
	const hold = "clustersync.io/test-hold"
	for round := range 3 {
		old := pod("again", ns, func(p *corev1.Pod) { p.Finalizers = []string{hold} })
		create(t, env.VirtualClient, old)
		runningPod(t, "again", ns)
		if err := env.VirtualClient.Delete(ctx, old); err != nil {
			t.Fatal(err)
		}
		hostGone(t, &corev1.Pod{}, "again", ns)
		testenv.Eventually(t, wait, func() error {
			var p corev1.Pod
			if err := env.VirtualClient.Get(ctx, client.ObjectKeyFromObject(old), &p); err != nil {
				return err
			}
			if g := p.DeletionGracePeriodSeconds; g == nil || *g != 0 {
				return fmt.Errorf("round %d: the old pod's grace period is %v, want 0 (the syncer's last delete)", round, g)
			}
			return nil
		})
		patch := client.RawPatch(types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`))
		if err := env.VirtualClient.Patch(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "again", Namespace: ns}}, patch); err != nil {
			t.Fatal(err)
		}
		fresh := pod("again", ns, nil)
		testenv.Eventually(t, wait, func() error { return env.VirtualClient.Create(ctx, fresh) })
		running := runningPod(t, "again", ns)
		if running.UID != fresh.UID {
			t.Fatalf("round %d: running pod has UID %s, want the new pod's %s", round, running.UID, fresh.UID)
		}
		h := hostObject(t, &corev1.Pod{}, "again", ns)
		if h.Annotations[translate.AnnotationObjectUID] != string(fresh.UID) {
			t.Fatalf("round %d: host pod is the copy of %s, want %s", round, h.Annotations[translate.AnnotationObjectUID], fresh.UID)
		}
		if err := env.VirtualClient.Delete(ctx, fresh); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, wait, func() error {
			err := env.VirtualClient.Get(ctx, client.ObjectKeyFromObject(fresh), &corev1.Pod{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("round %d: the new pod is still there (%v)", round, err)
		})
	}
}

// A host object that claims to be the copy of an earlier virtual object
// (another UID) is replaced by a copy of the current one.
func TestForeignUIDReplaced(t *testing.T) {
	ns := env.NewNamespace(t)
	tr := translate.Translator{VCluster: env.Name, HostNamespace: env.HostNamespace}
	hostName := env.HostKey("cfg", ns).Name
	stale := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: hostName, Namespace: env.HostNamespace,
		Labels:      map[string]string{translate.LabelManagedBy: env.Name, translate.LabelNamespace: ns},
		Annotations: tr.BookkeepingAnnotations(translate.VirtualRef{Kind: "/v1, Kind=ConfigMap", Name: "cfg", Namespace: ns, UID: "stale-uid"}, hostName),
	}, Data: map[string]string{"from": "stale"}}
	create(t, env.HostClient, stale)
	create(t, env.VirtualClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: ns,
		Annotations: map[string]string{translate.AnnotationForceSync: "true"}}, Data: map[string]string{"from": "virtual"}})
	var v corev1.ConfigMap
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cfg"}, &v); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		var h corev1.ConfigMap
		if err := env.HostClient.Get(ctx, env.HostKey("cfg", ns), &h); err != nil {
			return err
		}
		if h.UID == stale.UID || h.Annotations[translate.AnnotationObjectUID] != string(v.UID) || h.Data["from"] != "virtual" {
			return fmt.Errorf("host copy uid-annotation %s data %v (stale object uid %s, host uid %s)", h.Annotations[translate.AnnotationObjectUID], h.Data, stale.UID, h.UID)
		}
		return nil
	})
}

// A host object with the translated name that this virtual cluster does
// not manage is never touched, and the virtual object gets a SyncError event.
func TestUnmanagedCollisionLeftAlone(t *testing.T) {
	ns := env.NewNamespace(t)
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: env.HostKey("db", ns).Name, Namespace: env.HostNamespace,
		Labels: map[string]string{"owner": "someone-else"}}, StringData: map[string]string{"keep": "me"}}
	create(t, env.HostClient, foreign)
	create(t, env.VirtualClient, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns,
		Annotations: map[string]string{translate.AnnotationForceSync: "true"}}, StringData: map[string]string{"keep": "not"}})
	if msg := syncErrorEvent(t, ns, "db", "does not manage"); strings.Contains(msg, env.HostNamespace) || strings.Contains(msg, foreign.Name) {
		t.Errorf("the tenant's event names the host object: %s", msg)
	}
	var h corev1.Secret
	if err := env.HostClient.Get(ctx, client.ObjectKeyFromObject(foreign), &h); err != nil {
		t.Fatal(err)
	}
	if string(h.Data["keep"]) != "me" || h.Labels["owner"] != "someone-else" || h.Labels[translate.LabelManagedBy] != "" || h.ResourceVersion != foreign.ResourceVersion {
		t.Errorf("foreign host secret was modified: labels %v data %q rv %s→%s", h.Labels, h.Data, foreign.ResourceVersion, h.ResourceVersion)
	}
}

// When the host already uses the virtual Service's clusterIP, the host copy
// gets another address and the virtual Service is recreated with it.
func TestServiceClusterIPTakenOnHost(t *testing.T) {
	ns := env.NewNamespace(t)
	ip := "10.96.250.17"
	create(t, env.HostClient, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "squatter-" + ns, Namespace: env.HostNamespace},
		Spec:       corev1.ServiceSpec{ClusterIP: ip, Ports: []corev1.ServicePort{{Port: 80}}},
	})
	t.Cleanup(func() {
		_ = env.HostClient.Delete(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "squatter-" + ns, Namespace: env.HostNamespace}})
	})
	create(t, env.VirtualClient, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: map[string]string{"keep": "me"}},
		Spec:       corev1.ServiceSpec{ClusterIP: ip, Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}},
	})
	hs := hostObject(t, &corev1.Service{}, "web", ns)
	if hs.Spec.ClusterIP == ip {
		t.Fatalf("host copy got the taken address %s", ip)
	}
	testenv.Eventually(t, wait, func() error {
		var v corev1.Service
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &v); err != nil {
			return err
		}
		if v.Spec.ClusterIP != hs.Spec.ClusterIP || v.Labels["keep"] != "me" {
			return fmt.Errorf("virtual service clusterIP %s labels %v, want %s", v.Spec.ClusterIP, v.Labels, hs.Spec.ClusterIP)
		}
		return nil
	})
}

// A host copy annotated vcluster.loft.sh/skip-backsync=true outlives its
// virtual object (vCluster's opt-out); one without it is deleted.
func TestSkipBacksync(t *testing.T) {
	ns := env.NewNamespace(t)
	forced := map[string]string{translate.AnnotationForceSync: "true"}
	for _, name := range []string{"kept", "dropped"} {
		create(t, env.VirtualClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: forced}})
	}
	h := hostObject(t, &corev1.ConfigMap{}, "kept", ns)
	hostObject(t, &corev1.ConfigMap{}, "dropped", ns)
	patched := h.DeepCopy()
	patched.Annotations[translate.AnnotationSkipBacksync] = "true"
	if err := env.HostClient.Patch(ctx, patched, client.MergeFrom(h)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kept", "dropped"} {
		if err := env.VirtualClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	hostGone(t, &corev1.ConfigMap{}, "dropped", ns)
	if err := env.HostClient.Get(ctx, env.HostKey("kept", ns), &corev1.ConfigMap{}); err != nil {
		t.Errorf("host copy with skip-backsync was deleted: %v", err)
	}
}

// The Endpoints of a Service with a selector are the host's own (its
// endpoints controller makes them for the synced Service under the same
// name): they are not synced and raise no SyncError event on the virtual
// Endpoints, although a host object of that name exists that the virtual
// cluster does not manage.
func TestSelectorEndpointsRaiseNoEvent(t *testing.T) {
	ns := env.NewNamespace(t)
	create(t, env.VirtualClient, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}})
	var he corev1.Endpoints //nolint:staticcheck // what the host's endpoints controller writes
	testenv.Eventually(t, wait, func() error { return env.HostClient.Get(ctx, env.HostKey("web", ns), &he) })
	if he.Annotations[translate.AnnotationObjectName] != "" {
		t.Fatalf("host Endpoints written by the syncer, not the host's controller: %v", he.Annotations)
	}
	// A change of the virtual Endpoints (as when pods come and go) makes
	// the syncer look at them with the host's Endpoints in place. The
	// virtual controller manager makes them, in its own time.
	testenv.Eventually(t, wait, func() error {
		var ve corev1.Endpoints //nolint:staticcheck
		return env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &ve)
	})
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var ve corev1.Endpoints //nolint:staticcheck
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &ve); err != nil {
			return err
		}
		if ve.Annotations == nil {
			ve.Annotations = map[string]string{}
		}
		ve.Annotations["example.com/touched"] = "true"
		return env.VirtualClient.Update(ctx, &ve)
	}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var list corev1.EventList
		if err := env.VirtualClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, e := range list.Items {
			if e.Reason == "SyncError" {
				t.Fatalf("SyncError event on %s %s: %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
}
