package servingcert_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
	"github.com/clustersync/clustersync/internal/pki"
	"github.com/clustersync/clustersync/internal/registered/servingcert"
)

var env *hostedtest.Env

func TestMain(m *testing.M) {
	os.Exit(hostedtest.Main(m, &env))
}

// verify checks that id's leaf certificate is valid for host under id's CA.
func verify(t *testing.T, id *servingcert.Identity, host string) {
	t.Helper()
	leaf, err := x509.ParseCertificate(id.Certificate.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(id.CAPEM) {
		t.Fatal("CAPEM holds no certificate")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: host}); err != nil {
		t.Errorf("serving certificate for %s: %v", host, err)
	}
}

// The CA is generated once and kept: a second call (another replica, a
// restart) serves under the same CA, for the hosts it is given.
func TestSelfSignedKeepsTheCA(t *testing.T) {
	hostedtest.Require(t, env)
	ns := env.Namespace(t)
	key := types.NamespacedName{Namespace: ns, Name: servingcert.DefaultSecretName}
	first, err := servingcert.SelfSigned(context.Background(), env.Client, key, []string{"mgmt.example.com", "10.0.0.5"})
	if err != nil {
		t.Fatal(err)
	}
	verify(t, first, "mgmt.example.com")
	verify(t, first, "10.0.0.5")
	verify(t, first, "127.0.0.1")
	second, err := servingcert.SelfSigned(context.Background(), env.Client, key, []string{"other.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.CAPEM, second.CAPEM) {
		t.Error("the second call made another CA")
	}
	verify(t, second, "other.example.com")
}

// A Secret of that name that clustersync did not make is refused and left
// as it is.
func TestSelfSignedLeavesForeignSecret(t *testing.T) {
	hostedtest.Require(t, env)
	ns := env.Namespace(t)
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: ns}, Data: map[string][]byte{"ca.crt": []byte("theirs")}}
	if err := env.Client.Create(context.Background(), foreign); err != nil {
		t.Fatal(err)
	}
	_, err := servingcert.SelfSigned(context.Background(), env.Client, types.NamespacedName{Namespace: ns, Name: "taken"}, nil)
	if err == nil || !strings.Contains(err.Error(), "left alone") {
		t.Fatalf("err = %v, want a refusal", err)
	}
	var got corev1.Secret
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "taken"}, &got); err != nil {
		t.Fatal(err)
	}
	if string(got.Data["ca.crt"]) != "theirs" || len(got.Data) != 1 {
		t.Errorf("the foreign Secret was changed: %v", got.Data)
	}
}

// With --tls-cert and --tls-key only, the CA is the chain's last
// certificate; --tls-ca overrides it.
func TestFromFiles(t *testing.T) {
	ca, err := pki.NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Issue(pki.Request{CommonName: "mgmt", Server: true, DNSNames: []string{"mgmt.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	chain := write("tls.crt", append(append([]byte{}, certPEM...), ca.CertPEM()...))
	key := write("tls.key", keyPEM)
	id, err := servingcert.FromFiles(chain, key, "")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(id.CAPEM, ca.CertPEM()) {
		t.Errorf("CA = %s, want the chain's last certificate", id.CAPEM)
	}
	verify(t, id, "mgmt.example.com")

	other, err := pki.NewCA("other-ca")
	if err != nil {
		t.Fatal(err)
	}
	id, err = servingcert.FromFiles(chain, key, write("ca.crt", other.CertPEM()))
	if err != nil || !bytes.Equal(id.CAPEM, other.CertPEM()) {
		t.Errorf("--tls-ca not used: %v", err)
	}
	if _, err := servingcert.FromFiles(chain, key, write("bad.crt", pem.EncodeToMemory(&pem.Block{Type: "KEY", Bytes: []byte{1}}))); err == nil || !strings.Contains(err.Error(), "--tls-ca") {
		t.Errorf("bad --tls-ca: err = %v", err)
	}
	if _, err := servingcert.FromFiles(filepath.Join(dir, "missing.crt"), key, ""); err == nil || !strings.Contains(err.Error(), "--tls-cert") {
		t.Errorf("missing cert: err = %v", err)
	}
}
