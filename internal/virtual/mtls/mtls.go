// Package mtls serves the syncer's endpoints that only the virtual API
// server calls (the fake nodes' kubelet API, internal/virtual/kubeletproxy,
// and the metrics API, internal/virtual/metricsapi): HTTPS that requires a
// client certificate of the virtual cluster's CA. Each handler then checks
// which client (common name) it is.
package mtls

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// Files are the PEM files a server serves with: its serving certificate and
// key (issued by the virtual cluster's CA for the address the API server
// dials) and the CA its clients' certificates are checked against.
type Files struct {
	CertFile, KeyFile, ClientCAFile string
	// ClientCertOptional lets a client without a certificate connect (a
	// certificate it shows is still verified); the handler tells them apart
	// with ClientName, "" for none. The kubelet proxy sets it for the
	// tenant's node exporters (networking.advanced.proxyKubelets), which
	// authenticate with bearer tokens.
	ClientCertOptional bool
}

// Serve serves h over TLS on addr (e.g. "127.0.0.1:10250") until ctx ends,
// requiring a client certificate signed by files.ClientCAFile; name (e.g.
// "kubelet proxy") starts its errors. It returns an error when a file
// cannot be read or addr cannot be bound.
func Serve(ctx context.Context, name, addr string, files Files, h http.Handler) error {
	cert, err := tls.LoadX509KeyPair(files.CertFile, files.KeyFile)
	if err != nil {
		return fmt.Errorf("%s: serving certificate: %w", name, err)
	}
	caPEM, err := os.ReadFile(files.ClientCAFile)
	if err != nil {
		return fmt.Errorf("%s: client CA: %w", name, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return fmt.Errorf("%s: client CA %s holds no PEM certificate", name, files.ClientCAFile)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	clientAuth := tls.RequireAndVerifyClientCert
	if files.ClientCertOptional {
		clientAuth = tls.VerifyClientCertIfGiven
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second, TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: clientAuth, MinVersion: tls.VersionTLS12,
	}}
	errs := make(chan error, 1)
	go func() { errs <- srv.ServeTLS(l, "", "") }()
	select {
	case err := <-errs:
		return fmt.Errorf("%s: %w", name, err)
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return nil
	}
}

// ClientName is the common name of the request's verified client
// certificate, "" without one.
func ClientName(r *http.Request) string {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return ""
	}
	return r.TLS.VerifiedChains[0][0].Subject.CommonName
}
