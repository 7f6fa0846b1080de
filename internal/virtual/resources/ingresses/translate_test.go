package ingresses

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

func serviceBackend(name string, port int32) networkingv1.IngressBackend {
	return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name, Port: networkingv1.ServiceBackendPort{Number: port}}}
}

func paths(backends ...networkingv1.IngressBackend) *networkingv1.HTTPIngressRuleValue {
	var out []networkingv1.HTTPIngressPath
	for _, b := range backends {
		out = append(out, networkingv1.HTTPIngressPath{Path: "/", PathType: ptr.To(networkingv1.PathTypeImplementationSpecific), Backend: b})
	}
	return &networkingv1.HTTPIngressRuleValue{Paths: out}
}

func TestHostSpec(t *testing.T) {
	tr := translate.Translator{VCluster: "vcluster", HostNamespace: "vcluster"}
	resource := networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{APIGroup: ptr.To("example.com"), Kind: "Bucket", Name: "assets"}}
	tests := []struct {
		name string
		in   networkingv1.IngressSpec
		want networkingv1.IngressSpec
	}{
		{
			name: "the reference's example",
			in: networkingv1.IngressSpec{
				TLS:   []networkingv1.IngressTLS{{Hosts: []string{"https-example.foo.com"}, SecretName: "testsecret-tls"}},
				Rules: []networkingv1.IngressRule{{IngressRuleValue: networkingv1.IngressRuleValue{HTTP: paths(serviceBackend("nginx", 80))}}},
			},
			want: networkingv1.IngressSpec{
				TLS:   []networkingv1.IngressTLS{{Hosts: []string{"https-example.foo.com"}, SecretName: "testsecret-tls-x-default-x-vcluster"}},
				Rules: []networkingv1.IngressRule{{IngressRuleValue: networkingv1.IngressRuleValue{HTTP: paths(serviceBackend("nginx-x-default-x-vcluster", 80))}}},
			},
		},
		{
			name: "default backend, several rules and paths, class kept, resource backend and host-only TLS as written",
			in: networkingv1.IngressSpec{
				IngressClassName: ptr.To("nginx"),
				DefaultBackend:   ptr.To(serviceBackend("fallback", 8080)),
				TLS:              []networkingv1.IngressTLS{{Hosts: []string{"a.example.com"}}},
				Rules: []networkingv1.IngressRule{
					{Host: "a.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: paths(serviceBackend("web", 80), resource)}},
					{Host: "b.example.com"},
				},
			},
			want: networkingv1.IngressSpec{
				IngressClassName: ptr.To("nginx"),
				DefaultBackend:   ptr.To(serviceBackend("fallback-x-default-x-vcluster", 8080)),
				TLS:              []networkingv1.IngressTLS{{Hosts: []string{"a.example.com"}}},
				Rules: []networkingv1.IngressRule{
					{Host: "a.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: paths(serviceBackend("web-x-default-x-vcluster", 80), resource)}},
					{Host: "b.example.com"},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "default"}, Spec: tt.in}
			before := in.DeepCopy()
			if got := HostSpec(in, tr); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("HostSpec:\n got %+v\nwant %+v", got, tt.want)
			}
			if !reflect.DeepEqual(in, before) {
				t.Error("HostSpec changed the virtual Ingress")
			}
		})
	}
}

func TestReferences(t *testing.T) {
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "team"}, Spec: networkingv1.IngressSpec{
		TLS: []networkingv1.IngressTLS{{SecretName: "a"}, {Hosts: []string{"x"}}, {SecretName: "b"}, {SecretName: "a"}}}}
	want := []mapping.Ref{{Kind: "Secret", Namespace: "team", Name: "a"}, {Kind: "Secret", Namespace: "team", Name: "b"}}
	if got := References(ing); !reflect.DeepEqual(got, want) {
		t.Errorf("References = %v, want %v", got, want)
	}
	if got := References(&networkingv1.Ingress{}); len(got) != 0 {
		t.Errorf("no TLS: %v", got)
	}
}
