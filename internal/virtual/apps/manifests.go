package apps

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/clustersync/clustersync/internal/virtual/config"
)

// FieldManager is the field manager of the objects the manifests apply.
const FieldManager = "clustersync-deploy"

// objectKey identifies an object of the manifests across versions of its
// kind.
type objectKey struct {
	GroupKind       schema.GroupKind
	Namespace, Name string
}

// applier applies manifests to one cluster.
type applier struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

// resource is where o is served, with o's namespace set as the manifests
// mean it: "default" for a namespaced object without one, none for a
// cluster-scoped object.
func (a applier) resource(o *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := o.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", gvk.Kind, o.GetName(), err)
	}
	if m.Scope.Name() == meta.RESTScopeNameRoot {
		o.SetNamespace("")
		return a.dyn.Resource(m.Resource), nil
	}
	if o.GetNamespace() == "" {
		o.SetNamespace(metav1.NamespaceDefault)
	}
	return a.dyn.Resource(m.Resource).Namespace(o.GetNamespace()), nil
}

// apply applies the objects of text in order (server-side apply, taking
// over fields other managers own, as `kubectl apply --server-side
// --force-conflicts` does), then deletes the objects of last that text no
// longer has. It returns how many objects it applied; an error names the
// object.
func (a applier) apply(ctx context.Context, text, last string) (int, error) {
	objs, err := config.ParseManifests(text)
	if err != nil {
		return 0, err
	}
	keep := map[objectKey]bool{}
	for _, o := range objs {
		r, err := a.resource(o)
		if err != nil {
			return 0, err
		}
		keep[keyOf(o)] = true
		if _, err := r.Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return 0, fmt.Errorf("apply %s %s: %w", o.GetKind(), qualified(o), err)
		}
	}
	if last == "" {
		return len(objs), nil
	}
	old, err := config.ParseManifests(last)
	if err != nil {
		// The manifests applied before no longer parse (written by another
		// release?): nothing to prune by.
		return len(objs), nil
	}
	for _, o := range old {
		r, err := a.resource(o)
		if meta.IsNoMatchError(err) {
			continue // its kind is gone, and the object with it
		} else if err != nil {
			return 0, err
		}
		if keep[keyOf(o)] {
			continue
		}
		if err := r.Delete(ctx, o.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return 0, fmt.Errorf("delete %s %s, dropped from the manifests: %w", o.GetKind(), qualified(o), err)
		}
	}
	return len(objs), nil
}

func keyOf(o *unstructured.Unstructured) objectKey {
	return objectKey{GroupKind: o.GroupVersionKind().GroupKind(), Namespace: o.GetNamespace(), Name: o.GetName()}
}

// qualified is namespace/name, or name for a cluster-scoped object.
func qualified(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}
