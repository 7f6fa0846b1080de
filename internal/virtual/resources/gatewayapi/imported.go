package gatewayapi

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
)

// vCluster's keys on the copies of host Gateways
// (pkg/controllers/resources/gateways/syncer.go at
// https://github.com/loft-sh/vcluster/tree/v0.36.1), written as vCluster
// writes them.
const (
	// LabelImportedGateway ("true") marks the virtual copy of a host Gateway.
	LabelImportedGateway = "vcluster.loft.sh/imported-gateway"
	// AnnotationSourceGateway is the host Gateway's namespace/name, with
	// sync.fromHost.gateways.metadata.exposeSourceGateway.
	AnnotationSourceGateway = "vcluster.loft.sh/source-gateway"
	// TLSOptionCertificateRefsSanitized marks a Terminate listener whose
	// certificateRefs the copy hides (the CRD needs references or options).
	TLSOptionCertificateRefsSanitized = "vcluster.loft.sh/certificate-refs-sanitized"
)

// ImportedGateway is the virtual copy's spec, status, labels and
// annotations of host Gateway h under sync.fromHost.gateways o: labelled
// LabelImportedGateway; spec.infrastructure and the listeners'
// certificateRefs hidden as o.Sanitize says; the listeners'
// allowedRoutes replaced by the configured virtual-namespace policy (an
// override for h, else the default; none: the host's as they are); the
// status as the host's, without addresses unless o.Status.ExposeAddresses.
func ImportedGateway(h *gatewayv1.Gateway, o config.FromHostGateways) (gatewayv1.GatewaySpec, gatewayv1.GatewayStatus, map[string]string, map[string]string) {
	labels := maps.Clone(h.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelImportedGateway] = "true"
	anns := maps.Clone(h.Annotations)
	delete(anns, AnnotationSourceGateway)
	if o.Metadata.ExposeSourceGateway {
		if anns == nil {
			anns = map[string]string{}
		}
		anns[AnnotationSourceGateway] = h.Namespace + "/" + h.Name
	}
	spec := *h.Spec.DeepCopy()
	if o.Sanitize.Infrastructure {
		spec.Infrastructure = nil
	}
	policy := namespacePolicy(o, types.NamespacedName{Namespace: h.Namespace, Name: h.Name})
	for i := range spec.Listeners {
		lis := &spec.Listeners[i]
		if tls := lis.TLS; o.Sanitize.CertificateRefs && tls != nil {
			tls.CertificateRefs = nil
			if (tls.Mode == nil || *tls.Mode == gatewayv1.TLSModeTerminate) && len(tls.Options) == 0 {
				tls.Options = map[gatewayv1.AnnotationKey]gatewayv1.AnnotationValue{TLSOptionCertificateRefsSanitized: "true"}
			}
		}
		if policy != nil {
			from := gatewayv1.FromNamespaces(policy.From)
			ar := &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &from}}
			if from == gatewayv1.NamespacesFromSelector {
				ar.Namespaces.Selector = policy.Selector.DeepCopy()
			}
			if lis.AllowedRoutes != nil {
				ar.Kinds = lis.AllowedRoutes.Kinds
			}
			lis.AllowedRoutes = ar
		}
	}
	status := *h.Status.DeepCopy()
	if !o.Status.ExposeAddresses {
		status.Addresses = nil
	}
	return spec, status, labels, anns
}

// namespacePolicy is the virtual-namespace policy of host Gateway host: its
// override's, else the default; nil when neither sets From.
func namespacePolicy(o config.FromHostGateways, host types.NamespacedName) *config.GatewayVirtualNamespacePolicy {
	for i := range o.AllowedRoutes.Overrides {
		ov := &o.AllowedRoutes.Overrides[i]
		if ov.HostNamespace == host.Namespace && ov.Name == host.Name && ov.VirtualNamespacePolicy.From != "" {
			return &ov.VirtualNamespacePolicy
		}
	}
	if d := o.AllowedRoutes.DefaultVirtualNamespacePolicy; d != nil && d.From != "" {
		return d
	}
	return nil
}

// AllowedHostnames are the hostnames the overrides of o allow on host
// Gateway host (nil: any).
func AllowedHostnames(o config.FromHostGateways, host types.NamespacedName) []string {
	for _, ov := range o.AllowedRoutes.Overrides {
		if ov.HostNamespace == host.Namespace && ov.Name == host.Name && len(ov.AllowedHostnames) > 0 {
			return ov.AllowedHostnames
		}
	}
	return nil
}

// ImportTransform is the fromhost.Options.Transform of the copies of host
// Gateways: ImportedGateway on the unstructured objects.
func ImportTransform(o config.FromHostGateways) func(host, copy *unstructured.Unstructured) error {
	return func(host, copy *unstructured.Unstructured) error {
		var h gatewayv1.Gateway
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(host.Object, &h); err != nil {
			return err
		}
		spec, status, labels, anns := ImportedGateway(&h, o)
		out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&gatewayv1.Gateway{Spec: spec, Status: status})
		if err != nil {
			return err
		}
		copy.Object["spec"], copy.Object["status"] = out["spec"], out["status"]
		labels[fromhost.Label] = "true"
		copy.SetLabels(labels)
		copy.SetAnnotations(anns)
		return nil
	}
}

