package pods

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"strconv"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// PodCertificate projections
// (https://kubernetes.io/docs/concepts/storage/projected-volumes/#podcertificate)
// are the kubelet's work: it makes a key pair, asks the signer for a
// certificate with a PodCertificateRequest in the pod's cluster, and
// writes key and chain into the volume, again before the certificate
// expires. The host's kubelet would ask the host cluster, whose signers
// know nothing of the virtual cluster's pods, so the syncer does the
// kubelet's part in the virtual cluster once the virtual pod is bound to a
// node: it makes the key, creates the PodCertificateRequest there (the
// virtual cluster's signers answer it), and writes key and chain into a
// host Secret owned by the host pod (PodCertificateSecretName), which the
// host pod's projection reads instead (PodCertificateKey). A new request
// goes out at the certificate's beginRefreshAt; the host's kubelet then
// updates the files as for any Secret.

// PodCertificateSecretName is the host Secret holding the pod certificates
// of host pod hostPod: HOSTPOD-pcr (shortened as host names are).
func PodCertificateSecretName(hostPod string) string {
	return translate.SafeConcatName(hostPod, "pcr")
}

// The parts of one projection in the Secret: the credential bundle (key,
// then chain), the key, the chain, and the key of a request not answered
// yet.
const (
	pcrBundle  = "bundle"
	pcrKey     = "key"
	pcrChain   = "chain"
	pcrPending = "pending-key"
)

// PodCertificateKey is the key of the Secret that holds part (bundle, key,
// chain) of source j of projected volume i.
func PodCertificateKey(i, j int, part string) string {
	return "pcr-" + strconv.Itoa(i) + "-" + strconv.Itoa(j) + "-" + part
}

// Annotations of the Secret, per source (suffix I-J): the name of the
// PodCertificateRequest waiting for an answer, and when the certificate
// written is to be renewed (RFC 3339).
const (
	annotationPCRPending = "clustersync.io/pod-certificate-request."
	annotationPCRRefresh = "clustersync.io/pod-certificate-refresh."
)

func sourceSuffix(i, j int) string { return strconv.Itoa(i) + "-" + strconv.Itoa(j) }

// pcrSource is one PodCertificate source: source j of projected volume i.
type pcrSource struct {
	i, j int
	p    *corev1.PodCertificateProjection
}

// podCertificateSources are the PodCertificate sources of pod, in order.
func podCertificateSources(pod *corev1.Pod) []pcrSource {
	var out []pcrSource
	for i, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for j, s := range v.Projected.Sources {
			if s.PodCertificate != nil {
				out = append(out, pcrSource{i, j, s.PodCertificate})
			}
		}
	}
	return out
}

// translatePodCertificates makes the PodCertificate sources of projected
// volume v (the i-th of the pod) read their files from host Secret
// secret: the keys PodCertificateKey of each path the source names. The
// Secret is not optional: the host's kubelet waits for it, as it waits for
// the certificate.
func translatePodCertificates(v *corev1.Volume, i int, secret string) {
	if v.Projected == nil {
		return
	}
	for j := range v.Projected.Sources {
		src := &v.Projected.Sources[j]
		p := src.PodCertificate
		if p == nil {
			continue
		}
		var items []corev1.KeyToPath
		for _, f := range []struct{ part, path string }{
			{pcrBundle, p.CredentialBundlePath}, {pcrKey, p.KeyPath}, {pcrChain, p.CertificateChainPath},
		} {
			if f.path != "" {
				items = append(items, corev1.KeyToPath{Key: PodCertificateKey(i, j, f.part), Path: f.path})
			}
		}
		src.PodCertificate = nil
		src.Secret = &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Items: items,
			Optional: ptr.To(false)}
	}
}

// newPodCertificateKey makes a private key of keyType (the values of
// PodCertificateProjection.keyType) and the stub PKCS#10 request that
// proves its possession, as the kubelet does; it returns the key as a
// PKCS#8 PEM block. An unknown key type is an error naming it.
func newPodCertificateKey(keyType string) (keyPEM, stubPKCS10 []byte, err error) {
	var key crypto.Signer
	switch keyType {
	case "RSA3072":
		key, err = rsa.GenerateKey(rand.Reader, 3072)
	case "RSA4096":
		key, err = rsa.GenerateKey(rand.Reader, 4096)
	case "ECDSAP256":
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ECDSAP384":
		key, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "ECDSAP521":
		key, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case "ED25519":
		_, key, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, nil, fmt.Errorf("unknown key type %q", keyType)
	}
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), stub, nil
}

