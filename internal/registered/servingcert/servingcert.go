// Package servingcert gives the management server its TLS identity: either
// the certificate and key the operator passes (--tls-cert, --tls-key), or
// a serving certificate issued from a self-signed CA that is generated once
// and kept in a Secret of the management cluster, so that every replica and
// every restart serves under the same CA and the CA checksum in import
// manifests stays valid (Rancher's cacerts and CATTLE_CA_CHECKSUM,
// https://github.com/rancher/rancher/blob/main/pkg/systemtemplate/template.go).
package servingcert

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/pki"
)

// Keys of the CA Secret.
const (
	// CACertKey holds the CA certificate, PEM.
	CACertKey = "ca.crt"
	// CAKeyKey holds the CA's PKCS#8 private key, PEM.
	CAKeyKey = "ca.key"
)

// ManagedByLabel marks the CA Secret as clustersync's; a Secret of that
// name without it is not touched.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "clustersync"
)

// Where the manager keeps the CA unless told otherwise.
const (
	DefaultSecretNamespace = "clustersync-system"
	DefaultSecretName      = "clustersync-serving-ca"
)

// Identity is the management server's TLS identity.
type Identity struct {
	// Certificate is the serving certificate chain and key for tls.Config.
	Certificate tls.Certificate
	// CAPEM is the certificate of the CA agents are to trust, PEM; the
	// SHA-256 of these exact bytes is the CA checksum of import manifests.
	CAPEM []byte
}

// SelfSigned returns a serving certificate for hosts (DNS names or IP
// addresses; "localhost" and 127.0.0.1 are always included), issued at
// each call from the CA kept in Secret key of the management cluster. The
// CA is generated and the Secret created, labelled ManagedByLabel, on the
// first call; replicas racing to create it all end up with the one that
// was stored. Errors: API errors; a Secret at key without the label or
// without both keys (it is not clustersync's and is left alone); a CA that
// does not parse.
func SelfSigned(ctx context.Context, c client.Client, key types.NamespacedName, hosts []string) (*Identity, error) {
	ca, err := loadOrCreateCA(ctx, c, key)
	if err != nil {
		return nil, err
	}
	req := pki.Request{CommonName: "clustersync-management", Server: true, DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)}}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			req.IPs = append(req.IPs, ip)
		} else if h != "" {
			req.DNSNames = append(req.DNSNames, h)
		}
	}
	certPEM, keyPEM, err := ca.Issue(req)
	if err != nil {
		return nil, fmt.Errorf("issue the serving certificate: %w", err)
	}
	caPEM := ca.CertPEM()
	pair, err := tls.X509KeyPair(append(certPEM, caPEM...), keyPEM)
	if err != nil {
		return nil, err
	}
	return &Identity{Certificate: pair, CAPEM: caPEM}, nil
}

func loadOrCreateCA(ctx context.Context, c client.Client, key types.NamespacedName) (*pki.CA, error) {
	for attempt := 0; ; attempt++ {
		var s corev1.Secret
		err := c.Get(ctx, key, &s)
		if err == nil {
			if s.Labels[ManagedByLabel] != ManagedByValue {
				return nil, fmt.Errorf("Secret %s exists without label %s=%s: not clustersync's serving CA, left alone; name another with the manager's flags or remove it", key, ManagedByLabel, ManagedByValue)
			}
			ca, err := pki.ParseCA(s.Data[CACertKey], s.Data[CAKeyKey])
			if err != nil {
				return nil, fmt.Errorf("Secret %s: %w", key, err)
			}
			return ca, nil
		}
		if !apierrors.IsNotFound(err) || attempt > 0 {
			return nil, fmt.Errorf("Secret %s: %w", key, err)
		}
		ca, err := pki.NewCA("clustersync-management-ca")
		if err != nil {
			return nil, err
		}
		keyPEM, err := ca.KeyPEM()
		if err != nil {
			return nil, err
		}
		s = corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: map[string]string{ManagedByLabel: ManagedByValue}},
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{CACertKey: ca.CertPEM(), CAKeyKey: keyPEM},
		}
		switch err := c.Create(ctx, &s); {
		case err == nil:
			return ca, nil
		case apierrors.IsAlreadyExists(err):
			continue // another replica stored one first: use it
		default:
			return nil, fmt.Errorf("create Secret %s: %w", key, err)
		}
	}
}

// FromFiles loads the serving certificate chain (certFile, PEM, leaf
// first) and key (keyFile, PEM) an operator provides. The CA agents trust
// is caFile's content when caFile is not empty, else the last certificate
// of the chain. Errors name the file.
func FromFiles(certFile, keyFile, caFile string) (*Identity, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s / --tls-key %s: %w", certFile, keyFile, err)
	}
	var caPEM []byte
	if caFile != "" {
		if caPEM, err = os.ReadFile(caFile); err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		if _, err := parseCert(caPEM); err != nil {
			return nil, fmt.Errorf("--tls-ca %s: %w", caFile, err)
		}
	} else {
		last := pair.Certificate[len(pair.Certificate)-1]
		caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: last})
	}
	return &Identity{Certificate: pair, CAPEM: caPEM}, nil
}

func parseCert(p []byte) (*x509.Certificate, error) {
	b, _ := pem.Decode(bytes.TrimSpace(p))
	if b == nil || b.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM CERTIFICATE block")
	}
	return x509.ParseCertificate(b.Bytes)
}
