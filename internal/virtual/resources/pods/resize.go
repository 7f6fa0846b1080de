package pods

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
)

// In-place resize (https://kubernetes.io/docs/tasks/configure-pod-container/resize-container-resources/):
// a tenant changes a virtual pod's container resources through the pod's
// resize subresource; the syncer sees the change by ResourcesHash, sends
// it through the host pod's resize subresource, and reports the virtual
// generation as observed once the host's kubelet has caught up.

// resize gives the host pod the container resources the virtual pod now
// asks for (an in-place resize, through the host's resize subresource: a
// pod's resources cannot be patched), where they differ.
func resize(ctx context.Context, s *syncer.Context, virtual, host *corev1.Pod) error {
	after := ResizedResources(virtual, host)
	if after == nil {
		return nil
	}
	if err := s.Host.SubResource("resize").Update(ctx, after); err != nil {
		return fmt.Errorf("resize the host pod: %w", err)
	}
	return nil
}

// ResizedResources is host with the resources of virtual's containers and
// init containers (matched by name) where they differ, and the pod-level
// resources, or nil when nothing differs.
func ResizedResources(virtual, host *corev1.Pod) *corev1.Pod {
	after := host.DeepCopy()
	changed := false
	match := func(hc, vc []corev1.Container) {
		for i := range hc {
			for _, c := range vc {
				if c.Name == hc[i].Name && !equality.Semantic.DeepEqual(c.Resources, hc[i].Resources) {
					hc[i].Resources = *c.Resources.DeepCopy()
					changed = true
				}
			}
		}
	}
	match(after.Spec.Containers, virtual.Spec.Containers)
	match(after.Spec.InitContainers, virtual.Spec.InitContainers)
	if !equality.Semantic.DeepEqual(virtual.Spec.Resources, host.Spec.Resources) {
		after.Spec.Resources = virtual.Spec.Resources.DeepCopy()
		changed = true
	}
	if !changed {
		return nil
	}
	return after
}

// ObservedGeneration is the virtual pod's status.observedGeneration: the
// virtual generation once the host's kubelet has observed the host pod's
// latest spec and that spec is the virtual one (inSync: nothing was sent
// to the host just now, such as a resize), else what the virtual status
// said. The host's
// generations count other changes than the virtual's, so the host's number
// itself means nothing to the tenant.
func ObservedGeneration(virtual, host *corev1.Pod, inSync bool) int64 {
	if inSync && host.Status.ObservedGeneration >= host.Generation {
		return virtual.Generation
	}
	return virtual.Status.ObservedGeneration
}

// ResourcesHash is the value of translate.AnnotationPodResources for
// virtual pod: the first 16 hexadecimal digits of the SHA-256 of the JSON
// of its pod-level resources and its containers' and init containers'
// names and resources.
func ResourcesHash(pod *corev1.Pod) string {
	type named struct {
		Name      string                      `json:"name"`
		Resources corev1.ResourceRequirements `json:"resources"`
	}
	var all struct {
		Pod        *corev1.ResourceRequirements `json:"pod,omitempty"`
		Containers []named                      `json:"containers"`
	}
	all.Pod = pod.Spec.Resources
	for _, c := range append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...) {
		all.Containers = append(all.Containers, named{c.Name, c.Resources})
	}
	data, _ := json.Marshal(all)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}
