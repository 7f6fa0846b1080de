package nodes

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
)

func TestSelected(t *testing.T) {
	node := map[string]string{"pool": "tenants", "zone": "a"}
	tests := []struct {
		name string
		sel  config.NodeSelector
		want bool
	}{
		{"no selector: only nodes running pods", config.NodeSelector{}, false},
		{"empty labels map", config.NodeSelector{Labels: map[string]string{}}, false},
		{"all", config.NodeSelector{All: true}, true},
		{"all wins over labels", config.NodeSelector{All: true, Labels: map[string]string{"pool": "other"}}, true},
		{"labels match", config.NodeSelector{Labels: map[string]string{"pool": "tenants"}}, true},
		{"every label must match", config.NodeSelector{Labels: map[string]string{"pool": "tenants", "zone": "b"}}, false},
		{"missing key", config.NodeSelector{Labels: map[string]string{"gpu": "true"}}, false},
		{"empty value is a value", config.NodeSelector{Labels: map[string]string{"gpu": ""}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Selected(tt.sel, node); got != tt.want {
				t.Errorf("Selected = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWanted(t *testing.T) {
	sel := config.NodeSelector{Labels: map[string]string{"pool": "tenants"}}
	in := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"pool": "tenants"}}}
	out := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"pool": "infra"}}}
	tests := []struct {
		name   string
		sel    config.NodeSelector
		host   *corev1.Node
		needed bool
		want   bool
	}{
		{"selected", sel, in, false, true},
		{"not selected, no pod", sel, out, false, false},
		{"not selected, but a virtual pod is bound to it", sel, out, true, true},
		{"default selector, pod bound", config.NodeSelector{}, out, true, true},
		{"default selector, no pod", config.NodeSelector{}, in, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Wanted(tt.sel, tt.host, tt.needed); got != tt.want {
				t.Errorf("Wanted = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFieldsOf(t *testing.T) {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "1", "vcluster.loft.sh/fake-node": "true"}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule}}},
	}
	f := FieldsOf(n)
	if want := map[string]string{"a": "1"}; !reflect.DeepEqual(f.Labels, want) {
		t.Errorf("Labels = %v, want %v (the fake-node label is host-only)", f.Labels, want)
	}
	f.Taints[0].Value = "changed"
	f.Labels["b"] = "2"
	if n.Spec.Taints[0].Value != "v" || len(n.Labels) != 2 {
		t.Errorf("FieldsOf shares memory with the node: %+v", n)
	}
	if got := FieldsOf(&corev1.Node{}); got.Labels == nil || got.Taints != nil {
		t.Errorf("FieldsOf(empty) = %+v, want an empty labels map and no taints", got)
	}
}

func taint(key, value string, effect corev1.TaintEffect) corev1.Taint {
	return corev1.Taint{Key: key, Value: value, Effect: effect}
}

func TestMerge(t *testing.T) {
	noSched, noExec := corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute
	added := metav1.Unix(1700000000, 0)
	hostTaint := corev1.Taint{Key: "drain", Effect: noExec, TimeAdded: &added}
	base := Fields{
		Labels: map[string]string{"zone": "a", "tier": "gold", "team": "x"},
		Taints: []corev1.Taint{hostTaint, taint("gpu", "true", noSched)},
	}
	tests := []struct {
		name          string
		base          *Fields
		virtual, host Fields
		want          Fields
	}{
		{
			name:    "no base: the host wins, the virtual edit is dropped",
			base:    nil,
			virtual: Fields{Labels: map[string]string{"zone": "b"}},
			host:    Fields{Labels: map[string]string{"zone": "a"}, Taints: []corev1.Taint{hostTaint}},
			want:    Fields{Labels: map[string]string{"zone": "a"}, Taints: []corev1.Taint{hostTaint}},
		},
		{
			name:    "nothing changed",
			base:    &base,
			virtual: base, host: base,
			want: base,
		},
		{
			name:    "tenant adds, changes and removes labels",
			base:    &base,
			virtual: Fields{Labels: map[string]string{"zone": "a", "tier": "silver", "new": "yes"}, Taints: base.Taints},
			host:    base,
			want:    Fields{Labels: map[string]string{"zone": "a", "tier": "silver", "new": "yes"}, Taints: base.Taints},
		},
		{
			name:    "host and tenant change different keys: both kept",
			base:    &base,
			virtual: Fields{Labels: map[string]string{"zone": "a", "tier": "silver", "team": "x"}, Taints: base.Taints},
			host:    Fields{Labels: map[string]string{"zone": "b", "tier": "gold", "team": "x", "added": "by-host"}, Taints: base.Taints},
			want:    Fields{Labels: map[string]string{"zone": "b", "tier": "silver", "team": "x", "added": "by-host"}, Taints: base.Taints},
		},
		{
			name:    "both change one key: the tenant's change wins",
			base:    &base,
			virtual: Fields{Labels: map[string]string{"zone": "v", "tier": "gold", "team": "x"}, Taints: base.Taints},
			host:    Fields{Labels: map[string]string{"zone": "h", "tier": "gold", "team": "x"}, Taints: base.Taints},
			want:    Fields{Labels: map[string]string{"zone": "v", "tier": "gold", "team": "x"}, Taints: base.Taints},
		},
		{
			name:    "host removes a label the tenant left alone",
			base:    &base,
			virtual: base,
			host:    Fields{Labels: map[string]string{"zone": "a", "tier": "gold"}, Taints: base.Taints},
			want:    Fields{Labels: map[string]string{"zone": "a", "tier": "gold"}, Taints: base.Taints},
		},
		{
			name:    "tenant adds a taint and removes another; the host's keeps its timeAdded",
			base:    &base,
			virtual: Fields{Labels: base.Labels, Taints: []corev1.Taint{{Key: "drain", Effect: noExec}, taint("tenant", "only", noSched)}},
			host:    base,
			want:    Fields{Labels: base.Labels, Taints: []corev1.Taint{hostTaint, taint("tenant", "only", noSched)}},
		},
		{
			name:    "tenant changes a taint's value",
			base:    &base,
			virtual: Fields{Labels: base.Labels, Taints: []corev1.Taint{hostTaint, taint("gpu", "false", noSched)}},
			host:    base,
			want:    Fields{Labels: base.Labels, Taints: []corev1.Taint{hostTaint, taint("gpu", "false", noSched)}},
		},
		{
			name:    "a taint of the same key with another effect is another taint",
			base:    &base,
			virtual: Fields{Labels: base.Labels, Taints: append(append([]corev1.Taint{}, base.Taints...), taint("gpu", "true", noExec))},
			host:    base,
			want:    Fields{Labels: base.Labels, Taints: append(append([]corev1.Taint{}, base.Taints...), taint("gpu", "true", noExec))},
		},
		{
			name:    "host adds a taint, tenant removes all of its own",
			base:    &Fields{Labels: base.Labels, Taints: []corev1.Taint{taint("t", "1", noSched)}},
			virtual: Fields{Labels: base.Labels},
			host:    Fields{Labels: base.Labels, Taints: []corev1.Taint{taint("t", "1", noSched), taint("h", "2", noSched)}},
			want:    Fields{Labels: base.Labels, Taints: []corev1.Taint{taint("h", "2", noSched)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := struct{ v, h Fields }{tt.virtual, tt.host}
			got := Merge(tt.base, tt.virtual, tt.host)
			if !reflect.DeepEqual(got.Labels, tt.want.Labels) {
				t.Errorf("labels = %v\nwant %v", got.Labels, tt.want.Labels)
			}
			if !reflect.DeepEqual(got.Taints, tt.want.Taints) {
				t.Errorf("taints = %+v\nwant %+v", got.Taints, tt.want.Taints)
			}
			if !reflect.DeepEqual(before, struct{ v, h Fields }{tt.virtual, tt.host}) {
				t.Error("Merge modified its inputs")
			}
		})
	}
}

func TestWithFields(t *testing.T) {
	h := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"a": "1", "vcluster.loft.sh/fake-node": "true"}},
		Spec:       corev1.NodeSpec{Unschedulable: true, Taints: []corev1.Taint{taint("k", "v", corev1.TaintEffectNoSchedule)}},
	}
	same, changed := WithFields(h, FieldsOf(h))
	if changed || !reflect.DeepEqual(same, h) {
		t.Errorf("WithFields(h, FieldsOf(h)) changed = %v, node %+v", changed, same)
	}
	out, changed := WithFields(h, Fields{Labels: map[string]string{"a": "2", "b": "3"}})
	if !changed {
		t.Error("changed = false, want true")
	}
	if want := map[string]string{"a": "2", "b": "3", "vcluster.loft.sh/fake-node": "true"}; !reflect.DeepEqual(out.Labels, want) {
		t.Errorf("labels = %v, want %v (host-only labels kept)", out.Labels, want)
	}
	if len(out.Spec.Taints) != 0 || !out.Spec.Unschedulable {
		t.Errorf("spec = %+v, want no taints and the rest unchanged", out.Spec)
	}
	if h.Labels["a"] != "1" || len(h.Spec.Taints) != 1 {
		t.Errorf("WithFields modified the host node: %+v", h)
	}
}

