package deploy

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/clustersync/clustersync/internal/virtual/instance"
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
// labelled vcluster.loft.sh/managed-by=NAME — and nothing else, and waits
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
