package gatewayapi

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

var tr = translate.Translator{VCluster: "vc", HostNamespace: "host-ns"}

// fakeLookup is a Lookup on maps.
type fakeLookup struct {
	gateways   map[types.NamespacedName]*gatewayv1.Gateway
	imported   map[types.NamespacedName]Imported
	namespaces map[string]map[string]string
	grants     map[string][]gatewayv1.ReferenceGrant
}

func (f fakeLookup) Gateway(k types.NamespacedName) (*gatewayv1.Gateway, bool) {
	g, ok := f.gateways[k]
	return g, ok
}
func (f fakeLookup) Imported(k types.NamespacedName) (Imported, bool) {
	i, ok := f.imported[k]
	return i, ok
}
func (f fakeLookup) NamespaceLabels(ns string) map[string]string { return f.namespaces[ns] }
func (f fakeLookup) Grants(ns string) []gatewayv1.ReferenceGrant { return f.grants[ns] }

func gateway(ns, name string, listeners ...gatewayv1.Listener) *gatewayv1.Gateway {
	return &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "shared", Listeners: listeners}}
}

func listener(name string, port gatewayv1.PortNumber, proto gatewayv1.ProtocolType, from gatewayv1.FromNamespaces, sel *metav1.LabelSelector) gatewayv1.Listener {
	return gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: port, Protocol: proto,
		AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &from, Selector: sel}}}
}

func grant(ns, fromKind, fromNS, toKind string) gatewayv1.ReferenceGrant {
	return gatewayv1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g"}, Spec: gatewayv1.ReferenceGrantSpec{
		From: []gatewayv1.ReferenceGrantFrom{{Group: Group, Kind: gatewayv1.Kind(fromKind), Namespace: gatewayv1.Namespace(fromNS)}},
		To:   []gatewayv1.ReferenceGrantTo{{Group: "", Kind: gatewayv1.Kind(toKind)}}}}
}

func parent(ns, name string) gatewayv1.ParentReference {
	p := gatewayv1.ParentReference{Name: gatewayv1.ObjectName(name)}
	if ns != "" {
		p.Namespace = ptr.To(gatewayv1.Namespace(ns))
	}
	return p
}

func backend(ns, name string) gatewayv1.HTTPBackendRef {
	b := gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: ptr.To(gatewayv1.PortNumber(80))}}}
	if ns != "" {
		b.Namespace = ptr.To(gatewayv1.Namespace(ns))
	}
	return b
}

func route(ns string, parents []gatewayv1.ParentReference, hostnames []gatewayv1.Hostname, backends ...gatewayv1.HTTPBackendRef) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "r"}, Spec: gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parents}, Hostnames: hostnames,
		Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: backends}}}}
}

func world() fakeLookup {
	return fakeLookup{
		gateways: map[types.NamespacedName]*gatewayv1.Gateway{
			{Namespace: "infra", Name: "same"}:   gateway("infra", "same", listener("http", 80, gatewayv1.HTTPProtocolType, gatewayv1.NamespacesFromSame, nil)),
			{Namespace: "infra", Name: "all"}:    gateway("infra", "all", listener("http", 80, gatewayv1.HTTPProtocolType, gatewayv1.NamespacesFromAll, nil), listener("tls", 443, gatewayv1.TLSProtocolType, gatewayv1.NamespacesFromAll, nil)),
			{Namespace: "infra", Name: "picky"}:  gateway("infra", "picky", listener("http", 80, gatewayv1.HTTPProtocolType, gatewayv1.NamespacesFromSelector, &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}})),
			{Namespace: "shared", Name: "edge"}:  gateway("shared", "edge", listener("http", 80, gatewayv1.HTTPProtocolType, gatewayv1.NamespacesFromAll, nil)),
			{Namespace: "infra", Name: "nohttp"}: gateway("infra", "nohttp", listener("tls", 443, gatewayv1.TLSProtocolType, gatewayv1.NamespacesFromAll, nil)),
		},
		imported:   map[types.NamespacedName]Imported{{Namespace: "shared", Name: "edge"}: {Host: types.NamespacedName{Namespace: "ingress", Name: "public"}, AllowedHostnames: []string{"*.example.com"}}},
		namespaces: map[string]map[string]string{"app": {"team": "a"}, "other": {"team": "b"}},
		grants:     map[string][]gatewayv1.ReferenceGrant{"db": {grant("db", KindHTTPRoute, "app", KindService)}},
	}
}

