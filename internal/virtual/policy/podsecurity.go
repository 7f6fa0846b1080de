package policy

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"
)

// PodSecurity checks pods against one level of the Pod Security Standards
// (https://kubernetes.io/docs/concepts/security/pod-security-standards/)
// with the checks of k8s.io/pod-security-admission, the code the
// kube-apiserver's PodSecurity admission runs, at its latest version. It
// is safe for concurrent use.
type PodSecurity struct {
	level     psaapi.LevelVersion
	evaluator psapolicy.Evaluator
}

// NewPodSecurity returns the check for level "privileged" (lets every pod
// through), "baseline" or "restricted". The error names the level when it
// is none of these.
func NewPodSecurity(level string) (*PodSecurity, error) {
	l, err := psaapi.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("pod security level %q: %w", level, err)
	}
	evaluator, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
	if err != nil {
		return nil, fmt.Errorf("pod security checks: %w", err)
	}
	return &PodSecurity{level: psaapi.LevelVersion{Level: l, Version: psaapi.LatestVersion()}, evaluator: evaluator}, nil
}

// Level is the level checked, "baseline:latest" as PodSecurity admission
// writes it.
func (p *PodSecurity) Level() string { return p.level.String() }

// Check evaluates pod — its metadata and spec, with init and ephemeral
// containers — and returns nil when it passes (always, on a nil
// *PodSecurity). Otherwise the error is the
// one PodSecurity admission returns, word for word, e.g.
//
//	pods "web" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)
func (p *PodSecurity) Check(pod *corev1.Pod) error {
	if p == nil {
		return nil
	}
	result := psapolicy.AggregateCheckResults(p.evaluator.EvaluatePod(p.level, &pod.ObjectMeta, &pod.Spec))
	if result.Allowed {
		return nil
	}
	return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, pod.Name,
		fmt.Errorf("violates PodSecurity %q: %s", p.level.String(), result.ForbiddenDetail()))
}

// NodeFilesVolume names the source of a tenant's PersistentVolume that
// hands its pods files of the node they run on — "hostPath" or "local" —
// or returns "" for any other source. A pod using such a volume through a
// claim gets what the Pod Security Standards' baseline level forbids in a
// pod's own volumes (hostPath volumes): the checks look at the pod only,
// so the syncer refuses the volume itself at any level but privileged.
func NodeFilesVolume(spec *corev1.PersistentVolumeSpec) string {
	switch {
	case spec.HostPath != nil:
		return "hostPath"
	case spec.Local != nil:
		return "local"
	}
	return ""
}
