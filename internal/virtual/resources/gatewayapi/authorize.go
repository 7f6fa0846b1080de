package gatewayapi

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The kinds this package names in references and grants.
const (
	KindGateway          = "Gateway"
	KindHTTPRoute        = "HTTPRoute"
	KindTLSRoute         = "TLSRoute"
	KindBackendTLSPolicy = "BackendTLSPolicy"
	KindService          = "Service"
	KindSecret           = "Secret"
	KindConfigMap        = "ConfigMap"
)

// Group is the Gateway API's group, gateway.networking.k8s.io.
const Group = gatewayv1.GroupName

// Lookup is what the decisions of this package read from the virtual
// cluster; the syncers implement it on their caches, tests on maps.
type Lookup interface {
	// Gateway returns the virtual Gateway key (a tenant's own, or the
	// read-only copy of a host Gateway).
	Gateway(key types.NamespacedName) (*gatewayv1.Gateway, bool)
	// Imported tells whether virtual Gateway key is the copy of a host
	// Gateway (sync.fromHost.gateways), and which.
	Imported(key types.NamespacedName) (Imported, bool)
	// NamespaceLabels returns the labels of virtual namespace ns.
	NamespaceLabels(ns string) map[string]string
	// Grants returns the ReferenceGrants of virtual namespace ns.
	Grants(ns string) []gatewayv1.ReferenceGrant
}

// Imported is the host Gateway a virtual copy shows, and what the
// configuration allows the tenant's routes on it.
type Imported struct {
	// Host is the host Gateway's namespace and name.
	Host types.NamespacedName
	// AllowedHostnames, when not empty, are the only hostnames a route on
	// it may claim (sync.fromHost.gateways.allowedRoutes.overrides[].allowedHostnames):
	// DNS names, or "*.suffix" for any name under suffix.
	AllowedHostnames []string
}

// NotPermitted is the error of a reference the tenant may not make: the
// object is not synced, and an event with reason ReasonNotPermitted says
// why. Message never names a host object.
type NotPermitted struct{ Message string }

// Error implements error.
func (e *NotPermitted) Error() string { return e.Message }

// ReasonNotPermitted is the reason of the Warning event on a tenant
// object that is not synced because a reference of it is not permitted.
const ReasonNotPermitted = "RefNotPermitted"

func notPermitted(format string, args ...any) error {
	return &NotPermitted{Message: fmt.Sprintf(format, args...)}
}

// orDefault is *p, or def when p is nil or empty.
func orDefault[T ~string](p *T, def T) T {
	if p == nil || *p == "" {
		return def
	}
	return *p
}

// groupOr is *p, or def when p is nil: an API group field whose empty
// value is the core group, and whose absence is the field's default.
func groupOr(p *gatewayv1.Group, def gatewayv1.Group) gatewayv1.Group {
	if p == nil {
		return def
	}
	return *p
}

// checkParents returns a NotPermitted naming the first parent reference
// (by its path, e.g. spec.parentRefs[1]) of the route kind (KindHTTPRoute,
// KindTLSRoute) in namespace ns, claiming hostnames, that no listener of
// its Gateway admits, as the Gateway API defines admission
// (https://gateway-api.sigs.k8s.io/reference/spec/#allowedroutes): the
// Gateway exists; a listener matches sectionName and port when they are
// set; its allowedRoutes.kinds name the kind, or, without kinds, its
// protocol carries it (HTTP and HTTPS HTTPRoutes, TLS TLSRoutes); its
// allowedRoutes.namespaces.from admits ns (Same, the default: the
// Gateway's namespace; All; Selector: the namespace's labels). On a copy
// of a host Gateway with allowed hostnames, each of the route's hostnames
// must be one of them (a route without hostnames claims all, and is
// refused).
func checkParents(kind, ns string, parents []gatewayv1.ParentReference, hostnames []gatewayv1.Hostname, l Lookup) error {
	for i, p := range parents {
		path := fmt.Sprintf("spec.parentRefs[%d]", i)
		if g, k := groupOr(p.Group, Group), orDefault(p.Kind, KindGateway); g != Group || k != KindGateway {
			return notPermitted("%s: a parent of kind %s is not synced; only Gateways are", path, qualifiedKind(g, k))
		}
		key := types.NamespacedName{Namespace: string(orDefault(p.Namespace, gatewayv1.Namespace(ns))), Name: string(p.Name)}
		gw, ok := l.Gateway(key)
		if !ok {
			return notPermitted("%s: Gateway %s does not exist", path, key)
		}
		admitted := false
		var why string
		for _, lis := range gw.Spec.Listeners {
			if p.SectionName != nil && lis.Name != *p.SectionName || p.Port != nil && lis.Port != *p.Port {
				continue
			}
			if !listenerTakesKind(lis, kind) {
				why = fmt.Sprintf("listener %s does not take %ss", lis.Name, kind)
				continue
			}
			if ok, reason := admitsNamespace(lis, gw.Namespace, ns, l); !ok {
				why = fmt.Sprintf("listener %s %s", lis.Name, reason)
				continue
			}
			admitted = true
			break
		}
		if !admitted {
			if why == "" {
				why = "no listener matches its sectionName and port"
			}
			return notPermitted("%s: Gateway %s does not admit this %s: %s", path, key, kind, why)
		}
		if imp, ok := l.Imported(key); ok && len(imp.AllowedHostnames) > 0 {
			if len(hostnames) == 0 {
				return notPermitted("%s: Gateway %s takes routes for %s only; set spec.hostnames", path, key, strings.Join(imp.AllowedHostnames, ", "))
			}
			for _, h := range hostnames {
				if !HostnameAllowed(string(h), imp.AllowedHostnames) {
					return notPermitted("%s: Gateway %s takes routes for %s only, not %s", path, key, strings.Join(imp.AllowedHostnames, ", "), h)
				}
			}
		}
	}
	return nil
}

