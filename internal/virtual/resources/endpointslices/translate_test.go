package endpointslices

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/virtual/policy"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

var tr = translate.Translator{VCluster: "vc", HostNamespace: "vc-host"}

func slice(ns, name string, labels map[string]string) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}, AddressType: discoveryv1.AddressTypeIPv4}
}

func TestIsSynced(t *testing.T) {
	for _, c := range []struct {
		name string
		v    *discoveryv1.EndpointSlice
		want bool
	}{
		{"the tenant's, no manager", slice("team", "db-1", map[string]string{discoveryv1.LabelServiceName: "db"}), true},
		{"the tenant's own manager", slice("team", "db-1", map[string]string{discoveryv1.LabelManagedBy: "example.com/lb"}), true},
		{"no labels at all", slice("team", "x", nil), true},
		{"the EndpointSlice controller's", slice("team", "web-abcde", map[string]string{discoveryv1.LabelManagedBy: ControllerManager, discoveryv1.LabelServiceName: "web"}), false},
		{"the mirroring controller's", slice("team", "db-abcde", map[string]string{discoveryv1.LabelManagedBy: MirroringManager}), false},
		{"the virtual API server's", slice("default", "kubernetes", map[string]string{discoveryv1.LabelServiceName: "kubernetes"}), false},
		{"another slice of default/kubernetes", slice("default", "kubernetes-2", map[string]string{discoveryv1.LabelServiceName: "kubernetes"}), false},
		{"a kubernetes Service elsewhere", slice("team", "kubernetes", map[string]string{discoveryv1.LabelServiceName: "kubernetes"}), true},
	} {
		if got := IsSynced(c.v); got != c.want {
			t.Errorf("%s: IsSynced = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestHostLabels(t *testing.T) {
	if errs := validation.IsValidLabelValue(ManagedBy); len(errs) > 0 {
		t.Errorf("ManagedBy %q is no label value: %v", ManagedBy, errs)
	}
	for _, c := range []struct {
		name           string
		engine, labels map[string]string
		want           map[string]string
	}{
		{"service renamed, manager set",
			map[string]string{discoveryv1.LabelServiceName: "db", "app": "db", translate.LabelManagedBy: "vc"},
			map[string]string{discoveryv1.LabelServiceName: "db", "app": "db"},
			map[string]string{discoveryv1.LabelServiceName: "db-x-team-x-vc", "app": "db", translate.LabelManagedBy: "vc", discoveryv1.LabelManagedBy: ManagedBy}},
		{"the tenant's manager replaced",
			map[string]string{discoveryv1.LabelServiceName: "db", discoveryv1.LabelManagedBy: "example.com/lb"},
			map[string]string{discoveryv1.LabelServiceName: "db", discoveryv1.LabelManagedBy: "example.com/lb"},
			map[string]string{discoveryv1.LabelServiceName: "db-x-team-x-vc", discoveryv1.LabelManagedBy: ManagedBy}},
		{"no service: none on the host either",
			map[string]string{discoveryv1.LabelServiceName: "stale"},
			map[string]string{"app": "x"},
			map[string]string{discoveryv1.LabelManagedBy: ManagedBy}},
		{"no labels", nil, nil, map[string]string{discoveryv1.LabelManagedBy: ManagedBy}},
	} {
		v := slice("team", "db-1", c.labels)
		in := map[string]string{}
		for k, val := range c.engine {
			in[k] = val
		}
		got := HostLabels(c.engine, v, tr)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, got, c.want)
		}
		if c.engine != nil && !reflect.DeepEqual(c.engine, in) {
			t.Errorf("%s: HostLabels changed its input to %v", c.name, c.engine)
		}
	}
}

func TestVirtualViewLabels(t *testing.T) {
	host := map[string]string{discoveryv1.LabelServiceName: "db-x-team-x-vc", discoveryv1.LabelManagedBy: ManagedBy, "app": "db", "host-only": "x"}
	for _, c := range []struct {
		name    string
		virtual map[string]string
		want    map[string]string
	}{
		{"the virtual values", map[string]string{discoveryv1.LabelServiceName: "db", discoveryv1.LabelManagedBy: "example.com/lb"},
			map[string]string{discoveryv1.LabelServiceName: "db", discoveryv1.LabelManagedBy: "example.com/lb", "app": "db", "host-only": "x"}},
		{"absent where the virtual slice has none", map[string]string{"app": "db"},
			map[string]string{"app": "db", "host-only": "x"}},
	} {
		got := VirtualViewLabels(host, slice("team", "db-1", c.virtual))
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, got, c.want)
		}
	}
	if host[discoveryv1.LabelServiceName] != "db-x-team-x-vc" || host[discoveryv1.LabelManagedBy] != ManagedBy {
		t.Errorf("VirtualViewLabels changed the host labels: %v", host)
	}
	// What HostLabels sets, VirtualViewLabels undoes: no host edit is seen.
	v := slice("team", "db-1", map[string]string{discoveryv1.LabelServiceName: "db", "app": "db"})
	if got := VirtualViewLabels(HostLabels(v.Labels, v, tr), v); !reflect.DeepEqual(got, v.Labels) {
		t.Errorf("round trip: %v, want %v", got, v.Labels)
	}
}

