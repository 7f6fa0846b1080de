package runner_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// With sync.toHost.ingresses on, the reference's Ingress example comes out
// on the host as the reference shows it: its name, the bookkeeping
// annotations and labels, the Service backend and TLS Secret renamed; the
// TLS Secret, used by the Ingress only, is synced; the host's load-balancer
// status flows back; deleting the Ingress removes its host copy and, no
// longer used, the Secret's. Off (the default), no Ingress reaches the host.
func TestIngressSync(t *testing.T) {
	ns := env.NewNamespace(t)
	ingress := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: ns}, Spec: networkingv1.IngressSpec{
		TLS: []networkingv1.IngressTLS{{Hosts: []string{"https-example.foo.com"}, SecretName: "testsecret-tls"}},
		Rules: []networkingv1.IngressRule{{IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: ptr.To(networkingv1.PathTypeImplementationSpecific),
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "nginx",
					Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}},
	}}
	create(t, env.VirtualClient, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "testsecret-tls", Namespace: ns},
		Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": []byte("c"), "tls.key": []byte("k")}})
	create(t, env.VirtualClient, ingress.DeepCopy())
	// Off by default: neither the Ingress nor its Secret is synced.
	neverOnHost(t, &networkingv1.Ingress{}, "nginx", ns, 2*time.Second)
	neverOnHost(t, &corev1.Secret{}, "testsecret-tls", ns, 500*time.Millisecond)

	on := config.Default()
	on.Sync.ToHost.Ingresses.Enabled = true
	withConfig(t, on)

	host := hostObject(t, &networkingv1.Ingress{}, "nginx", ns)
	hostName := env.HostKey("nginx", ns).Name
	var virtual networkingv1.Ingress
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nginx"}, &virtual); err != nil {
		t.Fatal(err)
	}
	wantAnnotations := map[string]string{
		translate.AnnotationObjectHostName:      hostName,
		translate.AnnotationObjectHostNamespace: env.HostNamespace,
		translate.AnnotationObjectKind:          "networking.k8s.io/v1, Kind=Ingress",
		translate.AnnotationObjectName:          "nginx",
		translate.AnnotationObjectNamespace:     ns,
		translate.AnnotationObjectUID:           string(virtual.UID),
	}
	for k, v := range wantAnnotations {
		if host.Annotations[k] != v {
			t.Errorf("host annotation %s = %q, want %q", k, host.Annotations[k], v)
		}
	}
	if host.Labels[translate.LabelManagedBy] != env.Name || host.Labels[translate.LabelNamespace] != ns {
		t.Errorf("host labels %v", host.Labels)
	}
	wantSpec := networkingv1.IngressSpec{
		TLS: []networkingv1.IngressTLS{{Hosts: []string{"https-example.foo.com"}, SecretName: env.HostKey("testsecret-tls", ns).Name}},
		Rules: []networkingv1.IngressRule{{IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: ptr.To(networkingv1.PathTypeImplementationSpecific),
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: env.HostKey("nginx", ns).Name,
					Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}},
	}
	if !reflect.DeepEqual(host.Spec, wantSpec) {
		t.Errorf("host spec:\n got %+v\nwant %+v", host.Spec, wantSpec)
	}
	secret := hostObject(t, &corev1.Secret{}, "testsecret-tls", ns)
	if string(secret.Data["tls.crt"]) != "c" {
		t.Errorf("host TLS Secret data %v", secret.Data)
	}

	// The host's controller reports the load balancer: it shows in the
	// virtual cluster.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.HostClient.Get(ctx, client.ObjectKeyFromObject(host), host); err != nil {
			return err
		}
		host.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.7"}}
		return env.HostClient.Status().Update(ctx, host)
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		var v networkingv1.Ingress
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "nginx"}, &v); err != nil {
			return err
		}
		if lb := v.Status.LoadBalancer.Ingress; len(lb) != 1 || lb[0].IP != "192.0.2.7" {
			return fmt.Errorf("virtual status %+v", v.Status)
		}
		return nil
	})

	if err := env.VirtualClient.Delete(ctx, &virtual); err != nil {
		t.Fatal(err)
	}
	hostGone(t, &networkingv1.Ingress{}, "nginx", ns)
	hostGone(t, &corev1.Secret{}, "testsecret-tls", ns)
}
