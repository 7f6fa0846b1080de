package pods

import (
	"crypto/x509"
	"encoding/pem"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// A PodCertificate source reads its files from the host pod's Secret, one
// key per path the source names; the other sources stay.
func TestHostSpecPodCertificates(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "team"}, Spec: corev1.PodSpec{
		Volumes: []corev1.Volume{{Name: "other"}, {Name: "pcr", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}},
				{PodCertificate: &corev1.PodCertificateProjection{SignerName: "example.com/s", KeyType: "ED25519",
					CredentialBundlePath: "creds.pem", CertificateChainPath: "chain.pem"}},
			}}}}},
	}}
	spec := HostSpec(pod, Environment{Translator: testTr}, nil)
	hostPod := testTr.HostName("p", "team")
	src := spec.Volumes[1].Projected.Sources[1]
	want := &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: PodCertificateSecretName(hostPod)},
		Items:    []corev1.KeyToPath{{Key: "pcr-1-1-bundle", Path: "creds.pem"}, {Key: "pcr-1-1-chain", Path: "chain.pem"}},
		Optional: ptr.To(false)}
	if src.PodCertificate != nil || !reflect.DeepEqual(src.Secret, want) {
		t.Errorf("host source %+v, want %+v", src, want)
	}
	if pod.Spec.Volumes[1].Projected.Sources[1].PodCertificate == nil {
		t.Error("HostSpec modified the virtual pod")
	}
}

// The keys are of the type asked for, with a stub request signed by them
// (the proof of possession the API server checks); PodCertificateFiles
// writes the bundle as key then clean chain.
func TestPodCertificateKeys(t *testing.T) {
	for _, keyType := range []string{"RSA3072", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"} {
		keyPEM, stub, err := newPodCertificateKey(keyType)
		if err != nil {
			t.Fatalf("%s: %v", keyType, err)
		}
		block, _ := pem.Decode(keyPEM)
		if block == nil || block.Type != "PRIVATE KEY" {
			t.Fatalf("%s: key %q is not a PKCS#8 PEM block", keyType, keyPEM)
		}
		if _, err := x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
			t.Errorf("%s: %v", keyType, err)
		}
		csr, err := x509.ParseCertificateRequest(stub)
		if err != nil || csr.CheckSignature() != nil {
			t.Errorf("%s: stub request %v / %v", keyType, err, csr.CheckSignature())
		}
	}
	if _, _, err := newPodCertificateKey("DSA"); err == nil {
		t.Error("an unknown key type gives a key")
	}
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1, 2, 3}})
	files := PodCertificateFiles(0, 2, []byte("KEY\n"), "junk\n"+string(cert)+"more junk\n")
	if got := string(files["pcr-0-2-bundle"]); got != "KEY\n"+string(cert) {
		t.Errorf("bundle %q", got)
	}
	if string(files["pcr-0-2-key"]) != "KEY\n" || string(files["pcr-0-2-chain"]) != string(cert) {
		t.Errorf("files %q", files)
	}
}
