package runner_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
)

// A NodePort Service keeps the node port the virtual API server gave it:
// the host copy asks for the same one, so the port a tenant reads at once
// is the one the host's nodes serve (the NodePort conformance specs read
// it right after they create the Service). A port another host Service
// holds is allocated by the host and copied back, clusterIP kept.
func TestServiceNodePorts(t *testing.T) {
	ns := env.NewNamespace(t)
	nodePort := func(name string) (int32, int32, string, string) {
		var v corev1.Service
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &v); err != nil {
			t.Fatal(err)
		}
		h := hostObject(t, &corev1.Service{}, name, ns)
		return v.Spec.Ports[0].NodePort, h.Spec.Ports[0].NodePort, v.Spec.ClusterIP, h.Spec.ClusterIP
	}
	create(t, env.VirtualClient, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "np", Namespace: ns},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": "np"}, Ports: []corev1.ServicePort{{Port: 80}}}})
	if v, h, _, _ := nodePort("np"); v == 0 || v != h {
		t.Errorf("virtual node port %d, host %d: want the same", v, h)
	}

	// A node port a host Service holds.
	taken := int32(31777)
	squatter := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "np-squatter-" + ns, Namespace: env.HostNamespace},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80, NodePort: taken}}}}
	create(t, env.HostClient, squatter)
	t.Cleanup(func() { _ = env.HostClient.Delete(ctx, squatter) })
	create(t, env.VirtualClient, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "np-taken", Namespace: ns},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": "np"}, Ports: []corev1.ServicePort{{Port: 80, NodePort: taken}}}})
	testenv.Eventually(t, wait, func() error {
		v, h, vip, hip := nodePort("np-taken")
		if h == taken || h == 0 || v != h || vip != hip {
			return fmt.Errorf("virtual node port %d clusterIP %s, host %d %s: want the host's own port on both, one address", v, vip, h, hip)
		}
		return nil
	})
}

// A host copy the host namespace's quota refuses (no node ports, as
// clustersync's default policies.resourceQuota has it) is reported to the
// tenant as a SyncError event on the virtual Service, in words that name
// no host object, and the copy is made once the quota allows it.
func TestHostQuotaRefusalReported(t *testing.T) {
	ns := env.NewNamespace(t)
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "no-node-ports-" + ns, Namespace: env.HostNamespace},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceServicesNodePorts: resource.MustParse("0")}}}
	create(t, env.HostClient, quota)
	t.Cleanup(func() { _ = env.HostClient.Delete(ctx, quota) })
	// The quota refuses only once the host's quota controller has counted
	// the namespace.
	testenv.Eventually(t, wait, func() error {
		var q corev1.ResourceQuota
		if err := env.HostClient.Get(ctx, client.ObjectKeyFromObject(quota), &q); err != nil {
			return err
		}
		if _, ok := q.Status.Hard[corev1.ResourceServicesNodePorts]; !ok {
			return fmt.Errorf("quota %s not counted yet", quota.Name)
		}
		return nil
	})
	create(t, env.VirtualClient, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "np-quota", Namespace: ns},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": "np"}, Ports: []corev1.ServicePort{{Port: 80}}}})
	msg := syncErrorEvent(t, ns, "np-quota", "not synced to the host: the host namespace's quota does not allow it", "services.nodeports")
	if strings.Contains(msg, env.HostNamespace) || strings.Contains(msg, quota.Name) || strings.Contains(msg, "-x-") {
		t.Errorf("the event names host objects: %q", msg)
	}
	if err := env.HostClient.Delete(ctx, quota); err != nil {
		t.Fatal(err)
	}
	hostObject(t, &corev1.Service{}, "np-quota", ns)
}
