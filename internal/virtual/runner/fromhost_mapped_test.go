package runner_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
)

// sync.fromHost.configMaps and .secrets copy the host objects their
// mappings.byName name, read-only: every ConfigMap of a host namespace
// (not its kube-root-ca.crt) into a virtual namespace the syncer creates,
// one of the virtual cluster's own host namespace renamed ("/name"), one
// Secret of another namespace; a host edit follows, a tenant's edit and
// delete are put back, a host deletion removes the copy, and a tenant's
// own object of a copy's name stays, with a FromHostConflict event.
func TestFromHostConfigMapsAndSecrets(t *testing.T) {
	ns := env.NewNamespace(t)
	src, shared := "src-"+ns, ns+"-shared"
	create(t, env.HostClient, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: src}})
	t.Cleanup(func() { _ = env.HostClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: src}}) })
	t.Cleanup(func() {
		_ = env.VirtualClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shared}})
	})
	create(t, env.HostClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: src, Labels: map[string]string{"team": "x"}}, Data: map[string]string{"k": "1"}})
	create(t, env.HostClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: src}, Data: map[string]string{"k": "2"}})
	own := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings-" + ns, Namespace: env.HostNamespace}, Data: map[string]string{"k": "3"}}
	create(t, env.HostClient, own)
	t.Cleanup(func() { _ = env.HostClient.Delete(ctx, own) })
	create(t, env.HostClient, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "registry", Namespace: src}, Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"token": []byte("t0")}})
	// The tenant's own ConfigMap where the copy of b would go.
	create(t, env.VirtualClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: ns}, Data: map[string]string{"k": "tenant's"}})

	cfg := config.Default()
	cfg.Sync.FromHost.ConfigMaps = config.FromHostMapped{Enabled: true, Mappings: config.FromHostMappings{ByName: map[string]string{
		src + "/*": ns + "/*", "/settings-" + ns: shared + "/settings"}}}
	cfg.Sync.FromHost.Secrets = config.FromHostMapped{Enabled: true, Mappings: config.FromHostMappings{ByName: map[string]string{
		src + "/registry": ns + "/registry"}}}
	withConfig(t, cfg)

	data := func(key client.ObjectKey, want string) {
		t.Helper()
		testenv.Eventually(t, wait, func() error {
			var cm corev1.ConfigMap
			if err := env.VirtualClient.Get(ctx, key, &cm); err != nil {
				return err
			}
			if cm.Data["k"] != want {
				return fmt.Errorf("virtual ConfigMap %s: k=%q, want %q", key, cm.Data["k"], want)
			}
			return nil
		})
	}
	data(client.ObjectKey{Namespace: ns, Name: "a"}, "1")
	data(client.ObjectKey{Namespace: shared, Name: "settings"}, "3")
	var a corev1.ConfigMap
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "a"}, &a); err != nil || a.Labels[fromhost.Label] != "true" || a.Labels["team"] != "x" {
		t.Errorf("copy of a: %v, labels %v", err, a.Labels)
	}
	testenv.Eventually(t, wait, func() error {
		var s corev1.Secret
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "registry"}, &s); err != nil {
			return err
		}
		if string(s.Data["token"]) != "t0" || s.Type != corev1.SecretTypeOpaque {
			return fmt.Errorf("virtual Secret registry: %s %v", s.Type, s.Data)
		}
		return nil
	})
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kube-root-ca.crt"}, &corev1.ConfigMap{}); err == nil {
		// The tenant namespace has its own kube-root-ca.crt: it must be
		// the virtual cluster's, not a copy of the host's.
		var root corev1.ConfigMap
		_ = env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kube-root-ca.crt"}, &root)
		if root.Labels[fromhost.Label] == "true" {
			t.Error("the host's kube-root-ca.crt was copied")
		}
	}

	// The tenant's own b stays, with an event saying why.
	data(client.ObjectKey{Namespace: ns, Name: "b"}, "tenant's")
	testenv.Eventually(t, wait, func() error {
		var evs eventsv1.EventList
		if err := env.VirtualClient.List(ctx, &evs, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Regarding.Name == "b" && e.Reason == fromhost.ReasonFromHostConflict {
				return nil
			}
		}
		return fmt.Errorf("no %s event on the tenant's ConfigMap b", fromhost.ReasonFromHostConflict)
	})

	// A host edit follows; a tenant's edit and delete are put back.
	edit := func(c client.Client, key client.ObjectKey, v string) {
		t.Helper()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var cm corev1.ConfigMap
			if err := c.Get(ctx, key, &cm); err != nil {
				return err
			}
			cm.Data["k"] = v
			return c.Update(ctx, &cm)
		}); err != nil {
			t.Fatal(err)
		}
	}
	edit(env.HostClient, client.ObjectKey{Namespace: src, Name: "a"}, "10")
	data(client.ObjectKey{Namespace: ns, Name: "a"}, "10")
	edit(env.VirtualClient, client.ObjectKey{Namespace: ns, Name: "a"}, "99")
	data(client.ObjectKey{Namespace: ns, Name: "a"}, "10")
	if err := env.VirtualClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	data(client.ObjectKey{Namespace: ns, Name: "a"}, "10")

	// Deleted on the host: the copy goes.
	if err := env.HostClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: src}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "a"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("virtual a still there (err %v)", err)
		}
		return nil
	})
}

// The selector of a fromHost class kind copies only the host objects it
// picks (matchLabels and matchExpressions); a host object relabelled out
// of it loses its copy.
func TestFromHostSelector(t *testing.T) {
	suffix := env.NewNamespace(t)
	gold := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "gold-" + suffix, Labels: map[string]string{"tier": "gold", "team": "a"}}, Value: 100}
	silver := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "silver-" + suffix, Labels: map[string]string{"tier": "silver", "team": "a"}}, Value: 50}
	other := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "other-" + suffix, Labels: map[string]string{"tier": "gold", "team": "b"}}, Value: 10}
	for _, o := range []client.Object{gold, silver, other} {
		create(t, env.HostClient, o)
		t.Cleanup(func() { _ = env.HostClient.Delete(ctx, o) })
	}
	cfg := config.Default()
	cfg.Sync.FromHost.PriorityClasses.Enabled = true
	cfg.Sync.FromHost.PriorityClasses.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"gold", "silver"}}}}
	withConfig(t, cfg)

	copied := func(name string, want bool) {
		t.Helper()
		testenv.Eventually(t, wait, func() error {
			err := env.VirtualClient.Get(ctx, client.ObjectKey{Name: name}, &schedulingv1.PriorityClass{})
			if want == (err == nil) {
				return nil
			}
			return fmt.Errorf("virtual PriorityClass %s: %v, want copied %t", name, err, want)
		})
	}
	copied(gold.Name, true)
	copied(silver.Name, true)
	copied(other.Name, false)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.HostClient.Get(ctx, client.ObjectKeyFromObject(silver), silver); err != nil {
			return err
		}
		silver.Labels["tier"] = "bronze"
		return env.HostClient.Update(ctx, silver)
	}); err != nil {
		t.Fatal(err)
	}
	copied(silver.Name, false)
}
