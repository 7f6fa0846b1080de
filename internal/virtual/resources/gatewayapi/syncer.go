package gatewayapi

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Imports are the copies of host Gateways (sync.fromHost.gateways) the
// tenant's routes may name as parents: their mappings and settings.
type Imports struct {
	Mappings fromhost.Mappings
	Config   config.FromHostGateways
}

// cacheLookup is the Lookup of one sync, on the virtual cluster's cache. A
// read error other than not found is kept in err, and the sync that asked
// returns it rather than decide on what it could not read.
type cacheLookup struct {
	ctx     context.Context
	c       client.Reader
	imports *Imports
	err     error
}

func (l *cacheLookup) keep(err error) {
	if err != nil && !apierrors.IsNotFound(err) && l.err == nil {
		l.err = err
	}
}

// Gateway implements Lookup.
func (l *cacheLookup) Gateway(key types.NamespacedName) (*gatewayv1.Gateway, bool) {
	var g gatewayv1.Gateway
	if err := l.c.Get(l.ctx, key, &g); err != nil {
		l.keep(err)
		return nil, false
	}
	return &g, true
}

// Imported implements Lookup: a virtual Gateway labelled
// LabelImportedGateway by the copy controller whose key a mapping names.
func (l *cacheLookup) Imported(key types.NamespacedName) (Imported, bool) {
	if l.imports == nil {
		return Imported{}, false
	}
	g, ok := l.Gateway(key)
	if !ok || g.Labels[LabelImportedGateway] != "true" || g.Labels[fromhost.Label] != "true" {
		return Imported{}, false
	}
	h, ok := l.imports.Mappings.Host(key)
	if !ok {
		return Imported{}, false
	}
	return Imported{Host: h, AllowedHostnames: AllowedHostnames(l.imports.Config, h)}, true
}

// NamespaceLabels implements Lookup.
func (l *cacheLookup) NamespaceLabels(ns string) map[string]string {
	var n corev1.Namespace
	if err := l.c.Get(l.ctx, types.NamespacedName{Name: ns}, &n); err != nil {
		l.keep(err)
		return nil
	}
	return n.Labels
}

// Grants implements Lookup.
func (l *cacheLookup) Grants(ns string) []gatewayv1.ReferenceGrant {
	var list gatewayv1.ReferenceGrantList
	if err := l.c.List(l.ctx, &list, client.InNamespace(ns)); err != nil {
		l.keep(err)
		return nil
	}
	return list.Items
}

// decide turns the outcome of a check into ShouldSync's answer: a
// NotPermitted is reported on v (a Warning event ReasonNotPermitted, once
// per message) and not synced; a read error syncs, so that the sync
// itself returns the error and is retried.
func decide(s *syncer.Context, v client.Object, err error) bool {
	var np *NotPermitted
	if errors.As(err, &np) {
		s.ReportWarning(v, ReasonNotPermitted, "not synced to the host: %s", np.Message)
		return false
	}
	return true
}

// Gateways syncs the tenant's Gateways (not the copies of host Gateways).
type Gateways struct {
	syncer.Kind[*gatewayv1.Gateway]
	imports *Imports
}

// NewGateways returns the Gateway syncer; imports is nil without
// sync.fromHost.gateways.
func NewGateways(tr translate.Translator, imports *Imports) *Gateways {
	return &Gateways{Kind: syncer.Kind[*gatewayv1.Gateway]{Plural: "gateways", Kind: gatewayv1.SchemeGroupVersion.WithKind(KindGateway),
		NewObject: func() *gatewayv1.Gateway { return &gatewayv1.Gateway{} }, Translator: tr}, imports: imports}
}

func (r *Gateways) hostSpec(ctx context.Context, s *syncer.Context, v *gatewayv1.Gateway) (gatewayv1.GatewaySpec, error) {
	l := &cacheLookup{ctx: ctx, c: s.Virtual, imports: r.imports}
	classes := func(name string) bool {
		var c gatewayv1.GatewayClass
		err := s.Virtual.Get(ctx, types.NamespacedName{Name: name}, &c)
		l.keep(err)
		return err == nil
	}
	spec, _, err := HostGatewaySpec(v, r.Translator, classes, l)
	if l.err != nil {
		return spec, l.err
	}
	return spec, err
}

