package nodes

import (
	"maps"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
)

func TestFakeNode(t *testing.T) {
	host := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1", Labels: map[string]string{
		"kubernetes.io/hostname":           "worker-1.internal",
		"kubernetes.io/os":                 "linux",
		"kubernetes.io/arch":               "arm64",
		"beta.kubernetes.io/os":            "linux",
		"beta.kubernetes.io/arch":          "arm64",
		"topology.kubernetes.io/zone":      "eu-1a",
		"topology.kubernetes.io/region":    "eu-1",
		"node.kubernetes.io/instance-type": "m5.large",
		"example.com/team":                 "infra",
	}}}
	hostBefore := host.DeepCopy()
	tests := []struct {
		name       string
		host       *corev1.Node
		wantLabels map[string]string
	}{
		{
			name: "host labels filtered",
			host: host,
			wantLabels: map[string]string{
				"kubernetes.io/hostname":        "worker-1",
				"kubernetes.io/os":              "linux",
				"kubernetes.io/arch":            "arm64",
				"beta.kubernetes.io/os":         "linux",
				"beta.kubernetes.io/arch":       "arm64",
				"topology.kubernetes.io/zone":   "eu-1a",
				"topology.kubernetes.io/region": "eu-1",
				"vcluster.loft.sh/fake-node":    "true",
			},
		},
		{
			name: "nil host",
			host: nil,
			wantLabels: map[string]string{
				"kubernetes.io/hostname":     "worker-1",
				"kubernetes.io/os":           "linux",
				"kubernetes.io/arch":         "amd64",
				"vcluster.loft.sh/fake-node": "true",
			},
		},
	}
	wantCapacity := map[corev1.ResourceName]string{
		corev1.ResourceCPU:              "16",
		corev1.ResourceMemory:           "32Gi",
		corev1.ResourceEphemeralStorage: "100Gi",
		corev1.ResourcePods:             "110",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := FakeNode("worker-1", tt.host, syncer.KubeletEndpoint{}, TenantAddresses{})
			if n.Name != "worker-1" {
				t.Errorf("Name = %q, want worker-1", n.Name)
			}
			if !maps.Equal(n.Labels, tt.wantLabels) {
				t.Errorf("Labels = %v\nwant %v", n.Labels, tt.wantLabels)
			}
			for what, list := range map[string]corev1.ResourceList{"capacity": n.Status.Capacity, "allocatable": n.Status.Allocatable} {
				if len(list) != len(wantCapacity) {
					t.Errorf("%s = %v, want exactly %v", what, list, wantCapacity)
				}
				for name, want := range wantCapacity {
					got, ok := list[name]
					if !ok || got.Cmp(resource.MustParse(want)) != 0 {
						t.Errorf("%s[%s] = %v (present %v), want %s", what, name, got.String(), ok, want)
					}
				}
			}
			var ready *corev1.NodeCondition
			for i := range n.Status.Conditions {
				if n.Status.Conditions[i].Type == corev1.NodeReady {
					ready = &n.Status.Conditions[i]
				}
			}
			if ready == nil || ready.Status != corev1.ConditionTrue {
				t.Errorf("Ready condition = %+v, want status True", ready)
			}
			if len(n.Spec.Taints) != 0 || n.Spec.Unschedulable {
				t.Errorf("spec = %+v, want no taints and schedulable", n.Spec)
			}
			if len(n.Status.Addresses) != 1 || n.Status.Addresses[0] != (corev1.NodeAddress{Type: corev1.NodeHostName, Address: "worker-1"}) {
				t.Errorf("Addresses = %v, want [Hostname worker-1]", n.Status.Addresses)
			}
		})
	}
	if !maps.Equal(host.Labels, hostBefore.Labels) {
		t.Errorf("FakeNode modified the host node's labels: %v", host.Labels)
	}
}

func TestFakeNodeAllocatableIsIndependent(t *testing.T) {
	n := FakeNode("worker-1", nil, syncer.KubeletEndpoint{}, TenantAddresses{})
	n.Status.Allocatable[corev1.ResourcePods] = resource.MustParse("1")
	if got := n.Status.Capacity[corev1.ResourcePods]; got.Cmp(resource.MustParse("110")) != 0 {
		t.Errorf("changing allocatable changed capacity pods to %s", got.String())
	}
}

