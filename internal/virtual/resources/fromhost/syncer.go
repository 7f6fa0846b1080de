package fromhost

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
)

// Controller keeps the virtual copies of one host kind.
type Controller struct {
	gvk schema.GroupVersionKind
	s   *syncer.Context
	// host and virtual read the kind from the caches the controller's
	// watches fill (the clients would read unstructured objects live).
	host, virtual client.Reader
	// m maps host keys to virtual keys and back.
	m Mapping
	o Options
}

// Options narrow which host objects a controller copies and say how it
// names its configuration.
type Options struct {
	// Key is the configuration key that turns the copies on, e.g.
	// "sync.fromHost.configMaps"; events name it.
	Key string
	// Selector picks the host objects copied by their labels; nil copies
	// all.
	Selector labels.Selector
	// Skip names host objects never copied (a ConfigMap kube-root-ca.crt,
	// which every namespace has of its own); nil skips none.
	Skip func(host types.NamespacedName) bool
	// Filter, when set, picks the host objects copied instead of Selector
	// (sync.fromHost.gateways: a Gateway named by its own mapping always,
	// one of a namespace/* mapping only when the selector matches).
	Filter func(host *unstructured.Unstructured) bool
	// Transform, when set, changes the virtual copy of host before it is
	// compared and written (what it hides, the labels it adds). With
	// Status set it also sets the copy's status, which is written through
	// the status subresource.
	Transform func(host, copy *unstructured.Unstructured) error
	Status    bool
}

// ReasonFromHostConflict is the reason of the Warning event on a tenant's
// own object that a host object's copy would replace: the copy is not made.
const ReasonFromHostConflict = "FromHostConflict"

// copies reports whether the controller copies host object h.
func (c *Controller) copies(h *unstructured.Unstructured) bool {
	if c.o.Filter != nil {
		return IsHostOwn(h) && c.o.Filter(h)
	}
	return IsHostOwn(h) && (c.o.Selector == nil || c.o.Selector.Matches(labels.Set(h.GetLabels()))) &&
		(c.o.Skip == nil || !c.o.Skip(client.ObjectKeyFromObject(h)))
}

// Mapping maps the key of a host object to the key of its virtual copy and
// back; ok false: the object is not copied.
type Mapping interface {
	Virtual(host types.NamespacedName) (types.NamespacedName, bool)
	Host(virtual types.NamespacedName) (types.NamespacedName, bool)
}

// sameName is the Mapping of cluster-scoped kinds: a copy has its host
// object's name.
type sameName struct{}

// Virtual implements Mapping: the host key itself.
func (sameName) Virtual(h types.NamespacedName) (types.NamespacedName, bool) { return h, true }

// Host implements Mapping: the virtual key itself.
func (sameName) Host(v types.NamespacedName) (types.NamespacedName, bool) { return v, true }

func (c *Controller) newObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(c.gvk)
	return u
}

// Register adds the controller of kind gvk (cluster-scoped, served by both
// API servers) to mgr, named fromhost-<name>, copying what o picks.
func Register(mgr ctrl.Manager, host cluster.Cluster, s *syncer.Context, name string, gvk schema.GroupVersionKind, o Options) error {
	return RegisterMapped(mgr, host.GetCache(), s, name, gvk, sameName{}, o)
}

// RegisterMapped adds the controller of kind gvk to mgr, named
// fromhost-<name>, reading host objects from hostCache (which must watch
// the host namespaces m reads) and copying those o picks under the keys m
// gives.
func RegisterMapped(mgr ctrl.Manager, hostCache cache.Cache, s *syncer.Context, name string, gvk schema.GroupVersionKind, m Mapping, o Options) error {
	c := &Controller{gvk: gvk, s: s, host: hostCache, virtual: mgr.GetCache(), m: m, o: o}
	toVirtual := func(_ context.Context, h *unstructured.Unstructured) []reconcile.Request {
		if v, ok := m.Virtual(client.ObjectKeyFromObject(h)); ok {
			return []reconcile.Request{{NamespacedName: v}}
		}
		return nil
	}
	return ctrl.NewControllerManagedBy(mgr).Named("fromhost-" + name).
		For(c.newObject()).
		WatchesRawSource(source.Kind(hostCache, c.newObject(), handler.TypedEnqueueRequestsFromMapFunc(toVirtual))).
		Complete(c)
}