// ShouldSync implements syncer.Selector: a copy of a host Gateway stays in
// the virtual cluster, and a Gateway HostGatewaySpec refuses is reported.
func (r *Gateways) ShouldSync(ctx context.Context, s *syncer.Context, v *gatewayv1.Gateway) bool {
	if v.Labels[fromhost.Label] == "true" {
		return false
	}
	_, err := r.hostSpec(ctx, s, v)
	return decide(s, v, err)
}

// SyncToHost implements syncer.Resource.
func (r *Gateways) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*gatewayv1.Gateway]) (ctrl.Result, error) {
	spec, err := r.hostSpec(ctx, s, c.Virtual)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.SetReferences(ctx, ref(KindGateway, c.Virtual), GatewayReferences(c.Virtual))
	return c.CreateHost(ctx, s, &gatewayv1.Gateway{ObjectMeta: syncer.HostMeta(s, c), Spec: spec})
}

// Sync implements syncer.Resource: the spec flows to the host, the status
// back as the host has it.
func (r *Gateways) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*gatewayv1.Gateway]) (ctrl.Result, error) {
	spec, err := r.hostSpec(ctx, s, p.Virtual)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.SetReferences(ctx, ref(KindGateway, p.Virtual), GatewayReferences(p.Virtual))
	v, h := syncer.ApplyMeta(p)
	h.Spec = spec
	return ctrl.Result{}, p.Write(ctx, s, h, v, func(vs *gatewayv1.Gateway) { vs.Status = *p.Host.Status.DeepCopy() })
}

// Watch implements syncer.Watcher: a Gateway is looked at again when a
// GatewayClass comes or goes, or a ReferenceGrant changes.
func (r *Gateways) Watch(b *builder.Builder, s *syncer.Context, _ cluster.Cluster) *builder.Builder {
	all := func(ctx context.Context, _ client.Object) []reconcile.Request {
		var list gatewayv1.GatewayList
		if err := s.Virtual.List(ctx, &list); err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for _, g := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&g)})
		}
		return out
	}
	return b.Watches(&gatewayv1.GatewayClass{}, handler.EnqueueRequestsFromMapFunc(all)).
		Watches(&gatewayv1.ReferenceGrant{}, handler.EnqueueRequestsFromMapFunc(all))
}

func ref(kind string, o client.Object) mapping.Ref {
	return mapping.Ref{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()}
}

// GatewayReferences are the Secrets and ConfigMaps Gateway g uses, which
// selective sync copies: its certificates, client certificate, CA
// certificates and infrastructure parameters.
func GatewayReferences(g *gatewayv1.Gateway) []mapping.Ref {
	var out []mapping.Ref
	add := func(kind string, ns *gatewayv1.Namespace, name gatewayv1.ObjectName) {
		r := mapping.Ref{Kind: kind, Namespace: string(orDefault(ns, gatewayv1.Namespace(g.Namespace))), Name: string(name)}
		for _, o := range out {
			if o == r {
				return
			}
		}
		out = append(out, r)
	}
	secret := func(r *gatewayv1.SecretObjectReference) {
		if groupOr(r.Group, "") == "" && orDefault(r.Kind, KindSecret) == KindSecret {
			add(KindSecret, r.Namespace, r.Name)
		}
	}
	validation := func(v *gatewayv1.FrontendTLSValidation) {
		if v == nil {
			return
		}
		for _, c := range v.CACertificateRefs {
			if c.Group == "" && (c.Kind == KindConfigMap || c.Kind == KindSecret) {
				add(string(c.Kind), c.Namespace, c.Name)
			}
		}
	}
	for _, lis := range g.Spec.Listeners {
		if lis.TLS != nil {
			for i := range lis.TLS.CertificateRefs {
				secret(&lis.TLS.CertificateRefs[i])
			}
		}
	}
	if t := g.Spec.TLS; t != nil {
		if t.Backend != nil && t.Backend.ClientCertificateRef != nil {
			secret(t.Backend.ClientCertificateRef)
		}
		if t.Frontend != nil {
			validation(t.Frontend.Default.Validation)
			for _, p := range t.Frontend.PerPort {
				validation(p.TLS.Validation)
			}
		}
	}
	if inf := g.Spec.Infrastructure; inf != nil && inf.ParametersRef != nil && inf.ParametersRef.Group == "" && inf.ParametersRef.Kind == KindConfigMap {
		add(KindConfigMap, nil, gatewayv1.ObjectName(inf.ParametersRef.Name))
	}
	return out
}