// PodCertificateFiles are the Secret entries of source j of volume i for a
// key (PEM) and the issued chain: the bundle (key, then the chain's
// CERTIFICATE blocks, anything between them dropped), the key and the
// chain.
func PodCertificateFiles(i, j int, keyPEM []byte, chain string) map[string][]byte {
	var clean bytes.Buffer
	rest := []byte(chain)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		_ = pem.Encode(&clean, &pem.Block{Type: "CERTIFICATE", Bytes: b.Bytes})
	}
	return map[string][]byte{
		PodCertificateKey(i, j, pcrBundle): append(bytes.Clone(keyPEM), clean.Bytes()...),
		PodCertificateKey(i, j, pcrKey):    bytes.Clone(keyPEM),
		PodCertificateKey(i, j, pcrChain):  clean.Bytes(),
	}
}

// pcrRetry is how soon a request is looked at again while its signer has
// not answered, and how long after a refusal (Denied, Failed) a new one
// goes out.
const (
	pcrPoll  = time.Second
	pcrRetry = 30 * time.Second
)

// ensurePodCertificates does the kubelet's part for the PodCertificate
// sources of virtual pod virtual, once it is bound to a node, into the
// Secret of its host pod host (created, owned by the host pod): for each
// source without a certificate, or whose certificate is due for renewal,
// a PodCertificateRequest in the virtual cluster, then, once issued, its
// files. It returns how soon to look again (0: at the next change); a
// refused request is reported on the virtual pod (a Warning event with
// the signer's reason) and tried again after pcrRetry.
func ensurePodCertificates(ctx context.Context, s *syncer.Context, virtual, host *corev1.Pod) (time.Duration, error) {
	sources := podCertificateSources(virtual)
	if len(sources) == 0 || host.UID == "" || virtual.Spec.NodeName == "" {
		return 0, nil
	}
	key := types.NamespacedName{Namespace: host.Namespace, Name: PodCertificateSecretName(host.Name)}
	var secret corev1.Secret
	err := s.Host.Get(ctx, key, &secret)
	if apierrors.IsNotFound(err) {
		err = s.HostReader.Get(ctx, key, &secret) // the cache may not have it yet
	}
	switch {
	case apierrors.IsNotFound(err):
		secret = corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace,
			Labels:          map[string]string{translate.LabelManagedBy: s.Translator.VCluster},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: host.Name, UID: host.UID}}},
			Type: corev1.SecretTypeOpaque}
		if err := s.Host.Create(ctx, &secret); err != nil && !apierrors.IsAlreadyExists(err) {
			return 0, fmt.Errorf("pod certificate secret %s: %w", key.Name, err)
		}
		return pcrPoll, nil // filled in at the next look
	case err != nil:
		return 0, err
	}
	if secret.Labels[translate.LabelManagedBy] != s.Translator.VCluster {
		return 0, fmt.Errorf("host secret %s/%s exists and is not managed by virtual cluster %s", secret.Namespace, secret.Name, s.Translator.VCluster)
	}
	before := secret.DeepCopy()
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	if secret.Data == nil {
		secret.Data = map[string][]byte{}
	}
	now := time.Now()
	var next time.Duration
	wake := func(d time.Duration) {
		if d > 0 && (next == 0 || d < next) {
			next = d
		}
	}
	for _, src := range sources {
		d, err := ensurePodCertificate(ctx, s, virtual, &secret, src, now)
		if err != nil {
			return 0, err
		}
		wake(d)
	}
	if !maps.EqualFunc(before.Data, secret.Data, bytes.Equal) || !maps.Equal(before.Annotations, secret.Annotations) {
		if err := s.Host.Update(ctx, &secret); err != nil {
			return 0, fmt.Errorf("pod certificate secret %s: %w", secret.Name, err)
		}
	}
	return next, nil
}

