package gatewayapi

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// routeWatch makes a route syncer look at its routes again when what
// their admission reads changes: a virtual Gateway (the routes naming
// it), a ReferenceGrant (the routes of the namespaces it grants), a
// Namespace (its routes; its labels may match a listener's selector).
// routes maps each route of a list (newList) to its parents' keys.
func routeWatch(b *builder.Builder, s *syncer.Context, newList func() client.ObjectList, routes func(client.ObjectList) map[types.NamespacedName][]types.NamespacedName) *builder.Builder {
	list := func(ctx context.Context, opts ...client.ListOption) map[types.NamespacedName][]types.NamespacedName {
		l := newList()
		if err := s.Virtual.List(ctx, l, opts...); err != nil {
			return nil
		}
		return routes(l)
	}
	requests := func(m map[types.NamespacedName][]types.NamespacedName, keep func(types.NamespacedName, []types.NamespacedName) bool) []reconcile.Request {
		var out []reconcile.Request
		for k, parents := range m {
			if keep(k, parents) {
				out = append(out, reconcile.Request{NamespacedName: k})
			}
		}
		return out
	}
	byGateway := func(ctx context.Context, o client.Object) []reconcile.Request {
		gw := client.ObjectKeyFromObject(o)
		return requests(list(ctx), func(_ types.NamespacedName, parents []types.NamespacedName) bool {
			for _, p := range parents {
				if p == gw {
					return true
				}
			}
			return false
		})
	}
	byGrant := func(ctx context.Context, o client.Object) []reconcile.Request {
		g, ok := o.(*gatewayv1.ReferenceGrant)
		if !ok {
			return nil
		}
		var out []reconcile.Request
		for _, f := range g.Spec.From {
			out = append(out, requests(list(ctx, client.InNamespace(string(f.Namespace))), func(types.NamespacedName, []types.NamespacedName) bool { return true })...)
		}
		return out
	}
	byNamespace := func(ctx context.Context, o client.Object) []reconcile.Request {
		return requests(list(ctx, client.InNamespace(o.GetName())), func(types.NamespacedName, []types.NamespacedName) bool { return true })
	}
	return b.Watches(&gatewayv1.Gateway{}, handler.EnqueueRequestsFromMapFunc(byGateway)).
		Watches(&gatewayv1.ReferenceGrant{}, handler.EnqueueRequestsFromMapFunc(byGrant)).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(byNamespace))
}

// parentKeys are the Gateway keys of parents, of a route in namespace ns.
func parentKeys(ns string, parents []gatewayv1.ParentReference) []types.NamespacedName {
	out := make([]types.NamespacedName, 0, len(parents))
	for _, p := range parents {
		out = append(out, types.NamespacedName{Namespace: string(orDefault(p.Namespace, gatewayv1.Namespace(ns))), Name: string(p.Name)})
	}
	return out
}

// Routes syncs the tenant's routes of one kind (HTTPRoutes, TLSRoutes):
// T is the route, S its spec.
type Routes[T client.Object, S any] struct {
	syncer.Kind[T]
	imports *Imports
	r       routeKind[T, S]
}

// routeKind is what Routes needs to know of one route kind.
type routeKind[T client.Object, S any] struct {
	// hostSpec is the kind's Host…Spec.
	hostSpec func(v T, tr translate.Translator, l Lookup) (S, error)
	// newHost is a host route of meta and spec; setSpec sets h's spec.
	newHost func(meta metav1.ObjectMeta, spec S) T
	setSpec func(h T, spec S)
	// specOf is a route's spec, parents a spec's parent references,
	// status a route's status.
	specOf  func(T) S
	parents func(S) []gatewayv1.ParentReference
	status  func(T) *gatewayv1.RouteStatus
	// newList is an empty list of the kind.
	newList func() client.ObjectList
}

// NewHTTPRoutes returns the HTTPRoute syncer; imports is nil without
// sync.fromHost.gateways.
func NewHTTPRoutes(tr translate.Translator, imports *Imports) *Routes[*gatewayv1.HTTPRoute, gatewayv1.HTTPRouteSpec] {
	return &Routes[*gatewayv1.HTTPRoute, gatewayv1.HTTPRouteSpec]{
		Kind: syncer.Kind[*gatewayv1.HTTPRoute]{Plural: "httproutes", Kind: gatewayv1.SchemeGroupVersion.WithKind(KindHTTPRoute),
			NewObject: func() *gatewayv1.HTTPRoute { return &gatewayv1.HTTPRoute{} }, Translator: tr}, imports: imports,
		r: routeKind[*gatewayv1.HTTPRoute, gatewayv1.HTTPRouteSpec]{
			hostSpec: HostHTTPRouteSpec,
			newHost: func(m metav1.ObjectMeta, spec gatewayv1.HTTPRouteSpec) *gatewayv1.HTTPRoute {
				return &gatewayv1.HTTPRoute{ObjectMeta: m, Spec: spec}
			},
			setSpec: func(h *gatewayv1.HTTPRoute, spec gatewayv1.HTTPRouteSpec) { h.Spec = spec },
			specOf:  func(r *gatewayv1.HTTPRoute) gatewayv1.HTTPRouteSpec { return r.Spec },
			parents: func(s gatewayv1.HTTPRouteSpec) []gatewayv1.ParentReference { return s.ParentRefs },
			status:  func(r *gatewayv1.HTTPRoute) *gatewayv1.RouteStatus { return &r.Status.RouteStatus },
			newList: func() client.ObjectList { return &gatewayv1.HTTPRouteList{} },
		}}
}

