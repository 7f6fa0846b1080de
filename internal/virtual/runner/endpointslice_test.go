package runner_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/endpointslices"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// tenantSlice is an EndpointSlice of Service svc as a tenant writes it for
// a Service without a selector: one address, targeting virtual pod podName.
func tenantSlice(name, ns, svc, addr, podName string) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: svc, "tier": "db"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: podName, Namespace: ns}}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("sql"), Port: ptr.To(int32(5432)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
}

func selectorless(name, ns string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "sql", Port: 5432}}}}
}

// With the defaults (sync.toHost.endpointSlices on), an EndpointSlice the
// tenant writes for a Service without a selector reaches the host, naming
// the host Service and the host pod, with its addresses and ports; the
// virtual slice keeps its own labels; an address change follows, the host
// copy stays ours (the host's EndpointSlice controllers leave it alone),
// and deleting the virtual slice deletes it.
func TestEndpointSliceSync(t *testing.T) {
	ns := env.NewNamespace(t)
	// The addresses are the tenant's own pods' (policies.isolation.endpoints).
	ip0 := runningPodOf(t, pod("db-0", ns, nil)).Status.PodIP
	ip1 := runningPodOf(t, pod("db-1", ns, nil)).Status.PodIP
	create(t, env.VirtualClient, selectorless("db", ns))
	create(t, env.VirtualClient, tenantSlice("db-1", ns, "db", ip0, "db-0"))

	host := hostObject(t, &discoveryv1.EndpointSlice{}, "db-1", ns)
	if got, want := host.Labels[discoveryv1.LabelServiceName], env.HostKey("db", ns).Name; got != want {
		t.Errorf("host service-name label %q, want %q", got, want)
	}
	if got := host.Labels[discoveryv1.LabelManagedBy]; got != endpointslices.ManagedBy {
		t.Errorf("host managed-by label %q, want %q", got, endpointslices.ManagedBy)
	}
	if host.Labels["tier"] != "db" || host.Labels[translate.LabelManagedBy] != env.Name {
		t.Errorf("host labels %v", host.Labels)
	}
	if len(host.Endpoints) != 1 || !slices.Equal(host.Endpoints[0].Addresses, []string{ip0}) {
		t.Fatalf("host endpoints %+v", host.Endpoints)
	}
	if ref := host.Endpoints[0].TargetRef; ref == nil || ref.Name != env.HostKey("db-0", ns).Name || ref.Namespace != env.HostNamespace {
		t.Errorf("host target reference %+v, want host pod %s", ref, env.HostKey("db-0", ns))
	}
	if len(host.Ports) != 1 || *host.Ports[0].Port != 5432 || *host.Ports[0].Name != "sql" || host.AddressType != discoveryv1.AddressTypeIPv4 {
		t.Errorf("host ports %+v, address type %s", host.Ports, host.AddressType)
	}

	// An address change follows; meanwhile the labels the syncer set on
	// the host never flow back to the virtual slice.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var v discoveryv1.EndpointSlice
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-1"}, &v); err != nil {
			return err
		}
		v.Endpoints[0].Addresses = []string{ip1}
		return env.VirtualClient.Update(ctx, &v)
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		var h discoveryv1.EndpointSlice
		if err := env.HostClient.Get(ctx, env.HostKey("db-1", ns), &h); err != nil {
			return err
		}
		if len(h.Endpoints) != 1 || !slices.Equal(h.Endpoints[0].Addresses, []string{ip1}) {
			return fmt.Errorf("host endpoints %+v", h.Endpoints)
		}
		return nil
	})
	time.Sleep(2 * time.Second) // the host's controllers and the syncer had their turn
	var v discoveryv1.EndpointSlice
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-1"}, &v); err != nil {
		t.Fatal(err)
	}
	if v.Labels[discoveryv1.LabelServiceName] != "db" || v.Labels[discoveryv1.LabelManagedBy] != "" {
		t.Errorf("virtual labels changed by the sync: %v", v.Labels)
	}
	if err := env.HostClient.Get(ctx, env.HostKey("db-1", ns), host); err != nil || host.Labels[discoveryv1.LabelManagedBy] != endpointslices.ManagedBy {
		t.Errorf("host copy after a while: %v, labels %v", err, host.Labels)
	}

	if err := env.VirtualClient.Delete(ctx, &v); err != nil {
		t.Fatal(err)
	}
	hostGone(t, &discoveryv1.EndpointSlice{}, "db-1", ns)
}

