package deploy

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"helm.sh/helm/v3/pkg/release"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/util/podutils"
)

// The states of a virtual cluster, as `virtual list` shows them.
const (
	StatusRunning = "Running"
	StatusPending = "Pending"
	StatusPaused  = "Paused"
	StatusFailed  = "Failed"
	StatusUnknown = "Unknown"
)

// Info is one virtual cluster of a host.
type Info struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Status is one of the Status constants.
	Status string `json:"status"`
	// Reason says why the status is not Running, e.g. the waiting reason of
	// a container; "" when Running.
	Reason string `json:"reason,omitempty"`
	// Version is clustersync's image tag the control plane runs.
	Version string `json:"version"`
	// Chart is the chart's name-version of the release.
	Chart string `json:"chart"`
	// Created is when the release was first installed.
	Created time.Time `json:"created"`
	// Connected tells whether the current context of the user's kubeconfig
	// is this virtual cluster's (see `virtual connect`).
	Connected bool `json:"connected"`
}

// List returns the virtual clusters of the host in namespace ("" = every
// namespace), with the status read from each control plane StatefulSet and
// pod. isConnected, when set, fills Connected.
func List(ctx context.Context, host kubernetes.Interface, h *Helm, namespace string, isConnected func(name, namespace string) bool) ([]Info, error) {
	rels, err := h.List(namespace)
	if err != nil {
		return nil, err
	}
	out := make([]Info, 0, len(rels))
	for _, r := range rels {
		in, err := info(ctx, host, r)
		if err != nil {
			return nil, err
		}
		if isConnected != nil {
			in.Connected = isConnected(r.Name, r.Namespace)
		}
		out = append(out, in)
	}
	return out, nil
}

// Get returns virtual cluster name of host namespace namespace as List
// returns it (without Connected); the error names the release when there
// is none.
func Get(ctx context.Context, host kubernetes.Interface, h *Helm, name, namespace string) (Info, error) {
	r, err := h.Get(name, namespace)
	if err != nil {
		return Info{}, fmt.Errorf("virtual cluster %s: no release %s in host namespace %s (%v); `clustersync virtual list` shows the existing ones", name, name, namespace, err)
	}
	return info(ctx, host, r)
}

// info is release r's Info, its status read from its control plane
// StatefulSet and pod.
func info(ctx context.Context, host kubernetes.Interface, r *release.Release) (Info, error) {
	in := Info{Name: r.Name, Namespace: r.Namespace, Chart: r.Chart.Metadata.Name + "-" + r.Chart.Metadata.Version}
	if r.Info != nil {
		in.Created = r.Info.FirstDeployed.Time
	}
	sts, err := statefulSet(ctx, host, r.Name, r.Namespace)
	if err != nil {
		return Info{}, err
	}
	var pod *corev1.Pod
	if p, err := host.CoreV1().Pods(r.Namespace).Get(ctx, PodName(r.Name), metav1.GetOptions{}); err == nil {
		pod = p
	} else if !apierrors.IsNotFound(err) {
		return Info{}, err
	}
	in.Status, in.Reason = Status(sts, pod)
	in.Version = ImageTag(sts)
	return in, nil
}

// Status decides a virtual cluster's status from its StatefulSet (nil when
// missing) and control plane pod (nil when missing): Paused when scaled to
// zero, Running when the pod is Ready, Failed when a container keeps
// crashing or cannot start, else Pending; the reason names the container.
func Status(sts *appsv1.StatefulSet, pod *corev1.Pod) (status, reason string) {
	switch {
	case sts == nil:
		return StatusUnknown, "no control plane StatefulSet"
	case sts.Spec.Replicas != nil && *sts.Spec.Replicas == 0:
		return StatusPaused, ""
	case pod == nil:
		return StatusPending, "no control plane pod yet"
	case podutils.IsPodReady(pod):
		return StatusRunning, ""
	}
	statuses := append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	for _, s := range statuses {
		if w := s.State.Waiting; w != nil {
			switch w.Reason {
			case "CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError":
				return StatusFailed, s.Name + ": " + w.Reason
			}
		}
	}
	return StatusPending, DescribePod(pod)
}

// ImageTag is the tag of the first container image of control plane
// StatefulSet sts (clustersync's version it runs), "" when sts is nil or
// the image has no tag (pinned by digest only).
func ImageTag(sts *appsv1.StatefulSet) string {
	if sts == nil {
		return ""
	}
	spec := sts.Spec.Template.Spec
	containers := append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
	if len(containers) == 0 {
		return ""
	}
	ref, err := name.NewTag(containers[0].Image, name.WithDefaultTag(""))
	if err != nil {
		return ""
	}
	return ref.TagStr()
}
