package runner_test

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/big"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/pki"
	"github.com/clustersync/clustersync/internal/testenv"
	"github.com/clustersync/clustersync/internal/virtual/resources/pods"
)

// A pod that projects a pod certificate gets it as the kubelet would give
// it: the syncer asks the virtual cluster's signer with a
// PodCertificateRequest for the pod, its service account and its node,
// and writes key and chain into a host Secret owned by the host pod,
// which the host projection reads. The test is the signer.
func TestPodCertificateProjection(t *testing.T) {
	ns := env.NewNamespace(t)
	signer := "e2e.example.com/" + ns
	ca, err := pki.NewCA("pcr-test")
	if err != nil {
		t.Fatal(err)
	}
	create(t, env.VirtualClient, pod("certified", ns, func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "pcr", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{PodCertificate: &corev1.PodCertificateProjection{SignerName: signer, KeyType: "ECDSAP256",
				CredentialBundlePath: "bundle.pem", KeyPath: "key.pem", CertificateChainPath: "chain.pem",
				UserAnnotations: map[string]string{"e2e.example.com/path": "x"}}}}}}}}
	}))
	hostPod := hostObject(t, &corev1.Pod{}, "certified", ns)
	secretName := pods.PodCertificateSecretName(hostPod.Name)
	if src := hostPod.Spec.Volumes[0].Projected.Sources[0]; src.Secret == nil || src.Secret.Name != secretName || len(src.Secret.Items) != 3 {
		t.Fatalf("host projection %+v, want Secret %s with three files", src, secretName)
	}

	// The request, made once the pod is bound, names the pod, its
	// service account and its node.
	var pcr certificatesv1.PodCertificateRequest
	testenv.Eventually(t, wait, func() error {
		var list certificatesv1.PodCertificateRequestList
		if err := env.VirtualClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return fmt.Errorf("%d pod certificate requests, want 1", len(list.Items))
		}
		pcr = list.Items[0]
		return nil
	})
	var vp corev1.Pod
	if err := env.VirtualClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "certified"}, &vp); err != nil {
		t.Fatal(err)
	}
	if s := pcr.Spec; s.SignerName != signer || s.PodUID != vp.UID || s.ServiceAccountName != "default" || s.ServiceAccountUID == "" ||
		string(s.NodeName) != vp.Spec.NodeName || s.NodeUID == "" || s.UnverifiedUserAnnotations["e2e.example.com/path"] != "x" {
		t.Errorf("request spec %+v, want the pod's signer, UID, service account, node and annotations", s)
	}

	// Issue it for the requested key.
	csr, err := x509.ParseCertificateRequest(pcr.Spec.StubPKCS10Request)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Second)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), NotBefore: now, NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, csr.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	chain := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	pcr.Status = certificatesv1.PodCertificateRequestStatus{
		Conditions: []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeIssued, Status: metav1.ConditionTrue,
			Reason: "Issued", Message: "test", LastTransitionTime: metav1.NewTime(now)}},
		CertificateChain: chain,
		NotBefore:        &metav1.Time{Time: now}, BeginRefreshAt: &metav1.Time{Time: now.Add(20 * time.Hour)}, NotAfter: &metav1.Time{Time: now.Add(24 * time.Hour)},
	}
	if err := env.VirtualClient.Status().Update(ctx, &pcr); err != nil {
		t.Fatal(err)
	}

	// The Secret holds the key the request was for and the chain.
	testenv.Eventually(t, wait, func() error {
		var secret corev1.Secret
		if err := env.HostClient.Get(ctx, client.ObjectKey{Namespace: env.HostNamespace, Name: secretName}, &secret); err != nil {
			return err
		}
		if len(secret.OwnerReferences) != 1 || secret.OwnerReferences[0].UID != hostPod.UID {
			return fmt.Errorf("owners %+v, want the host pod", secret.OwnerReferences)
		}
		key, gotChain := secret.Data[pods.PodCertificateKey(0, 0, "key")], secret.Data[pods.PodCertificateKey(0, 0, "chain")]
		if string(gotChain) != chain {
			return fmt.Errorf("chain %q, want the issued one", gotChain)
		}
		if !bytes.Equal(secret.Data[pods.PodCertificateKey(0, 0, "bundle")], append(bytes.Clone(key), gotChain...)) {
			return fmt.Errorf("bundle is not key then chain")
		}
		block, _ := pem.Decode(key)
		if block == nil {
			return fmt.Errorf("no key")
		}
		priv, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return err
		}
		leaf, _ := x509.ParseCertificate(der)
		if signer, ok := priv.(crypto.Signer); !ok || !leaf.PublicKey.(interface{ Equal(crypto.PublicKey) bool }).Equal(signer.Public()) {
			return fmt.Errorf("the key written is not the one the certificate was issued for")
		}
		return nil
	})
}