// The EndpointSlices Kubernetes' controllers make in the virtual cluster —
// for a Service with a selector, mirrored from the Endpoints of a Service
// without one, and the virtual API server's default/kubernetes — never
// reach the host: the host's controllers make their own.
func TestEndpointSliceControllersNotSynced(t *testing.T) {
	ns := env.NewNamespace(t)
	create(t, env.VirtualClient, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}})
	create(t, env.VirtualClient, selectorless("ext", ns))
	create(t, env.VirtualClient, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: ns}, //nolint:staticcheck
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.1.2.3"}}, Ports: []corev1.EndpointPort{{Name: "sql", Port: 5432}}}}}) //nolint:staticcheck

	// Wait for the virtual controllers' slices of both Services.
	var made []discoveryv1.EndpointSlice
	testenv.Eventually(t, wait, func() error {
		var list discoveryv1.EndpointSliceList
		if err := env.VirtualClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		managers := map[string]string{}
		for _, s := range list.Items {
			managers[s.Labels[discoveryv1.LabelServiceName]] = s.Labels[discoveryv1.LabelManagedBy]
		}
		if managers["web"] != endpointslices.ControllerManager || managers["ext"] != endpointslices.MirroringManager {
			return fmt.Errorf("virtual slices by service: managers %v", managers)
		}
		made = list.Items
		return nil
	})
	// The Endpoints of "ext" is synced (the host mirrors it itself): by
	// then the syncer has seen the slices too.
	hostObject(t, &corev1.Endpoints{}, "ext", ns) //nolint:staticcheck

	keys := []client.ObjectKey{env.HostKey("kubernetes", "default")}
	for _, s := range made {
		keys = append(keys, env.HostKey(s.Name, ns))
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, k := range keys {
			if err := env.HostClient.Get(ctx, k, &discoveryv1.EndpointSlice{}); err == nil {
				t.Fatalf("host %s exists: a controller-made virtual slice was synced", k)
			}
		}
		var list discoveryv1.EndpointSliceList
		if err := env.HostClient.List(ctx, &list, client.InNamespace(env.HostNamespace), client.MatchingLabels{translate.LabelNamespace: ns}); err != nil {
			t.Fatal(err)
		}
		for _, s := range list.Items {
			// The host's mirrored slice carries the synced Endpoints'
			// annotations, but names another host object.
			if s.Annotations[translate.AnnotationObjectHostName] == s.Name {
				t.Fatalf("host slice %s is a copy of virtual %s/%s", s.Name, ns, s.Annotations[translate.AnnotationObjectName])
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// With sync.toHost.endpointSlices off, the syncer deletes the host copies
// it made earlier when it starts, and copies no new slice.
func TestEndpointSliceSyncOff(t *testing.T) {
	ns := env.NewNamespace(t)
	create(t, env.VirtualClient, selectorless("db", ns))
	create(t, env.VirtualClient, tenantSlice("before", ns, "db", "10.1.2.3", "db-0"))
	hostObject(t, &discoveryv1.EndpointSlice{}, "before", ns)

	off := config.Default()
	off.Sync.ToHost.EndpointSlices.Enabled = false
	withConfig(t, off)
	hostGone(t, &discoveryv1.EndpointSlice{}, "before", ns)
	create(t, env.VirtualClient, tenantSlice("after", ns, "db", "10.1.2.5", "db-1"))
	neverOnHost(t, &discoveryv1.EndpointSlice{}, "after", ns, 5*time.Second)
}
