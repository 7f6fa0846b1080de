package services

import (
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

var testTr = translate.Translator{VCluster: "vc", HostNamespace: "vc-host"}

func toJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func port(name string, proto corev1.Protocol, p, nodePort int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Protocol: proto, Port: p, TargetPort: intstr.FromInt32(p + 8000), NodePort: nodePort}
}

func virtualService(spec corev1.ServiceSpec) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}, Spec: spec}
}

func TestHostSpecSelector(t *testing.T) {
	tests := []struct {
		name     string
		selector map[string]string
		want     map[string]string
	}{
		{
			name:     "scoped to the virtual cluster and namespace",
			selector: map[string]string{"app": "web"},
			want:     map[string]string{"app": "web", "vcluster.loft.sh/managed-by": "vc", "vcluster.loft.sh/namespace": "team"},
		},
		{
			name:     "reserved key translated like pod labels",
			selector: map[string]string{"app": "web", "release": "r1"},
			want: map[string]string{
				"app": "web", "vcluster.loft.sh/label-vc-x-a4d451ec23": "r1",
				"vcluster.loft.sh/managed-by": "vc", "vcluster.loft.sh/namespace": "team",
			},
		},
		{name: "nil selector stays nil", selector: nil, want: nil},
		{name: "empty selector becomes nil", selector: map[string]string{}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := virtualService(corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.5.5", Selector: tt.selector})
			got := HostSpec(v, testTr, nil, nil).Selector
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Selector = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHostSpec(t *testing.T) {
	hostSel := map[string]string{"app": "web", "vcluster.loft.sh/managed-by": "vc", "vcluster.loft.sh/namespace": "team"}
	tests := []struct {
		name    string
		virtual corev1.ServiceSpec
		current *corev1.ServiceSpec
		want    corev1.ServiceSpec
	}{
		{
			name: "create ClusterIP asks for the virtual clusterIP",
			virtual: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, Selector: map[string]string{"app": "web"},
				ClusterIP: "10.96.5.5", ClusterIPs: []string{"10.96.5.5"},
				IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}, IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicySingleStack),
				Ports: []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 0)},
			},
			want: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, Selector: hostSel,
				ClusterIP: "10.96.5.5", ClusterIPs: []string{"10.96.5.5"},
				Ports: []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 0)},
			},
		},
		{
			name: "create: ClusterIPs set from the clusterIP",
			virtual: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.5.5",
				Ports: []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 0)},
			},
			want: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.5.5", ClusterIPs: []string{"10.96.5.5"},
				Ports: []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 0)},
			},
		},
		{
			name: "create LoadBalancer asks for the virtual node ports, not the health-check port",
			virtual: corev1.ServiceSpec{
				Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "web"},
				ClusterIP: "10.96.5.5", ClusterIPs: []string{"10.96.5.5"},
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal, HealthCheckNodePort: 32000,
				Ports: []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 30080), port("https", corev1.ProtocolTCP, 443, 30443)},
			},
			want: corev1.ServiceSpec{
				Type: corev1.ServiceTypeLoadBalancer, Selector: hostSel,
				ClusterIP: "10.96.5.5", ClusterIPs: []string{"10.96.5.5"},
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal,
				Ports:                 []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 30080), port("https", corev1.ProtocolTCP, 443, 30443)},
			},
		},
		{
			name: "create headless keeps None",
			virtual: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, Selector: map[string]string{"app": "web"},
				ClusterIP: corev1.ClusterIPNone, ClusterIPs: []string{corev1.ClusterIPNone},
			},
			want: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, Selector: hostSel,
				ClusterIP: corev1.ClusterIPNone, ClusterIPs: []string{corev1.ClusterIPNone},
			},
		},
		{
			name: "update NodePort keeps the host's node ports and clusterIP per port, asks for the virtual ones of new ports",
			virtual: corev1.ServiceSpec{
				Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": "web"},
				ClusterIP: "10.96.5.5", ClusterIPs: []string{"10.96.5.5"},
				Ports: []corev1.ServicePort{
					port("http", corev1.ProtocolTCP, 80, 30080), // virtual value differs: host wins
					port("https", corev1.ProtocolTCP, 443, 0),
					port("metrics", corev1.ProtocolTCP, 9090, 30090), // new: asked for
					port("dns", corev1.ProtocolTCP, 53, 0),           // host has UDP only
				},
			},
			current: &corev1.ServiceSpec{
				Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.7.7", ClusterIPs: []string{"10.96.7.7"},
				IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}, IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicySingleStack),
				Ports: []corev1.ServicePort{
					port("http", corev1.ProtocolTCP, 80, 31080),
					port("https", corev1.ProtocolTCP, 443, 31443),
					port("dns", corev1.ProtocolUDP, 53, 31053),
				},
			},
			want: corev1.ServiceSpec{
				Type: corev1.ServiceTypeNodePort, Selector: hostSel,
				ClusterIP: "10.96.7.7", ClusterIPs: []string{"10.96.7.7"},
				IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}, IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicySingleStack),
				Ports: []corev1.ServicePort{
					port("http", corev1.ProtocolTCP, 80, 31080),
					port("https", corev1.ProtocolTCP, 443, 31443),
					port("metrics", corev1.ProtocolTCP, 9090, 30090),
					port("dns", corev1.ProtocolTCP, 53, 0),
				},
			},
		},
		{
			name: "update LoadBalancer keeps the host's health-check port",
			virtual: corev1.ServiceSpec{
				Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.96.5.5", ClusterIPs: []string{"10.96.5.5"},
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal, HealthCheckNodePort: 32000,
				Ports: []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 0)},
			},
			current: &corev1.ServiceSpec{
				Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.96.5.5", ClusterIPs: []string{"10.96.5.5"},
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal, HealthCheckNodePort: 32100,
				Ports: []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 31080)},
			},
			want: corev1.ServiceSpec{
				Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.96.5.5", ClusterIPs: []string{"10.96.5.5"},
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal, HealthCheckNodePort: 32100,
				Ports: []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 31080)},
			},
		},
		{
			name: "update to ClusterIP zeroes node ports",
			virtual: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.5.5", ClusterIPs: []string{"10.96.5.5"},
				Ports: []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 0)},
			},
			current: &corev1.ServiceSpec{
				Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.5.5", ClusterIPs: []string{"10.96.5.5"},
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal, HealthCheckNodePort: 32100,
				Ports: []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 31080)},
			},
			want: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.5.5", ClusterIPs: []string{"10.96.5.5"},
				Ports: []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 0)},
			},
		},
		{
			name: "update headless keeps None",
			virtual: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, ClusterIP: corev1.ClusterIPNone, ClusterIPs: []string{corev1.ClusterIPNone},
			},
			current: &corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, ClusterIP: corev1.ClusterIPNone, ClusterIPs: []string{corev1.ClusterIPNone},
			},
			want: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, ClusterIP: corev1.ClusterIPNone, ClusterIPs: []string{corev1.ClusterIPNone},
			},
		},
		// A ClusterIP Service changed to ExternalName (the conformance
		// specs "should be able to change the type from ClusterIP to
		// ExternalName") loses its address on the host too, and one
		// changed back asks for the new virtual address.
		{
			name:    "ClusterIP to ExternalName drops the host address",
			virtual: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "svc.other.svc.cluster.local"},
			current: &corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.5.5", ClusterIPs: []string{"10.96.5.5"},
				IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}, IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicySingleStack),
				Ports: []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 0)}},
			want: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "svc.other.svc.cluster.local"},
		},
		{
			name: "ExternalName to ClusterIP asks for the virtual address",
			virtual: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.7.7", ClusterIPs: []string{"10.96.7.7"},
				Ports: []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 0)}},
			current: &corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "svc.other.svc.cluster.local"},
			want: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.7.7", ClusterIPs: []string{"10.96.7.7"},
				Ports: []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 0)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := virtualService(tt.virtual)
			vBefore := v.DeepCopy()
			var curBefore *corev1.ServiceSpec
			if tt.current != nil {
				curBefore = tt.current.DeepCopy()
			}
			got := HostSpec(v, testTr, tt.current, nil)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("HostSpec() = %s\nwant %s", toJSON(got), toJSON(tt.want))
			}
			if !reflect.DeepEqual(v, vBefore) {
				t.Errorf("HostSpec modified the virtual Service: %s", toJSON(v))
			}
			if !reflect.DeepEqual(tt.current, curBefore) {
				t.Errorf("HostSpec modified the current host spec: %s", toJSON(tt.current))
			}
		})
	}
}

