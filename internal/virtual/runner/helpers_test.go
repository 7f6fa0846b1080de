package runner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
)

const wait = 60 * time.Second

var ctx = context.Background()

func create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(ctx, obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// hostObject waits until the host copy of virtual object name/ns exists and returns it.
func hostObject[T client.Object](t *testing.T, obj T, name, ns string) T {
	t.Helper()
	testenv.Eventually(t, wait, func() error { return env.HostClient.Get(ctx, env.HostKey(name, ns), obj) })
	return obj
}

// hostGone waits until the host copy of name/ns is gone.
func hostGone(t *testing.T, obj client.Object, name, ns string) {
	t.Helper()
	testenv.Eventually(t, wait, func() error {
		err := env.HostClient.Get(ctx, env.HostKey(name, ns), obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("host %s still exists (err %v)", env.HostKey(name, ns), err)
	})
}

// neverOnHost checks for a few seconds that name/ns does not reach the host.
// It is a negative check: it gives the syncer time to act wrongly.
func neverOnHost(t *testing.T, obj client.Object, name, ns string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := env.HostClient.Get(ctx, env.HostKey(name, ns), obj); err == nil {
			t.Fatalf("host %s exists, want it not synced", env.HostKey(name, ns))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func runningPod(t *testing.T, name, ns string) *corev1.Pod {
	t.Helper()
	var p corev1.Pod
	testenv.Eventually(t, wait, func() error {
		if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning || p.Spec.NodeName == "" || p.Status.PodIP == "" {
			return fmt.Errorf("virtual pod %s/%s: phase %q node %q ip %q", ns, name, p.Status.Phase, p.Spec.NodeName, p.Status.PodIP)
		}
		return nil
	})
	return &p
}

func pod(name, ns string, mutate func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx:1.27"}},
			TerminationGracePeriodSeconds: ptr.To(int64(1))},
	}
	if mutate != nil {
		mutate(p)
	}
	return p
}

func deployment(name, ns string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx:1.27"}},
					TerminationGracePeriodSeconds: ptr.To(int64(1))},
			},
		},
	}
}

// virtualPods lists the virtual pods of ns with label app=app.
func virtualPods(t *testing.T, ns, app string) []corev1.Pod {
	t.Helper()
	var list corev1.PodList
	if err := env.VirtualClient.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// syncErrorEvent waits for a Warning SyncError event on the virtual object
// name in ns whose message contains each of want, and returns its message.
func syncErrorEvent(t *testing.T, ns, name string, want ...string) string {
	t.Helper()
	return warningEvent(t, ns, name, "SyncError", want...)
}

// warningEvent waits for a Warning event with reason on virtual object
// name/ns whose message contains every string of want, and returns the
// message.
func warningEvent(t *testing.T, ns, name, reason string, want ...string) string {
	t.Helper()
	var msg string
	testenv.Eventually(t, wait, func() error {
		var list corev1.EventList
		if err := env.VirtualClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
	events:
		for _, e := range list.Items {
			if e.Reason != reason || e.Type != corev1.EventTypeWarning || e.InvolvedObject.Name != name {
				continue
			}
			for _, w := range want {
				if !strings.Contains(e.Message, w) {
					continue events
				}
			}
			msg = e.Message
			return nil
		}
		return fmt.Errorf("no %s event on %s/%s containing %q among %d events", reason, ns, name, want, len(list.Items))
	})
	return msg
}

// withConfig restarts the package's syncer with cfg for the rest of t,
// and with the defaults again when t ends.
func withConfig(t *testing.T, cfg *config.Config) {
	t.Helper()
	if err := env.StopSyncer(); err != nil {
		t.Fatal(err)
	}
	if err := env.StartSyncer(cfg); err != nil {
		t.Fatalf("start the syncer with the test's configuration: %v", err)
	}
	t.Cleanup(func() {
		_ = env.StopSyncer()
		if err := env.StartSyncer(nil); err != nil {
			t.Errorf("restart with the defaults: %v", err)
		}
	})
}
