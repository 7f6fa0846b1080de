package chaos

import (
	"maps"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Syncer bugs this test found that are not fixed yet. A difference that
// is exactly one of them is counted apart (report.known) instead of
// failing the run, and TestChaos then skips, naming them, unless
// something else failed. Delete a bug's entry (and its test below) once
// it is fixed.
const (
	// bugPodLabelsAnnotation: when the syncer copies a label from a host
	// pod to its virtual pod (labels merge both ways), the host pod's
	// vcluster.loft.sh/labels annotation (what the downward API shows as
	// metadata.labels) is written from the virtual labels as they were
	// before the merge, and is not corrected later: pods.Syncer.Sync
	// computes pods.HostAnnotations(p.Virtual, …) from p.Virtual, not the
	// merged virtual object, and the virtual patch is the syncer's own
	// write, which wakes no reconcile.
	bugPodLabelsAnnotation = "pod-labels-annotation"
	// bugServiceRecreateMeta: a virtual Service deleted and created again
	// under its name while its old host copy is still there (the syncer
	// down or behind) gets the old Service's labels and annotations.
	// Services keep a host copy on a UID mismatch; services.Syncer.Sync
	// recreates the virtual Service with the old copy's cluster IP and
	// returns without writing the merged metadata to the host, yet the
	// engine stores p.Meta.Seen as the new base; the next reconcile takes
	// the old copy's values for host edits and writes them into the new
	// virtual Service.
	bugServiceRecreateMeta = "service-recreate-meta"
)

// knownPodLabelsAnnotation tells whether host pod h differs from what the
// syncer makes of its virtual pod (annotations wantAnns) only by
// bugPodLabelsAnnotation: in vcluster.loft.sh/labels, and there only in
// labels the host edits added (which the syncer copied to the virtual
// pod, or removed from it).
func knownPodLabelsAnnotation(h client.Object, wantAnns map[string]string) bool {
	got, want := h.GetAnnotations()[translate.AnnotationPodLabels], wantAnns[translate.AnnotationPodLabels]
	return got != want && stripHostLines(got) == stripHostLines(want) &&
		maps.Equal(withoutKey(h.GetAnnotations(), translate.AnnotationPodLabels), withoutKey(wantAnns, translate.AnnotationPodLabels))
}

// stripHostLines drops the lines of a vcluster.loft.sh/labels value whose
// key is a host edit's.
func stripHostLines(s string) string {
	var keep []string
	for l := range strings.SplitSeq(s, "\n") {
		if l != "" && !strings.HasPrefix(l, hostKeyPrefix) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func withoutKey(m map[string]string, k string) map[string]string {
	out := maps.Clone(m)
	delete(out, k)
	return out
}

// knownServiceRecreateMeta tells whether virtual object v, which the
// churn made as incarnation st.inc, is a Service the syncer recreated
// (another UID and cluster IP) carrying an earlier incarnation's
// metadata: bugServiceRecreateMeta.
func knownServiceRecreateMeta(v client.Object, st objState) bool {
	svc, ok := v.(*corev1.Service)
	return ok && svc.UID != st.uid && svc.Spec.ClusterIP != st.clusterIP &&
		svc.Annotations[annIncarnation] != strconv.Itoa(st.inc)
}
