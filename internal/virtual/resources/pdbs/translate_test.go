package pdbs

import (
	"reflect"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

func TestHostSpec(t *testing.T) {
	tr := translate.Translator{VCluster: "vc", HostNamespace: "vc-host"}
	v := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}, Spec: policyv1.PodDisruptionBudgetSpec{
		MinAvailable: ptr.To(intstr.FromInt32(2)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		UnhealthyPodEvictionPolicy: ptr.To(policyv1.AlwaysAllow)}}
	want := policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(2)),
		Selector:                   &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", translate.LabelManagedBy: "vc", translate.LabelNamespace: "team"}},
		UnhealthyPodEvictionPolicy: ptr.To(policyv1.AlwaysAllow)}
	if got := HostSpec(v, tr); !reflect.DeepEqual(got, want) {
		t.Errorf("HostSpec:\n got %+v\nwant %+v", got, want)
	}
	if v.Spec.Selector.MatchLabels[translate.LabelManagedBy] != "" {
		t.Error("HostSpec changed the virtual selector")
	}
}

func TestVirtualStatus(t *testing.T) {
	host := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Status: policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: 3, CurrentHealthy: 2, DesiredHealthy: 2, ExpectedPods: 3, DisruptionsAllowed: 0,
		DisruptedPods: map[string]metav1.Time{"web-x-team-x-vc": {}},
		Conditions:    []metav1.Condition{{Type: "DisruptionAllowed", Status: metav1.ConditionFalse, ObservedGeneration: 3}}}}
	got := VirtualStatus(host, 1)
	if got.ObservedGeneration != 1 || got.Conditions[0].ObservedGeneration != 1 || got.ExpectedPods != 3 || got.CurrentHealthy != 2 || got.DisruptedPods != nil {
		t.Errorf("a current host status: %+v", got)
	}
	host.Generation = 4 // the host has not seen the latest spec yet
	if got := VirtualStatus(host, 2); got.ObservedGeneration != 0 {
		t.Errorf("a stale host status claims generation %d", got.ObservedGeneration)
	}
	if host.Status.DisruptedPods == nil || host.Status.ObservedGeneration != 3 {
		t.Error("VirtualStatus changed the host status")
	}
}
