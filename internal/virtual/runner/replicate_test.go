package runner_test

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/services"
)

// networking.replicateServices: toHost publishes a tenant Service in
// another host namespace, a Service without selector whose EndpointSlice
// holds the tenant's endpoints and follows them; fromHost shows a host
// Service to the tenant as a headless Service leading to its cluster IP;
// a Service of that name that is not the virtual cluster's is never
// replaced (a Warning event says why); an entry removed takes its replica
// with it at the syncer's next start, and a replicated Service that goes
// takes its replica.
func TestReplicateServices(t *testing.T) {
	ns := env.NewNamespace(t)
	shared, platform := "shared-"+ns, "platform-"+ns
	for _, n := range []string{shared, platform} {
		create(t, env.HostClient, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}})
		t.Cleanup(func() { _ = env.HostClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}) })
	}
	port := []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}
	// The tenant's Service web and its endpoints (a Service without
	// selector, so that the test writes them).
	create(t, env.VirtualClient, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: corev1.ServiceSpec{Ports: port}})
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.244.0.20"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}}}
	create(t, env.VirtualClient, slice)
	// A host Service, and one in the way of a toHost entry.
	registry := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "registry", Namespace: platform}, Spec: corev1.ServiceSpec{Ports: port}}
	create(t, env.HostClient, registry)
	create(t, env.HostClient, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: shared}, Spec: corev1.ServiceSpec{Ports: port}})
	create(t, env.VirtualClient, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns}, Spec: corev1.ServiceSpec{Ports: port}})

	cfg := config.Default()
	// The test writes the tenant's endpoints itself, at addresses of no
	// pod, which policies.isolation.endpoints would keep off the host.
	cfg.Policies.Isolation.Endpoints = false
	cfg.Networking.ReplicateServices = config.ReplicateServices{
		ToHost:   []config.ServiceMapping{{From: ns + "/web", To: shared + "/team-web"}, {From: ns + "/api", To: shared + "/taken"}},
		FromHost: []config.ServiceMapping{{From: platform + "/registry", To: ns + "-from-host/registry"}},
	}
	withConfig(t, cfg)
	t.Cleanup(func() {
		_ = env.VirtualClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns + "-from-host"}})
	})

	// toHost: the host Service and its EndpointSlice.
	addresses := func(c client.Reader, namespace, service string) ([]string, error) {
		var list discoveryv1.EndpointSliceList
		if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{discoveryv1.LabelServiceName: service}); err != nil {
			return nil, err
		}
		var out []string
		for _, s := range list.Items {
			for _, e := range s.Endpoints {
				out = append(out, e.Addresses...)
			}
		}
		slices.Sort(out)
		return out, nil
	}
	wantAddresses := func(c client.Reader, namespace, service string, want ...string) {
		t.Helper()
		testenv.Eventually(t, wait, func() error {
			got, err := addresses(c, namespace, service)
			if err != nil {
				return err
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("EndpointSlices of %s/%s: %v, want %v", namespace, service, got, want)
			}
			return nil
		})
	}
	wantAddresses(env.HostClient, shared, "team-web", "10.244.0.20")
	var hs corev1.Service
	if err := env.HostClient.Get(ctx, client.ObjectKey{Namespace: shared, Name: "team-web"}, &hs); err != nil ||
		len(hs.Spec.Selector) != 0 || hs.Spec.ClusterIP == "" || hs.Spec.ClusterIP == corev1.ClusterIPNone ||
		hs.Annotations[services.AnnotationReplicatedFrom] != ns+"/web" || hs.Labels[services.LabelReplicatedBy] == "" {
		t.Errorf("host Service team-web: %v, %+v", err, hs.ObjectMeta)
	}
	// The endpoints follow.
	slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.244.0.21"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
	if err := env.VirtualClient.Update(ctx, slice); err != nil {
		t.Fatal(err)
	}
	wantAddresses(env.HostClient, shared, "team-web", "10.244.0.20", "10.244.0.21")

	// The host's own Service taken stays as it is; the tenant hears why.
	testenv.Eventually(t, wait, func() error {
		var evs eventsv1.EventList
		if err := env.VirtualClient.List(ctx, &evs, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Regarding.Name == "api" && e.Reason == services.ReasonReplicationConflict {
				return nil
			}
		}
		return fmt.Errorf("no %s event on the tenant's Service api", services.ReasonReplicationConflict)
	})
	var taken corev1.Service
	if err := env.HostClient.Get(ctx, client.ObjectKey{Namespace: shared, Name: "taken"}, &taken); err != nil || taken.Annotations[services.AnnotationReplicatedFrom] != "" {
		t.Errorf("the host's Service taken was changed: %v, %v", err, taken.Annotations)
	}

	// fromHost: a headless Service in a namespace the syncer made, leading
	// to the host Service's cluster IP.
	if err := env.HostClient.Get(ctx, client.ObjectKeyFromObject(registry), registry); err != nil {
		t.Fatal(err)
	}
	wantAddresses(env.VirtualClient, ns+"-from-host", "registry", registry.Spec.ClusterIP)
	var vs corev1.Service
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns + "-from-host", Name: "registry"}, &vs); err != nil ||
		vs.Spec.ClusterIP != corev1.ClusterIPNone || len(vs.Spec.Ports) != 1 || vs.Spec.Ports[0].Port != 80 {
		t.Errorf("virtual Service registry: %v, %+v", err, vs.Spec)
	}
	// It is not synced back to the host as a tenant Service.
	var copies corev1.ServiceList
	if err := env.HostClient.List(ctx, &copies, client.InNamespace(env.HostNamespace)); err != nil {
		t.Fatal(err)
	}
	for _, c := range copies.Items {
		if c.Annotations[services.AnnotationReplicatedFrom] == platform+"/registry" {
			t.Errorf("the tenant's replica of a host Service was synced to the host as %s", c.Name)
		}
	}

	// An entry removed: at its next start the syncer deletes what the
	// entry made, and nothing else.
	fewer := *cfg
	fewer.Networking.ReplicateServices.ToHost = cfg.Networking.ReplicateServices.ToHost[1:]
	withConfig(t, &fewer)
	testenv.Eventually(t, wait, func() error {
		if err := env.HostClient.Get(ctx, client.ObjectKey{Namespace: shared, Name: "team-web"}, &corev1.Service{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("host Service team-web of a removed entry: %v, want it gone", err)
		}
		return nil
	})
	if err := env.HostClient.Get(ctx, client.ObjectKey{Namespace: shared, Name: "taken"}, &corev1.Service{}); err != nil {
		t.Errorf("the host's own Service taken: %v", err)
	}
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &corev1.Service{}); err != nil {
		t.Errorf("the tenant's Service web: %v", err)
	}

	// The replicated host Service goes: so does the tenant's replica.
	if err := env.HostClient.Delete(ctx, registry); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns + "-from-host", Name: "registry"}, &corev1.Service{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("virtual Service registry: %v, want it gone", err)
		}
		return nil
	})
}
