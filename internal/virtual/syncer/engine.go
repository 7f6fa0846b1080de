package syncer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/patches"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// ConflictRetry is the requeue delay after a write conflict, as in vCluster,
// and after a resource deleted a host copy to have it made again.
const ConflictRetry = time.Second

// collisionRetry is how often a name collision with an unmanaged host
// object is looked at again.
const collisionRetry = time.Minute

// behindRetry is how soon a reconcile that found the cache behind the
// syncer's own last write runs again.
const behindRetry = 50 * time.Millisecond

// clusterScoped is implemented by Kind: a cluster-scoped kind's host
// copies are cluster-scoped.
type clusterScoped interface{ IsClusterScoped() bool }

// engine reconciles one Resource.
type engine[T client.Object] struct {
	r    Resource[T]
	s    *Context
	kind string
	// lastSeen holds the metadata of each pair after its last sync, with
	// the UID of the virtual object it was synced from (seen).
	lastSeen sync.Map // types.NamespacedName → seen
}

// seen is what the engine keeps of a pair after its last sync: the
// metadata, and the UID of the virtual object synced. A virtual object
// deleted and made again under its name (a new UID) has no past: what the
// earlier one left must not count for it (Create.WasSynced would take the
// earlier object's host copy, deleted since, for its own and a pod would
// be removed as if evicted).
type seen struct {
	uid  types.UID
	meta translate.Meta
}

// seenFor returns the last-seen metadata of key if it was recorded for the
// virtual object with UID uid.
func (e *engine[T]) seenFor(key types.NamespacedName, uid types.UID) (translate.Meta, bool) {
	v, ok := e.lastSeen.Load(key)
	if !ok {
		return translate.Meta{}, false
	}
	s := v.(seen)
	if s.uid != uid {
		return translate.Meta{}, false
	}
	return s.meta, true
}

// Register adds the controller of r to mgr (the virtual cluster's manager),
// watching r's kind in the virtual cluster and in host's cache, with
// workers concurrent reconciles.
func Register[T client.Object](mgr ctrl.Manager, host cluster.Cluster, s *Context, r Resource[T], workers int) error {
	e := &engine[T]{r: r, s: s, kind: r.GVK().String()}
	s.mu.Lock()
	s.controllerOf[r.GVK().Kind] = r.Name()
	s.mu.Unlock()
	managedBy := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[translate.LabelManagedBy] == s.Translator.VCluster
	})
	notEcho := s.echoes.notEcho()
	b := ctrl.NewControllerManagedBy(mgr).
		Named(r.Name()).
		For(r.New(), builder.WithPredicates(notEcho)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		WatchesRawSource(source.Kind(host.GetCache(), r.New(),
			handler.TypedEnqueueRequestsFromMapFunc(e.hostToVirtual), typedPredicate[T](predicate.And(managedBy, notEcho)))).
		WatchesRawSource(source.Channel(s.queue(r.Name()), &handler.EnqueueRequestForObject{}))
	if w, ok := any(r).(Watcher); ok {
		b = w.Watch(b, s, host)
	}
	return b.Complete(e)
}

// typedPredicate adapts an untyped predicate to the typed events of a source.
func typedPredicate[T client.Object](p predicate.Predicate) predicate.TypedPredicate[T] {
	return predicate.TypedFuncs[T]{
		CreateFunc: func(e event.TypedCreateEvent[T]) bool { return p.Create(event.CreateEvent{Object: e.Object}) },
		UpdateFunc: func(e event.TypedUpdateEvent[T]) bool {
			return p.Update(event.UpdateEvent{ObjectOld: e.ObjectOld, ObjectNew: e.ObjectNew})
		},
		DeleteFunc: func(e event.TypedDeleteEvent[T]) bool {
			return p.Delete(event.DeleteEvent{Object: e.Object, DeleteStateUnknown: e.DeleteStateUnknown})
		},
		GenericFunc: func(e event.TypedGenericEvent[T]) bool { return p.Generic(event.GenericEvent{Object: e.Object}) },
	}
}

// hostToVirtual maps a host object to the virtual object it was made from.
func (e *engine[T]) hostToVirtual(_ context.Context, o T) []reconcile.Request {
	ann := o.GetAnnotations()
	name := ann[translate.AnnotationObjectName]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ann[translate.AnnotationObjectNamespace], Name: name}}}
}

// Reconcile implements reconcile.Reconciler.
func (e *engine[T]) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	res, err := e.reconcile(ctx, req.NamespacedName)
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: ConflictRetry}, nil
	}
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		// A write into a virtual namespace being deleted: its objects go
		// with it, and their deletion brings the object back here.
		return ctrl.Result{}, nil
	}
	if msg, ok := HostRefusal(err); ok {
		// The host refused the copy (its quota, an admission webhook):
		// the tenant is told, in words that name no host object, and the
		// copy is tried again with the controller's backoff (a quota may
		// be raised).
		if virtual, vok, gerr := get(ctx, e.s.Virtual, req.NamespacedName, e.r.New()); gerr == nil && vok {
			e.s.ReportSyncError(virtual, "not synced to the host: %s", msg)
		}
	}
	if err != nil {
		return res, fmt.Errorf("%s %s: %w", e.r.Name(), req.NamespacedName, err)
	}
	return res, nil
}