// routeWatch makes a route syncer look at its routes again when what
// their admission reads changes: a virtual Gateway (the routes naming
// it), a ReferenceGrant (the routes of the namespaces it grants), a
// Namespace (its routes; its labels may match a listener's selector).
// parents lists the parent keys of each route of newList.
func routeWatch[L client.ObjectList](b *builder.Builder, s *syncer.Context, newList func() L, routes func(L) map[types.NamespacedName][]types.NamespacedName) *builder.Builder {
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

// HTTPRoutes syncs the tenant's HTTPRoutes.
type HTTPRoutes struct {
	syncer.Kind[*gatewayv1.HTTPRoute]
	imports *Imports
}

// NewHTTPRoutes returns the HTTPRoute syncer; imports is nil without
// sync.fromHost.gateways.
func NewHTTPRoutes(tr translate.Translator, imports *Imports) *HTTPRoutes {
	return &HTTPRoutes{Kind: syncer.Kind[*gatewayv1.HTTPRoute]{Plural: "httproutes", Kind: gatewayv1.SchemeGroupVersion.WithKind(KindHTTPRoute),
		NewObject: func() *gatewayv1.HTTPRoute { return &gatewayv1.HTTPRoute{} }, Translator: tr}, imports: imports}
}

func (r *HTTPRoutes) hostSpec(ctx context.Context, s *syncer.Context, v *gatewayv1.HTTPRoute) (gatewayv1.HTTPRouteSpec, error) {
	l := &cacheLookup{ctx: ctx, c: s.Virtual, imports: r.imports}
	spec, err := HostHTTPRouteSpec(v, r.Translator, l)
	if l.err != nil {
		return spec, l.err
	}
	return spec, err
}

// ShouldSync implements syncer.Selector: a route HostHTTPRouteSpec refuses
// is reported and not synced (its host copy goes).
func (r *HTTPRoutes) ShouldSync(ctx context.Context, s *syncer.Context, v *gatewayv1.HTTPRoute) bool {
	_, err := r.hostSpec(ctx, s, v)
	return decide(s, v, err)
}

// SyncToHost implements syncer.Resource.
func (r *HTTPRoutes) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*gatewayv1.HTTPRoute]) (ctrl.Result, error) {
	spec, err := r.hostSpec(ctx, s, c.Virtual)
	if err != nil {
		return ctrl.Result{}, err
	}
	return c.CreateHost(ctx, s, &gatewayv1.HTTPRoute{ObjectMeta: syncer.HostMeta(s, c), Spec: spec})
}

// Sync implements syncer.Resource: the spec flows to the host; the status
// back, with the tenant's own parent references (VirtualRouteStatus).
func (r *HTTPRoutes) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*gatewayv1.HTTPRoute]) (ctrl.Result, error) {
	spec, err := r.hostSpec(ctx, s, p.Virtual)
	if err != nil {
		return ctrl.Result{}, err
	}
	v, h := syncer.ApplyMeta(p)
	h.Spec = spec
	return ctrl.Result{}, p.Write(ctx, s, h, v, func(vs *gatewayv1.HTTPRoute) {
		vs.Status.RouteStatus = VirtualRouteStatus(p.Host.Status.RouteStatus, spec.ParentRefs, p.Virtual.Spec.ParentRefs, s.Translator.HostNamespace)
	})
}

