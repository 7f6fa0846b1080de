package runner_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// escapeAttempt is one thing a tenant may try in order to reach beyond its
// host namespace. attempt makes the tenant's objects in virtual namespace
// ns, as a tenant with every right inside the virtual cluster can; check
// asserts the secure outcome on the host and what the tenant is told.
type escapeAttempt struct {
	name    string
	attempt func(t *testing.T, ns string)
	check   func(t *testing.T, ns string)
}

// TestEscapeAttempts tries, with the default configuration, each way out of
// the tenant's host namespace that docs/security.md lists; each row
// asserts the secure outcome on the host and the event the tenant gets,
// which never names a host object.
func TestEscapeAttempts(t *testing.T) {
	for _, a := range escapeAttempts() {
		t.Run(a.name, func(t *testing.T) {
			ns := env.NewNamespace(t)
			a.attempt(t, ns)
			a.check(t, ns)
		})
	}
}

func escapeAttempts() []escapeAttempt {
	return []escapeAttempt{
		{
			// "a-x-p" in namespace NS and "a" in namespace "p-x-NS" have
			// the same host name, a-x-p-x-NS-x-VCLUSTER. The second must
			// not take over (or delete) the host copy of the first.
			name: "crafted name with the host name of another object",
			attempt: func(t *testing.T, ns string) {
				other := "p-x-" + ns
				create(t, env.VirtualClient, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}})
				t.Cleanup(func() {
					_ = env.VirtualClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}})
				})
				create(t, env.VirtualClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: other,
					Annotations: map[string]string{translate.AnnotationForceSync: "true"}}, Data: map[string]string{"owner": "first"}})
				hostObject(t, &corev1.ConfigMap{}, "a", other)
				create(t, env.VirtualClient, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a-x-p", Namespace: ns,
					Annotations: map[string]string{translate.AnnotationForceSync: "true"}}, Data: map[string]string{"owner": "second"}})
			},
			check: func(t *testing.T, ns string) {
				other := "p-x-" + ns
				if env.HostKey("a", other) != env.HostKey("a-x-p", ns) {
					t.Fatalf("the names do not collide: %s, %s", env.HostKey("a", other), env.HostKey("a-x-p", ns))
				}
				before := hostObject(t, &corev1.ConfigMap{}, "a", other)
				msg := syncErrorEvent(t, ns, "a-x-p", "host copy of ConfigMap "+other+"/a")
				noHostNames(t, msg)
				var after corev1.ConfigMap
				if err := env.HostClient.Get(ctx, client.ObjectKeyFromObject(before), &after); err != nil {
					t.Fatalf("the first object's host copy: %v", err)
				}
				if after.UID != before.UID || after.Data["owner"] != "first" || after.Annotations[translate.AnnotationObjectNamespace] != other {
					t.Errorf("the first object's host copy was taken over: uid %s→%s data %v object-namespace %q",
						before.UID, after.UID, after.Data, after.Annotations[translate.AnnotationObjectNamespace])
				}
			},
		},
	}
}

// noHostNames fails t when msg, told to the tenant, names the host
// namespace.
func noHostNames(t *testing.T, msg string) {
	t.Helper()
	if strings.Contains(msg, env.HostNamespace) {
		t.Errorf("the tenant is told a host name: %s", msg)
	}
}
