package priorityclasses

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
)

func TestSynced(t *testing.T) {
	for _, tc := range []struct {
		pc   schedulingv1.PriorityClass
		want bool
	}{
		{schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}}, true},
		{schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-node-critical"}}, false},
		{schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "host-low", Labels: map[string]string{fromhost.Label: "true"}}}, false},
	} {
		if got := Synced(&tc.pc); got != tc.want {
			t.Errorf("Synced(%s) = %v, want %v", tc.pc.Name, got, tc.want)
		}
	}
}

func TestHostSpec(t *testing.T) {
	never := corev1.PreemptNever
	v := &schedulingv1.PriorityClass{Value: 1000, GlobalDefault: true, Description: "d", PreemptionPolicy: &never}
	h := &schedulingv1.PriorityClass{GlobalDefault: true}
	spec := HostSpec(v)
	spec.Apply(h)
	if h.Value != 1000 || h.GlobalDefault || h.Description != "d" || *h.PreemptionPolicy != never {
		t.Errorf("host class %+v: want value 1000, not global default, description d, Never", h)
	}
	if spec.Immutable(h) {
		t.Error("Immutable of an equal class")
	}
	for _, h := range []*schedulingv1.PriorityClass{
		{Value: 999, PreemptionPolicy: &never},
		{Value: 1000},
		{Value: 1000, PreemptionPolicy: ptr.To(corev1.PreemptLowerPriority)},
	} {
		if !spec.Immutable(h) {
			t.Errorf("Immutable(%+v) = false", h)
		}
	}
	if !(Spec{Value: 1}).Immutable(&schedulingv1.PriorityClass{Value: 1, PreemptionPolicy: &never}) {
		t.Error("nil policy (PreemptLowerPriority) vs Never not seen")
	}
	if (Spec{Value: 1}).Immutable(&schedulingv1.PriorityClass{Value: 1, PreemptionPolicy: ptr.To(corev1.PreemptLowerPriority)}) {
		t.Error("nil policy vs PreemptLowerPriority seen as a change")
	}
}
