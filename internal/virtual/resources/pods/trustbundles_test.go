package pods

import (
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/pki"
)

// certPEM is a self-signed CA certificate named cn, as PEM.
func certPEM(t *testing.T, cn string) string {
	t.Helper()
	ca, err := pki.NewCA(cn)
	if err != nil {
		t.Fatal(err)
	}
	return string(ca.CertPEM())
}

func TestTrustBundleData(t *testing.T) {
	a, b, c := certPEM(t, "a"), certPEM(t, "b"), certPEM(t, "c")
	bundle := func(name, signer string, lbl map[string]string, pems ...string) certificatesv1.ClusterTrustBundle {
		return certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbl},
			Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: strings.Join(pems, "")}}
	}
	bundles := []certificatesv1.ClusterTrustBundle{
		bundle("plain", "", nil, a),
		bundle("signer-one-live", "example.com/one", map[string]string{"alive": "yes"}, b, a),
		bundle("signer-one-dead", "example.com/one", map[string]string{"alive": "no"}, c),
		bundle("signer-two", "example.com/two", map[string]string{"alive": "yes"}, c),
	}
	src := func(p corev1.ClusterTrustBundleProjection) corev1.VolumeProjection {
		p.Path = "bundle.pem"
		return corev1.VolumeProjection{ClusterTrustBundle: &p}
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "other", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "ctb", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			src(corev1.ClusterTrustBundleProjection{Name: ptr.To("plain")}),
			src(corev1.ClusterTrustBundleProjection{SignerName: ptr.To("example.com/one"), LabelSelector: &metav1.LabelSelector{}}),
			src(corev1.ClusterTrustBundleProjection{SignerName: ptr.To("example.com/one"), LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"alive": "yes"}}}),
			src(corev1.ClusterTrustBundleProjection{Name: ptr.To("missing"), Optional: ptr.To(true)}),
			src(corev1.ClusterTrustBundleProjection{Name: ptr.To("missing")}),
			src(corev1.ClusterTrustBundleProjection{SignerName: ptr.To("example.com/one")}), // no selector: matches nothing
		}}}},
	}}}
	data := TrustBundleData(pod, bundles)
	has := func(key string, want ...string) {
		t.Helper()
		got, ok := data[key]
		if !ok {
			t.Errorf("%s missing", key)
			return
		}
		if n := strings.Count(got, "BEGIN CERTIFICATE"); n != len(want) {
			t.Errorf("%s: %d certificates, want %d", key, n, len(want))
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks a certificate", key)
			}
		}
	}
	has(TrustBundleKey(1, 0), a)
	has(TrustBundleKey(1, 1), a, b, c) // a once, though two bundles carry it
	has(TrustBundleKey(1, 2), a, b)
	has(TrustBundleKey(1, 3))
	if _, ok := data[TrustBundleKey(1, 4)]; ok {
		t.Error("a missing, non-optional bundle got a key: the pod would start without it")
	}
	if _, ok := data[TrustBundleKey(1, 5)]; ok {
		t.Error("a signer without a label selector matched")
	}
	if again := TrustBundleData(pod, []certificatesv1.ClusterTrustBundle{bundles[3], bundles[2], bundles[1], bundles[0]}); again[TrustBundleKey(1, 1)] != data[TrustBundleKey(1, 1)] {
		t.Error("the bundle depends on the order of the bundles")
	}

	spec := HostSpec(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}, Spec: pod.Spec}, Environment{Translator: testTr}, nil)
	got := spec.Volumes[1].Projected.Sources[3]
	if got.ClusterTrustBundle != nil || got.ConfigMap == nil || got.ConfigMap.Name != TrustBundleConfigMapName(testTr.HostName("web", "team")) ||
		got.ConfigMap.Items[0].Key != TrustBundleKey(1, 3) || got.ConfigMap.Items[0].Path != "bundle.pem" || !*got.ConfigMap.Optional {
		t.Errorf("host projection %+v", got)
	}
}