// NewTLSRoutes returns the TLSRoute syncer; imports is nil without
// sync.fromHost.gateways.
func NewTLSRoutes(tr translate.Translator, imports *Imports) *Routes[*gatewayv1.TLSRoute, gatewayv1.TLSRouteSpec] {
	return &Routes[*gatewayv1.TLSRoute, gatewayv1.TLSRouteSpec]{
		Kind: syncer.Kind[*gatewayv1.TLSRoute]{Plural: "tlsroutes", Kind: gatewayv1.SchemeGroupVersion.WithKind(KindTLSRoute),
			NewObject: func() *gatewayv1.TLSRoute { return &gatewayv1.TLSRoute{} }, Translator: tr}, imports: imports,
		r: routeKind[*gatewayv1.TLSRoute, gatewayv1.TLSRouteSpec]{
			hostSpec: HostTLSRouteSpec,
			newHost: func(m metav1.ObjectMeta, spec gatewayv1.TLSRouteSpec) *gatewayv1.TLSRoute {
				return &gatewayv1.TLSRoute{ObjectMeta: m, Spec: spec}
			},
			setSpec: func(h *gatewayv1.TLSRoute, spec gatewayv1.TLSRouteSpec) { h.Spec = spec },
			specOf:  func(r *gatewayv1.TLSRoute) gatewayv1.TLSRouteSpec { return r.Spec },
			parents: func(s gatewayv1.TLSRouteSpec) []gatewayv1.ParentReference { return s.ParentRefs },
			status:  func(r *gatewayv1.TLSRoute) *gatewayv1.RouteStatus { return &r.Status.RouteStatus },
			newList: func() client.ObjectList { return &gatewayv1.TLSRouteList{} },
		}}
}

func (r *Routes[T, S]) hostSpec(ctx context.Context, s *syncer.Context, v T) (S, error) {
	l := &cacheLookup{ctx: ctx, c: s.Virtual, imports: r.imports}
	spec, err := r.r.hostSpec(v, r.Translator, l)
	if l.err != nil {
		return spec, l.err
	}
	return spec, err
}

// ShouldSync implements syncer.Selector: a route its Host…Spec refuses is
// reported and not synced (its host copy goes).
func (r *Routes[T, S]) ShouldSync(ctx context.Context, s *syncer.Context, v T) bool {
	_, err := r.hostSpec(ctx, s, v)
	return decide(s, v, err)
}

// SyncToHost implements syncer.Resource.
func (r *Routes[T, S]) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[T]) (ctrl.Result, error) {
	spec, err := r.hostSpec(ctx, s, c.Virtual)
	if err != nil {
		return ctrl.Result{}, err
	}
	return c.CreateHost(ctx, s, r.r.newHost(syncer.HostMeta(s, c), spec))
}

// Sync implements syncer.Resource: the spec flows to the host; the status
// back, with the tenant's own parent references (VirtualRouteStatus).
func (r *Routes[T, S]) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[T]) (ctrl.Result, error) {
	spec, err := r.hostSpec(ctx, s, p.Virtual)
	if err != nil {
		return ctrl.Result{}, err
	}
	v, h := syncer.ApplyMeta(p)
	r.r.setSpec(h, spec)
	virtualParents := r.r.parents(r.r.specOf(p.Virtual))
	return ctrl.Result{}, p.Write(ctx, s, h, v, func(vs T) {
		*r.r.status(vs) = VirtualRouteStatus(*r.r.status(p.Host), r.r.parents(spec), virtualParents, s.Translator.HostNamespace)
	})
}

// Watch implements syncer.Watcher (routeWatch).
func (r *Routes[T, S]) Watch(b *builder.Builder, s *syncer.Context, _ cluster.Cluster) *builder.Builder {
	return routeWatch(b, s, r.r.newList, func(l client.ObjectList) map[types.NamespacedName][]types.NamespacedName {
		objs, err := meta.ExtractList(l)
		if err != nil {
			return nil
		}
		out := make(map[types.NamespacedName][]types.NamespacedName, len(objs))
		for _, o := range objs {
			if rt, ok := o.(T); ok {
				out[client.ObjectKeyFromObject(rt)] = parentKeys(rt.GetNamespace(), r.r.parents(r.r.specOf(rt)))
			}
		}
		return out
	})
}
