package pods

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"slices"
	"strconv"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// ClusterTrustBundle projections
// (https://kubernetes.io/docs/reference/access-authn-authz/certificate-signing-requests/#cluster-trust-bundles)
// name bundles of the virtual cluster, which the host's kubelet cannot
// read: the syncer resolves each one as the kubelet would (by name, or by
// signer name and label selector; certificates deduplicated) and writes
// the result into a host ConfigMap owned by the host pod
// (TrustBundleConfigMapName), which the host pod's projection reads
// instead, one key per projection (TrustBundleKey).

// TrustBundleConfigMapName is the host ConfigMap holding the resolved
// trust bundles of host pod hostPod: HOSTPOD-ctb (shortened as host names
// are).
func TrustBundleConfigMapName(hostPod string) string {
	return translate.SafeConcatName(hostPod, "ctb")
}

// TrustBundleKey is the key of the ConfigMap that holds the bundle of
// source j of projected volume i.
func TrustBundleKey(i, j int) string { return "ctb-" + strconv.Itoa(i) + "-" + strconv.Itoa(j) }

// usesTrustBundles tells whether a projected volume of pod has a
// ClusterTrustBundle source.
func usesTrustBundles(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Projected != nil && slices.ContainsFunc(v.Projected.Sources, func(s corev1.VolumeProjection) bool { return s.ClusterTrustBundle != nil }) {
			return true
		}
	}
	return false
}

// TrustBundleData resolves the ClusterTrustBundle sources of pod against
// bundles (the virtual cluster's), keyed by TrustBundleKey: the
// certificates of the bundle named, or of every bundle of the signer that
// the label selector matches, each certificate once, in a stable order. A
// source that matches nothing gets "" when it is optional (an empty file,
// as the kubelet writes) and no key otherwise (the host pod's volume then
// waits, as the kubelet makes the pod wait).
func TrustBundleData(pod *corev1.Pod, bundles []certificatesv1.ClusterTrustBundle) map[string]string {
	data := map[string]string{}
	for i, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for j, s := range v.Projected.Sources {
			p := s.ClusterTrustBundle
			if p == nil {
				continue
			}
			var picked []certificatesv1.ClusterTrustBundle
			switch {
			case p.Name != nil:
				for _, b := range bundles {
					if b.Name == *p.Name {
						picked = append(picked, b)
					}
				}
			case p.SignerName != nil && p.LabelSelector != nil:
				sel, err := metav1.LabelSelectorAsSelector(p.LabelSelector)
				if err != nil {
					continue
				}
				for _, b := range bundles {
					if b.Spec.SignerName == *p.SignerName && sel.Matches(labels.Set(b.Labels)) {
						picked = append(picked, b)
					}
				}
			}
			if len(picked) == 0 {
				if p.Optional != nil && *p.Optional {
					data[TrustBundleKey(i, j)] = ""
				}
				continue
			}
			data[TrustBundleKey(i, j)] = normalizeTrustAnchors(picked)
		}
	}
	return data
}

// normalizeTrustAnchors is the certificates of bundles as PEM, each once,
// ordered by their bytes.
func normalizeTrustAnchors(bundles []certificatesv1.ClusterTrustBundle) string {
	var ders [][]byte
	for _, b := range bundles {
		rest := []byte(b.Spec.TrustBundle)
		for {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			if block.Type == "CERTIFICATE" && !slices.ContainsFunc(ders, func(d []byte) bool { return bytes.Equal(d, block.Bytes) }) {
				ders = append(ders, block.Bytes)
			}
		}
	}
	slices.SortFunc(ders, bytes.Compare)
	var out []byte
	for _, d := range ders {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: d})...)
	}
	return string(out)
}

// writeTrustBundles creates or updates the trust-bundle ConfigMap of host
// pod host from the virtual cluster's bundles, owned by the host pod and
// labelled as the virtual cluster's, when virtual pod uses any.
func writeTrustBundles(ctx context.Context, s *syncer.Context, virtual, host *corev1.Pod) error {
	if !usesTrustBundles(virtual) || host.UID == "" {
		return nil
	}
	var bundles certificatesv1.ClusterTrustBundleList
	if err := s.VirtualReader.List(ctx, &bundles); err != nil {
		return fmt.Errorf("cluster trust bundles: %w", err)
	}
	want := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: TrustBundleConfigMapName(host.Name), Namespace: host.Namespace,
		Labels:          map[string]string{translate.LabelManagedBy: s.Translator.VCluster},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: host.Name, UID: host.UID}}},
		Data: TrustBundleData(virtual, bundles.Items)}
	var cur corev1.ConfigMap
	err := s.Host.Get(ctx, types.NamespacedName{Namespace: want.Namespace, Name: want.Name}, &cur)
	if apierrors.IsNotFound(err) {
		return client.IgnoreAlreadyExists(s.Host.Create(ctx, want))
	}
	if err != nil {
		return err
	}
	if cur.Labels[translate.LabelManagedBy] != s.Translator.VCluster {
		return fmt.Errorf("host config map %s/%s exists and is not managed by virtual cluster %s", cur.Namespace, cur.Name, s.Translator.VCluster)
	}
	if maps := cur.Data; len(maps) == len(want.Data) && func() bool {
		for k, v := range want.Data {
			if got, ok := maps[k]; !ok || got != v {
				return false
			}
		}
		return true
	}() {
		return nil
	}
	cur.Data = want.Data
	return s.Host.Update(ctx, &cur)
}