// listenerTakesKind tells whether listener lis takes routes of kind:
// those its allowedRoutes.kinds list, or, without a list, the kinds of
// its protocol.
func listenerTakesKind(lis gatewayv1.Listener, kind string) bool {
	if lis.AllowedRoutes != nil && len(lis.AllowedRoutes.Kinds) > 0 {
		return slices.ContainsFunc(lis.AllowedRoutes.Kinds, func(k gatewayv1.RouteGroupKind) bool {
			return string(k.Kind) == kind && groupOr(k.Group, Group) == Group
		})
	}
	switch lis.Protocol {
	case gatewayv1.HTTPProtocolType, gatewayv1.HTTPSProtocolType:
		return kind == KindHTTPRoute
	case gatewayv1.TLSProtocolType:
		return kind == KindTLSRoute
	}
	return false
}

// admitsNamespace tells whether listener lis of a Gateway in gwNS admits
// routes of namespace ns, and if not, why.
func admitsNamespace(lis gatewayv1.Listener, gwNS, ns string, l Lookup) (bool, string) {
	from := gatewayv1.NamespacesFromSame
	var sel *metav1.LabelSelector
	if ar := lis.AllowedRoutes; ar != nil && ar.Namespaces != nil {
		from = orDefault(ar.Namespaces.From, gatewayv1.NamespacesFromSame)
		sel = ar.Namespaces.Selector
	}
	switch from {
	case gatewayv1.NamespacesFromAll:
		return true, ""
	case gatewayv1.NamespacesFromSame:
		if ns == gwNS {
			return true, ""
		}
		return false, "takes routes of its own namespace only"
	case gatewayv1.NamespacesFromSelector:
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil || sel == nil {
			return false, "has no valid namespace selector"
		}
		if s.Matches(labels.Set(l.NamespaceLabels(ns))) {
			return true, ""
		}
		return false, "does not select namespace " + ns
	}
	return false, fmt.Sprintf("takes routes from %q namespaces, which clustersync does not know", from)
}

// HostnameAllowed tells whether hostname h (a DNS name or a "*." wildcard)
// is one of allowed: equal to one, or under a "*.suffix" entry (a
// wildcard h only under a wildcard entry whose suffix it ends with).
func HostnameAllowed(h string, allowed []string) bool {
	h = strings.ToLower(h)
	for _, a := range allowed {
		a = strings.ToLower(a)
		if h == a {
			return true
		}
		if suffix, ok := strings.CutPrefix(a, "*"); ok && strings.HasSuffix(h, suffix) && len(h) > len(suffix) {
			return true
		}
	}
	return false
}

// checkBackend returns a NotPermitted naming path when a route or policy
// of kind fromKind in namespace fromNS may not use backend ref: it must be
// a Service, and one in another namespace must be granted by a
// ReferenceGrant of that namespace.
func checkBackend(path, fromKind, fromNS string, ref gatewayv1.BackendObjectReference, l Lookup) error {
	if g, k := groupOr(ref.Group, ""), orDefault(ref.Kind, KindService); g != "" || k != KindService {
		return notPermitted("%s: a backend of kind %s is not synced; only Services are", path, qualifiedKind(g, k))
	}
	return checkGranted(path, fromKind, fromNS, "", KindService, ref.Namespace, string(ref.Name), l)
}

// checkGranted returns a NotPermitted naming path when an object of
// fromKind (group gateway.networking.k8s.io) in fromNS refers to object
// toGroup/toKind name in namespace toNS (nil: fromNS) and toNS is another
// namespace whose ReferenceGrants do not allow it
// (https://gateway-api.sigs.k8s.io/api-types/referencegrant/).
func checkGranted(path, fromKind, fromNS string, toGroup gatewayv1.Group, toKind gatewayv1.Kind, toNS *gatewayv1.Namespace, name string, l Lookup) error {
	target := string(orDefault(toNS, gatewayv1.Namespace(fromNS)))
	if target == fromNS {
		return nil
	}
	if Granted(l.Grants(target), fromKind, fromNS, toGroup, toKind, name) {
		return nil
	}
	return notPermitted("%s: %s %s/%s is in another namespace, and no ReferenceGrant there allows %ss of namespace %s to use it",
		path, qualifiedKind(toGroup, toKind), target, name, fromKind, fromNS)
}

// Granted tells whether one of grants (of the target's namespace) lets a
// fromKind (group gateway.networking.k8s.io) of namespace fromNS refer to
// the object toGroup/toKind named name.
func Granted(grants []gatewayv1.ReferenceGrant, fromKind, fromNS string, toGroup gatewayv1.Group, toKind gatewayv1.Kind, name string) bool {
	for _, g := range grants {
		from := slices.ContainsFunc(g.Spec.From, func(f gatewayv1.ReferenceGrantFrom) bool {
			return f.Group == Group && string(f.Kind) == fromKind && string(f.Namespace) == fromNS
		})
		to := slices.ContainsFunc(g.Spec.To, func(t gatewayv1.ReferenceGrantTo) bool {
			return t.Group == toGroup && t.Kind == toKind && (t.Name == nil || *t.Name == "" || string(*t.Name) == name)
		})
		if from && to {
			return true
		}
	}
	return false
}

func qualifiedKind[G, K ~string](group G, kind K) string {
	if group == "" {
		return string(kind)
	}
	return string(kind) + "." + string(group)
}
