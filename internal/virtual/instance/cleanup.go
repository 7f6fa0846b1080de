package instance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/clustersync/clustersync/internal/virtual/resources"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// hostKinds are the host resources a virtual cluster creates: its kinds'
// copies (resources.HostResources), which include the ServiceAccount its
// host pods run as.
func hostKinds() []resources.HostResource { return resources.HostResources() }

// DeleteHostObjects deletes every object in namespace labelled
// vcluster.loft.sh/managed-by=vcluster — of the kinds of the syncer's
// table and of any other namespaced resource the host serves (the copies
// of custom resources, whose kinds only the configuration names) — and
// every cluster-scoped copy of a table kind so labelled whose
// vcluster.loft.sh/object-host-namespace is namespace: what the virtual
// cluster created, and nothing else. It waits until they are gone
// (deadline timeout). disc lists the host's resources; a group that fails
// to list is skipped.
func DeleteHostObjects(ctx context.Context, disc discovery.DiscoveryInterface, host dynamic.Interface, namespace, vcluster string, timeout time.Duration) error {
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
			if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
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
	var pending []resources.HostResource
	for _, hr := range withServed(disc, hostKinds()) {
		objs, err := ours(hr)
		if err != nil {
			return fmt.Errorf("list host %s of %s: %w", hr.Resource.Resource, vcluster, err)
		}
		if len(objs) == 0 {
			continue
		}
		pending = append(pending, hr)
		if hr.ClusterScoped {
			for _, o := range objs {
				uid := o.GetUID()
				err = host.Resource(hr.Resource).Delete(ctx, o.GetName(), metav1.DeleteOptions{GracePeriodSeconds: &grace,
					Preconditions: &metav1.Preconditions{UID: &uid}})
				if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
					break
				}
				err = nil
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
		for _, hr := range pending {
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

// withServed adds to known every other namespaced resource disc reports
// that can be listed and deleted.
func withServed(disc discovery.DiscoveryInterface, known []resources.HostResource) []resources.HostResource {
	out := append([]resources.HostResource(nil), known...)
	seen := map[schema.GroupResource]bool{}
	for _, hr := range known {
		seen[hr.Resource.GroupResource()] = true
	}
	lists, _ := discovery.ServerPreferredNamespacedResources(disc) // partial results on a group's failure
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			gr := schema.GroupResource{Group: gv.Group, Resource: r.Name}
			if seen[gr] || strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "deletecollection") {
				continue
			}
			seen[gr] = true
			out = append(out, resources.HostResource{Resource: gv.WithResource(r.Name)})
		}
	}
	return out
}
