package instance

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/clustersync/clustersync/internal/virtual/resources"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// hostKinds are the host resources a virtual cluster creates: its kinds'
// copies (resources.HostResources), which include the ServiceAccount its
// host pods run as.
func hostKinds() []resources.HostResource { return resources.HostResources() }

// DeleteHostObjects deletes every object in namespace labelled
// vcluster.loft.sh/managed-by=vcluster, and every cluster-scoped copy so
// labelled whose vcluster.loft.sh/object-host-namespace is namespace —
// what the virtual cluster created, and nothing else — and waits until
// they are gone (deadline timeout).
func DeleteHostObjects(ctx context.Context, host dynamic.Interface, namespace, vcluster string, timeout time.Duration) error {
	selector := translate.LabelManagedBy + "=" + vcluster
	grace := int64(0)
	// ours lists the objects of hr that are the virtual cluster's.
	ours := func(hr resources.HostResource) ([]unstructured.Unstructured, error) {
		ri := host.Resource(hr.Resource)
		var list *unstructured.UnstructuredList
		var err error
		if hr.ClusterScoped {
			list, err = ri.List(ctx, metav1.ListOptions{LabelSelector: selector})
		} else {
			list, err = ri.Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		}
		if err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return nil, err
		}
		var out []unstructured.Unstructured
		for _, o := range list.Items {
			if resources.OfHostNamespace(&o, namespace) {
				out = append(out, o)
			}
		}
		return out, nil
	}
	for _, hr := range hostKinds() {
		var err error
		if hr.ClusterScoped {
			var objs []unstructured.Unstructured
			if objs, err = ours(hr); err == nil {
				for _, o := range objs {
					uid := o.GetUID()
					if err = host.Resource(hr.Resource).Delete(ctx, o.GetName(), metav1.DeleteOptions{GracePeriodSeconds: &grace,
						Preconditions: &metav1.Preconditions{UID: &uid}}); apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
						err = nil
					}
					if err != nil {
						break
					}
				}
			}
		} else {
			err = host.Resource(hr.Resource).Namespace(namespace).DeleteCollection(ctx,
				metav1.DeleteOptions{GracePeriodSeconds: &grace}, metav1.ListOptions{LabelSelector: selector})
		}
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
			return fmt.Errorf("delete host %s of %s: %w", hr.Resource.Resource, vcluster, err)
		}
	}
	deadline := time.Now().Add(timeout)
	for {
		left := 0
		for _, hr := range hostKinds() {
			objs, err := ours(hr)
			if err != nil {
				return err
			}
			left += len(objs)
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
