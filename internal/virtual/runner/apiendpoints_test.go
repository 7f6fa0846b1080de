package runner_test

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/runner"
)

func TestKubernetesEndpoints(t *testing.T) {
	slice := func(family discoveryv1.AddressType, port int32, eps ...discoveryv1.Endpoint) discoveryv1.EndpointSlice {
		return discoveryv1.EndpointSlice{AddressType: family, Endpoints: eps, Ports: []discoveryv1.EndpointPort{{Port: ptr.To(port)}}}
	}
	ep := func(ready *bool, addrs ...string) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: addrs, Conditions: discoveryv1.EndpointConditions{Ready: ready}}
	}
	for _, tt := range []struct {
		name            string
		host            []discoveryv1.EndpointSlice
		ready, notReady []string
		port            int32
	}{
		{"the control plane pod, ready", []discoveryv1.EndpointSlice{slice(discoveryv1.AddressTypeIPv4, 8443, ep(ptr.To(true), "10.244.0.7"))}, []string{"10.244.0.7"}, nil, 8443},
		{"not ready yet, nil ready means ready, duplicates and IPv6 left out",
			[]discoveryv1.EndpointSlice{
				slice(discoveryv1.AddressTypeIPv4, 443, ep(ptr.To(false), "10.244.0.9"), ep(nil, "10.244.0.8"), ep(ptr.To(true), "10.244.0.8")),
				slice(discoveryv1.AddressTypeIPv6, 443, ep(ptr.To(true), "fd00::1")),
			}, []string{"10.244.0.8"}, []string{"10.244.0.9"}, 443},
		{"no host addresses", nil, nil, nil, 443},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, s := runner.KubernetesEndpoints(tt.host)
			if e.Name != "kubernetes" || e.Namespace != "default" || e.Labels[discoveryv1.LabelSkipMirror] != "true" ||
				s.Name != "kubernetes" || s.Labels[discoveryv1.LabelServiceName] != "kubernetes" || s.AddressType != discoveryv1.AddressTypeIPv4 {
				t.Fatalf("names and labels: %+v %+v", e.ObjectMeta, s.ObjectMeta)
			}
			var ready, notReady, sliceReady, sliceNotReady []string
			for _, sub := range e.Subsets {
				for _, a := range sub.Addresses {
					ready = append(ready, a.IP)
				}
				for _, a := range sub.NotReadyAddresses {
					notReady = append(notReady, a.IP)
				}
				if sub.Ports[0].Port != tt.port || sub.Ports[0].Name != "https" {
					t.Errorf("endpoints port %+v", sub.Ports)
				}
			}
			for _, x := range s.Endpoints {
				if *x.Conditions.Ready {
					sliceReady = append(sliceReady, x.Addresses...)
				} else {
					sliceNotReady = append(sliceNotReady, x.Addresses...)
				}
			}
			if !reflect.DeepEqual(ready, tt.ready) || !reflect.DeepEqual(notReady, tt.notReady) ||
				!reflect.DeepEqual(sliceReady, tt.ready) || !reflect.DeepEqual(sliceNotReady, tt.notReady) {
				t.Errorf("endpoints %v / %v, slice %v / %v; want %v / %v", ready, notReady, sliceReady, sliceNotReady, tt.ready, tt.notReady)
			}
			if *s.Ports[0].Port != tt.port {
				t.Errorf("slice port %d, want %d", *s.Ports[0].Port, tt.port)
			}
		})
	}
}

// The virtual default/kubernetes Service has Endpoints and an
// EndpointSlice with the addresses of the host Service behind it, as a
// cluster's API servers write theirs (the conformance spec "API Server
// should have Endpoints and EndpointSlices pointing to API Server"), and
// follows them.
func TestKubernetesServiceEndpoints(t *testing.T) {
	hostSlice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: env.Name + "-test", Namespace: env.HostNamespace,
			Labels: map[string]string{discoveryv1.LabelServiceName: env.Name, discoveryv1.LabelManagedBy: "test"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.244.3.4"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(8443))}},
	}
	create(t, env.HostClient, hostSlice)
	t.Cleanup(func() { _ = env.HostClient.Delete(ctx, hostSlice) })
	check := func(want string) {
		t.Helper()
		testenv.Eventually(t, wait, func() error {
			var e corev1.Endpoints
			if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kubernetes"}, &e); err != nil {
				return err
			}
			var s discoveryv1.EndpointSlice
			if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kubernetes"}, &s); err != nil {
				return err
			}
			got := map[string]bool{}
			for _, sub := range e.Subsets {
				for _, a := range sub.Addresses {
					got["ep "+a.IP] = true
				}
			}
			for _, x := range s.Endpoints {
				got["slice "+x.Addresses[0]] = true
			}
			if !got["ep "+want] || !got["slice "+want] {
				return fmt.Errorf("endpoints %+v, slice %+v: want %s in both", e.Subsets, s.Endpoints, want)
			}
			return nil
		})
	}
	check("10.244.3.4")
	hostSlice.Endpoints[0].Addresses = []string{"10.244.3.5"}
	if err := env.HostClient.Update(ctx, hostSlice); err != nil {
		t.Fatal(err)
	}
	check("10.244.3.5")
}
