package runner_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
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