// Watch implements syncer.Watcher (routeWatch).
func (r *HTTPRoutes) Watch(b *builder.Builder, s *syncer.Context, _ cluster.Cluster) *builder.Builder {
	return routeWatch(b, s, func() *gatewayv1.HTTPRouteList { return &gatewayv1.HTTPRouteList{} },
		func(l *gatewayv1.HTTPRouteList) map[types.NamespacedName][]types.NamespacedName {
			out := make(map[types.NamespacedName][]types.NamespacedName, len(l.Items))
			for _, rt := range l.Items {
				out[client.ObjectKeyFromObject(&rt)] = parentKeys(rt.Namespace, rt.Spec.ParentRefs)
			}
			return out
		})
}

// TLSRoutes syncs the tenant's TLSRoutes.
type TLSRoutes struct {
	syncer.Kind[*gatewayv1.TLSRoute]
	imports *Imports
}

// NewTLSRoutes returns the TLSRoute syncer; imports is nil without
// sync.fromHost.gateways.
func NewTLSRoutes(tr translate.Translator, imports *Imports) *TLSRoutes {
	return &TLSRoutes{Kind: syncer.Kind[*gatewayv1.TLSRoute]{Plural: "tlsroutes", Kind: gatewayv1.SchemeGroupVersion.WithKind(KindTLSRoute),
		NewObject: func() *gatewayv1.TLSRoute { return &gatewayv1.TLSRoute{} }, Translator: tr}, imports: imports}
}

func (r *TLSRoutes) hostSpec(ctx context.Context, s *syncer.Context, v *gatewayv1.TLSRoute) (gatewayv1.TLSRouteSpec, error) {
	l := &cacheLookup{ctx: ctx, c: s.Virtual, imports: r.imports}
	spec, err := HostTLSRouteSpec(v, r.Translator, l)
	if l.err != nil {
		return spec, l.err
	}
	return spec, err
}

// ShouldSync implements syncer.Selector, as HTTPRoutes' does.
func (r *TLSRoutes) ShouldSync(ctx context.Context, s *syncer.Context, v *gatewayv1.TLSRoute) bool {
	_, err := r.hostSpec(ctx, s, v)
	return decide(s, v, err)
}

// SyncToHost implements syncer.Resource.
func (r *TLSRoutes) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*gatewayv1.TLSRoute]) (ctrl.Result, error) {
	spec, err := r.hostSpec(ctx, s, c.Virtual)
	if err != nil {
		return ctrl.Result{}, err
	}
	return c.CreateHost(ctx, s, &gatewayv1.TLSRoute{ObjectMeta: syncer.HostMeta(s, c), Spec: spec})
}

// Sync implements syncer.Resource, as HTTPRoutes' does.
func (r *TLSRoutes) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*gatewayv1.TLSRoute]) (ctrl.Result, error) {
	spec, err := r.hostSpec(ctx, s, p.Virtual)
	if err != nil {
		return ctrl.Result{}, err
	}
	v, h := syncer.ApplyMeta(p)
	h.Spec = spec
	return ctrl.Result{}, p.Write(ctx, s, h, v, func(vs *gatewayv1.TLSRoute) {
		vs.Status.RouteStatus = VirtualRouteStatus(p.Host.Status.RouteStatus, spec.ParentRefs, p.Virtual.Spec.ParentRefs, s.Translator.HostNamespace)
	})
}

// Watch implements syncer.Watcher (routeWatch).
func (r *TLSRoutes) Watch(b *builder.Builder, s *syncer.Context, _ cluster.Cluster) *builder.Builder {
	return routeWatch(b, s, func() *gatewayv1.TLSRouteList { return &gatewayv1.TLSRouteList{} },
		func(l *gatewayv1.TLSRouteList) map[types.NamespacedName][]types.NamespacedName {
			out := make(map[types.NamespacedName][]types.NamespacedName, len(l.Items))
			for _, rt := range l.Items {
				out[client.ObjectKeyFromObject(&rt)] = parentKeys(rt.Namespace, rt.Spec.ParentRefs)
			}
			return out
		})
}

// BackendTLSPolicies syncs the tenant's BackendTLSPolicies.
type BackendTLSPolicies struct {
	syncer.Kind[*gatewayv1.BackendTLSPolicy]
	imports *Imports
}

