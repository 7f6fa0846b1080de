package resources

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Cleanup deletes the host copies of every kind cfg switches off, as
// vCluster does when a kind's `enabled` goes to false: the objects of the
// kind's HostKinds in tr.HostNamespace (or, cluster-scoped, annotated as
// its: OfHostNamespace) labelled
// vcluster.loft.sh/managed-by=tr.VCluster that are copies of virtual
// objects (isCopy), and nothing else: never an object another virtual
// cluster or a user made, nor the virtual cluster's own (its certificates
// and kubeconfig Secrets, the Service of its API server, which carry the
// label too). It returns how many it
// deleted per kind name, and the API errors, joined, naming the kind.
func Cleanup(ctx context.Context, host client.Client, tr translate.Translator, cfg *config.Config) (map[string]int, error) {
	deleted := map[string]int{}
	var errs []error
	for _, k := range Kinds() {
		if k.Enabled(cfg) {
			continue
		}
		for _, gvk := range k.HostKinds {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			opts := []client.ListOption{client.MatchingLabels{translate.LabelManagedBy: tr.VCluster}}
			if !k.ClusterScoped {
				opts = append(opts, client.InNamespace(tr.HostNamespace))
			}
			if err := host.List(ctx, list, opts...); meta.IsNoMatchError(err) {
				continue // the host does not serve the kind (snapshot CRDs not installed): no copies
			} else if err != nil {
				errs = append(errs, fmt.Errorf("clean up %s (switched off): %w", k.Name, err))
				continue
			}
			for i := range list.Items {
				obj := &list.Items[i]
				if !isCopy(obj) || !OfHostNamespace(obj, tr.HostNamespace) {
					continue
				}
				if err := host.Delete(ctx, obj, client.Preconditions{UID: ptr.To(obj.GetUID())}); err != nil && !apierrors.IsNotFound(err) {
					errs = append(errs, fmt.Errorf("clean up %s (switched off): delete %s/%s: %w", k.Name, obj.GetNamespace(), obj.GetName(), err))
					continue
				}
				deleted[k.Name]++
			}
		}
	}
	return deleted, errors.Join(errs...)
}

// OfHostNamespace reports whether host object obj belongs to the virtual
// cluster of host namespace ns: it lives there, or, cluster-scoped, its
// vcluster.loft.sh/object-host-namespace annotation names ns (another
// virtual cluster of the same name in another host namespace labels its
// cluster-scoped copies alike).
func OfHostNamespace(obj client.Object, ns string) bool {
	if obj.GetNamespace() != "" {
		return obj.GetNamespace() == ns
	}
	return obj.GetAnnotations()[translate.AnnotationObjectHostNamespace] == ns
}

// isCopy reports whether host object obj is the host copy of a virtual
// object: it names its virtual object (vcluster.loft.sh/object-name) and
// itself (object-host-name), as the syncer's bookkeeping does.
func isCopy(obj client.Object) bool {
	a := obj.GetAnnotations()
	return a[translate.AnnotationObjectName] != "" && a[translate.AnnotationObjectHostName] == obj.GetName()
}
