package pki

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
)

// ParseCA reads the key formats CAs come in: PKCS#8 (ours), SEC 1
// (kwokctl's ca.key), and names the bad half of a pair.
func TestParseCAKeyFormats(t *testing.T) {
	ca, err := NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(ca.Key.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	sec1 := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	for _, tc := range []struct {
		name    string
		cert    []byte
		key     []byte
		wantErr string
	}{
		{"pkcs8", ca.CertPEM(), pkcs8, ""},
		{"sec1", ca.CertPEM(), sec1, ""},
		{"no key", ca.CertPEM(), []byte("junk"), "CA key"},
		{"no cert", []byte("junk"), pkcs8, "CA certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCA(tc.cert, tc.key)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := got.Issue(Request{CommonName: "system:node:n", Organization: []string{"system:nodes"}, Client: true}); err != nil {
				t.Fatalf("issue with the parsed CA: %v", err)
			}
		})
	}
}