func (e *engine[T]) reconcile(ctx context.Context, key types.NamespacedName) (ctrl.Result, error) {
	s := e.s
	virtual, vok, err := get(ctx, s.Virtual, key, e.r.New())
	if err != nil {
		return ctrl.Result{}, err
	}
	hostName := e.r.HostName(key.Name, key.Namespace)
	hostKey := types.NamespacedName{Namespace: s.Translator.HostNamespace, Name: hostName}
	if cs, ok := any(e.r).(clusterScoped); ok && cs.IsClusterScoped() {
		hostKey.Namespace = ""
	}
	host, hok, err := get(ctx, s.Host, hostKey, e.r.New())
	if err != nil {
		return ctrl.Result{}, err
	}
	ref := mapping.Ref{Kind: e.r.GVK().Kind, Namespace: key.Namespace, Name: key.Name}
	if now := time.Now(); (vok && s.echoes.behind(virtual, now)) || (hok && s.echoes.behind(host, now)) {
		// The cache has not caught up with our own last write: wait for it
		// rather than merge against a state we know is old.
		return ctrl.Result{RequeueAfter: behindRetry}, nil
	}

	selected := true
	if sel, ok := any(e.r).(Selector[T]); ok && vok {
		selected = sel.ShouldSync(ctx, s, virtual)
	}

	if hok && !e.owns(host, key) {
		// A virtual object the kind does not sync (the Endpoints of a
		// Service with a selector, which the host's own controller makes
		// under the same name) does not collide with anything.
		if vok && virtual.GetDeletionTimestamp() == nil && selected {
			// The tenant is told what happened without the host names; the
			// log, read by the host's administrators, has them.
			s.Log.Info("host name taken", "virtual", key, "host", hostKey, "managedBy", host.GetLabels()[translate.LabelManagedBy],
				"objectName", host.GetAnnotations()[translate.AnnotationObjectName],
				"objectNamespace", host.GetAnnotations()[translate.AnnotationObjectNamespace])
			s.ReportSyncError(virtual, "%s", e.collisionMessage(host))
			return ctrl.Result{RequeueAfter: collisionRetry}, nil
		}
		if vok {
			if f, ok := any(e.r).(Finalizer[T]); ok {
				var zero T
				return f.Finalize(ctx, s, virtual, zero, false)
			}
		}
		return ctrl.Result{}, nil
	}

	switch {
	case vok && virtual.GetDeletionTimestamp() != nil:
		if f, ok := any(e.r).(Finalizer[T]); ok {
			return f.Finalize(ctx, s, virtual, host, hok)
		}
		return ctrl.Result{}, nil

	case vok && hok && selected:
		stale := host.GetAnnotations()[translate.AnnotationObjectUID] != string(virtual.GetUID())
		if stale {
			if p, ok := any(e.r).(UIDPolicy); !ok || !p.KeepOnUIDMismatch() {
				// A stale copy of an earlier object of the same name: replace it.
				return ctrl.Result{RequeueAfter: ConflictRetry}, e.deleteHost(ctx, host, key)
			}
		}
		vref := e.virtualRef(virtual)
		set := s.patchesOf(e.r.GVK())
		view := host
		if set != nil {
			// Compare and merge with the host object as it would be without
			// the patches; Pair.PatchHost applies them again.
			if view, err = unpatched(set, host, virtual, vref); err != nil {
				return e.patchFailed(virtual, err)
			}
			s.SetReferences(ctx, PatchesRef(ref), patchReferences(set, virtual))
		}
		if hv, ok := any(e.r).(HostViewer[T]); ok {
			view = hv.VirtualView(view, virtual)
		}
		var base *translate.Meta
		if stale {
			sb := s.Translator.StaleBase(view)
			base = &sb
		} else if m, ok := e.seenFor(key, virtual.GetUID()); ok {
			base = &m
		}
		p := &Pair[T]{Virtual: virtual, Host: view, Ref: vref, patches: set, patched: host,
			Meta: s.Translator.SyncMetadata(base, virtual, view, vref, hostName)}
		res, err := e.r.Sync(ctx, s, p)
		if err != nil {
			return e.patchFailed(virtual, err)
		}
		switch {
		case p.keepBase:
		case stale:
			// Until the host copy carries this object's UID, each Sync
			// merges against StaleBase.
			e.lastSeen.Delete(key)
		default:
			e.lastSeen.Store(key, seen{uid: virtual.GetUID(), meta: p.Meta.Seen})
		}
		s.Mappings.Record(ref, hostName)
		s.settleReported(virtual.GetUID())
		return res, nil

	case vok && selected:
		vref := e.virtualRef(virtual)
		set := s.patchesOf(e.r.GVK())
		if set != nil {
			s.SetReferences(ctx, PatchesRef(ref), patchReferences(set, virtual))
		}
		labels, anns, meta := s.Translator.NewHostMetadata(virtual, vref, hostName)
		_, wasSynced := e.seenFor(key, virtual.GetUID())
		c := &Create[T]{Virtual: virtual, Ref: vref, HostName: hostName,
			Labels: labels, Annotations: anns, WasSynced: wasSynced, patches: set}
		res, err := e.r.SyncToHost(ctx, s, c)
		if err != nil {
			return e.patchFailed(virtual, err)
		}
		if c.created {
			e.lastSeen.Store(key, seen{uid: virtual.GetUID(), meta: meta})
		}
		s.Mappings.Record(ref, hostName)
		return res, nil

	case hok:
		// The virtual object is gone (or no longer selected).
		res, err := e.r.SyncToVirtual(ctx, s, host)
		if err == nil {
			e.lastSeen.Delete(key)
		}
		return res, err

	default:
		if _, had := e.lastSeen.LoadAndDelete(key); had {
			// A copy made just before the virtual object went may not be
			// in the host cache yet, and its watch event, an echo of our
			// own write, wakes nobody: ask the host API server.
			fresh, ok, err := get(ctx, s.HostReader, hostKey, e.r.New())
			if err != nil {
				return ctrl.Result{}, err
			}
			if ok && e.owns(fresh, key) {
				return e.r.SyncToVirtual(ctx, s, fresh)
			}
		}
		if vok { // not selected and not on the host: nothing to do
			return ctrl.Result{}, nil
		}
		// Gone on both sides: what it referenced may no longer be needed.
		s.EnqueueRefs(ctx, s.Mappings.Forget(ref))
		s.EnqueueRefs(ctx, s.Mappings.Forget(PatchesRef(ref)))
		return ctrl.Result{}, nil
	}
}