func hostNode() *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: "worker-1", UID: "host-uid", ResourceVersion: "42",
			Labels: map[string]string{"kubernetes.io/hostname": "worker-1", "pool": "tenants"},
			Annotations: map[string]string{
				"node.alpha.kubernetes.io/ttl":                     "0",
				"vcluster.loft.sh/managed-annotations":             "x",
				"clustersync.io/host-node":                         "false",
				"kubectl.kubernetes.io/last-applied-configuration": "{}",
			},
		},
		Spec: corev1.NodeSpec{PodCIDR: "10.244.1.0/24", PodCIDRs: []string{"10.244.1.0/24"}, ProviderID: "kwok://worker-1",
			Unschedulable: true, Taints: []corev1.Taint{taint("host", "t", corev1.TaintEffectNoSchedule)}},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourcePods: resource.MustParse("50")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("7500m"), corev1.ResourcePods: resource.MustParse("50")},
			Phase:       corev1.NodeRunning,
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.7"}, {Type: corev1.NodeExternalIP, Address: "203.0.113.7"},
				{Type: corev1.NodeHostName, Address: "worker-1"}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo:        corev1.NodeSystemInfo{KubeletVersion: "v1.37.0", OSImage: "Debian", Architecture: "arm64"},
			Images:          []corev1.ContainerImage{{Names: []string{"nginx:1.27"}, SizeBytes: 1000}},
		},
	}
}

