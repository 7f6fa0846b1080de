package gatewayapi

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// ClassLookup tells whether the tenant sees GatewayClass name: a host
// class shown read-only, or one of its own.
type ClassLookup func(name string) bool

// HostGatewaySpec is the host spec of tenant Gateway v (the Secrets and
// ConfigMaps it names are GatewayReferences), or a NotPermitted:
// a class the tenant does not see, allowedListeners (ListenerSets are not
// synced), a certificate or CA reference of a kind other than Secret or
// ConfigMap or to another namespace without a ReferenceGrant there, an
// infrastructure.parametersRef other than a ConfigMap. On the host:
// listeners admit routes of their own namespace only (allowedRoutes
// namespaces All and Selector become Same: every synced route is in the one
// host namespace, and was admitted by the tenant's rules in the virtual
// cluster before it was synced), and references name the host copies.
func HostGatewaySpec(v *gatewayv1.Gateway, tr translate.Translator, classes ClassLookup, l Lookup) (gatewayv1.GatewaySpec, error) {
	spec := *v.Spec.DeepCopy()
	if !classes(string(spec.GatewayClassName)) {
		return spec, notPermitted("spec.gatewayClassName: GatewayClass %s does not exist in this cluster", spec.GatewayClassName)
	}
	if spec.AllowedListeners != nil {
		return spec, notPermitted("spec.allowedListeners: ListenerSets are not synced to the host; remove allowedListeners")
	}
	r := refTranslator{tr: tr, l: l, fromKind: KindGateway, ns: v.Namespace}
	for i := range spec.Listeners {
		lis := &spec.Listeners[i]
		if ar := lis.AllowedRoutes; ar != nil && ar.Namespaces != nil {
			if from := orDefault(ar.Namespaces.From, gatewayv1.NamespacesFromSame); from == gatewayv1.NamespacesFromAll || from == gatewayv1.NamespacesFromSelector {
				ar.Namespaces.From = ptr.To(gatewayv1.NamespacesFromSame)
				ar.Namespaces.Selector = nil
			}
		}
		if lis.TLS != nil {
			for j := range lis.TLS.CertificateRefs {
				if err := r.secret(fmt.Sprintf("spec.listeners[%d].tls.certificateRefs[%d]", i, j), &lis.TLS.CertificateRefs[j]); err != nil {
					return spec, err
				}
			}
		}
	}
	if t := spec.TLS; t != nil {
		if t.Backend != nil && t.Backend.ClientCertificateRef != nil {
			if err := r.secret("spec.tls.backend.clientCertificateRef", t.Backend.ClientCertificateRef); err != nil {
				return spec, err
			}
		}
		if f := t.Frontend; f != nil {
			if err := r.validation("spec.tls.frontend.default.validation", f.Default.Validation); err != nil {
				return spec, err
			}
			for i := range f.PerPort {
				if err := r.validation(fmt.Sprintf("spec.tls.frontend.perPort[%d].tls.validation", i), f.PerPort[i].TLS.Validation); err != nil {
					return spec, err
				}
			}
		}
	}
	if inf := spec.Infrastructure; inf != nil && inf.ParametersRef != nil {
		p := inf.ParametersRef
		if p.Group != "" || p.Kind != KindConfigMap {
			return spec, notPermitted("spec.infrastructure.parametersRef: parameters of kind %s are not synced; only ConfigMaps are", qualifiedKind(p.Group, p.Kind))
		}
		p.Name = tr.HostName(p.Name, v.Namespace)
	}
	return spec, nil
}

// refTranslator checks and translates the references of one tenant object
// of kind fromKind in namespace ns.
type refTranslator struct {
	tr       translate.Translator
	l        Lookup
	fromKind string
	ns       string
}

// secret checks and translates a Secret reference, at path.
func (r *refTranslator) secret(path string, ref *gatewayv1.SecretObjectReference) error {
	if g, k := groupOr(ref.Group, ""), orDefault(ref.Kind, KindSecret); g != "" || k != KindSecret {
		return notPermitted("%s: a reference to a %s is not synced; only Secrets are", path, qualifiedKind(g, k))
	}
	if err := checkGranted(path, r.fromKind, r.ns, "", KindSecret, ref.Namespace, string(ref.Name), r.l); err != nil {
		return err
	}
	ns := string(orDefault(ref.Namespace, gatewayv1.Namespace(r.ns)))
	ref.Name, ref.Namespace = gatewayv1.ObjectName(r.tr.HostName(string(ref.Name), ns)), nil
	return nil
}

