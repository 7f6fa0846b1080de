package deploy

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	"github.com/clustersync/clustersync/internal/virtual/instance"
	"github.com/clustersync/clustersync/internal/virtual/resources/services"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// DeleteOptions describe a virtual cluster to remove from its host.
type DeleteOptions struct {
	Name, Namespace string
	// DeleteNamespace also deletes the host namespace, but only when Create
	// made it for this virtual cluster (LabelCreatedFor).
	DeleteNamespace bool
	// Timeout bounds each wait for objects to be gone.
	Timeout time.Duration
}

// Delete uninstalls the release (the control plane, its Services, RBAC and
// config), then deletes every host object the virtual cluster made — the
// synced copies, the Secrets vc-NAME and NAME-certs, the data claim, all
// labelled vcluster.loft.sh/managed-by=NAME, the kubeconfig Secrets of
// exportKubeConfig in other namespaces and the host Services of
// networking.replicateServices.toHost — and nothing else, and waits
// until they and the control plane pod are gone. It returns a message for the user when the namespace
// was kept although asked to delete it.
func Delete(ctx context.Context, host kubernetes.Interface, dyn dynamic.Interface, h *Helm, o DeleteOptions) (string, error) {
	if _, err := h.Get(o.Name, o.Namespace); err != nil {
		return "", err
	}
	if err := h.Uninstall(o.Name, o.Namespace, o.Timeout); err != nil {
		return "", err
	}
	// The StatefulSet is gone; its pod goes by garbage collection.
	if err := waitPodGone(ctx, host, PodName(o.Name), o.Namespace, o.Timeout); err != nil {
		return "", err
	}
	if err := instance.DeleteHostObjects(ctx, host.Discovery(), dyn, o.Namespace, o.Name, o.Timeout); err != nil {
		return "", err
	}
	if err := deleteExportedKubeconfigs(ctx, host, o.Name, o.Namespace); err != nil {
		return "", err
	}
	if err := deleteReplicas(ctx, host, o.Name, nil); err != nil {
		return "", err
	}
	if !o.DeleteNamespace {
		return "", nil
	}
	ns, err := host.CoreV1().Namespaces().Get(ctx, o.Namespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if ns.Labels[LabelCreatedFor] != o.Name {
		return fmt.Sprintf("host namespace %s kept: clustersync did not create it for %s", o.Namespace, o.Name), nil
	}
	if err := host.CoreV1().Namespaces().Delete(ctx, o.Namespace, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("delete host namespace %s: %w", o.Namespace, err)
	}
	return "", nil
}

// deleteExportedKubeconfigs deletes the kubeconfig Secrets the syncer of
// virtual cluster name wrote outside its host namespace namespace
// (exportKubeConfig): labelled vcluster.loft.sh/managed-by=NAME and
// annotated as exported from namespace, in any namespace.
func deleteExportedKubeconfigs(ctx context.Context, host kubernetes.Interface, name, namespace string) error {
	list, err := host.CoreV1().Secrets("").List(ctx, metav1.ListOptions{LabelSelector: translate.LabelManagedBy + "=" + name})
	if err != nil {
		return fmt.Errorf("list the exported kubeconfig Secrets of %s: %w", name, err)
	}
	for _, s := range list.Items {
		if s.Namespace == namespace || s.Annotations[controlplane.AnnotationExportedFrom] != namespace {
			continue
		}
		if err := host.CoreV1().Secrets(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete exported kubeconfig secret %s/%s: %w", s.Namespace, s.Name, err)
		}
	}
	return nil
}

// deleteReplicas deletes the host Services that
// networking.replicateServices.toHost of virtual cluster name made, in any
// namespace (labelled services.LabelReplicatedBy=NAME; their EndpointSlices
// go with them), but those that entries keep stand for.
func deleteReplicas(ctx context.Context, host kubernetes.Interface, name string, keep []services.Replication) error {
	list, err := host.CoreV1().Services("").List(ctx, metav1.ListOptions{LabelSelector: services.LabelReplicatedBy + "=" + name})
	if err != nil {
		return fmt.Errorf("list the replicated Services of %s: %w", name, err)
	}
	for _, s := range services.StaleReplicas(list.Items, keep) {
		if err := host.CoreV1().Services(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete replicated Service %s/%s: %w", s.Namespace, s.Name, err)
		}
	}
	return nil
}