func TestHostEndpoints(t *testing.T) {
	v := slice("team", "db-1", nil)
	v.Endpoints = []discoveryv1.Endpoint{
		{Addresses: []string{"10.0.0.5"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}, NodeName: ptr.To("node-1"),
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "db-0", Namespace: "team", UID: "virtual-uid", ResourceVersion: "12"}},
		{Addresses: []string{"10.0.0.6"}, TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "db-1"}},
		{Addresses: []string{"192.168.1.10"}, Zone: ptr.To("z1")},
		{Addresses: []string{"10.0.0.7"}, TargetRef: &corev1.ObjectReference{Kind: "Node", Name: "node-2"}},
	}
	want := []discoveryv1.Endpoint{
		{Addresses: []string{"10.0.0.5"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}, NodeName: ptr.To("node-1"),
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "db-0-x-team-x-vc", Namespace: "vc-host"}},
		{Addresses: []string{"10.0.0.6"}, TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "db-1-x-team-x-vc", Namespace: "vc-host"}},
		{Addresses: []string{"192.168.1.10"}, Zone: ptr.To("z1")},
		{Addresses: []string{"10.0.0.7"}, TargetRef: &corev1.ObjectReference{Kind: "Node", Name: "node-2"}},
	}
	if got := HostEndpoints(v, tr); !reflect.DeepEqual(got, want) {
		t.Errorf("HostEndpoints:\n got %+v\nwant %+v", got, want)
	}
	if v.Endpoints[0].TargetRef.Name != "db-0" || v.Endpoints[1].TargetRef.Namespace != "" {
		t.Error("HostEndpoints changed the virtual endpoints")
	}
	if got := HostEndpoints(slice("team", "empty", nil), tr); got != nil {
		t.Errorf("no endpoints: %v, want nil", got)
	}
}

func TestHostPorts(t *testing.T) {
	v := slice("team", "db-1", nil)
	v.Ports = []discoveryv1.EndpointPort{{Name: ptr.To("sql"), Port: ptr.To(int32(5432)), Protocol: ptr.To(corev1.ProtocolTCP), AppProtocol: ptr.To("postgresql")}}
	got := HostPorts(v)
	if !reflect.DeepEqual(got, v.Ports) {
		t.Errorf("HostPorts: %+v, want %+v", got, v.Ports)
	}
	*got[0].Port = 1
	if *v.Ports[0].Port != 5432 {
		t.Error("HostPorts shares the virtual ports")
	}
	if HostPorts(slice("team", "none", nil)) != nil {
		t.Error("no ports: want nil")
	}
}

func TestRestrictEndpoints(t *testing.T) {
	own := policy.PodIPSet([]string{"10.244.0.5"})
	in := []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.5", "10.0.0.1"}, Hostname: ptr.To("a")}, {Addresses: []string{"10.0.0.2"}}}
	kept, refused := RestrictEndpoints(discoveryv1.AddressTypeIPv4, in, own)
	if want := []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.5"}, Hostname: ptr.To("a")}}; !reflect.DeepEqual(kept, want) {
		t.Errorf("kept %+v, want %+v", kept, want)
	}
	if !reflect.DeepEqual(refused, []string{"10.0.0.1", "10.0.0.2"}) {
		t.Errorf("refused %q", refused)
	}
	if len(in[0].Addresses) != 2 {
		t.Errorf("the input was modified: %+v", in)
	}
	fqdn := []discoveryv1.Endpoint{{Addresses: []string{"db.example.com"}}}
	if kept, refused := RestrictEndpoints(discoveryv1.AddressTypeFQDN, fqdn, own); !reflect.DeepEqual(kept, fqdn) || len(refused) != 0 {
		t.Errorf("FQDN slice: kept %+v refused %q, want it as it is", kept, refused)
	}
}
