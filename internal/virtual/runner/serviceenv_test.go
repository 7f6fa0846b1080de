package runner_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A pod created after a Service of its namespace gets that Service's
// environment variables, with the virtual Service's address, as the
// kubelet gives them with service links on (the host pod runs with them
// off): the conformance spec "Pods should contain environment variables
// for services".
func TestServiceEnvironmentVariables(t *testing.T) {
	ns := env.NewNamespace(t)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "fooservice", Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "x"}, Ports: []corev1.ServicePort{{Port: 8765}}}}
	create(t, env.VirtualClient, svc)
	create(t, env.VirtualClient, pod("client", ns, nil))
	hostPod := hostObject(t, &corev1.Pod{}, "client", ns)
	envs := map[string]string{}
	for _, e := range hostPod.Spec.Containers[0].Env {
		envs[e.Name] = e.Value
	}
	if envs["FOOSERVICE_SERVICE_HOST"] != svc.Spec.ClusterIP || envs["FOOSERVICE_PORT_8765_TCP_PORT"] != "8765" || svc.Spec.ClusterIP == "" {
		t.Errorf("host pod env %v, want FOOSERVICE_* of %s", envs, svc.Spec.ClusterIP)
	}
	if hostPod.Spec.EnableServiceLinks == nil || *hostPod.Spec.EnableServiceLinks {
		t.Errorf("host pod enableServiceLinks %v, want false (the host's Services have host names)", hostPod.Spec.EnableServiceLinks)
	}
}