// ClassTransform is the fromhost.Options.Transform of the copies of host
// GatewayClasses: spec.parametersRef, which names a host object, is
// hidden.
func ClassTransform(_, copy *unstructured.Unstructured) error {
	unstructured.RemoveNestedField(copy.Object, "spec", "parametersRef")
	return nil
}

// ValidateFromHostGateways returns every problem of sync.fromHost.gateways
// o (nil when off or valid), each naming its key, as vCluster checks them
// (pkg/config/validation.go, ValidateFromHostGateways, v0.36.1): the
// mappings parse (fromhost.ParseMappings) with an explicit host namespace
// on each key ("" and "/name" are not taken), no target in kube-system,
// kube-public or kube-node-lease, no exact source in a namespace a "*"
// entry maps; each policy's from is All, Same or Selector (Selector with a
// non-empty selector); each override names a host Gateway a mapping covers,
// and its allowedHostnames are DNS names or "*." wildcards.
func ValidateFromHostGateways(o config.FromHostGateways) error {
	if !o.Enabled {
		return nil
	}
	const key = "sync.fromHost.gateways"
	var errs []error
	m, err := fromhost.ParseMappings(o.Mappings.ByName, "host-namespace")
	if err != nil {
		errs = append(errs, fmt.Errorf("%s.%w", key, err))
	}
	for _, k := range slices.Sorted(maps.Keys(o.Mappings.ByName)) {
		p := fmt.Sprintf("%s.mappings.byName[%q]", key, k)
		if k == "" || strings.HasPrefix(k, "/") {
			errs = append(errs, fmt.Errorf("%s: name the host namespace (namespace/name or namespace/*)", p))
			continue
		}
		vns, _, _ := strings.Cut(o.Mappings.ByName[k], "/")
		if vns == metav1.NamespaceSystem || vns == metav1.NamespacePublic || vns == "kube-node-lease" {
			errs = append(errs, fmt.Errorf("%s: virtual namespace %s is reserved", p, vns))
		}
		hns, name, _ := strings.Cut(k, "/")
		if name != "*" {
			if _, whole := o.Mappings.ByName[hns+"/*"]; whole {
				errs = append(errs, fmt.Errorf("%s: host namespace %s is mapped whole by %q too", p, hns, hns+"/*"))
			}
		}
	}
	if err := validatePolicy(key+".allowedRoutes.defaultVirtualNamespacePolicy", o.AllowedRoutes.DefaultVirtualNamespacePolicy); err != nil {
		errs = append(errs, err)
	}
	for i := range o.AllowedRoutes.Overrides {
		ov := &o.AllowedRoutes.Overrides[i]
		p := fmt.Sprintf("%s.allowedRoutes.overrides[%d]", key, i)
		if err := validatePolicy(p+".virtualNamespacePolicy", &ov.VirtualNamespacePolicy); err != nil {
			errs = append(errs, err)
		}
		if _, covered := m.Virtual(types.NamespacedName{Namespace: ov.HostNamespace, Name: ov.Name}); err == nil && !covered {
			errs = append(errs, fmt.Errorf("%s: host Gateway %s/%s is not covered by %s.mappings.byName", p, ov.HostNamespace, ov.Name, key))
		}
		for j, h := range ov.AllowedHostnames {
			name := strings.TrimPrefix(h, "*.")
			if len(validation.IsDNS1123Subdomain(name)) > 0 || strings.Contains(name, "*") {
				errs = append(errs, fmt.Errorf("%s.allowedHostnames[%d]: %q is not a DNS name or a *. wildcard", p, j, h))
			}
		}
	}
	return errors.Join(errs...)
}

// validatePolicy checks one virtual-namespace policy at path (nil or
// without From: none).
func validatePolicy(path string, p *config.GatewayVirtualNamespacePolicy) error {
	if p == nil || p.From == "" {
		return nil
	}
	switch p.From {
	case string(gatewayv1.NamespacesFromAll), string(gatewayv1.NamespacesFromSame):
		return nil
	case string(gatewayv1.NamespacesFromSelector):
		if p.Selector == nil || len(p.Selector.MatchLabels)+len(p.Selector.MatchExpressions) == 0 {
			return fmt.Errorf("%s.selector: required with from: Selector", path)
		}
		if _, err := metav1.LabelSelectorAsSelector(p.Selector); err != nil {
			return fmt.Errorf("%s.selector: %w", path, err)
		}
		return nil
	}
	return fmt.Errorf("%s.from: must be All, Same or Selector, got %q", path, p.From)
}