func TestVirtualNode(t *testing.T) {
	kubelet := syncer.KubeletEndpoint{IP: "127.0.0.1", Port: 10250}
	tests := []struct {
		name       string
		o          CopyOptions
		wantAddrs  []corev1.NodeAddress
		wantPort   int32
		wantImages int
	}{
		{
			name: "kubelet proxy, images kept",
			o:    CopyOptions{Kubelet: kubelet},
			wantAddrs: []corev1.NodeAddress{{Type: corev1.NodeInternalDNS, Address: "127.0.0.1"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.7"},
				{Type: corev1.NodeExternalIP, Address: "203.0.113.7"}, {Type: corev1.NodeHostName, Address: "worker-1"}},
			wantPort: 10250, wantImages: 1,
		},
		{
			name: "no kubelet proxy, images cleared",
			o:    CopyOptions{ClearImageStatus: true},
			wantAddrs: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.7"}, {Type: corev1.NodeExternalIP, Address: "203.0.113.7"},
				{Type: corev1.NodeHostName, Address: "worker-1"}},
			wantPort: 0, wantImages: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hostNode()
			before := h.DeepCopy()
			f := Fields{Labels: map[string]string{"pool": "tenants", "edited": "yes"}}
			n := VirtualNode(h, f, tt.o)
			if n.Name != "worker-1" || n.UID != "" || n.ResourceVersion != "" {
				t.Errorf("meta = %+v, want the name only", n.ObjectMeta)
			}
			if !reflect.DeepEqual(n.Labels, f.Labels) {
				t.Errorf("labels = %v, want %v", n.Labels, f.Labels)
			}
			if want := map[string]string{"node.alpha.kubernetes.io/ttl": "0", AnnotationHostNode: "true"}; !reflect.DeepEqual(n.Annotations, want) {
				t.Errorf("annotations = %v, want %v", n.Annotations, want)
			}
			if !IsCopy(n) || IsFake(n) || !Managed(n) {
				t.Errorf("IsCopy %v IsFake %v Managed %v, want a managed copy", IsCopy(n), IsFake(n), Managed(n))
			}
			if len(n.Spec.Taints) != 0 || !n.Spec.Unschedulable || n.Spec.PodCIDR != "10.244.1.0/24" || n.Spec.ProviderID != "kwok://worker-1" {
				t.Errorf("spec = %+v, want the host's with f's (no) taints", n.Spec)
			}
			if !reflect.DeepEqual(n.Status.Addresses, tt.wantAddrs) || n.Status.DaemonEndpoints.KubeletEndpoint.Port != tt.wantPort {
				t.Errorf("addresses %v port %d, want %v %d", n.Status.Addresses, n.Status.DaemonEndpoints.KubeletEndpoint.Port, tt.wantAddrs, tt.wantPort)
			}
			if len(n.Status.Images) != tt.wantImages {
				t.Errorf("images = %v, want %d", n.Status.Images, tt.wantImages)
			}
			if cpu := n.Status.Allocatable[corev1.ResourceCPU]; cpu.String() != "7500m" || n.Status.NodeInfo.Architecture != "arm64" ||
				len(n.Status.Conditions) != 1 || n.Status.Phase != corev1.NodeRunning {
				t.Errorf("status = %+v, want the host's", n.Status)
			}
			if !reflect.DeepEqual(h, before) {
				t.Error("VirtualNode modified the host node")
			}
			n.Labels["x"], n.Status.Conditions[0].Reason = "y", "changed"
			if !reflect.DeepEqual(f.Labels, map[string]string{"pool": "tenants", "edited": "yes"}) || h.Status.Conditions[0].Reason != "KubeletReady" {
				t.Error("VirtualNode shares memory with its inputs")
			}
		})
	}
}

