package runner_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
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