// A fake node names the syncer's kubelet (InternalIP first, so the API
// server's preferred address type finds it), and setKubelet moves an
// existing node to another endpoint, or away from any, only when it changed.
func TestFakeNodeKubelet(t *testing.T) {
	kubelet := syncer.KubeletEndpoint{IP: "127.0.0.1", Port: 10250}
	n := FakeNode("worker-1", nil, kubelet, TenantAddresses{})
	want := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: "worker-1"}}
	if !reflect.DeepEqual(n.Status.Addresses, want) || n.Status.DaemonEndpoints.KubeletEndpoint.Port != 10250 {
		t.Errorf("addresses %v, kubelet port %d; want %v and 10250", n.Status.Addresses, n.Status.DaemonEndpoints.KubeletEndpoint.Port, want)
	}
	tests := []struct {
		name        string
		to          syncer.KubeletEndpoint
		wantChanged bool
		wantAddrs   int
	}{
		{"same endpoint", kubelet, false, 2},
		{"another port", syncer.KubeletEndpoint{IP: "127.0.0.1", Port: 10251}, true, 2},
		{"no kubelet any more", syncer.KubeletEndpoint{}, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := n.DeepCopy()
			if changed := setKubelet(m, tt.to, TenantAddresses{}); changed != tt.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tt.wantChanged)
			}
			if len(m.Status.Addresses) != tt.wantAddrs || m.Status.DaemonEndpoints.KubeletEndpoint.Port != tt.to.Port {
				t.Errorf("after setKubelet(%+v): addresses %v, port %d", tt.to, m.Status.Addresses, m.Status.DaemonEndpoints.KubeletEndpoint.Port)
			}
		})
	}
}

// With proxyKubelets a fake node's InternalIP is its host Service's (byIP),
// which node exporters read, the proxy's address moving to InternalDNS,
// which the virtual API server prefers; its Hostname is
// NAME.nodes.vcluster.com (byHostname).
func TestFakeNodeTenantAddresses(t *testing.T) {
	kubelet := syncer.KubeletEndpoint{IP: "127.0.0.1", Port: 10250}
	tests := []struct {
		name string
		t    TenantAddresses
		want []corev1.NodeAddress
	}{
		{"byHostname", TenantAddresses{Hostname: "worker-1.nodes.vcluster.com"}, []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: "worker-1.nodes.vcluster.com"}}},
		{"byIP", TenantAddresses{IP: "10.96.0.42"}, []corev1.NodeAddress{
			{Type: corev1.NodeInternalDNS, Address: "127.0.0.1"}, {Type: corev1.NodeInternalIP, Address: "10.96.0.42"}, {Type: corev1.NodeHostName, Address: "worker-1"}}},
		{"both", TenantAddresses{Hostname: "worker-1.nodes.vcluster.com", IP: "10.96.0.42"}, []corev1.NodeAddress{
			{Type: corev1.NodeInternalDNS, Address: "127.0.0.1"}, {Type: corev1.NodeInternalIP, Address: "10.96.0.42"}, {Type: corev1.NodeHostName, Address: "worker-1.nodes.vcluster.com"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := FakeNode("worker-1", nil, kubelet, tt.t)
			if !reflect.DeepEqual(n.Status.Addresses, tt.want) {
				t.Errorf("addresses %v, want %v", n.Status.Addresses, tt.want)
			}
			// The address the virtual API server picks is the proxy's.
			var picked string
		pick:
			for _, typ := range KubeletAddressTypes() {
				for _, a := range n.Status.Addresses {
					if a.Type == typ {
						picked = a.Address
						break pick
					}
				}
			}
			if picked != kubelet.IP {
				t.Errorf("the virtual API server would dial %q, not the proxy %s", picked, kubelet.IP)
			}
			if setKubelet(n, kubelet, tt.t) {
				t.Error("setKubelet with the same addresses reports a change")
			}
		})
	}
}
