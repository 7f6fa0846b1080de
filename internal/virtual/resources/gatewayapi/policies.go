package gatewayapi

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

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
	_, err := HostBackendTLSPolicySpec(v, r.Translator)
	return decide(s, v, err)
}

// SyncToHost implements syncer.Resource.
func (r *BackendTLSPolicies) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*gatewayv1.BackendTLSPolicy]) (ctrl.Result, error) {
	spec, err := HostBackendTLSPolicySpec(c.Virtual, r.Translator)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.SetReferences(ctx, ref(KindBackendTLSPolicy, c.Virtual), BackendTLSPolicyReferences(c.Virtual))
	return c.CreateHost(ctx, s, &gatewayv1.BackendTLSPolicy{ObjectMeta: syncer.HostMeta(s, c), Spec: spec})
}

// Sync implements syncer.Resource: the spec flows to the host; the status
// back, each ancestor Gateway named as the tenant knows it.
func (r *BackendTLSPolicies) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*gatewayv1.BackendTLSPolicy]) (ctrl.Result, error) {
	spec, err := HostBackendTLSPolicySpec(p.Virtual, r.Translator)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.SetReferences(ctx, ref(KindBackendTLSPolicy, p.Virtual), BackendTLSPolicyReferences(p.Virtual))
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
