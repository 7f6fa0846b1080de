package instance

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/clustersync/clustersync/internal/virtual/resources"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// hostKinds are the namespaced host resources a virtual cluster creates:
// its kinds' copies (resources.HostResources), which include the
// ServiceAccount its host pods run as.
func hostKinds() []schema.GroupVersionResource { return resources.HostResources() }

// DeleteHostObjects deletes every object in namespace labelled
// vcluster.loft.sh/managed-by=vcluster — what the virtual cluster created,
// and nothing else — and waits until they are gone (deadline timeout).
func DeleteHostObjects(ctx context.Context, host dynamic.Interface, namespace, vcluster string, timeout time.Duration) error {
	selector := translate.LabelManagedBy + "=" + vcluster
	grace := int64(0)
	for _, gvr := range hostKinds() {
		err := host.Resource(gvr).Namespace(namespace).DeleteCollection(ctx,
			metav1.DeleteOptions{GracePeriodSeconds: &grace}, metav1.ListOptions{LabelSelector: selector})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
			return fmt.Errorf("delete host %s of %s: %w", gvr.Resource, vcluster, err)
		}
	}
	deadline := time.Now().Add(timeout)
	for {
		left := 0
		for _, gvr := range hostKinds() {
			list, err := host.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				return err
			}
			left += len(list.Items)
		}
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d host objects of %s still present after %s", left, vcluster, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
