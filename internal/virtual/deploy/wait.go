package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/clustersync/clustersync/internal/virtual/controlplane"
)

// PodName is the control plane pod of virtual cluster name (its
// StatefulSet's only replica).
func PodName(name string) string { return controlplane.PodName(name) }

// WaitOptions say how WaitReady waits.
type WaitOptions struct {
	// Timeout bounds the wait for a control plane that is starting.
	Timeout time.Duration
	// Progress, when not nil, gets a line when the pod is first seen not
	// ready, then every ProgressEvery while it is not, saying which
	// containers are starting.
	Progress io.Writer
	// ProgressEvery is the interval of those lines; 5 s when zero.
	ProgressEvery time.Duration
	// UpdatedRevision waits for a pod of the StatefulSet's update revision
	// (after `helm upgrade`), not for whichever pod runs.
	UpdatedRevision bool
	// ImageFix is the advice a StartFailure gives for an image that does
	// not exist (e.g. the command that builds and pushes it); "" gives a
	// generic one.
	ImageFix string
}

// WaitReady waits until the control plane pod of virtual cluster name in
// host namespace is Ready (every container, the syncer's caches included)
// and the tenant kubeconfig Secret exists, polling every 500 ms, for at
// most o.Timeout. It stops as soon as the pod cannot start without a change
// (DiagnoseStart: an image that does not exist, an init container that
// failed twice with the same message), with a *StartFailure naming the
// container, its image or last log lines, and the fix. On timeout the
// error describes the pod (DescribePod).
func WaitReady(ctx context.Context, host kubernetes.Interface, name, namespace string, o WaitOptions) error {
	every := o.ProgressEvery
	if every <= 0 {
		every = 5 * time.Second
	}
	start := time.Now()
	var lastProgress time.Time // none yet: the first line comes at once
	var (
		pod      *corev1.Pod
		failures = startFailures{}
		failure  *StartFailure
	)
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, o.Timeout, true, func(ctx context.Context) (bool, error) {
		p, err := controlPlanePod(ctx, host, name, namespace, o.UpdatedRevision)
		if err != nil || p == nil {
			return false, err
		}
		pod = p
		if podutils.IsPodReady(p) {
			_, err = host.CoreV1().Secrets(namespace).Get(ctx, controlplane.KubeconfigSecretName(name), metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return err == nil, err
		}
		if failure = failures.diagnose(p, podEvents(ctx, host, p)); failure != nil {
			if failure.Fix == "" {
				failure.Fix = defaultFix(failure, name, namespace, o.ImageFix)
			}
			return false, failure
		}
		if o.Progress != nil && (lastProgress.IsZero() || time.Since(lastProgress) >= every) {
			lastProgress = time.Now()
			fmt.Fprintf(o.Progress, "  %3.0fs  %s\n", time.Since(start).Seconds(), Progress(p))
		}
		return false, nil
	})
	switch {
	case err == nil:
		return nil
	case failure != nil && errors.Is(err, failure):
		return fmt.Errorf("virtual cluster %s cannot start: %w", name, failure)
	case pod == nil:
		return fmt.Errorf("virtual cluster %s: no control plane pod %s/%s after %s: %w", name, namespace, PodName(name), o.Timeout, err)
	default:
		return fmt.Errorf("virtual cluster %s not ready after %s: %s: %w", name, o.Timeout, DescribePod(pod), err)
	}
}

// controlPlanePod returns the control plane pod of name, or nil while there
// is none (or, with updated, while the one there is of an older revision
// than the StatefulSet's update revision).
func controlPlanePod(ctx context.Context, host kubernetes.Interface, name, namespace string, updated bool) (*corev1.Pod, error) {
	p, err := host.CoreV1().Pods(namespace).Get(ctx, PodName(name), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil || !updated {
		return p, err
	}
	sts, err := host.AppsV1().StatefulSets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if sts.Status.ObservedGeneration < sts.Generation || p.Labels[appsv1.ControllerRevisionHashLabelKey] != sts.Status.UpdateRevision {
		return nil, nil
	}
	return p, nil
}

// podEvents returns the messages of p's Warning events, which say why an
// image pull failed when the container status only says it backs off. It
// asks only while a container of p waits for its image; errors give none.
func podEvents(ctx context.Context, host kubernetes.Interface, p *corev1.Pod) []string {
	pulling := false
	for _, s := range allStatuses(p) {
		if w := s.State.Waiting; w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff") {
			pulling = true
		}
	}
	if !pulling {
		return nil
	}
	sel := fields.Set{"involvedObject.name": p.Name, "involvedObject.uid": string(p.UID), "type": corev1.EventTypeWarning}.AsSelector().String()
	list, err := host.CoreV1().Events(p.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil
	}
	msgs := make([]string, 0, len(list.Items))
	for _, e := range list.Items {
		msgs = append(msgs, e.Message)
	}
	return msgs
}

// DescribePod summarises a control plane pod in one line: "pod NS/NAME
// PHASE; CONTAINER: REASON (MESSAGE), restarts N; …" for every container
// (init containers first) that is not ready.
func DescribePod(p *corev1.Pod) string {
	parts := []string{fmt.Sprintf("pod %s/%s %s", p.Namespace, p.Name, p.Status.Phase)}
	if msg := unscheduled(p); msg != "" {
		parts[0] += ": not scheduled: " + msg
	}
	for _, s := range allStatuses(p) {
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

// Progress says in one line how far a starting control plane pod is:
// "pod NS/NAME Pending: not scheduled yet" before a node took it, else each
// container in start order with "done", "ready", "started", "starting" or
// its waiting reason, e.g. "init done, etcd ready, kube-apiserver started,
// kube-controller-manager waiting (PodInitializing), …".
func Progress(p *corev1.Pod) string {
	head := fmt.Sprintf("pod %s/%s %s", p.Namespace, p.Name, p.Status.Phase)
	if p.Spec.NodeName == "" {
		if msg := unscheduled(p); msg != "" {
			return head + ": not scheduled: " + msg
		}
		return head + ": not scheduled yet"
	}
	statuses := allStatuses(p)
	if len(statuses) == 0 {
		return head + " on " + p.Spec.NodeName + ": creating the containers"
	}
	parts := make([]string, 0, len(statuses))
	for _, s := range statuses {
		var st string
		switch {
		case s.State.Terminated != nil && s.State.Terminated.ExitCode == 0:
			st = "done"
		case s.State.Terminated != nil:
			st = fmt.Sprintf("exited %d", s.State.Terminated.ExitCode)
		case s.Ready:
			st = "ready"
		case s.State.Running != nil && s.Started != nil && *s.Started:
			st = "started"
		case s.State.Running != nil:
			st = "starting"
		case s.State.Waiting != nil:
			st = "waiting (" + s.State.Waiting.Reason + ")"
		default:
			st = "waiting"
		}
		if s.RestartCount > 0 {
			st += fmt.Sprintf(", restarts %d", s.RestartCount)
		}
		parts = append(parts, s.Name+" "+st)
	}
	return head + " on " + p.Spec.NodeName + ": " + strings.Join(parts, ", ")
}

// allStatuses are p's init container statuses, then its containers'.
func allStatuses(p *corev1.Pod) []corev1.ContainerStatus {
	return append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
}

func reason(r, msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" || strings.HasSuffix(msg, ":") {
		return r
	}
	return r + " (" + msg + ")"
}

// unscheduled returns the scheduler's message of a pod no node took yet
// (its PodScheduled condition False, e.g. "0/1 nodes are available: 1
// Insufficient cpu."), or "".
func unscheduled(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return ""
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return c.Message
		}
	}
	return ""
}
