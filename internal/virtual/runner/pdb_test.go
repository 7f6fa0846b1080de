package runner_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// With sync.toHost.podDisruptionBudgets on, a virtual budget reaches the
// host with a selector that matches exactly the host copies of the pods it
// selects in the virtual cluster: the host's disruption controller counts
// the one running web pod (not the other app's, not another namespace's),
// and that count flows back to the virtual status.
func TestPodDisruptionBudgetSync(t *testing.T) {
	ns, other := env.NewNamespace(t), env.NewNamespace(t)
	on := config.Default()
	on.Sync.ToHost.PodDisruptionBudgets.Enabled = true
	withConfig(t, on)
	create(t, env.VirtualClient, pod("web-0", ns, func(p *corev1.Pod) { p.Labels = map[string]string{"app": "web"} }))
	create(t, env.VirtualClient, pod("db-0", ns, func(p *corev1.Pod) { p.Labels = map[string]string{"app": "db"} }))
	create(t, env.VirtualClient, pod("web-0", other, func(p *corev1.Pod) { p.Labels = map[string]string{"app": "web"} }))
	create(t, env.VirtualClient, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}})

	host := hostObject(t, &policyv1.PodDisruptionBudget{}, "web", ns)
	if sel := host.Spec.Selector; sel == nil || sel.MatchLabels["app"] != "web" || sel.MatchLabels[translate.LabelManagedBy] != env.Name ||
		sel.MatchLabels[translate.LabelNamespace] != ns {
		t.Errorf("host selector %+v", host.Spec.Selector)
	}
	testenv.Eventually(t, wait, func() error {
		var v policyv1.PodDisruptionBudget
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &v); err != nil {
			return err
		}
		if v.Status.ExpectedPods != 1 || v.Status.ObservedGeneration != v.Generation {
			return fmt.Errorf("virtual status %+v; want 1 expected pod, generation %d observed", v.Status, v.Generation)
		}
		return nil
	})
}
