package runner_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// The syncer is stopped, objects change in the virtual cluster meanwhile,
// and the syncer starts again: afterwards every virtual object has exactly
// one host copy, no host copy lacks its virtual object, and the changes
// made while it was down are on the host.
func TestSyncerRestart(t *testing.T) {
	ns := env.NewNamespace(t)
	forced := map[string]string{translate.AnnotationForceSync: "true"}
	create(t, env.VirtualClient, deployment("app", ns, 2))
	create(t, env.VirtualClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keep", Namespace: ns, Annotations: forced}})
	create(t, env.VirtualClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "drop", Namespace: ns, Annotations: forced}})
	testenv.Eventually(t, wait, func() error {
		n := 0
		for _, p := range virtualPods(t, ns, "app") {
			if p.Status.Phase == corev1.PodRunning {
				n++
			}
		}
		if n != 2 {
			return fmt.Errorf("%d running pods", n)
		}
		return nil
	})
	hostObject(t, &corev1.ConfigMap{}, "drop", ns)

	if err := env.StopSyncer(); err != nil {
		t.Fatalf("stop syncer: %v", err)
	}
	create(t, env.VirtualClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "added", Namespace: ns, Annotations: forced}})
	if err := env.VirtualClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "drop", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := env.StartSyncer(nil); err != nil {
		t.Fatalf("restart syncer: %v", err)
	}

	hostObject(t, &corev1.ConfigMap{}, "added", ns)
	hostGone(t, &corev1.ConfigMap{}, "drop", ns)
	hostObject(t, &corev1.ConfigMap{}, "keep", ns)
	testenv.Eventually(t, wait, func() error {
		var vpods corev1.PodList
		if err := env.VirtualClient.List(ctx, &vpods, client.InNamespace(ns)); err != nil {
			return err
		}
		var hpods corev1.PodList
		if err := env.HostClient.List(ctx, &hpods, client.InNamespace(env.HostNamespace),
			client.MatchingLabels{translate.LabelManagedBy: env.Name, translate.LabelNamespace: ns}); err != nil {
			return err
		}
		if len(vpods.Items) != 2 || len(hpods.Items) != 2 {
			return fmt.Errorf("%d virtual pods, %d host pods; want 2 and 2", len(vpods.Items), len(hpods.Items))
		}
		virtual := map[string]bool{}
		for _, p := range vpods.Items {
			virtual[env.HostKey(p.Name, ns).Name] = true
		}
		for _, p := range hpods.Items {
			if !virtual[p.Name] {
				return fmt.Errorf("host pod %s has no virtual pod", p.Name)
			}
		}
		return nil
	})
}

// A kind switched off (sync.toHost.services.enabled: false) at a restart:
// the host copies of the virtual Services go, and nothing else does — a
// user's Service in the host namespace, the Service backing the virtual
// API server (labelled as the virtual cluster's, but no copy) and the
// copies of other kinds stay. Switched on again, the copies come back.
func TestKindSwitchedOffIsCleanedUp(t *testing.T) {
	ns := env.NewNamespace(t)
	forced := map[string]string{translate.AnnotationForceSync: "true"}
	create(t, env.VirtualClient, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}})
	create(t, env.VirtualClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: ns, Annotations: forced}})
	users := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "users-own-" + ns, Namespace: env.HostNamespace},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	create(t, env.HostClient, users)
	t.Cleanup(func() { _ = env.HostClient.Delete(ctx, users) })
	hostObject(t, &corev1.Service{}, "web", ns)
	hostObject(t, &corev1.ConfigMap{}, "kept", ns)

	off := config.Default()
	off.Sync.ToHost.Services.Enabled = false
	withConfig(t, off)
	hostGone(t, &corev1.Service{}, "web", ns)
	for _, name := range []string{users.Name, env.Name} {
		if err := env.HostClient.Get(ctx, client.ObjectKey{Namespace: env.HostNamespace, Name: name}, &corev1.Service{}); err != nil {
			t.Errorf("host Service %s/%s, not a copy, is gone: %v", env.HostNamespace, name, err)
		}
	}
	hostObject(t, &corev1.ConfigMap{}, "kept", ns)
	var virtualWeb corev1.Service
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &virtualWeb); err != nil {
		t.Errorf("the virtual Service must stay: %v", err)
	}

	if err := env.StopSyncer(); err != nil {
		t.Fatal(err)
	}
	if err := env.StartSyncer(nil); err != nil {
		t.Fatal(err)
	}
	hostObject(t, &corev1.Service{}, "web", ns)
}