// ensurePodCertificate is ensurePodCertificates for source src, changing
// secret in place.
func ensurePodCertificate(ctx context.Context, s *syncer.Context, virtual *corev1.Pod, secret *corev1.Secret, src pcrSource, now time.Time) (time.Duration, error) {
	suffix := sourceSuffix(src.i, src.j)
	if name := secret.Annotations[annotationPCRPending+suffix]; name != "" {
		var pcr certificatesv1.PodCertificateRequest
		err := s.VirtualReader.Get(ctx, types.NamespacedName{Namespace: virtual.Namespace, Name: name}, &pcr)
		switch {
		case apierrors.IsNotFound(err):
			delete(secret.Annotations, annotationPCRPending+suffix) // gone: ask again below
		case err != nil:
			return 0, fmt.Errorf("pod certificate request %s/%s: %w", virtual.Namespace, name, err)
		default:
			for _, c := range pcr.Status.Conditions {
				if (c.Type == certificatesv1.PodCertificateRequestConditionTypeDenied || c.Type == certificatesv1.PodCertificateRequestConditionTypeFailed) &&
					c.Status == metav1.ConditionTrue {
					s.ReportSyncError(virtual, "pod certificate of volume %s from signer %s: %s: %s: %s",
						virtual.Spec.Volumes[src.i].Name, src.p.SignerName, c.Type, c.Reason, c.Message)
					delete(secret.Annotations, annotationPCRPending+suffix)
					delete(secret.Data, PodCertificateKey(src.i, src.j, pcrPending))
					secret.Annotations[annotationPCRRefresh+suffix] = now.Add(pcrRetry).UTC().Format(time.RFC3339)
					return pcrRetry, nil
				}
			}
			if pcr.Status.CertificateChain == "" {
				return pcrPoll, nil
			}
			maps.Copy(secret.Data, PodCertificateFiles(src.i, src.j, secret.Data[PodCertificateKey(src.i, src.j, pcrPending)], pcr.Status.CertificateChain))
			delete(secret.Data, PodCertificateKey(src.i, src.j, pcrPending))
			delete(secret.Annotations, annotationPCRPending+suffix)
			refresh := now.Add(time.Hour)
			if pcr.Status.BeginRefreshAt != nil {
				refresh = pcr.Status.BeginRefreshAt.Time
			}
			secret.Annotations[annotationPCRRefresh+suffix] = refresh.UTC().Format(time.RFC3339)
			return refresh.Sub(now), nil
		}
	}
	if at, err := time.Parse(time.RFC3339, secret.Annotations[annotationPCRRefresh+suffix]); err == nil && now.Before(at) {
		return at.Sub(now), nil // the certificate written (or a refusal) holds until then
	}
	name, keyPEM, err := requestPodCertificate(ctx, s, virtual, src.p)
	if err != nil {
		return 0, err
	}
	secret.Data[PodCertificateKey(src.i, src.j, pcrPending)] = keyPEM
	secret.Annotations[annotationPCRPending+suffix] = name
	return pcrPoll, nil
}

// requestPodCertificate creates, in the virtual cluster, the
// PodCertificateRequest the kubelet would for projection p of virtual pod
// pod (bound to its node), with a new key; it returns the request's name
// and the key (PEM).
func requestPodCertificate(ctx context.Context, s *syncer.Context, pod *corev1.Pod, p *corev1.PodCertificateProjection) (string, []byte, error) {
	var node corev1.Node
	if err := s.VirtualReader.Get(ctx, types.NamespacedName{Name: pod.Spec.NodeName}, &node); err != nil {
		return "", nil, fmt.Errorf("node %s of the pod certificate request: %w", pod.Spec.NodeName, err)
	}
	saName := pod.Spec.ServiceAccountName
	if saName == "" {
		saName = "default"
	}
	var sa corev1.ServiceAccount
	if err := s.VirtualReader.Get(ctx, types.NamespacedName{Namespace: pod.Namespace, Name: saName}, &sa); err != nil {
		return "", nil, fmt.Errorf("service account %s of the pod certificate request: %w", saName, err)
	}
	keyPEM, stub, err := newPodCertificateKey(p.KeyType)
	if err != nil {
		return "", nil, fmt.Errorf("pod certificate from signer %s: %w", p.SignerName, err)
	}
	req := &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, GenerateName: "req-",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}}},
		Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName: p.SignerName, PodName: pod.Name, PodUID: pod.UID,
			ServiceAccountName: sa.Name, ServiceAccountUID: sa.UID,
			NodeName: types.NodeName(node.Name), NodeUID: node.UID,
			MaxExpirationSeconds: p.MaxExpirationSeconds, StubPKCS10Request: stub,
			UnverifiedUserAnnotations: p.UserAnnotations,
		},
	}
	if err := s.Virtual.Create(ctx, req); err != nil {
		return "", nil, fmt.Errorf("pod certificate request for signer %s: %w", p.SignerName, err)
	}
	return req.Name, keyPEM, nil
}
