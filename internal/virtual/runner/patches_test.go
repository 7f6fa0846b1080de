package runner_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
)

// Patches of sync.toHost (vCluster's `patches`, also spelled translate) on
// real API servers:
//   - an expression and its reverseExpression round-trip a ConfigMap
//     annotation: the host has it prefixed, a host edit comes back without
//     the prefix, and a virtual edit goes out with it;
//   - a one-way expression rewrites every pod container's image on the host
//     and leaves the virtual pod's alone;
//   - a reference patch renames the Secret a Service annotation names and
//     makes that Secret count as used, so selective sync copies it;
//   - an expression that throws keeps its object off the host and says why
//     in a SyncError event naming the patch, its path and the object, while
//     the kind's other objects sync.
func TestPatches(t *testing.T) {
	ns := env.NewNamespace(t)
	const team = "example.com/team"
	cfg := config.Default()
	cfg.Sync.ToHost.ConfigMaps.All = true
	cfg.Sync.ToHost.ConfigMaps.Translate = []config.Patch{
		{Path: `metadata.annotations["` + team + `"]`, Expression: `"team-" + value`, ReverseExpression: `value.slice("team-".length)`},
		{Path: "data.broken", Expression: `value.nope.deeper`},
	}
	cfg.Sync.ToHost.Pods.Translate = []config.Patch{{Path: "spec.containers[*].image", Expression: `"mirror.local/" + value`}}
	cfg.Sync.ToHost.Services.Translate = []config.Patch{{Path: `metadata.annotations["example.com/tls-secret"]`,
		Reference: &config.PatchReference{APIVersion: "v1", Kind: "Secret"}}}
	withConfig(t, cfg)

	// Round trip of an annotation.
	create(t, env.VirtualClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns,
		Annotations: map[string]string{team: "a"}}, Data: map[string]string{"k": "v"}})
	hostAnnotation := func(want string) {
		t.Helper()
		testenv.Eventually(t, wait, func() error {
			var h corev1.ConfigMap
			if err := env.HostClient.Get(ctx, env.HostKey("settings", ns), &h); err != nil {
				return err
			}
			if got := h.Annotations[team]; got != want {
				return fmt.Errorf("host annotation %s = %q, want %q", team, got, want)
			}
			return nil
		})
	}
	virtualAnnotation := func(want string) {
		t.Helper()
		testenv.Eventually(t, wait, func() error {
			var v corev1.ConfigMap
			if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "settings"}, &v); err != nil {
				return err
			}
			if got := v.Annotations[team]; got != want {
				return fmt.Errorf("virtual annotation %s = %q, want %q", team, got, want)
			}
			return nil
		})
	}
	hostAnnotation("team-a")
	virtualAnnotation("a")
	editAnnotation := func(c client.Client, key client.ObjectKey, value string) {
		t.Helper()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var cm corev1.ConfigMap
			if err := c.Get(ctx, key, &cm); err != nil {
				return err
			}
			cm.Annotations[team] = value
			return c.Update(ctx, &cm)
		}); err != nil {
			t.Fatal(err)
		}
	}
	editAnnotation(env.HostClient, env.HostKey("settings", ns), "team-b")
	virtualAnnotation("b")
	hostAnnotation("team-b")
	editAnnotation(env.VirtualClient, client.ObjectKey{Namespace: ns, Name: "settings"}, "c")
	hostAnnotation("team-c")

	// A one-way expression on every container's image.
	create(t, env.VirtualClient, pod("web", ns, func(p *corev1.Pod) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Image: "busybox:1.36"})
	}))
	hp := hostObject(t, &corev1.Pod{}, "web", ns)
	if hp.Spec.Containers[0].Image != "mirror.local/nginx:1.27" || hp.Spec.Containers[1].Image != "mirror.local/busybox:1.36" {
		t.Errorf("host pod images %q, %q; want both with mirror.local/", hp.Spec.Containers[0].Image, hp.Spec.Containers[1].Image)
	}
	var vp corev1.Pod
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &vp); err != nil {
		t.Fatal(err)
	}
	if vp.Spec.Containers[0].Image != "nginx:1.27" {
		t.Errorf("virtual pod image changed to %q", vp.Spec.Containers[0].Image)
	}

	// A reference patch: the Secret is renamed and, being used, synced.
	create(t, env.VirtualClient, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-tls", Namespace: ns},
		Data: map[string][]byte{"tls.crt": []byte("c")}})
	neverOnHost(t, &corev1.Secret{}, "web-tls", ns, time.Second)
	create(t, env.VirtualClient, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns,
		Annotations: map[string]string{"example.com/tls-secret": "web-tls"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}})
	hs := hostObject(t, &corev1.Service{}, "web", ns)
	if got, want := hs.Annotations["example.com/tls-secret"], env.HostKey("web-tls", ns).Name; got != want {
		t.Errorf("host Service annotation = %q, want the Secret's host name %q", got, want)
	}
	hostObject(t, &corev1.Secret{}, "web-tls", ns)

	// A patch that throws: the object stays off the host, an event says why.
	create(t, env.VirtualClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: ns},
		Data: map[string]string{"broken": "x"}})
	msg := syncErrorEvent(t, ns, "bad", "sync.toHost.configMaps.patches[1]", "path data.broken", ns+"/bad", "TypeError")
	if want := env.HostNamespace; want != "" && strings.Contains(msg, want) {
		t.Errorf("event names the host namespace: %q", msg)
	}
	neverOnHost(t, &corev1.ConfigMap{}, "bad", ns, time.Second)
}
