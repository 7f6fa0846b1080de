package deploy

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/clustersync/clustersync/internal/virtual/controlplane"
)

// PodName is the control plane pod of virtual cluster name (its
// StatefulSet's only replica).
func PodName(name string) string { return name + "-0" }

// WaitReady waits until the control plane pod of virtual cluster name in
// host namespace is Ready (every container, the syncer's caches included)
// and the tenant kubeconfig Secret exists, polling every 500 ms, for at
// most timeout. On timeout the error describes the pod: its phase and each
// container that is not ready, with its waiting or last termination reason.
func WaitReady(ctx context.Context, host kubernetes.Interface, name, namespace string, timeout time.Duration) error {
	var pod *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := host.CoreV1().Pods(namespace).Get(ctx, PodName(name), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		pod = p
		if !podutils.IsPodReady(p) {
			return false, nil
		}
		_, err = host.CoreV1().Secrets(namespace).Get(ctx, controlplane.KubeconfigSecretName(name), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err == nil {
		return nil
	}
	if pod == nil {
		return fmt.Errorf("virtual cluster %s: no control plane pod %s/%s after %s: %w", name, namespace, PodName(name), timeout, err)
	}
	return fmt.Errorf("virtual cluster %s not ready after %s: %s: %w", name, timeout, DescribePod(pod), err)
}

// DescribePod summarises a control plane pod in one line: "pod NS/NAME
// PHASE; CONTAINER: REASON (MESSAGE), restarts N; …" for every container
// (init containers first) that is not ready.
func DescribePod(p *corev1.Pod) string {
	parts := []string{fmt.Sprintf("pod %s/%s %s", p.Namespace, p.Name, p.Status.Phase)}
	statuses := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, s := range statuses {
		if s.Ready || (s.State.Terminated != nil && s.State.Terminated.ExitCode == 0) {
			continue
		}
		var what string
		switch {
		case s.State.Waiting != nil:
			what = reason(s.State.Waiting.Reason, s.State.Waiting.Message)
		case s.State.Terminated != nil:
			what = reason(s.State.Terminated.Reason, fmt.Sprintf("exit %d: %s", s.State.Terminated.ExitCode, s.State.Terminated.Message))
		case s.State.Running != nil:
			what = "running, not ready"
		}
		if t := s.LastTerminationState.Terminated; t != nil {
			what += "; last exit " + reason(t.Reason, fmt.Sprintf("%d: %s", t.ExitCode, t.Message))
		}
		parts = append(parts, fmt.Sprintf("%s: %s, restarts %d", s.Name, what, s.RestartCount))
	}
	return strings.Join(parts, "; ")
}

func reason(r, msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" || strings.HasSuffix(msg, ":") {
		return r
	}
	return r + " (" + msg + ")"
}
