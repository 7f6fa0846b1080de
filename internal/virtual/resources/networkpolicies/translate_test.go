package networkpolicies

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

func TestHostSpec(t *testing.T) {
	tr := translate.Translator{VCluster: "vc", HostNamespace: "vc-host"}
	own := func(extra map[string]string) map[string]string {
		out := map[string]string{translate.LabelManagedBy: "vc", translate.LabelNamespace: "team"}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	anyNS := func(extra map[string]string) map[string]string {
		out := map[string]string{translate.LabelManagedBy: "vc"}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	port := []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(8080))}}
	block := &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}}
	tests := []struct {
		name string
		in   networkingv1.NetworkPolicySpec
		want networkingv1.NetworkPolicySpec
	}{
		{
			name: "deny all ingress to every pod of the namespace",
			in:   networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}},
			want: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: own(nil)},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}},
		},
		{
			name: "web from the same namespace's frontends, ports and ip blocks kept",
			in: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: port, From: []networkingv1.NetworkPolicyPeer{
					{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "frontend"}}},
					{IPBlock: block},
				}}},
			},
			want: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: own(map[string]string{"app": "web"})},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: port, From: []networkingv1.NetworkPolicyPeer{
					{PodSelector: &metav1.LabelSelector{MatchLabels: own(map[string]string{"role": "frontend"})}},
					{IPBlock: block},
				}}},
			},
		},
		{
			name: "egress to the pods of labelled namespaces, and to every namespace",
			in: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "release", Operator: metav1.LabelSelectorOpExists}}},
				Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{
					{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "db"},
						MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod"}}}},
						PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "postgres"}}},
					{NamespaceSelector: &metav1.LabelSelector{}},
				}}},
			},
			want: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: own(nil),
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: tr.HostLabelKey("release"), Operator: metav1.LabelSelectorOpExists}}},
				Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{
					{PodSelector: &metav1.LabelSelector{MatchLabels: anyNS(map[string]string{"app": "postgres", tr.NamespaceLabelKey("team"): "db"}),
						MatchExpressions: []metav1.LabelSelectorRequirement{{Key: tr.NamespaceLabelKey("env"), Operator: metav1.LabelSelectorOpIn, Values: []string{"prod"}}}}},
					{PodSelector: &metav1.LabelSelector{MatchLabels: anyNS(nil)}},
				}}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "team"}, Spec: tt.in}
			before := v.DeepCopy()
			if got := HostSpec(v, tr); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("HostSpec:\n got %+v\nwant %+v", got, tt.want)
			}
			if !reflect.DeepEqual(v, before) {
				t.Error("HostSpec changed the virtual policy")
			}
		})
	}
}