func TestHostHTTPRouteSpec(t *testing.T) {
	hostname := []gatewayv1.Hostname{"shop.example.com"}
	tests := []struct {
		name        string
		route       *gatewayv1.HTTPRoute
		wantErr     string // substring of the NotPermitted message; "" when permitted
		wantParents []gatewayv1.ParentReference
		wantBackend []gatewayv1.HTTPBackendRef
	}{
		{name: "same namespace: gateway and backend translated", route: route("infra", []gatewayv1.ParentReference{parent("", "same")}, nil, backend("", "web")),
			wantParents: []gatewayv1.ParentReference{parent("", "same-x-infra-x-vc")}, wantBackend: []gatewayv1.HTTPBackendRef{backend("", "web-x-infra-x-vc")}},
		{name: "Same refuses another namespace", route: route("app", []gatewayv1.ParentReference{parent("infra", "same")}, nil, backend("", "web")),
			wantErr: "spec.parentRefs[0]: Gateway infra/same does not admit this HTTPRoute: listener http takes routes of its own namespace only"},
		{name: "All admits", route: route("app", []gatewayv1.ParentReference{parent("infra", "all")}, nil, backend("", "web")),
			wantParents: []gatewayv1.ParentReference{parent("", "all-x-infra-x-vc")}, wantBackend: []gatewayv1.HTTPBackendRef{backend("", "web-x-app-x-vc")}},
		{name: "Selector admits a labelled namespace", route: route("app", []gatewayv1.ParentReference{parent("infra", "picky")}, nil, backend("", "web")),
			wantParents: []gatewayv1.ParentReference{parent("", "picky-x-infra-x-vc")}, wantBackend: []gatewayv1.HTTPBackendRef{backend("", "web-x-app-x-vc")}},
		{name: "Selector refuses another", route: route("other", []gatewayv1.ParentReference{parent("infra", "picky")}, nil, backend("", "web")),
			wantErr: "does not select namespace other"},
		{name: "missing gateway", route: route("app", []gatewayv1.ParentReference{parent("infra", "gone")}, nil),
			wantErr: "spec.parentRefs[0]: Gateway infra/gone does not exist"},
		{name: "protocol without HTTP", route: route("app", []gatewayv1.ParentReference{parent("infra", "nohttp")}, nil),
			wantErr: "listener tls does not take HTTPRoutes"},
		{name: "sectionName picks the listener", route: route("app", []gatewayv1.ParentReference{func() gatewayv1.ParentReference {
			p := parent("infra", "all")
			p.SectionName = ptr.To(gatewayv1.SectionName("tls"))
			return p
		}()}, nil), wantErr: "listener tls does not take HTTPRoutes"},
		{name: "a Service parent (mesh) is refused", route: route("app", []gatewayv1.ParentReference{{Kind: ptr.To(gatewayv1.Kind("Service")), Group: ptr.To(gatewayv1.Group("")), Name: "web"}}, nil),
			wantErr: "spec.parentRefs[0]: a parent of kind Service is not synced"},
		{name: "cross-namespace backend with a grant", route: route("app", []gatewayv1.ParentReference{parent("infra", "all")}, nil, backend("db", "pg")),
			wantParents: []gatewayv1.ParentReference{parent("", "all-x-infra-x-vc")}, wantBackend: []gatewayv1.HTTPBackendRef{backend("", "pg-x-db-x-vc")}},
		{name: "cross-namespace backend without a grant", route: route("other", []gatewayv1.ParentReference{parent("infra", "all")}, nil, backend("db", "pg")),
			wantErr: "spec.rules[0].backendRefs[0]: Service db/pg is in another namespace, and no ReferenceGrant there allows HTTPRoutes of namespace other to use it"},
		{name: "imported gateway: host name, allowed hostname", route: route("shared", []gatewayv1.ParentReference{parent("", "edge")}, hostname, backend("", "web")),
			wantParents: []gatewayv1.ParentReference{parent("ingress", "public")}, wantBackend: []gatewayv1.HTTPBackendRef{backend("", "web-x-shared-x-vc")}},
		{name: "imported gateway: hostname not allowed", route: route("shared", []gatewayv1.ParentReference{parent("", "edge")}, []gatewayv1.Hostname{"evil.test"}),
			wantErr: "takes routes for *.example.com only, not evil.test"},
		{name: "imported gateway: no hostname", route: route("shared", []gatewayv1.ParentReference{parent("", "edge")}, nil),
			wantErr: "set spec.hostnames"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := HostHTTPRouteSpec(tt.route, tr, world())
			if tt.wantErr != "" {
				var np *NotPermitted
				if !errors.As(err, &np) || !strings.Contains(np.Message, tt.wantErr) {
					t.Fatalf("err = %v, want NotPermitted containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(spec.ParentRefs, tt.wantParents) {
				t.Errorf("parents = %+v, want %+v", spec.ParentRefs, tt.wantParents)
			}
			if got := spec.Rules[0].BackendRefs; !reflect.DeepEqual(got, tt.wantBackend) {
				t.Errorf("backends = %+v, want %+v", got, tt.wantBackend)
			}
		})
	}
}

func TestHostHTTPRouteSpecFilters(t *testing.T) {
	r := route("app", []gatewayv1.ParentReference{parent("infra", "all")}, nil)
	r.Spec.Rules[0].Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestMirror,
		RequestMirror: &gatewayv1.HTTPRequestMirrorFilter{BackendRef: gatewayv1.BackendObjectReference{Name: "shadow"}}}}
	spec, err := HostHTTPRouteSpec(r, tr, world())
	if err != nil {
		t.Fatal(err)
	}
	if got := spec.Rules[0].Filters[0].RequestMirror.BackendRef.Name; got != "shadow-x-app-x-vc" {
		t.Errorf("mirror backend = %s", got)
	}
	if r.Spec.Rules[0].Filters[0].RequestMirror.BackendRef.Name != "shadow" {
		t.Error("the virtual route was changed")
	}
	r.Spec.Rules[0].Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterExtensionRef, ExtensionRef: &gatewayv1.LocalObjectReference{Kind: "Thing", Name: "x"}}}
	if _, err := HostHTTPRouteSpec(r, tr, world()); err == nil || !strings.Contains(err.Error(), "spec.rules[0].filters[0].extensionRef") {
		t.Errorf("extensionRef: err = %v", err)
	}
}

