package deploy

import (
	"context"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// AnnotationPausedReplicas on a paused control plane StatefulSet keeps its
// replica count for Resume.
const AnnotationPausedReplicas = "clustersync.io/paused-replicas"

// Pause stops virtual cluster name as `vcluster pause` does: the control
// plane StatefulSet is scaled to zero (its data claim stays), then the
// tenant's host pods (label vcluster.loft.sh/managed-by=NAME) are deleted;
// every other host copy and the virtual cluster's objects are kept. It
// waits (up to timeout) until those pods are gone. Pausing a paused virtual
// cluster is an error that says so, and so is pausing one whose etcd data
// is in an emptyDir (AnnotationPersistence): that would lose every object.
func Pause(ctx context.Context, host kubernetes.Interface, name, namespace string, timeout time.Duration) error {
	sts, err := host.AppsV1().StatefulSets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("virtual cluster %s: control plane statefulset %s/%s: %w", name, namespace, name, err)
	}
	replicas := int32(1)
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	if replicas == 0 {
		return fmt.Errorf("virtual cluster %s is paused already; `clustersync virtual resume %s -n %s` resumes it", name, name, namespace)
	}
	if sts.Annotations[AnnotationPersistence] != "volumeClaim" {
		return fmt.Errorf("virtual cluster %s keeps etcd's data in an emptyDir: pausing would delete every object of it; "+
			"pause needs controlPlane.statefulSet.persistence.volumeClaim (a default StorageClass in the host, or storageClass set)", name)
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}},"spec":{"replicas":0}}`, AnnotationPausedReplicas, strconv.Itoa(int(replicas)))
	if _, err := host.AppsV1().StatefulSets(namespace).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("scale %s/%s to 0: %w", namespace, name, err)
	}
	if err := waitPodGone(ctx, host, PodName(name), namespace, timeout); err != nil {
		return err
	}
	selector := translate.LabelManagedBy + "=" + name
	grace := int64(0)
	pods := host.CoreV1().Pods(namespace)
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &grace}, metav1.ListOptions{LabelSelector: selector}); err != nil {
		return fmt.Errorf("delete the host pods of %s: %w", name, err)
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: selector})
		return err == nil && len(list.Items) == 0, err
	})
}

// Resume brings a paused virtual cluster back: the StatefulSet gets its
// replica count again and Resume waits (WaitReady with w) for the
// control plane; the syncer then makes the host pods anew from the virtual
// state (pods of Deployments and other controllers come back; a bare pod
// whose host copy is gone is deleted in the virtual cluster, as vCluster
// does). Resuming a running virtual cluster is an error that says so.
func Resume(ctx context.Context, host kubernetes.Interface, name, namespace string, w WaitOptions) error {
	sts, err := host.AppsV1().StatefulSets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("virtual cluster %s: control plane statefulset %s/%s: %w", name, namespace, name, err)
	}
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas != 0 {
		return fmt.Errorf("virtual cluster %s is not paused", name)
	}
	replicas, err := strconv.Atoi(sts.Annotations[AnnotationPausedReplicas])
	if err != nil || replicas < 1 {
		replicas = 1
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}},"spec":{"replicas":%d}}`, AnnotationPausedReplicas, replicas)
	if _, err := host.AppsV1().StatefulSets(namespace).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("scale %s/%s to %d: %w", namespace, name, replicas, err)
	}
	return WaitReady(ctx, host, name, namespace, w)
}

// waitPodGone waits until pod name of namespace does not exist.
func waitPodGone(ctx context.Context, host kubernetes.Interface, name, namespace string, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := host.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return fmt.Errorf("pod %s/%s not gone after %s: %w", namespace, name, timeout, err)
	}
	return nil
}
