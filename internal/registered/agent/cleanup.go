package agent

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/registered/registration"
)

// Names of the cleanup Job that disconnects a deleted registered cluster
// (it runs `clustersync agent cleanup` in kube-system, since it deletes
// the agent's namespace).
const (
	CleanupNamespace = "kube-system"
	CleanupName      = "clustersync-cleanup"
)

// Cleanup removes from the downstream cluster everything clustersync put
// there: the agent's Deployment, Secret, ServiceAccount, ClusterRole,
// ClusterRoleBinding and namespace (the objects labelled
// app.kubernetes.io/managed-by=clustersync; a namespace without the label
// stays), the members' bindings, the
// project annotations on namespaces, and last the cleanup Job's own
// ClusterRoleBinding (its ServiceAccount is owned by the Job and deleted
// with it, 10 minutes after it finished). Nodes, workloads and every other
// object are left alone; the cluster keeps working. What is already gone
// is skipped; the errors of the other deletions are joined.
func Cleanup(ctx context.Context, kube kubernetes.Interface) error {
	sel := metav1.ListOptions{LabelSelector: registration.LabelManagedBy + "=" + registration.ManagedByValue}
	var errs []error
	keep := func(what string, err error) {
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
		}
	}
	ns := registration.AgentNamespace
	bg := metav1.DeletePropagationBackground
	del := metav1.DeleteOptions{PropagationPolicy: &bg}
	keep("Deployment "+ns+"/"+registration.AgentName, kube.AppsV1().Deployments(ns).Delete(ctx, registration.AgentName, del))
	keep("Secret "+ns+"/"+registration.CredentialsSecret, kube.CoreV1().Secrets(ns).Delete(ctx, registration.CredentialsSecret, del))
	keep("ServiceAccount "+ns+"/"+registration.AgentName, kube.CoreV1().ServiceAccounts(ns).Delete(ctx, registration.AgentName, del))
	if crbs, err := kube.RbacV1().ClusterRoleBindings().List(ctx, sel); err != nil {
		keep("list ClusterRoleBindings", err)
	} else {
		for _, b := range crbs.Items {
			if b.Name != CleanupName {
				keep("ClusterRoleBinding "+b.Name, kube.RbacV1().ClusterRoleBindings().Delete(ctx, b.Name, del))
			}
		}
	}
	if crs, err := kube.RbacV1().ClusterRoles().List(ctx, sel); err != nil {
		keep("list ClusterRoles", err)
	} else {
		for _, r := range crs.Items {
			keep("ClusterRole "+r.Name, kube.RbacV1().ClusterRoles().Delete(ctx, r.Name, del))
		}
	}
	if list, err := kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		keep("list namespaces", err)
	} else {
		for _, n := range list.Items {
			if _, ok := n.Annotations[mgmtv1.ProjectAnnotation]; !ok {
				continue
			}
			patch := []byte(`{"metadata":{"annotations":{"` + mgmtv1.ProjectAnnotation + `":null}}}`)
			_, err := kube.CoreV1().Namespaces().Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{})
			keep("namespace "+n.Name+" project annotation", err)
		}
	}
	// The namespace goes only when it is clustersync's: the manager
	// installs the agent into a namespace of that name that was already
	// there without labelling it (the manager itself may run in it).
	if n, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
		keep("namespace "+ns, err)
	} else if n.Labels[registration.LabelManagedBy] == registration.ManagedByValue {
		keep("namespace "+ns, kube.CoreV1().Namespaces().Delete(ctx, ns, del))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	// One call removes the Job's own rights, and it must be the last: its
	// ServiceAccount is owned by the Job and goes with it (a second call,
	// deleting the ServiceAccount, would fail without the binding, and the
	// binding cannot be deleted once the ServiceAccount, whose token this
	// process uses, is gone).
	keep("ClusterRoleBinding "+CleanupName, kube.RbacV1().ClusterRoleBindings().Delete(ctx, CleanupName, del))
	return errors.Join(errs...)
}