func TestHostGatewaySpec(t *testing.T) {
	classes := func(name string) bool { return name == "shared" }
	g := gateway("app", "web", listener("http", 80, gatewayv1.HTTPProtocolType, gatewayv1.NamespacesFromAll, nil),
		listener("picky", 81, gatewayv1.HTTPProtocolType, gatewayv1.NamespacesFromSelector, &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}))
	tls := listener("https", 443, gatewayv1.HTTPSProtocolType, gatewayv1.NamespacesFromSame, nil)
	tls.TLS = &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "cert"}}}
	g.Spec.Listeners = append(g.Spec.Listeners, tls)
	spec, err := HostGatewaySpec(g, tr, classes, world())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range spec.Listeners {
		if from := *l.AllowedRoutes.Namespaces.From; from != gatewayv1.NamespacesFromSame || l.AllowedRoutes.Namespaces.Selector != nil {
			t.Errorf("listener %s: from %s, selector %v; want Same, none", l.Name, from, l.AllowedRoutes.Namespaces.Selector)
		}
	}
	if got := spec.Listeners[2].TLS.CertificateRefs[0]; got.Name != "cert-x-app-x-vc" || got.Namespace != nil {
		t.Errorf("certificateRef = %+v", got)
	}
	if want := []mapping.Ref{{Kind: KindSecret, Namespace: "app", Name: "cert"}}; !reflect.DeepEqual(GatewayReferences(g), want) {
		t.Errorf("GatewayReferences = %v, want %v", GatewayReferences(g), want)
	}
	if *g.Spec.Listeners[0].AllowedRoutes.Namespaces.From != gatewayv1.NamespacesFromAll {
		t.Error("the virtual Gateway was changed")
	}

	for name, mutate := range map[string]func(*gatewayv1.Gateway){
		"spec.gatewayClassName: GatewayClass mine does not exist": func(g *gatewayv1.Gateway) { g.Spec.GatewayClassName = "mine" },
		"spec.allowedListeners":                                   func(g *gatewayv1.Gateway) { g.Spec.AllowedListeners = &gatewayv1.AllowedListeners{} },
		"spec.listeners[2].tls.certificateRefs[0]: Secret db/cert is in another namespace": func(g *gatewayv1.Gateway) {
			g.Spec.Listeners[2].TLS.CertificateRefs[0].Namespace = ptr.To(gatewayv1.Namespace("db"))
		},
		"spec.infrastructure.parametersRef: parameters of kind Config.example.com": func(g *gatewayv1.Gateway) {
			g.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{ParametersRef: &gatewayv1.LocalParametersReference{Group: "example.com", Kind: "Config", Name: "x"}}
		},
	} {
		bad := g.DeepCopy()
		mutate(bad)
		if _, err := HostGatewaySpec(bad, tr, classes, world()); err == nil || !strings.HasPrefix(err.Error(), name) {
			t.Errorf("err = %v, want one starting %q", err, name)
		}
	}
}