func TestUpdated(t *testing.T) {
	h := hostNode()
	want := VirtualNode(h, FieldsOf(h), CopyOptions{})
	cur := want.DeepCopy()
	cur.UID, cur.ResourceVersion = "virtual-uid", "7"
	if _, meta, status := Updated(cur, want); meta || status {
		t.Errorf("in sync: meta %v status %v, want no change", meta, status)
	}

	// A fake node (no podCIDR) becomes the copy; the copy becomes a fake
	// node keeping its immutable fields.
	fake := FakeNode("worker-1", h, syncer.KubeletEndpoint{}, TenantAddresses{})
	fake.UID, fake.ResourceVersion = "virtual-uid", "7"
	out, meta, status := Updated(fake, want)
	if !meta || !status || out.UID != "virtual-uid" || out.ResourceVersion != "7" {
		t.Errorf("fake → copy: meta %v status %v, meta %+v", meta, status, out.ObjectMeta)
	}
	if IsFake(out) || !IsCopy(out) || out.Spec.PodCIDR != "10.244.1.0/24" || !out.Spec.Unschedulable {
		t.Errorf("fake → copy: %+v", out)
	}
	back, meta, _ := Updated(cur, FakeNode("worker-1", h, syncer.KubeletEndpoint{}, TenantAddresses{}))
	if !meta || !IsFake(back) || IsCopy(back) || back.Spec.PodCIDR != "10.244.1.0/24" || back.Spec.ProviderID != "kwok://worker-1" ||
		len(back.Spec.Taints) != 0 || back.Spec.Unschedulable {
		t.Errorf("copy → fake: %+v", back)
	}
	if cur.Annotations[AnnotationHostNode] != "true" {
		t.Error("Updated modified cur")
	}
}

