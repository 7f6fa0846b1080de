package gatewayapi

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

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
	spec, err := HostGatewaySpec(v, r.Translator, classes, l)
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