func TestVirtualRouteStatus(t *testing.T) {
	virtual := []gatewayv1.ParentReference{parent("infra", "all"), parent("", "edge")}
	host := []gatewayv1.ParentReference{parent("", "all-x-infra-x-vc"), parent("ingress", "public")}
	cond := []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue}}
	st := gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{
		{ParentRef: parent("host-ns", "all-x-infra-x-vc"), ControllerName: "c", Conditions: cond}, // namespace spelled out
		{ParentRef: parent("ingress", "public"), ControllerName: "c", Conditions: cond},
		{ParentRef: parent("", "someone-elses"), ControllerName: "c"},
	}}
	got := VirtualRouteStatus(st, host, virtual, "host-ns")
	want := []gatewayv1.RouteParentStatus{{ParentRef: virtual[0], ControllerName: "c", Conditions: cond}, {ParentRef: virtual[1], ControllerName: "c", Conditions: cond}}
	if !reflect.DeepEqual(got.Parents, want) {
		t.Errorf("parents = %+v\nwant %+v", got.Parents, want)
	}
}

func TestHostBackendTLSPolicySpec(t *testing.T) {
	p := &gatewayv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "p"}, Spec: gatewayv1.BackendTLSPolicySpec{
		TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{Kind: "Service", Name: "web"}}},
		Validation: gatewayv1.BackendTLSPolicyValidation{CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "ConfigMap", Name: "ca"}}, Hostname: "web.app"}}}
	spec, err := HostBackendTLSPolicySpec(p, tr)
	refs := BackendTLSPolicyReferences(p)
	if err != nil {
		t.Fatal(err)
	}
	if spec.TargetRefs[0].Name != "web-x-app-x-vc" || spec.Validation.CACertificateRefs[0].Name != "ca-x-app-x-vc" {
		t.Errorf("spec = %+v", spec)
	}
	if want := []mapping.Ref{{Kind: KindConfigMap, Namespace: "app", Name: "ca"}}; !reflect.DeepEqual(refs, want) {
		t.Errorf("refs = %v", refs)
	}
	p.Spec.TargetRefs[0].Kind = "Pod"
	if _, err := HostBackendTLSPolicySpec(p, tr); err == nil || !strings.Contains(err.Error(), "spec.targetRefs[0]") {
		t.Errorf("err = %v", err)
	}
}

func TestHostnameAllowed(t *testing.T) {
	allowed := []string{"*.example.com", "api.test"}
	for h, want := range map[string]bool{"a.example.com": true, "a.b.example.com": true, "*.example.com": true, "example.com": false,
		"api.test": true, "API.test": true, "x.api.test": false, "badexample.com": false} {
		if got := HostnameAllowed(h, allowed); got != want {
			t.Errorf("HostnameAllowed(%s) = %v", h, got)
		}
	}
}