// validation checks and translates the CA references of a frontend TLS
// validation, at path (nil: none).
func (r *refTranslator) validation(path string, v *gatewayv1.FrontendTLSValidation) error {
	if v == nil {
		return nil
	}
	for i := range v.CACertificateRefs {
		ref := &v.CACertificateRefs[i]
		p := fmt.Sprintf("%s.caCertificateRefs[%d]", path, i)
		if ref.Group != "" || ref.Kind != KindConfigMap && ref.Kind != KindSecret {
			return notPermitted("%s: a reference to a %s is not synced; only ConfigMaps and Secrets are", p, qualifiedKind(ref.Group, ref.Kind))
		}
		if err := checkGranted(p, r.fromKind, r.ns, "", ref.Kind, ref.Namespace, string(ref.Name), r.l); err != nil {
			return err
		}
		ns := string(orDefault(ref.Namespace, gatewayv1.Namespace(r.ns)))
		ref.Name, ref.Namespace = gatewayv1.ObjectName(r.tr.HostName(string(ref.Name), ns)), nil
	}
	return nil
}

// backend checks and translates a route's backend reference, at path.
func (r *refTranslator) backend(path string, ref *gatewayv1.BackendObjectReference) error {
	if err := checkBackend(path, r.fromKind, r.ns, *ref, r.l); err != nil {
		return err
	}
	ns := string(orDefault(ref.Namespace, gatewayv1.Namespace(r.ns)))
	ref.Name, ref.Namespace = gatewayv1.ObjectName(r.tr.HostName(string(ref.Name), ns)), nil
	return nil
}

// parents checks the parent references of a route (checkParents) and
// translates them: a tenant Gateway's to its host copy, a copy of a host
// Gateway's to that host Gateway.
func (r *refTranslator) parents(parents []gatewayv1.ParentReference, hostnames []gatewayv1.Hostname) error {
	if err := checkParents(r.fromKind, r.ns, parents, hostnames, r.l); err != nil {
		return err
	}
	for i := range parents {
		p := &parents[i]
		key := types.NamespacedName{Namespace: string(orDefault(p.Namespace, gatewayv1.Namespace(r.ns))), Name: string(p.Name)}
		if imp, ok := r.l.Imported(key); ok {
			p.Name, p.Namespace = gatewayv1.ObjectName(imp.Host.Name), ptr.To(gatewayv1.Namespace(imp.Host.Namespace))
			continue
		}
		p.Name, p.Namespace = gatewayv1.ObjectName(r.tr.HostName(key.Name, key.Namespace)), nil
	}
	return nil
}

// filters checks and translates the backends of a route's filters (request
// mirrors, external authorization); an extensionRef filter, whose object
// no syncer copies, is refused.
func (r *refTranslator) filters(path string, filters []gatewayv1.HTTPRouteFilter) error {
	for i := range filters {
		f := &filters[i]
		p := fmt.Sprintf("%s.filters[%d]", path, i)
		switch {
		case f.ExtensionRef != nil:
			return notPermitted("%s.extensionRef: extension filters are not synced to the host", p)
		case f.RequestMirror != nil:
			if err := r.backend(p+".requestMirror.backendRef", &f.RequestMirror.BackendRef); err != nil {
				return err
			}
		case f.ExternalAuth != nil:
			if err := r.backend(p+".externalAuth.backendRef", &f.ExternalAuth.BackendRef); err != nil {
				return err
			}
		}
	}
	return nil
}

// HostHTTPRouteSpec is the host spec of tenant HTTPRoute v, or a
// NotPermitted when a parent does not admit it (checkParents), a backend
// is not a Service or is in another namespace without a ReferenceGrant
// there, or a filter is an extensionRef. Parents, backends and filter
// backends name the host objects.
func HostHTTPRouteSpec(v *gatewayv1.HTTPRoute, tr translate.Translator, l Lookup) (gatewayv1.HTTPRouteSpec, error) {
	spec := *v.Spec.DeepCopy()
	r := refTranslator{tr: tr, l: l, fromKind: KindHTTPRoute, ns: v.Namespace}
	if err := r.parents(spec.ParentRefs, spec.Hostnames); err != nil {
		return spec, err
	}
	for i := range spec.Rules {
		rule := &spec.Rules[i]
		path := fmt.Sprintf("spec.rules[%d]", i)
		if err := r.filters(path, rule.Filters); err != nil {
			return spec, err
		}
		for j := range rule.BackendRefs {
			b := &rule.BackendRefs[j]
			bp := fmt.Sprintf("%s.backendRefs[%d]", path, j)
			if err := r.backend(bp, &b.BackendObjectReference); err != nil {
				return spec, err
			}
			if err := r.filters(bp, b.Filters); err != nil {
				return spec, err
			}
		}
	}
	return spec, nil
}

