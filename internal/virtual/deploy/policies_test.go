package deploy

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/clustersync/clustersync/charts"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	"github.com/clustersync/clustersync/internal/virtual/dns"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// renderValues renders the chart as release vc1 in ns1 with a values file
// holding data and sets, and returns the manifests with the configuration
// they mean.
func renderValues(t *testing.T, data string, sets ...string) map[string]string {
	t.Helper()
	var files []string
	if data != "" {
		f := filepath.Join(t.TempDir(), "values.yaml")
		if err := os.WriteFile(f, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	vals, _, err := Values(files, sets)
	if err != nil {
		t.Fatal(err)
	}
	m, err := charts.Render(ChartName, "vc1", "ns1", vals)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The defaults: a ResourceQuota and a LimitRange with the configuration's
// values, labelled as the release's objects.
func TestChartQuotaAndLimits(t *testing.T) {
	_, cfg, err := Values(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := renderValues(t, "", "policies.resourceQuota.labels.team=a", "policies.resourceQuota.annotations.note=b")
	q := decode[corev1.ResourceQuota](t, m, "ResourceQuota/vc-vc1")
	if q.Namespace != "ns1" || q.Labels["release"] != "vc1" || q.Labels["team"] != "a" || q.Annotations["note"] != "b" {
		t.Errorf("quota metadata %+v", q.ObjectMeta)
	}
	want := cfg.Policies.ResourceQuota.Quota
	if len(q.Spec.Hard) != len(want) {
		t.Errorf("hard %v, want %v", q.Spec.Hard, want)
	}
	for k, v := range want {
		if got, ok := q.Spec.Hard[corev1.ResourceName(k)]; !ok || got.Cmp(v) != 0 {
			t.Errorf("hard[%s] = %s, want %s", k, got.String(), v.String())
		}
	}
	for k, v := range map[corev1.ResourceName]string{"count/pods": "20", "services.nodeports": "0", "limits.memory": "40Gi"} {
		if got := q.Spec.Hard[k]; got.Cmp(resource.MustParse(v)) != 0 {
			t.Errorf("hard[%s] = %s, want %s", k, got.String(), v)
		}
	}
	if len(q.Spec.Scopes) != 0 || q.Spec.ScopeSelector != nil {
		t.Errorf("scopes %v %v, want none", q.Spec.Scopes, q.Spec.ScopeSelector)
	}

	lr := decode[corev1.LimitRange](t, m, "LimitRange/vc-vc1")
	if len(lr.Spec.Limits) != 1 || lr.Spec.Limits[0].Type != corev1.LimitTypeContainer {
		t.Fatalf("limits %+v, want one Container item", lr.Spec.Limits)
	}
	item := lr.Spec.Limits[0]
	same := func(what string, got corev1.ResourceList, want map[string]resource.Quantity) {
		if len(got) != len(want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
		for k, v := range want {
			if g := got[corev1.ResourceName(k)]; g.Cmp(v) != 0 {
				t.Errorf("%s[%s] = %s, want %s", what, k, g.String(), v.String())
			}
		}
	}
	same("default", item.Default, cfg.Policies.LimitRange.Default)
	same("defaultRequest", item.DefaultRequest, cfg.Policies.LimitRange.DefaultRequest)
	if item.Default.Memory().String() != "512Mi" || item.DefaultRequest.Cpu().String() != "100m" {
		t.Errorf("container defaults %v / %v", item.Default, item.DefaultRequest)
	}
	if item.Min != nil || item.Max != nil {
		t.Errorf("min %v max %v, want both left out", item.Min, item.Max)
	}

	// Scopes, a scope selector, min and max as written.
	m = renderValues(t, `policies:
  resourceQuota:
    scopes: [NotBestEffort]
    scopeSelector:
      matchExpressions:
        - {scopeName: PriorityClass, operator: In, values: [low]}
  limitRange:
    min: {cpu: 10m}
    max: {memory: 4Gi}
`)
	q = decode[corev1.ResourceQuota](t, m, "ResourceQuota/vc-vc1")
	if !slices.Equal(q.Spec.Scopes, []corev1.ResourceQuotaScope{"NotBestEffort"}) || q.Spec.ScopeSelector == nil ||
		q.Spec.ScopeSelector.MatchExpressions[0].ScopeName != "PriorityClass" {
		t.Errorf("scopes %v, selector %+v", q.Spec.Scopes, q.Spec.ScopeSelector)
	}
	item = decode[corev1.LimitRange](t, m, "LimitRange/vc-vc1").Spec.Limits[0]
	if item.Min.Cpu().String() != "10m" || item.Max.Memory().String() != "4Gi" || len(item.Min) != 1 || len(item.Max) != 1 {
		t.Errorf("min %v max %v", item.Min, item.Max)
	}
}

// The chart decides "auto" as config.ResourceQuota.On and
// config.LimitRange.On do, for every combination.
func TestChartPolicyAutoRule(t *testing.T) {
	for _, q := range []string{"true", "false", "auto"} {
		for _, lr := range []string{"true", "false", "auto"} {
			sets := []string{"policies.resourceQuota.enabled=" + q, "policies.limitRange.enabled=" + lr}
			_, cfg, err := Values(nil, sets)
			if err != nil {
				t.Fatal(err)
			}
			m := renderValues(t, "", sets...)
			_, gotQ := m["ResourceQuota/vc-vc1"]
			_, gotLR := m["LimitRange/vc-vc1"]
			p := cfg.Policies
			if wantQ, wantLR := p.ResourceQuota.On(p.LimitRange), p.LimitRange.On(p.ResourceQuota); gotQ != wantQ || gotLR != wantLR {
				t.Errorf("quota %s, limit range %s: chart makes quota %t, limit range %t; config says %t, %t", q, lr, gotQ, gotLR, wantQ, wantLR)
			}
		}
	}
	m := renderValues(t, "", "policies.networkPolicy.enabled=false")
	for k := range m {
		if k == "NetworkPolicy/vc-work-vc1" || k == "NetworkPolicy/vc-cp-vc1" {
			t.Errorf("networkPolicy.enabled=false: %s rendered", k)
		}
	}
}

// Every container of the control plane pod sets its own requests and
// limits of cpu, memory and ephemeral storage, so the LimitRange's
// defaults (a 512Mi memory limit, 3Gi of ephemeral storage requested)
// never apply to it, and the pod fits the default quota. It requests no
// ephemeral storage, which a node without local storage capacity
// isolation (the local real node) reports none of.
func TestChartControlPlaneResources(t *testing.T) {
	_, cfg, err := Values(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	quota := cfg.Policies.ResourceQuota.Quota
	for _, sets := range [][]string{nil, {"controlPlane.statefulSet.resources.limits.memory=4Gi", "controlPlane.statefulSet.resources.requests.cpu=1"}} {
		sts := decode[appsv1.StatefulSet](t, renderValues(t, "", sets...), "StatefulSet/vc1")
		spec := sts.Spec.Template.Spec
		requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
		for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
				if _, ok := c.Resources.Requests[r]; !ok {
					t.Errorf("%v: container %s requests no %s", sets, c.Name, r)
				}
				if _, ok := c.Resources.Limits[r]; !ok {
					t.Errorf("%v: container %s sets no %s limit", sets, c.Name, r)
				}
			}
			if c.Name == "init" {
				continue // runs before the others; smaller than their sum
			}
			for r, v := range c.Resources.Requests {
				s := requests[r]
				s.Add(v)
				requests[r] = s
			}
			for r, v := range c.Resources.Limits {
				s := limits[r]
				s.Add(v)
				limits[r] = s
			}
		}
		for r, v := range requests {
			if max := quota["requests."+string(r)]; v.Cmp(max) > 0 {
				t.Errorf("%v: the pod requests %s %s, more than the quota's %s", sets, v.String(), r, max.String())
			}
		}
		for r, v := range limits {
			if max := quota["limits."+string(r)]; v.Cmp(max) > 0 {
				t.Errorf("%v: the pod's %s limit %s is more than the quota's %s", sets, r, v.String(), max.String())
			}
		}
		if sets == nil {
			if requests.Memory().String() != "576Mi" || requests.Cpu().String() != "420m" || !requests.StorageEphemeral().IsZero() {
				t.Errorf("pod requests %v, want 420m, 576Mi and no ephemeral storage (statefulset.yaml's comment)", requests)
			}
			continue
		}
		for _, c := range spec.Containers {
			if c.Name == "syncer" && (c.Resources.Limits.Memory().String() != "4Gi" || c.Resources.Requests.Cpu().String() != "1" ||
				c.Resources.Limits.Cpu().String() != "1" || c.Resources.Requests.Memory().String() != "256Mi") {
				t.Errorf("syncer resources %+v, want the values' memory limit and cpu request, the chart's other defaults", c.Resources)
			}
		}
	}
}

// endpoint is one end of a connection in the policy model: a pod (with
// namespace and labels) or an address outside the cluster (namespace "").
type endpoint struct {
	name      string
	namespace string
	labels    map[string]string
	ip        string
}

// allows evaluates NetworkPolicies (all of namespace ns1) as the API
// documents them: a pod selected by a policy of a direction accepts only
// what one of that direction's rules allows; an ipBlock matches any address
// in it, pods' too (as Calico and Cilium do).
func allows(t *testing.T, policies []networkingv1.NetworkPolicy, from, to endpoint, port int, proto corev1.Protocol) bool {
	t.Helper()
	selects := func(p networkingv1.NetworkPolicy, e endpoint) bool {
		if e.namespace != p.Namespace {
			return false
		}
		s, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector)
		if err != nil {
			t.Fatal(err)
		}
		return s.Matches(labels.Set(e.labels))
	}
	peerMatches := func(ns string, peer networkingv1.NetworkPolicyPeer, e endpoint) bool {
		if peer.IPBlock != nil {
			return inBlock(t, peer.IPBlock, e.ip)
		}
		if e.namespace == "" {
			return false
		}
		if peer.NamespaceSelector == nil {
			if e.namespace != ns {
				return false
			}
		} else {
			s, err := metav1.LabelSelectorAsSelector(peer.NamespaceSelector)
			if err != nil {
				t.Fatal(err)
			}
			if !s.Matches(labels.Set{"kubernetes.io/metadata.name": e.namespace}) {
				return false
			}
		}
		if peer.PodSelector == nil {
			return true
		}
		s, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
		if err != nil {
			t.Fatal(err)
		}
		return s.Matches(labels.Set(e.labels))
	}
	portMatches := func(ports []networkingv1.NetworkPolicyPort) bool {
		if len(ports) == 0 {
			return true
		}
		for _, p := range ports {
			pr := corev1.ProtocolTCP
			if p.Protocol != nil {
				pr = *p.Protocol
			}
			if pr == proto && (p.Port == nil || p.Port.IntValue() == port) {
				return true
			}
		}
		return false
	}
	side := func(typ networkingv1.PolicyType, self, other endpoint) bool {
		selected, allowed := false, false
		for _, p := range policies {
			if !slices.Contains(p.Spec.PolicyTypes, typ) || !selects(p, self) {
				continue
			}
			selected = true
			if typ == networkingv1.PolicyTypeEgress {
				for _, r := range p.Spec.Egress {
					if portMatches(r.Ports) && (len(r.To) == 0 || slices.ContainsFunc(r.To, func(peer networkingv1.NetworkPolicyPeer) bool { return peerMatches(p.Namespace, peer, other) })) {
						allowed = true
					}
				}
			} else {
				for _, r := range p.Spec.Ingress {
					if portMatches(r.Ports) && (len(r.From) == 0 || slices.ContainsFunc(r.From, func(peer networkingv1.NetworkPolicyPeer) bool { return peerMatches(p.Namespace, peer, other) })) {
						allowed = true
					}
				}
			}
		}
		return !selected || allowed
	}
	return side(networkingv1.PolicyTypeEgress, from, to) && side(networkingv1.PolicyTypeIngress, to, from)
}

func inBlock(t *testing.T, b *networkingv1.IPBlock, ip string) bool {
	t.Helper()
	if ip == "" {
		return false
	}
	a := netip.MustParseAddr(ip)
	in := func(cidr string) bool {
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			t.Fatalf("ipBlock %q: %v", cidr, err)
		}
		return p.Contains(a)
	}
	return in(b.CIDR) && !slices.ContainsFunc(b.Except, in)
}

func policiesOf(t *testing.T, m map[string]string) []networkingv1.NetworkPolicy {
	t.Helper()
	var out []networkingv1.NetworkPolicy
	for _, k := range []string{"NetworkPolicy/vc-work-vc1", "NetworkPolicy/vc-cp-vc1"} {
		p := decode[networkingv1.NetworkPolicy](t, m, k)
		if p.Namespace != "ns1" || p.Labels["release"] != "vc1" {
			t.Errorf("%s metadata %+v", k, p.ObjectMeta)
		}
		out = append(out, *p)
	}
	return out
}

type conn struct {
	from, to endpoint
	port     int
	proto    corev1.Protocol
	want     bool
}

func checkConns(t *testing.T, what string, policies []networkingv1.NetworkPolicy, conns []conn) {
	t.Helper()
	for _, c := range conns {
		if got := allows(t, policies, c.from, c.to, c.port, c.proto); got != c.want {
			t.Errorf("%s: %s -> %s:%d/%s allowed %t, want %t", what, c.from.name, c.to.name, c.port, c.proto, got, c.want)
		}
	}
}

// The NetworkPolicies: what tenant pods, the control plane pod and pods of
// other namespaces may reach, port by port.
func TestChartNetworkPolicy(t *testing.T) {
	m := renderValues(t, "")
	policies := policiesOf(t, m)
	sts := decode[appsv1.StatefulSet](t, m, "StatefulSet/vc1")

	tenant := endpoint{"tenant pod", "ns1", map[string]string{translate.LabelManagedBy: "vc1", "app": "web"}, "10.244.0.5"}
	tenant2 := endpoint{"another tenant pod", "ns1", map[string]string{translate.LabelManagedBy: "vc1"}, "10.244.0.6"}
	cp := endpoint{"control plane pod", "ns1", sts.Spec.Template.Labels, "10.244.0.4"}
	// A pod of another namespace, even one labelled as vc1's.
	other := endpoint{"other namespace's pod", "other", map[string]string{translate.LabelManagedBy: "vc1", "release": "vc1", "app": "vcluster"}, "10.244.1.7"}
	unmanaged := endpoint{"unmanaged pod of ns1", "ns1", map[string]string{"app": "x"}, "10.244.0.9"}
	kubeDNS := endpoint{"host kube-dns", "kube-system", map[string]string{"k8s-app": "kube-dns"}, "10.244.2.2"}
	kubeSystem := endpoint{"other kube-system pod", "kube-system", map[string]string{"k8s-app": "metrics-server"}, "10.244.2.3"}
	hostAPI := endpoint{"host API server", "", nil, "10.0.0.1"}
	internet := endpoint{"internet", "", nil, "1.1.1.1"}
	fallback := endpoint{"fallback DNS", "", nil, "8.8.8.8"}
	private := endpoint{"private address", "", nil, "192.168.1.10"}
	user := endpoint{"user", "", nil, "203.0.113.9"}
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP

	// Every port of the control plane pod: the containers' and probes',
	// and the loopback ones (etcd, the syncer's kubelet proxy).
	cpPorts := map[int]bool{controlplane.PodPorts.Etcd: true, controlplane.PodPorts.EtcdPeer: true, 10250: true}
	for _, c := range slices.Concat(sts.Spec.Template.Spec.InitContainers, sts.Spec.Template.Spec.Containers) {
		for _, p := range c.Ports {
			cpPorts[int(p.ContainerPort)] = true
		}
		for _, p := range []*corev1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
			if p != nil && p.HTTPGet != nil {
				cpPorts[p.HTTPGet.Port.IntValue()] = true
			}
		}
	}
	api := controlplane.PodPorts.APIServer
	var conns []conn
	for p := range cpPorts {
		for _, proto := range []corev1.Protocol{tcp, udp} {
			reachable := (p == api && proto == tcp) || p == dns.Port
			conns = append(conns,
				conn{tenant, cp, p, proto, reachable},
				conn{other, cp, p, proto, p == api && proto == tcp},
				conn{user, cp, p, proto, p == api && proto == tcp},
				conn{cp, cp, p, proto, true})
		}
	}
	// Each policy alone keeps tenant pods from the control plane's other
	// ports: the tenant pods' egress and the control plane pod's ingress.
	for p := range cpPorts {
		for _, proto := range []corev1.Protocol{tcp, udp} {
			reachable := (p == api && proto == tcp) || p == dns.Port
			checkConns(t, "tenant pods' policy alone", policies[:1], []conn{{tenant, cp, p, proto, reachable}})
			checkConns(t, "control plane's policy alone", policies[1:], []conn{{tenant, cp, p, proto, reachable}})
		}
	}
	if !cpPorts[api] || !cpPorts[dns.Port] || !cpPorts[controlplane.PodEtcdHealthPort] || !cpPorts[9444] {
		t.Errorf("control plane ports %v lack the API server's, DNS's, etcd's health or the metrics API's", cpPorts)
	}
	conns = append(conns,
		// Tenant pods among themselves, and from the control plane.
		conn{tenant, tenant2, 8080, tcp, true},
		conn{tenant2, tenant, 53, udp, true},
		conn{cp, tenant, 8080, tcp, true},
		conn{cp, tenant, 443, tcp, true},
		// Nothing from other namespaces or unmanaged pods to tenant pods.
		conn{other, tenant, 8080, tcp, false},
		conn{unmanaged, tenant, 8080, tcp, false},
		conn{kubeSystem, tenant, 10250, tcp, false},
		conn{user, tenant, 80, tcp, false},
		// Tenant pods to the host: its DNS, not its other pods or addresses.
		conn{tenant, kubeDNS, 53, udp, true},
		conn{tenant, kubeDNS, 53, tcp, true},
		conn{tenant, kubeDNS, 9153, tcp, false},
		conn{tenant, kubeSystem, 53, udp, false},
		conn{tenant, kubeSystem, 443, tcp, false},
		conn{tenant, other, 8080, tcp, false},
		conn{tenant, unmanaged, 8080, tcp, false},
		conn{tenant, hostAPI, 443, tcp, false},
		conn{tenant, hostAPI, 6443, tcp, false},
		conn{tenant, private, 22, tcp, false},
		conn{tenant, private, 53, udp, false},
		// The fallback DNS and the outside world.
		conn{tenant, fallback, 53, udp, true},
		conn{tenant, internet, 443, tcp, true},
		conn{tenant, internet, 5432, tcp, true},
		// The control plane to the host's API server and DNS.
		conn{cp, hostAPI, 443, tcp, true},
		conn{cp, hostAPI, 6443, tcp, true},
		conn{cp, kubeDNS, 53, udp, true},
		conn{cp, kubeDNS, 53, tcp, true},
		conn{cp, kubeSystem, 53, udp, false},
		conn{cp, other, 8080, tcp, false},
		conn{cp, unmanaged, 8080, tcp, false},
		conn{cp, private, 2379, tcp, false},
		conn{cp, internet, 80, tcp, false},
	)
	checkConns(t, "defaults", policies, conns)

	// The keys: no fallback DNS, outside world 1.0.0.0/8 but 1.1.1.0/24,
	// extra rules for either side, an external etcd.
	m = renderValues(t, `policies:
  networkPolicy:
    fallbackDns: ""
    outgoingConnections:
      ipBlock: {cidr: 1.0.0.0/8, except: [1.1.1.0/24]}
    extraWorkloadRules:
      - to: [{ipBlock: {cidr: 192.168.1.0/24}}]
        ports: [{port: 5432}]
    extraControlPlaneRules:
      - to: [{ipBlock: {cidr: 192.168.1.0/24}}]
        ports: [{port: 8200}]
controlPlane:
  backingStore:
    etcd:
      embedded: {enabled: false}
      external: {enabled: true, endpoint: "https://etcd.example:12379"}
`)
	policies = policiesOf(t, m)
	checkConns(t, "keys", policies, []conn{
		{tenant, fallback, 53, udp, false},
		{tenant, internet, 443, tcp, false},
		{tenant, endpoint{"1.2.3.4", "", nil, "1.2.3.4"}, 443, tcp, true},
		{tenant, private, 5432, tcp, true},
		{tenant, private, 5433, tcp, false},
		{cp, private, 8200, tcp, true},
		{cp, private, 5432, tcp, false},
		{cp, endpoint{"external etcd", "", nil, "198.51.100.1"}, 12379, tcp, true},
		{cp, endpoint{"external etcd", "", nil, "198.51.100.1"}, 2379, tcp, false},
		{tenant, kubeDNS, 53, udp, true},
	})
	m = renderValues(t, "", "controlPlane.backingStore.etcd.embedded.enabled=false",
		"controlPlane.backingStore.etcd.external.enabled=true", "controlPlane.backingStore.etcd.external.endpoint=http://etcd")
	checkConns(t, "external etcd without a port", policiesOf(t, m), []conn{
		{cp, endpoint{"external etcd", "", nil, "198.51.100.1"}, 2379, tcp, true},
	})
}

// Every connection that vCluster's chart allows for the same file, ours
// allows too: the flows of vc-work-NAME and vc-cp-NAME in
// https://github.com/loft-sh/vcluster/blob/v0.36.1/chart/templates/networkpolicy.yaml,
// with the user's rules of the 0.32+ shape. Left out are the flows to and
// from the vCluster Platform's pods (app: loft) and vCluster's snapshot
// pods, which clustersync has not, and host kube-dns ports other than 53
// (vCluster allows the control plane every port of it).
func TestChartNetworkPolicyAsVCluster(t *testing.T) {
	m := renderValues(t, `policies:
  networkPolicy:
    enabled: true
    workload:
      publicEgress: {enabled: true, cidr: 0.0.0.0/0, except: [10.0.0.0/8]}
      ingress:
        - from: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ingress}}}]
          ports: [{port: 8080}]
      egress:
        - to: [{ipBlock: {cidr: 10.1.0.0/16}}]
          ports: [{port: 5432}]
    controlPlane:
      ingress:
        - from: [{ipBlock: {cidr: 10.2.0.0/16}}]
          ports: [{port: 9444}]
      egress:
        - to: [{ipBlock: {cidr: 10.3.0.0/16}}]
          ports: [{port: 8200}]
`)
	policies := policiesOf(t, m)
	sts := decode[appsv1.StatefulSet](t, m, "StatefulSet/vc1")
	// vCluster's selectors: managed-by for the workloads, release for the
	// control plane; clustersync's pods carry both.
	if sts.Spec.Template.Labels["release"] != "vc1" {
		t.Fatalf("control plane pod labels %v lack vCluster's release: vc1", sts.Spec.Template.Labels)
	}
	work := endpoint{"workload", "ns1", map[string]string{translate.LabelManagedBy: "vc1"}, "10.244.0.5"}
	work2 := endpoint{"another workload", "ns1", map[string]string{translate.LabelManagedBy: "vc1"}, "10.244.0.6"}
	cp := endpoint{"control plane", "ns1", sts.Spec.Template.Labels, "10.244.0.4"}
	anyone := endpoint{"anyone", "", nil, "203.0.113.9"}
	kubeDNS := endpoint{"host kube-dns", "kube-system", map[string]string{"k8s-app": "kube-dns"}, "10.244.2.2"}
	hostAPI := endpoint{"host API server", "", nil, "10.96.0.1"}
	ingress := endpoint{"ingress controller", "ingress", map[string]string{"app": "nginx"}, "10.244.3.3"}
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	checkConns(t, "vCluster's flows", policies, []conn{
		// vc-work: egress to the control plane's DNS and API server, to
		// other workloads, public egress, the file's egress; ingress from
		// the control plane, other workloads, the file's ingress.
		{work, cp, 1053, udp, true}, {work, cp, 1053, tcp, true}, {work, cp, 8443, tcp, true},
		{work, work2, 9000, tcp, true}, {work, work2, 53, udp, true},
		{work, endpoint{"public", "", nil, "1.1.1.1"}, 443, tcp, true},
		{work, endpoint{"public, excepted", "", nil, "10.9.9.9"}, 443, tcp, false},
		{work, endpoint{"workload.egress", "", nil, "10.1.2.3"}, 5432, tcp, true},
		{cp, work, 9000, tcp, true},
		{ingress, work, 8080, tcp, true},
		{ingress, work, 8081, tcp, false},
		// vc-cp: ingress to the API server from anywhere, from the control
		// plane's peers, the file's ingress; egress to host kube-dns, the
		// host API server on 443, 8443 and 6443, the control plane's
		// peers, the workloads, the file's egress.
		{anyone, cp, 8443, tcp, true},
		{cp, cp, 2379, tcp, true},
		{endpoint{"controlPlane.ingress", "", nil, "10.2.0.9"}, cp, 9444, tcp, true},
		{cp, kubeDNS, 53, udp, true}, {cp, kubeDNS, 53, tcp, true},
		{cp, hostAPI, 443, tcp, true}, {cp, hostAPI, 8443, tcp, true}, {cp, hostAPI, 6443, tcp, true},
		{cp, work, 10250, tcp, true},
		{cp, endpoint{"controlPlane.egress", "", nil, "10.3.0.9"}, 8200, tcp, true},
	})
}
