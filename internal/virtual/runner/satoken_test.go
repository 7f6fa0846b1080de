package runner_test

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/resources/pods"
)

// By default (sync.toHost.pods.useSecretsForSATokens true, vCluster's
// default is false), a pod's service-account token is in a host Secret
// owned by the host pod, read by its token volume, and in none of the host
// pod's annotations, which anyone who may read host pods reads; the Secret
// goes with the pod.
func TestTokensInSecrets(t *testing.T) {
	ns := env.NewNamespace(t)
	// The virtual API server's admission adds the token volume.
	create(t, env.VirtualClient, pod("api-client", ns, nil))
	hostPod := hostObject(t, &corev1.Pod{}, "api-client", ns)
	secretName := pods.TokenSecretName(hostPod.Name)
	for k, v := range hostPod.Annotations {
		if strings.HasPrefix(k, "vcluster.loft.sh/token-") || strings.Count(v, ".") == 2 && len(v) > 100 {
			t.Errorf("host pod annotation %s carries a token", k)
		}
	}
	found := false
	for _, v := range hostPod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.Secret != nil && src.Secret.Name == secretName {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no token volume reads Secret %s: %+v", secretName, hostPod.Spec.Volumes)
	}
	testenv.Eventually(t, wait, func() error {
		var s corev1.Secret
		if err := env.HostClient.Get(ctx, client.ObjectKey{Namespace: env.HostNamespace, Name: secretName}, &s); err != nil {
			return err
		}
		if len(s.Data[pods.TokenKey]) == 0 {
			return fmt.Errorf("token secret has no %s", pods.TokenKey)
		}
		if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != hostPod.UID {
			return fmt.Errorf("token secret owners %+v, want the host pod %s", s.OwnerReferences, hostPod.UID)
		}
		return nil
	})

	if err := env.VirtualClient.Delete(ctx, pod("api-client", ns, nil)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, wait, func() error {
		err := env.HostClient.Get(ctx, client.ObjectKey{Namespace: env.HostNamespace, Name: secretName}, &corev1.Secret{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("token secret %s still there (%v)", secretName, err)
	})
}

// With sync.toHost.pods.useSecretsForSATokens false (vCluster's default),
// the token is in an annotation of the host pod, read by its downward-API
// volume: the switch works both ways.
func TestTokensInAnnotations(t *testing.T) {
	ns := env.NewNamespace(t)
	off := config.Default()
	off.Sync.ToHost.Pods.UseSecretsForSATokens = false
	withConfig(t, off)
	create(t, env.VirtualClient, pod("api-client", ns, nil))
	hostPod := hostObject(t, &corev1.Pod{}, "api-client", ns)
	if key, ok := pods.TokenAnnotation(hostPod.Annotations); !ok || len(hostPod.Annotations[key]) < 100 {
		t.Errorf("host pod annotations %v, want a token annotation", slices.Collect(maps.Keys(hostPod.Annotations)))
	}
}

// A token Secret left without its owner (an earlier version made it before
// the host pod; test/chaos found it left behind) gets the host pod as owner
// at the pod's next sync, so the host's garbage collector deletes it with
// the pod; one that is missing is made.
func TestTokenSecretOwnerRepaired(t *testing.T) {
	ns := env.NewNamespace(t)
	create(t, env.VirtualClient, pod("api-client", ns, nil))
	hostPod := hostObject(t, &corev1.Pod{}, "api-client", ns)
	key := client.ObjectKey{Namespace: env.HostNamespace, Name: pods.TokenSecretName(hostPod.Name)}
	var s corev1.Secret
	testenv.Eventually(t, wait, func() error {
		if err := env.HostClient.Get(ctx, key, &s); err != nil {
			return err
		}
		if len(s.OwnerReferences) == 0 {
			return fmt.Errorf("token secret not owned yet")
		}
		return nil
	})
	orphaned := s.DeepCopy()
	orphaned.OwnerReferences = nil
	if err := env.HostClient.Update(ctx, orphaned); err != nil {
		t.Fatal(err)
	}
	touchPod(t, ns, "api-client", "1")
	owned := func() error {
		if err := env.HostClient.Get(ctx, key, &s); err != nil {
			return err
		}
		if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != hostPod.UID || strings.Count(string(s.Data[pods.TokenKey]), ".") != 2 {
			return fmt.Errorf("token secret owners %+v, token %d bytes; want the host pod %s and a JWT", s.OwnerReferences, len(s.Data[pods.TokenKey]), hostPod.UID)
		}
		return nil
	}
	testenv.Eventually(t, wait, owned)

	// A Secret never made (the syncer died after making the pod) is made
	// at the pod's next sync, with a new token.
	if err := env.HostClient.Delete(ctx, &s); err != nil {
		t.Fatal(err)
	}
	touchPod(t, ns, "api-client", "2")
	testenv.Eventually(t, wait, owned)
}

// touchPod changes a label of virtual pod name/ns, which makes the syncer
// sync it again.
func touchPod(t *testing.T, ns, name, value string) {
	t.Helper()
	var v corev1.Pod
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &v); err != nil {
		t.Fatal(err)
	}
	touched := v.DeepCopy()
	touched.Labels["touched"] = value
	if err := env.VirtualClient.Patch(ctx, touched, client.MergeFrom(&v)); err != nil {
		t.Fatal(err)
	}
}

// A projected token of another audience (as the OIDC discovery
// conformance spec mounts) is minted for that audience: its key of the
// token Secret holds a token whose aud claim is the audience, beside the
// API server's own token.
func TestTokenAudiences(t *testing.T) {
	ns := env.NewNamespace(t)
	create(t, env.VirtualClient, pod("oidc-client", ns, func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "oidc", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", Audience: "oidc-discovery-test"}}}}}})
	}))
	hostPod := hostObject(t, &corev1.Pod{}, "oidc-client", ns)
	testenv.Eventually(t, wait, func() error {
		var s corev1.Secret
		if err := env.HostClient.Get(ctx, client.ObjectKey{Namespace: env.HostNamespace, Name: pods.TokenSecretName(hostPod.Name)}, &s); err != nil {
			return err
		}
		for key, want := range map[string]string{pods.KeyFor("oidc-discovery-test"): `"oidc-discovery-test"`, pods.TokenKey: `"https://kubernetes.default.svc.cluster.local"`} {
			parts := strings.Split(string(s.Data[key]), ".")
			if len(parts) != 3 {
				return fmt.Errorf("key %s holds no JWT", key)
			}
			claims, err := base64.RawURLEncoding.DecodeString(parts[1])
			if err != nil {
				return err
			}
			if !strings.Contains(string(claims), `"aud":[`+want+`]`) {
				return fmt.Errorf("key %s: claims %s, want aud [%s]", key, claims, want)
			}
		}
		return nil
	})
}
