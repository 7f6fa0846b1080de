package controller

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
)

func TestDistribution(t *testing.T) {
	for v, want := range map[string]string{
		"v1.31.4+k3s1": mgmtv1.DistributionK3s, "v1.30.2+rke2r1": mgmtv1.DistributionRKE2, "v1.37.0": "", "v1.29.3-eks-adc7111": "",
	} {
		if got := Distribution(v); got != want {
			t.Errorf("Distribution(%q) = %q, want %q", v, got, want)
		}
	}
}

func TestApplyCapabilityAnnotations(t *testing.T) {
	detected := mgmtv1.Capabilities{TaintSupport: ptr.To(true), PSPEnabled: ptr.To(false),
		LoadBalancerCapabilities: &mgmtv1.LoadBalancerCapabilities{Enabled: ptr.To(false)}}
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		check    func(mgmtv1.Capabilities) bool
		problems []string
	}{
		{"none", nil, func(c mgmtv1.Capabilities) bool { return reflect.DeepEqual(c, detected) }, nil},
		{"bool", map[string]string{"capabilities.clustersync.io/pspEnabled": "true"},
			func(c mgmtv1.Capabilities) bool { return *c.PSPEnabled }, nil},
		{"rancher alias", map[string]string{"capabilities.cattle.io/taintSupport": "false"},
			func(c mgmtv1.Capabilities) bool { return !*c.TaintSupport }, nil},
		{"ours wins over the alias", map[string]string{"capabilities.cattle.io/nodePortRange": "30000-30100", "capabilities.clustersync.io/nodePortRange": "31000-31100"},
			func(c mgmtv1.Capabilities) bool { return c.NodePortRange == "31000-31100" }, nil},
		{"JSON list", map[string]string{"capabilities.cattle.io/ingressCapabilities": `[{"ingressProvider":"nginx","customDefaultBackend":true}]`},
			func(c mgmtv1.Capabilities) bool {
				return len(c.IngressCapabilities) == 1 && c.IngressCapabilities[0].IngressProvider == "nginx" && *c.IngressCapabilities[0].CustomDefaultBackend
			}, nil},
		{"JSON object", map[string]string{"capabilities.clustersync.io/loadBalancerCapabilities": `{"enabled":true,"provider":"metallb","protocolsSupported":["TCP"]}`},
			func(c mgmtv1.Capabilities) bool {
				return *c.LoadBalancerCapabilities.Enabled && c.LoadBalancerCapabilities.Provider == "metallb"
			}, nil},
		{"bad bool kept out", map[string]string{"capabilities.clustersync.io/pspEnabled": "yes please"},
			func(c mgmtv1.Capabilities) bool { return !*c.PSPEnabled }, []string{"capabilities.clustersync.io/pspEnabled", "not a bool"}},
		{"bad range", map[string]string{"capabilities.clustersync.io/nodePortRange": "32767-30000"},
			func(c mgmtv1.Capabilities) bool { return c.NodePortRange == "" }, []string{"nodePortRange", "port range"}},
		{"bad JSON", map[string]string{"capabilities.clustersync.io/ingressCapabilities": `{"ingressProvider":"nginx"}`},
			func(c mgmtv1.Capabilities) bool { return c.IngressCapabilities == nil }, []string{"ingressCapabilities", "JSON list"}},
		{"unknown field", map[string]string{"capabilities.clustersync.io/loadBalancerCapabilities": `{"enable":true}`},
			func(c mgmtv1.Capabilities) bool { return !*c.LoadBalancerCapabilities.Enabled }, []string{"loadBalancerCapabilities"}},
		{"unknown capability", map[string]string{"capabilities.clustersync.io/gpu": "true"},
			func(mgmtv1.Capabilities) bool { return true }, []string{"unknown capability \"gpu\""}},
		{"other annotations ignored", map[string]string{"example.com/capabilities": "x"},
			func(c mgmtv1.Capabilities) bool { return reflect.DeepEqual(c, detected) }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := ApplyCapabilityAnnotations(tc.ann, detected)
			if !tc.check(got) {
				t.Errorf("capabilities %+v", got)
			}
			if len(tc.problems) == 0 && len(problems) > 0 {
				t.Errorf("problems %v", problems)
			}
			for _, want := range tc.problems {
				if !strings.Contains(strings.Join(problems, "; "), want) {
					t.Errorf("problems %v, want one mentioning %q", problems, want)
				}
			}
		})
	}
	if *detected.PSPEnabled || !*detected.TaintSupport {
		t.Error("the detected capabilities were modified")
	}
}

func TestPlans(t *testing.T) {
	plans := Plans("k3s", "clustersync-system", mgmtv1.K3sConfig{KubernetesVersion: "v1.31.4+k3s1", ServerConcurrency: 1, WorkerConcurrency: 3,
		Drain: &mgmtv1.DrainOptions{Force: true, TimeoutSeconds: ptr.To(int64(120))}})
	if len(plans) != 2 || plans[0].GetName() != "k3s-master-plan" || plans[1].GetName() != "k3s-worker-plan" {
		t.Fatalf("plans %v", plans)
	}
	m, w := plans[0].Object["spec"].(map[string]any), plans[1].Object["spec"].(map[string]any)
	if m["concurrency"] != int64(1) || w["concurrency"] != int64(3) || m["version"] != "v1.31.4+k3s1" || m["cordon"] != true {
		t.Errorf("master %v worker %v", m, w)
	}
	expr := func(spec map[string]any) map[string]any {
		return spec["nodeSelector"].(map[string]any)["matchExpressions"].([]any)[0].(map[string]any)
	}
	if e := expr(m); e["operator"] != "In" || !reflect.DeepEqual(e["values"], []any{"true"}) {
		t.Errorf("master selector %v", e)
	}
	if e := expr(w); e["operator"] != "DoesNotExist" {
		t.Errorf("worker selector %v", e)
	}
	if p := w["prepare"].(map[string]any); !reflect.DeepEqual(p["args"], []any{"prepare", "k3s-master-plan"}) {
		t.Errorf("worker prepare %v", p)
	}
	if d := m["drain"].(map[string]any); d["force"] != true || d["timeout"] != "120s" || d["ignoreDaemonSets"] != true {
		t.Errorf("drain %v", d)
	}
	if _, ok := Plans("rke2", "ns", mgmtv1.K3sConfig{KubernetesVersion: "v1.30.2+rke2r1"})[0].Object["spec"].(map[string]any)["drain"]; ok {
		t.Error("drain without spec.k3sConfig.drain")
	}
}

func TestClusterRoleFor(t *testing.T) {
	for role, want := range map[string]string{mgmtv1.RoleClusterOwner: "cluster-admin", mgmtv1.RoleClusterMember: "edit", mgmtv1.RoleReadOnly: "view"} {
		if got := ClusterRoleFor(role); got != want {
			t.Errorf("%s → %s, want %s", role, got, want)
		}
	}
	b := MemberBinding("edge", mgmtv1.ClusterMember{Kind: "ServiceAccount", Name: "team:viewer", Role: mgmtv1.RoleReadOnly})
	if b.Subjects[0].Name != "system:serviceaccount:team:viewer" || b.Subjects[0].Kind != "User" || b.RoleRef.Name != "view" {
		t.Errorf("binding %+v", b)
	}
	if g := MemberBinding("edge", mgmtv1.ClusterMember{Kind: "Group", Name: "devs", Role: mgmtv1.RoleClusterMember}); g.Subjects[0].Kind != "Group" || g.Name == b.Name {
		t.Errorf("group binding %+v", g)
	}
}