func TestImportedGateway(t *testing.T) {
	h := gateway("ingress", "public", listener("http", 80, gatewayv1.HTTPProtocolType, gatewayv1.NamespacesFromSame, nil))
	tls := listener("https", 443, gatewayv1.HTTPSProtocolType, gatewayv1.NamespacesFromSame, nil)
	tls.TLS = &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "host-cert"}}}
	h.Spec.Listeners = append(h.Spec.Listeners, tls)
	h.Spec.Infrastructure = &gatewayv1.GatewayInfrastructure{Labels: map[gatewayv1.LabelKey]gatewayv1.LabelValue{"a": "b"}}
	h.Status.Addresses = []gatewayv1.GatewayStatusAddress{{Value: "10.0.0.1"}}
	h.Labels = map[string]string{"tier": "edge"}

	o := config.Default().Sync.FromHost.Gateways
	o.AllowedRoutes.DefaultVirtualNamespacePolicy = &config.GatewayVirtualNamespacePolicy{From: "All"}
	spec, status, labels, anns := ImportedGateway(h, o)
	if spec.Infrastructure != nil || status.Addresses != nil {
		t.Errorf("infrastructure %v, addresses %v: want both hidden by default", spec.Infrastructure, status.Addresses)
	}
	if got := spec.Listeners[1].TLS; got.CertificateRefs != nil || got.Options[TLSOptionCertificateRefsSanitized] != "true" {
		t.Errorf("tls = %+v", got)
	}
	if *spec.Listeners[0].AllowedRoutes.Namespaces.From != gatewayv1.NamespacesFromAll {
		t.Errorf("allowedRoutes = %+v", spec.Listeners[0].AllowedRoutes)
	}
	if labels[LabelImportedGateway] != "true" || labels["tier"] != "edge" || anns[AnnotationSourceGateway] != "" {
		t.Errorf("labels %v, annotations %v", labels, anns)
	}
	if h.Spec.Infrastructure == nil || h.Spec.Listeners[1].TLS.CertificateRefs == nil {
		t.Error("the host Gateway was changed")
	}

	o.Sanitize = config.GatewayImportSanitize{}
	o.Status.ExposeAddresses, o.Metadata.ExposeSourceGateway = true, true
	o.AllowedRoutes.DefaultVirtualNamespacePolicy = nil
	spec, status, _, anns = ImportedGateway(h, o)
	if spec.Infrastructure == nil || len(status.Addresses) != 1 || spec.Listeners[1].TLS.CertificateRefs == nil || anns[AnnotationSourceGateway] != "ingress/public" {
		t.Errorf("exposed: spec %+v, status %+v, annotations %v", spec, status, anns)
	}
	if *spec.Listeners[0].AllowedRoutes.Namespaces.From != gatewayv1.NamespacesFromSame {
		t.Error("without a policy the host's allowedRoutes stay")
	}
}

func TestValidateFromHostGateways(t *testing.T) {
	base := func() config.FromHostGateways {
		o := config.Default().Sync.FromHost.Gateways
		o.Enabled = true
		o.Mappings.ByName = map[string]string{"ingress/public": "shared/edge", "edges/*": "edges/*"}
		return o
	}
	if err := ValidateFromHostGateways(base()); err != nil {
		t.Fatalf("valid: %v", err)
	}
	for want, mutate := range map[string]func(*config.FromHostGateways){
		`sync.fromHost.gateways.mappings.byName[""]: name the host namespace`:                      func(o *config.FromHostGateways) { o.Mappings.ByName[""] = "x/*" },
		`sync.fromHost.gateways.mappings.byName["a/b"]: virtual namespace kube-system is reserved`: func(o *config.FromHostGateways) { o.Mappings.ByName["a/b"] = "kube-system/b" },
		`sync.fromHost.gateways.mappings.byName["edges/x"]: host namespace edges is mapped whole`:  func(o *config.FromHostGateways) { o.Mappings.ByName["edges/x"] = "y/x" },
		`a whole namespace maps to a whole namespace`:                                              func(o *config.FromHostGateways) { o.Mappings.ByName["a/*"] = "b/c" },
		`sync.fromHost.gateways.allowedRoutes.defaultVirtualNamespacePolicy.from: must be All, Same or Selector`: func(o *config.FromHostGateways) {
			o.AllowedRoutes.DefaultVirtualNamespacePolicy = &config.GatewayVirtualNamespacePolicy{From: "Some"}
		},
		`sync.fromHost.gateways.allowedRoutes.defaultVirtualNamespacePolicy.selector: required`: func(o *config.FromHostGateways) {
			o.AllowedRoutes.DefaultVirtualNamespacePolicy = &config.GatewayVirtualNamespacePolicy{From: "Selector"}
		},
		`sync.fromHost.gateways.allowedRoutes.overrides[0]: host Gateway other/gw is not covered`: func(o *config.FromHostGateways) {
			o.AllowedRoutes.Overrides = []config.GatewayAllowedRoutesOverride{{HostNamespace: "other", Name: "gw"}}
		},
		`sync.fromHost.gateways.allowedRoutes.overrides[0].allowedHostnames[0]: "a*b.com"`: func(o *config.FromHostGateways) {
			o.AllowedRoutes.Overrides = []config.GatewayAllowedRoutesOverride{{HostNamespace: "ingress", Name: "public", AllowedHostnames: []string{"a*b.com"}}}
		},
	} {
		o := base()
		mutate(&o)
		if err := ValidateFromHostGateways(o); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want one containing %q", err, want)
		}
	}
}
