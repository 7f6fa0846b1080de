package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/registered/agent"
	"github.com/clustersync/clustersync/internal/registered/registration"
)

// finished reports whether Job j completed or failed.
func finished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// CleanupObjects are the downstream objects that disconnect a cluster: a
// ServiceAccount and cluster-admin binding in kube-system and a Job that
// runs `clustersync agent cleanup` (agent.Cleanup) with image. They carry
// the managed-by label; the Job is deleted 10 minutes after it finished,
// and the ServiceAccount with it (disconnect makes the Job its owner); the
// Job's pod deletes the binding as its last call.
func CleanupObjects(cluster, image string) (*corev1.ServiceAccount, *rbacv1.ClusterRoleBinding, *batchv1.Job) {
	labels := map[string]string{registration.LabelName: agent.CleanupName, registration.LabelManagedBy: registration.ManagedByValue, registration.LabelCluster: cluster}
	meta := metav1.ObjectMeta{Name: agent.CleanupName, Namespace: agent.CleanupNamespace, Labels: labels}
	sa := &corev1.ServiceAccount{ObjectMeta: meta}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: agent.CleanupName, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: agent.CleanupName, Namespace: agent.CleanupNamespace}},
	}
	job := &batchv1.Job{ObjectMeta: meta, Spec: batchv1.JobSpec{
		BackoffLimit:            ptr.To(int32(6)),
		TTLSecondsAfterFinished: ptr.To(int32(600)),
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			ServiceAccountName: agent.CleanupName,
			RestartPolicy:      corev1.RestartPolicyOnFailure,
			Containers:         []corev1.Container{{Name: "cleanup", Image: image, Args: []string{"agent", "cleanup"}}},
		}},
	}}
	return sa, crb, job
}

// ErrCleanupPending is returned by a disconnect that found the finished
// cleanup Job of an earlier one (kept 10 minutes) and deleted it: the next
// attempt creates a fresh one.
var ErrCleanupPending = errors.New("an earlier cleanup Job had finished and was deleted; creating a new one next")

// disconnect creates the cleanup objects in the cluster cfg reaches
// (through the tunnel, or directly); the Job removes the agent (and with
// it the tunnel). A cleanup Job that is still running does the work; one
// that finished (an earlier disconnect, before the agent was installed
// again) is deleted with its ServiceAccount first (ErrCleanupPending).
func (r *Reconciler) disconnect(ctx context.Context, c *mgmtv1.Cluster, cfg *rest.Config) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	sa, crb, job := CleanupObjects(c.Name, r.AgentImage)
	if old, err := kube.BatchV1().Jobs(job.Namespace).Get(ctx, job.Name, metav1.GetOptions{}); err == nil && finished(old) {
		bg := metav1.DeletePropagationBackground
		if err := kube.BatchV1().Jobs(job.Namespace).Delete(ctx, job.Name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("the earlier cleanup Job %s/%s: %w", job.Namespace, job.Name, err)
		}
		if err := kube.CoreV1().ServiceAccounts(sa.Namespace).Delete(ctx, sa.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("the earlier cleanup ServiceAccount %s/%s: %w", sa.Namespace, sa.Name, err)
		}
		return ErrCleanupPending
	} else if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	if _, err := kube.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ServiceAccount %s/%s: %w", sa.Namespace, sa.Name, err)
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("ClusterRoleBinding %s: %w", crb.Name, err)
	}
	created, err := kube.BatchV1().Jobs(job.Namespace).Create(ctx, job, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = kube.BatchV1().Jobs(job.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("Job %s/%s: %w", job.Namespace, job.Name, err)
	}
	// The ServiceAccount goes with the Job: the pod cannot delete it and
	// then its own binding (the token dies with the ServiceAccount).
	owner, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": []metav1.OwnerReference{
		*metav1.NewControllerRef(created, batchv1.SchemeGroupVersion.WithKind("Job"))}}})
	if err != nil {
		return err
	}
	if _, err := kube.CoreV1().ServiceAccounts(sa.Namespace).Patch(ctx, sa.Name, types.MergePatchType, owner, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("ServiceAccount %s/%s owner: %w", sa.Namespace, sa.Name, err)
	}
	r.event(c, corev1.EventTypeNormal, "Disconnecting", "cleanup Job %s/%s created in the cluster; nodes and workloads are not touched", job.Namespace, job.Name)
	return nil
}