// Reconcile implements reconcile.Reconciler.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	h, v := c.newObject(), c.newObject()
	var herr error = apierrors.NewNotFound(schema.GroupResource{Group: c.gvk.Group, Resource: c.gvk.Kind}, req.Name)
	if hostKey, ok := c.m.Host(req.NamespacedName); ok {
		herr = c.host.Get(ctx, hostKey, h)
	}
	verr := c.virtual.Get(ctx, req.NamespacedName, v)
	if verr != nil && !apierrors.IsNotFound(verr) {
		return ctrl.Result{}, verr
	}
	copied := verr == nil && v.GetLabels()[Label] == "true"
	switch {
	case apierrors.IsNotFound(herr) || (herr == nil && !c.copies(h)):
		if copied {
			uid := v.GetUID()
			return ctrl.Result{}, client.IgnoreNotFound(c.s.Virtual.Delete(ctx, v, client.Preconditions{UID: &uid}))
		}
		return ctrl.Result{}, nil
	case herr != nil:
		return ctrl.Result{}, herr
	}
	want := VirtualCopy(h)
	want.SetName(req.Name)
	want.SetNamespace(req.Namespace)
	if c.o.Transform != nil {
		if err := c.o.Transform(h, want); err != nil {
			return ctrl.Result{}, fmt.Errorf("copy host %s %s: %w", c.gvk.Kind, h.GetName(), err)
		}
	}
	switch {
	case apierrors.IsNotFound(verr):
		if err := c.ensureNamespace(ctx, req.Namespace); err != nil {
			return ctrl.Result{}, err
		}
		created := want.DeepCopy()
		if err := c.s.Virtual.Create(ctx, created); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, fmt.Errorf("copy host %s %s: %w", c.gvk.Kind, h.GetName(), err)
		} else if err == nil {
			return ctrl.Result{}, c.writeStatus(ctx, want, created)
		}
	case !copied:
		// The tenant's own object of that name: it stays as it is.
		c.s.Events.Eventf(v, nil, corev1.EventTypeWarning, ReasonFromHostConflict, "FromHost",
			"not replaced by the copy of host %s %s (%s): this object is the tenant's own; rename or delete it to see the host's",
			c.gvk.Kind, client.ObjectKeyFromObject(h), c.o.Key)
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
		return ctrl.Result{}, c.writeStatus(ctx, want, update)
	default:
		return ctrl.Result{}, c.writeStatus(ctx, want, v)
	}
	return ctrl.Result{}, nil
}

// writeStatus writes want's status to virtual copy cur through the status
// subresource when Options.Status is set and it differs.
func (c *Controller) writeStatus(ctx context.Context, want, cur *unstructured.Unstructured) error {
	if !c.o.Status || equality.Semantic.DeepEqual(want.Object["status"], cur.Object["status"]) {
		return nil
	}
	update := cur.DeepCopy()
	if st, ok := want.Object["status"]; ok {
		update.Object["status"] = st
	} else {
		delete(update.Object, "status")
	}
	if err := c.s.Virtual.Status().Update(ctx, update); err != nil {
		return fmt.Errorf("update the status of the copy of host %s %s: %w", c.gvk.Kind, cur.GetName(), err)
	}
	return nil
}

// ensureNamespace creates the virtual namespace ns of a copy when it does
// not exist ("" is cluster-scoped: nothing to do).
func (c *Controller) ensureNamespace(ctx context.Context, ns string) error {
	if ns == "" {
		return nil
	}
	err := c.s.Virtual.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create virtual namespace %s for the copies of host %s: %w", ns, c.gvk.Kind, err)
	}
	return nil
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