func TestVirtualNodePorts(t *testing.T) {
	tests := []struct {
		name        string
		virtual     []corev1.ServicePort
		host        []corev1.ServicePort
		want        []corev1.ServicePort
		wantChanged bool
	}{
		{
			name:        "host node ports copied",
			virtual:     []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 0), port("https", corev1.ProtocolTCP, 443, 30443), port("extra", corev1.ProtocolTCP, 9000, 0)},
			host:        []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 31080), port("https", corev1.ProtocolTCP, 443, 31443)},
			want:        []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 31080), port("https", corev1.ProtocolTCP, 443, 31443), port("extra", corev1.ProtocolTCP, 9000, 0)},
			wantChanged: true,
		},
		{
			name:        "already equal",
			virtual:     []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 31080)},
			host:        []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 31080)},
			want:        []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 31080)},
			wantChanged: false,
		},
		{
			name:        "host without node port leaves the virtual one",
			virtual:     []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 30080)},
			host:        []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 0)},
			want:        []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 30080)},
			wantChanged: false,
		},
		{
			name:        "matched by protocol",
			virtual:     []corev1.ServicePort{port("dns", corev1.ProtocolTCP, 53, 0)},
			host:        []corev1.ServicePort{port("dns", corev1.ProtocolUDP, 53, 31053)},
			want:        []corev1.ServicePort{port("dns", corev1.ProtocolTCP, 53, 0)},
			wantChanged: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: tt.virtual}
			h := &corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: tt.host}
			changed := VirtualNodePorts(v, h)
			if changed != tt.wantChanged {
				t.Errorf("VirtualNodePorts() changed = %v, want %v", changed, tt.wantChanged)
			}
			if !reflect.DeepEqual(v.Ports, tt.want) {
				t.Errorf("virtual ports = %s\nwant %s", toJSON(v.Ports), toJSON(tt.want))
			}
			if again := VirtualNodePorts(v, h); again {
				t.Errorf("second VirtualNodePorts() reported a change")
			}
		})
	}
}