// The virtual scheduler's copies keep the tenant's labels and taints
// without writing them to the host, across syncs, and follow the host's
// own changes.
func TestTenantFields(t *testing.T) {
	noSched := corev1.TaintEffectNoSchedule
	host := Fields{Labels: map[string]string{"zone": "a", "tier": "gold"}}
	// First sync: the copy is the host's.
	copied := TenantFields(nil, nil, Fields{}, host)
	if !reflect.DeepEqual(copied.Labels, host.Labels) || len(copied.Taints) != 0 {
		t.Fatalf("first sync: %+v, want the host's %+v", copied, host)
	}
	// The tenant labels and taints the copy and removes a host label.
	tenant := Fields{Labels: map[string]string{"zone": "a", "e2e": "42"}, Taints: []corev1.Taint{taint("e2e", "x", noSched)}}
	got := TenantFields(&copied, &host, tenant, host)
	if !reflect.DeepEqual(got, tenant) {
		t.Errorf("tenant's edit: %+v, want %+v", got, tenant)
	}
	// Next sync, the host unchanged: the tenant's edit stays.
	again := TenantFields(&got, &host, got, host)
	if !reflect.DeepEqual(again, tenant) {
		t.Errorf("second sync: %+v, want the tenant's %+v", again, tenant)
	}
	// The host changes a label and adds one: both reach the copy; the
	// tenant's own keys stay.
	host2 := Fields{Labels: map[string]string{"zone": "b", "tier": "gold", "new": "yes"}}
	want := Fields{Labels: map[string]string{"zone": "b", "e2e": "42", "new": "yes"}, Taints: tenant.Taints}
	if got := TenantFields(&again, &host, again, host2); !reflect.DeepEqual(got, want) {
		t.Errorf("host change: %+v, want %+v", got, want)
	}
	// Without a base (the syncer restarted) the host's win.
	if got := TenantFields(nil, nil, tenant, host); !reflect.DeepEqual(got.Labels, host.Labels) || len(got.Taints) != 0 {
		t.Errorf("no base: %+v, want the host's", got)
	}
}

// With proxyKubelets a real node's copy is reached by the tenant's node
// exporters at the tenant addresses, which replace the host's InternalIP
// and Hostname; the proxy keeps the InternalDNS, other addresses stay.
func TestVirtualNodeTenantAddresses(t *testing.T) {
	h := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1"}, Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "192.168.1.10"}, {Type: corev1.NodeExternalIP, Address: "203.0.113.10"},
		{Type: corev1.NodeHostName, Address: "worker-1"}, {Type: corev1.NodeInternalDNS, Address: "worker-1.internal"},
	}}}
	o := CopyOptions{Kubelet: syncer.KubeletEndpoint{IP: "127.0.0.1", Port: 10250},
		Tenant: TenantAddresses{Hostname: "worker-1.nodes.vcluster.com", IP: "10.96.0.42"}}
	got := VirtualNode(h, FieldsOf(h), o).Status.Addresses
	want := []corev1.NodeAddress{
		{Type: corev1.NodeInternalDNS, Address: "127.0.0.1"}, {Type: corev1.NodeInternalIP, Address: "10.96.0.42"},
		{Type: corev1.NodeExternalIP, Address: "203.0.113.10"}, {Type: corev1.NodeHostName, Address: "worker-1.nodes.vcluster.com"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("addresses %v\nwant %v", got, want)
	}
	if h.Status.Addresses[0].Address != "192.168.1.10" {
		t.Error("the host node was changed")
	}
}
