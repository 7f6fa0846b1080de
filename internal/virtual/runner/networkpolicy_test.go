package runner_test

import (
	"reflect"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/networkpolicies"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// With sync.toHost.networkPolicies on, a virtual policy reaches the host as
// networkpolicies.HostSpec translates it (namespaces as pod labels, this
// virtual cluster's pods only), and a change follows.
func TestNetworkPolicySync(t *testing.T) {
	ns := env.NewNamespace(t)
	on := config.Default()
	on.Sync.ToHost.NetworkPolicies.Enabled = true
	withConfig(t, on)
	policy := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{
			{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "frontend"}}},
		}}},
	}}
	create(t, env.VirtualClient, policy)
	tr := translate.Translator{VCluster: env.Name, HostNamespace: env.HostNamespace}
	host := hostObject(t, &networkingv1.NetworkPolicy{}, "web", ns)
	if want := networkpolicies.HostSpec(policy, tr); !reflect.DeepEqual(host.Spec.PodSelector, want.PodSelector) ||
		!reflect.DeepEqual(host.Spec.Ingress, want.Ingress) {
		t.Errorf("host spec:\n got %+v\nwant %+v", host.Spec, want)
	}
	if host.Spec.Ingress[0].From[0].NamespaceSelector != nil {
		t.Error("the host copy selects namespaces: it would reach past the host namespace")
	}
}
