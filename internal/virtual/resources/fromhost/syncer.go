package fromhost

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
)

// Controller keeps the virtual copies of one cluster-scoped host kind.
type Controller struct {
	gvk schema.GroupVersionKind
	s   *syncer.Context
	// host and virtual read the kind from the caches the controller's
	// watches fill (the clients would read unstructured objects live).
	host, virtual client.Reader
}

func (c *Controller) newObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(c.gvk)
	return u
}

// Register adds the controller of kind gvk (cluster-scoped, served by both
// API servers) to mgr, named fromhost-<name>.
func Register(mgr ctrl.Manager, host cluster.Cluster, s *syncer.Context, name string, gvk schema.GroupVersionKind) error {
	c := &Controller{gvk: gvk, s: s, host: host.GetCache(), virtual: mgr.GetCache()}
	return ctrl.NewControllerManagedBy(mgr).Named("fromhost-" + name).
		For(c.newObject()).
		WatchesRawSource(source.Kind(host.GetCache(), c.newObject(), &handler.TypedEnqueueRequestForObject[*unstructured.Unstructured]{})).
		Complete(c)
}

// Reconcile implements reconcile.Reconciler.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	h, v := c.newObject(), c.newObject()
	herr := c.host.Get(ctx, req.NamespacedName, h)
	verr := c.virtual.Get(ctx, req.NamespacedName, v)
	if verr != nil && !apierrors.IsNotFound(verr) {
		return ctrl.Result{}, verr
	}
	copied := verr == nil && v.GetLabels()[Label] == "true"
	switch {
	case apierrors.IsNotFound(herr) || (herr == nil && !IsHostOwn(h)):
		if copied {
			uid := v.GetUID()
			return ctrl.Result{}, client.IgnoreNotFound(c.s.Virtual.Delete(ctx, v, client.Preconditions{UID: &uid}))
		}
		return ctrl.Result{}, nil
	case herr != nil:
		return ctrl.Result{}, herr
	}
	want := VirtualCopy(h)
	switch {
	case apierrors.IsNotFound(verr):
		if err := c.s.Virtual.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, fmt.Errorf("copy host %s %s: %w", c.gvk.Kind, h.GetName(), err)
		}
	case !copied:
		// The tenant's own object of that name: it stays as it is.
	case Differs(want, v):
		update := want.DeepCopy()
		update.SetResourceVersion(v.GetResourceVersion())
		err := c.s.Virtual.Update(ctx, update)
		if apierrors.IsInvalid(err) {
			// A field the API server keeps immutable (a StorageClass's
			// provisioner, a PriorityClass's value) differs: the host object
			// was replaced while the syncer did not look. Replace the copy.
			return ctrl.Result{}, c.replace(ctx, v, want)
		}
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("update the copy of host %s %s: %w", c.gvk.Kind, h.GetName(), err)
		}
	}
	return ctrl.Result{}, nil
}

// replace deletes the virtual copy cur (only that object: UID
// precondition) and creates want in its place.
func (c *Controller) replace(ctx context.Context, cur, want *unstructured.Unstructured) error {
	uid := cur.GetUID()
	if err := c.s.Virtual.Delete(ctx, cur, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("replace the copy of host %s %s: %w", c.gvk.Kind, cur.GetName(), err)
	}
	if err := c.s.Virtual.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("replace the copy of host %s %s: %w", c.gvk.Kind, cur.GetName(), err)
	}
	return nil
}