// NewBackendTLSPolicies returns the BackendTLSPolicy syncer; imports is
// nil without sync.fromHost.gateways.
func NewBackendTLSPolicies(tr translate.Translator, imports *Imports) *BackendTLSPolicies {
	return &BackendTLSPolicies{Kind: syncer.Kind[*gatewayv1.BackendTLSPolicy]{Plural: "backendtlspolicies", Kind: gatewayv1.SchemeGroupVersion.WithKind(KindBackendTLSPolicy),
		NewObject: func() *gatewayv1.BackendTLSPolicy { return &gatewayv1.BackendTLSPolicy{} }, Translator: tr}, imports: imports}
}

// ShouldSync implements syncer.Selector: a policy HostBackendTLSPolicySpec
// refuses is reported and not synced.
func (r *BackendTLSPolicies) ShouldSync(_ context.Context, s *syncer.Context, v *gatewayv1.BackendTLSPolicy) bool {
	_, _, err := HostBackendTLSPolicySpec(v, r.Translator)
	return decide(s, v, err)
}

// SyncToHost implements syncer.Resource.
func (r *BackendTLSPolicies) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*gatewayv1.BackendTLSPolicy]) (ctrl.Result, error) {
	spec, refs, err := HostBackendTLSPolicySpec(c.Virtual, r.Translator)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.SetReferences(ctx, ref(KindBackendTLSPolicy, c.Virtual), refs)
	return c.CreateHost(ctx, s, &gatewayv1.BackendTLSPolicy{ObjectMeta: syncer.HostMeta(s, c), Spec: spec})
}

// Sync implements syncer.Resource: the spec flows to the host; the status
// back, each ancestor Gateway named as the tenant knows it.
func (r *BackendTLSPolicies) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*gatewayv1.BackendTLSPolicy]) (ctrl.Result, error) {
	spec, refs, err := HostBackendTLSPolicySpec(p.Virtual, r.Translator)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.SetReferences(ctx, ref(KindBackendTLSPolicy, p.Virtual), refs)
	toVirtual := r.ancestorToVirtual(ctx, s)
	v, h := syncer.ApplyMeta(p)
	h.Spec = spec
	return ctrl.Result{}, p.Write(ctx, s, h, v, func(vs *gatewayv1.BackendTLSPolicy) {
		vs.Status = VirtualPolicyStatus(p.Host.Status, toVirtual)
	})
}

// ancestorToVirtual maps a host Gateway reference to the tenant's name of
// it: this virtual cluster's copy of a tenant Gateway (its bookkeeping
// annotations), or a host Gateway shown by sync.fromHost.gateways.
func (r *BackendTLSPolicies) ancestorToVirtual(ctx context.Context, s *syncer.Context) func(gatewayv1.ParentReference) (gatewayv1.ParentReference, bool) {
	return func(a gatewayv1.ParentReference) (gatewayv1.ParentReference, bool) {
		if groupOr(a.Group, Group) != Group || orDefault(a.Kind, KindGateway) != KindGateway {
			return a, false
		}
		key := types.NamespacedName{Namespace: string(orDefault(a.Namespace, gatewayv1.Namespace(s.Translator.HostNamespace))), Name: string(a.Name)}
		out := *a.DeepCopy()
		if r.imports != nil {
			if v, ok := r.imports.Mappings.Virtual(key); ok {
				out.Namespace, out.Name = ptr.To(gatewayv1.Namespace(v.Namespace)), gatewayv1.ObjectName(v.Name)
				return out, true
			}
		}
		var h gatewayv1.Gateway
		if key.Namespace != s.Translator.HostNamespace || s.Host.Get(ctx, key, &h) != nil {
			return a, false
		}
		ann := h.GetAnnotations()
		name, ns := ann[translate.AnnotationObjectName], ann[translate.AnnotationObjectNamespace]
		if name == "" || !s.Translator.IsManaged(&h, KindGateway, r.HostName) {
			return a, false
		}
		out.Namespace, out.Name = ptr.To(gatewayv1.Namespace(ns)), gatewayv1.ObjectName(name)
		return out, true
	}
}
