package syncer

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// What the engine remembers of a pair counts only for the virtual object
// it was recorded for: an object deleted and made again under its name (a
// new UID) starts with no past, so Create.WasSynced is false for it and
// no earlier merge base applies.
func TestSeenForIsPerVirtualObject(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "again"}
	meta := translate.Meta{Labels: translate.Pair{Virtual: map[string]string{"app": "again"}}}
	for _, tc := range []struct {
		name   string
		stored *seen
		uid    types.UID
		want   bool
	}{
		{"nothing recorded", nil, "u1", false},
		{"recorded for this object", &seen{uid: "u1", meta: meta}, "u1", true},
		{"recorded for an earlier object of the name", &seen{uid: "u1", meta: meta}, "u2", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e engine[*corev1.Pod]
			if tc.stored != nil {
				e.lastSeen.Store(key, *tc.stored)
			}
			got, ok := e.seenFor(key, tc.uid)
			if ok != tc.want {
				t.Fatalf("seenFor(%s) ok = %v, want %v", tc.uid, ok, tc.want)
			}
			if ok && got.Labels.Virtual["app"] != "again" {
				t.Errorf("seenFor(%s) = %+v, want the recorded metadata", tc.uid, got)
			}
		})
	}
}