// With a DNS backend, only the virtual kube-system/kube-dns Service's host
// copy selects the DNS pod, and only its port 53 leads to the pod's DNS port.
func TestHostSpecDNSBackend(t *testing.T) {
	backend := &DNSBackend{Selector: map[string]string{"app": "vcluster", "release": "vc"}, Port: 1053}
	dnsPorts := []corev1.ServicePort{
		{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(53)},
		{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(53)},
		{Name: "metrics", Port: 9153, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(9153)},
	}
	tests := []struct {
		name, namespace, service string
		dns                      *DNSBackend
		wantSelector             map[string]string
		wantTargets              []int32
	}{
		{"kube-dns leads to the DNS pod", "kube-system", "kube-dns", backend,
			map[string]string{"app": "vcluster", "release": "vc"}, []int32{1053, 1053, 9153}},
		{"kube-dns without a backend is a Service like any other", "kube-system", "kube-dns", nil,
			map[string]string{"k8s-app": "kube-dns", "vcluster.loft.sh/managed-by": "vc", "vcluster.loft.sh/namespace": "kube-system"},
			[]int32{53, 53, 9153}},
		{"a tenant's kube-dns in another namespace is not the DNS Service", "team", "kube-dns", backend,
			map[string]string{"k8s-app": "kube-dns", "vcluster.loft.sh/managed-by": "vc", "vcluster.loft.sh/namespace": "team"},
			[]int32{53, 53, 9153}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: tt.service, Namespace: tt.namespace},
				Spec: corev1.ServiceSpec{Selector: map[string]string{"k8s-app": "kube-dns"}, Ports: dnsPorts}}
			got := HostSpec(v, testTr, nil, tt.dns)
			if !reflect.DeepEqual(got.Selector, tt.wantSelector) {
				t.Errorf("selector %v, want %v", got.Selector, tt.wantSelector)
			}
			var targets []int32
			for _, p := range got.Ports {
				targets = append(targets, p.TargetPort.IntVal)
			}
			if !reflect.DeepEqual(targets, tt.wantTargets) {
				t.Errorf("target ports %v, want %v", targets, tt.wantTargets)
			}
			if v.Spec.Ports[0].TargetPort.IntVal != 53 {
				t.Error("HostSpec changed the virtual Service's ports")
			}
		})
	}
}

// After the host refused what a Service asked for, WithoutRequests asks
// only for the node ports the host allocated already, and without ip for
// no clusterIP on create.
func TestWithoutRequests(t *testing.T) {
	spec := corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.5.5", ClusterIPs: []string{"10.96.5.5"},
		Ports: []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 31080), port("metrics", corev1.ProtocolTCP, 9090, 30090)}}
	current := &corev1.ServiceSpec{Ports: []corev1.ServicePort{port("http", corev1.ProtocolTCP, 80, 31080)}}
	for _, tt := range []struct {
		name      string
		current   *corev1.ServiceSpec
		ip        bool
		wantPorts []int32
		wantIP    string
	}{
		{"create, keep the clusterIP", nil, true, []int32{0, 0}, "10.96.5.5"},
		{"create, without the clusterIP", nil, false, []int32{0, 0}, ""},
		{"update keeps what the host allocated and the clusterIP", current, false, []int32{31080, 0}, "10.96.5.5"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := WithoutRequests(spec, tt.current, tt.ip)
			if got.Ports[0].NodePort != tt.wantPorts[0] || got.Ports[1].NodePort != tt.wantPorts[1] || got.ClusterIP != tt.wantIP {
				t.Errorf("ports %d %d clusterIP %q, want %v %q", got.Ports[0].NodePort, got.Ports[1].NodePort, got.ClusterIP, tt.wantPorts, tt.wantIP)
			}
			if spec.Ports[1].NodePort != 30090 {
				t.Error("WithoutRequests changed its input")
			}
		})
	}
}

func TestNeedsHostIP(t *testing.T) {
	for _, tc := range []struct {
		virtual, host string
		want          bool
	}{
		{"10.96.0.5", "10.96.0.5", false},
		{"10.96.0.5", "10.96.0.9", true},
		{"", "10.96.0.9", false}, // ExternalName now: the host copy loses its address
		{"10.96.0.5", "", false}, // the host copy was ExternalName: it asks for the virtual one
		{corev1.ClusterIPNone, "10.96.0.9", false},
		{"10.96.0.5", corev1.ClusterIPNone, false},
	} {
		if got := NeedsHostIP(tc.virtual, tc.host); got != tc.want {
			t.Errorf("NeedsHostIP(%q, %q) = %v, want %v", tc.virtual, tc.host, got, tc.want)
		}
	}
}
