// Package pki generates the certificates and keys of a local control plane
// (a CA, serving and client certificates, the service-account signing key)
// and writes kubeconfig files that use them. Keys are ECDSA P-256;
// certificates are valid for ten years, since the control planes they serve
// are local and short-lived.
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/util/keyutil"
)

const validity = 10 * 365 * 24 * time.Hour

// CA is a certificate authority that signs the other certificates.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// Request describes one certificate to issue.
type Request struct {
	// CommonName is the subject CN; for client certificates Kubernetes reads it
	// as the user name.
	CommonName string
	// Organization is the subject O; for client certificates Kubernetes reads it
	// as the groups (e.g. "system:masters").
	Organization []string
	// DNSNames and IPs are the subject alternative names of a serving certificate.
	DNSNames []string
	IPs      []net.IP
	// Server and Client select the extended key usages.
	Server, Client bool
}

// NewCA creates a self-signed CA named commonName.
func NewCA(commonName string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key}, nil
}

// Issue signs a new key pair for r and returns certificate and key as PEM.
func (ca *CA) Issue(r Request) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: r.CommonName, Organization: r.Organization},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		DNSNames:     r.DNSNames,
		IPAddresses:  r.IPs,
	}
	if r.Server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if r.Client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

// CertPEM is the CA certificate as PEM.
func (ca *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// KeyPEM is the CA key as PEM.
func (ca *CA) KeyPEM() ([]byte, error) { return encodeKey(ca.Key) }

// LoadCA reads a CA from a PEM certificate file and a PEM PKCS#8 key file
// (as written from CertPEM and KeyPEM). Errors name the file.
func LoadCA(certFile, keyFile string) (*CA, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	ca, err := ParseCA(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s, %s: %w", certFile, keyFile, err)
	}
	return ca, nil
}

// ParseCA reads a CA from its PEM certificate and PEM key (PKCS#8 as
// CertPEM and KeyPEM write it, or PKCS#1 / SEC 1 as kwokctl writes them). Errors say which of the two is bad and why.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	cb, _ := pem.Decode(certPEM)
	if cb == nil {
		return nil, errors.New("CA certificate: no PEM block")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	if !cert.IsCA {
		return nil, errors.New("CA certificate: not a CA (basic constraints)")
	}
	k, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("CA key: %w", err)
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, errors.New("CA key: not a signing key")
	}
	return &CA{Cert: cert, Key: signer}, nil
}

// NewSigningKeyPEM creates the key pair kube-apiserver signs service-account
// tokens with, as PEM private key and PEM public key.
func NewSigningKeyPEM() (privPEM, pubPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	privPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, nil, err
	}
	return privPEM, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), nil
}

// WriteFiles writes each path → content pair with mode 0600, creating
// folders; each file is replaced at once (written beside it, then renamed).
func WriteFiles(files map[string][]byte) error {
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		// Written aside, then renamed over p: a reader (kube-apiserver
		// reloading its serving certificate) sees the old file or the new
		// one, never half of it.
		tmp := p + ".tmp"
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, p); err != nil {
			return err
		}
	}
	return nil
}

func encodeKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return n
}
