package runner_test

import (
	"fmt"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/pki"
	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/resources/pods"
)

// A pod that projects a ClusterTrustBundle of the virtual cluster reads it
// on the host from a ConfigMap the syncer writes, owned by the host pod:
// the host's kubelet cannot read the virtual cluster's bundles.
func TestClusterTrustBundleProjection(t *testing.T) {
	ns := env.NewNamespace(t)
	ca, err := pki.NewCA("ctb-test")
	if err != nil {
		t.Fatal(err)
	}
	bundlePEM := string(ca.CertPEM())
	bundle := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "ctb-" + ns},
		Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: bundlePEM}}
	create(t, env.VirtualClient, bundle)
	t.Cleanup(func() { _ = env.VirtualClient.Delete(ctx, bundle) })
	create(t, env.VirtualClient, pod("trusting", ns, func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "ctb", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr.To(bundle.Name), Path: "ca.pem"}}}}}}}
	}))
	hostPod := hostObject(t, &corev1.Pod{}, "trusting", ns)
	name := pods.TrustBundleConfigMapName(hostPod.Name)
	if src := hostPod.Spec.Volumes[0].Projected.Sources[0]; src.ConfigMap == nil || src.ConfigMap.Name != name {
		t.Fatalf("host projection %+v, want ConfigMap %s", src, name)
	}
	testenv.Eventually(t, wait, func() error {
		var cm corev1.ConfigMap
		if err := env.HostClient.Get(ctx, client.ObjectKey{Namespace: env.HostNamespace, Name: name}, &cm); err != nil {
			return err
		}
		if cm.Data[pods.TrustBundleKey(0, 0)] != bundlePEM {
			return fmt.Errorf("config map data %v, want the bundle", cm.Data)
		}
		if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != hostPod.UID {
			return fmt.Errorf("owners %+v, want the host pod", cm.OwnerReferences)
		}
		return nil
	})
}