// HostTLSRouteSpec is the host spec of tenant TLSRoute v, checked and
// translated as HostHTTPRouteSpec does.
func HostTLSRouteSpec(v *gatewayv1.TLSRoute, tr translate.Translator, l Lookup) (gatewayv1.TLSRouteSpec, error) {
	spec := *v.Spec.DeepCopy()
	r := refTranslator{tr: tr, l: l, fromKind: KindTLSRoute, ns: v.Namespace}
	if err := r.parents(spec.ParentRefs, spec.Hostnames); err != nil {
		return spec, err
	}
	for i := range spec.Rules {
		for j := range spec.Rules[i].BackendRefs {
			if err := r.backend(fmt.Sprintf("spec.rules[%d].backendRefs[%d]", i, j), &spec.Rules[i].BackendRefs[j].BackendObjectReference); err != nil {
				return spec, err
			}
		}
	}
	return spec, nil
}

// HostBackendTLSPolicySpec is the host spec of tenant BackendTLSPolicy v,
// or a NotPermitted when a target is not a Service or a CA reference not a
// ConfigMap or Secret; targets and CA references (BackendTLSPolicyReferences)
// name the host copies (all are local references).
func HostBackendTLSPolicySpec(v *gatewayv1.BackendTLSPolicy, tr translate.Translator) (gatewayv1.BackendTLSPolicySpec, error) {
	spec := *v.Spec.DeepCopy()
	for i := range spec.TargetRefs {
		t := &spec.TargetRefs[i]
		if t.Group != "" || t.Kind != KindService {
			return spec, notPermitted("spec.targetRefs[%d]: a target of kind %s is not synced; only Services are", i, qualifiedKind(t.Group, t.Kind))
		}
		t.Name = gatewayv1.ObjectName(tr.HostName(string(t.Name), v.Namespace))
	}
	for i := range spec.Validation.CACertificateRefs {
		c := &spec.Validation.CACertificateRefs[i]
		if c.Group != "" || c.Kind != KindConfigMap && c.Kind != KindSecret {
			return spec, notPermitted("spec.validation.caCertificateRefs[%d]: a reference to a %s is not synced; only ConfigMaps and Secrets are", i, qualifiedKind(c.Group, c.Kind))
		}
		c.Name = gatewayv1.ObjectName(tr.HostName(string(c.Name), v.Namespace))
	}
	return spec, nil
}

// BackendTLSPolicyReferences are the ConfigMaps and Secrets BackendTLSPolicy
// p uses, which selective sync copies: its CA certificates.
func BackendTLSPolicyReferences(p *gatewayv1.BackendTLSPolicy) []mapping.Ref {
	var out []mapping.Ref
	for _, c := range p.Spec.Validation.CACertificateRefs {
		if c.Group == "" && (c.Kind == KindConfigMap || c.Kind == KindSecret) {
			out = append(out, mapping.Ref{Kind: string(c.Kind), Namespace: p.Namespace, Name: string(c.Name)})
		}
	}
	return out
}

// VirtualRouteStatus is the status of a tenant route from its host copy's
// status: each status.parents entry whose parentRef is one of hostParents
// (the host copy's spec.parentRefs, defaults filled in against host
// namespace hostNS) gets the tenant's own parentRef of the same position
// in virtualParents; entries for other parents (not the tenant's) are
// left out.
func VirtualRouteStatus(host gatewayv1.RouteStatus, hostParents, virtualParents []gatewayv1.ParentReference, hostNS string) gatewayv1.RouteStatus {
	out := gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{}}
	for _, p := range host.Parents {
		for i, hp := range hostParents {
			if i < len(virtualParents) && sameParent(p.ParentRef, hp, hostNS) {
				q := *p.DeepCopy()
				q.ParentRef = *virtualParents[i].DeepCopy()
				out.Parents = append(out.Parents, q)
				break
			}
		}
	}
	return out
}

// sameParent tells whether parent references a and b, of objects in
// namespace ns, name the same parent (group, kind and namespace defaulted).
func sameParent(a, b gatewayv1.ParentReference, ns string) bool {
	key := func(p gatewayv1.ParentReference) [4]string {
		return [4]string{string(groupOr(p.Group, Group)), string(orDefault(p.Kind, KindGateway)), string(orDefault(p.Namespace, gatewayv1.Namespace(ns))), string(p.Name)}
	}
	return key(a) == key(b) && ptr.Deref(a.SectionName, "") == ptr.Deref(b.SectionName, "") && ptr.Deref(a.Port, 0) == ptr.Deref(b.Port, 0)
}

// VirtualPolicyStatus is the status of a tenant BackendTLSPolicy from its
// host copy's: each ancestor that toVirtual maps to a virtual Gateway gets
// that reference; the others are left out.
func VirtualPolicyStatus(host gatewayv1.PolicyStatus, toVirtual func(gatewayv1.ParentReference) (gatewayv1.ParentReference, bool)) gatewayv1.PolicyStatus {
	out := gatewayv1.PolicyStatus{Ancestors: []gatewayv1.PolicyAncestorStatus{}}
	for _, a := range host.Ancestors {
		if v, ok := toVirtual(a.AncestorRef); ok {
			q := *a.DeepCopy()
			q.AncestorRef = v
			out.Ancestors = append(out.Ancestors, q)
		}
	}
	return out
}