// owns tells whether host object host is this virtual cluster's copy of
// the virtual object key: managed (translate.IsManaged), and made from key
// itself. Two virtual objects can have the same host name — vCluster's
// NAME-x-NAMESPACE-x-VCLUSTER maps "a-x-b" in namespace "c" and "a" in
// namespace "b-x-c" to one name — and the copy of one is never taken over
// by the other.
func (e *engine[T]) owns(host T, key types.NamespacedName) bool {
	ann := host.GetAnnotations()
	return e.s.Translator.IsManaged(host, e.kind, e.r.HostName) &&
		ann[translate.AnnotationObjectName] == key.Name && ann[translate.AnnotationObjectNamespace] == key.Namespace
}

// collisionMessage is the SyncError a virtual object gets when its host
// name is taken by host object host that it does not own. It names no host
// object: the tenant learns that the name is taken, and by another of its
// own objects when that is so, not what else lives in the host namespace.
func (e *engine[T]) collisionMessage(host T) string {
	if e.s.Translator.IsManaged(host, e.kind, e.r.HostName) {
		ann := host.GetAnnotations()
		name := ann[translate.AnnotationObjectName]
		if ns := ann[translate.AnnotationObjectNamespace]; ns != "" {
			name = ns + "/" + name
		}
		return fmt.Sprintf("cannot sync to host: its host name is that of the host copy of %s %s; "+
			"names with \"-x-\" can map to the same host name, rename one of the two", e.r.GVK().Kind, name)
	}
	return "cannot sync to host: its host name is taken by an object this virtual cluster does not manage, which is left untouched"
}

func (e *engine[T]) virtualRef(v T) translate.VirtualRef {
	return translate.VirtualRef{Kind: e.kind, Name: v.GetName(), Namespace: v.GetNamespace(), UID: v.GetUID()}
}

// patchFailed turns the error of a patch (*patches.Error) into a
// SyncError event on the virtual object, which is then not synced until
// it or the host object changes: a patch that fails does not get better by
// retrying. Other errors are returned as they are.
func (e *engine[T]) patchFailed(virtual T, err error) (ctrl.Result, error) {
	var perr *patches.Error
	if !errors.As(err, &perr) {
		return ctrl.Result{}, err
	}
	e.s.ReportSyncError(virtual, "not synced to the host: %v", err)
	return ctrl.Result{}, nil
}

// deleteHost deletes a stale host copy and forgets its last-seen metadata.
func (e *engine[T]) deleteHost(ctx context.Context, host T, key types.NamespacedName) error {
	if err := e.s.DeleteHost(ctx, host); err != nil {
		return err
	}
	e.lastSeen.Delete(key)
	return nil
}

// get reads key into obj; ok is false when it does not exist.
func get[T client.Object](ctx context.Context, c client.Reader, key types.NamespacedName, obj T) (T, bool, error) {
	err := c.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		var zero T
		return zero, false, nil
	}
	if err != nil {
		var zero T
		return zero, false, err
	}
	return obj, true, nil
}

// compile-time check that engine is a reconciler.
var _ reconcile.Reconciler = &engine[client.Object]{}
