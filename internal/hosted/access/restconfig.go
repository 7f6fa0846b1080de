package access

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// TokenSource returns a bearer token for a cluster's API server. It is
// called with the context of the request that needs the token and may be
// called from several goroutines, though RESTConfig calls it from one at a
// time. An error fails the request it was called for.
type TokenSource func(ctx context.Context) (string, error)

// TokenMaxAge is how long a config from RESTConfig reuses a token before it
// asks its TokenSource again: 10 minutes, well inside the 15 minutes an EKS
// IAM token is accepted (eks.IAMTokenLifetime), as the AWS CLI and
// aws-iam-authenticator leave a margin before expiry.
const TokenMaxAge = 10 * time.Minute

// RESTConfig returns a client config for the Kubernetes API server at
// endpoint (an https URL, for EKS status.apiEndpoint) that trusts the CA
// certificates in caData (PEM, or base64-encoded PEM as EKS returns it and
// status.caCert holds it) and authenticates each request with
// "Authorization: Bearer TOKEN" from token.
//
// A token is reused for TokenMaxAge, then token is called again on the next
// request; a 401 response drops the token it was sent with, so the next
// request fetches a new one. A request that already has an Authorization
// header is sent as it is. When token fails, the request fails with an error
// that wraps token's (errors.Is and errors.As see it).
//
// Errors: an endpoint that is not an absolute https URL, or caData that
// holds no parsable certificate, give an error naming status.apiEndpoint or
// status.caCert; a nil token is an error.
func RESTConfig(endpoint string, caData []byte, token TokenSource) (*rest.Config, error) {
	return restConfig(endpoint, caData, token, TokenMaxAge, time.Now)
}

// restConfig is RESTConfig with the token lifetime and the clock as
// parameters, for tests.
func restConfig(endpoint string, caData []byte, token TokenSource, maxAge time.Duration, now func() time.Time) (*rest.Config, error) {
	if err := checkEndpoint(endpoint); err != nil {
		return nil, err
	}
	ca, err := CAPEM(caData)
	if err != nil {
		return nil, err
	}
	if token == nil {
		return nil, errors.New("access: no token source")
	}
	tokens := &tokenCache{source: token, maxAge: maxAge, now: now}
	return &rest.Config{
		Host:            endpoint,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca},
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
			return &bearerTransport{base: rt, tokens: tokens}
		},
	}, nil
}

// checkEndpoint accepts an absolute https URL with a host.
func checkEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil {
		return fmt.Errorf("status.apiEndpoint %q: %w", endpoint, err)
	}
	if u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("status.apiEndpoint %q: want an https URL with a host and no user, query or fragment", endpoint)
	}
	return nil
}

// CAPEM returns the PEM of the CA certificates in caData, which is either
// PEM or base64-encoded PEM (what EKS DescribeCluster returns in
// certificateAuthority.data). Every CERTIFICATE block must parse as X.509
// and there must be at least one; otherwise the error names status.caCert.
func CAPEM(caData []byte) ([]byte, error) {
	data := bytes.TrimSpace(caData)
	if len(data) == 0 {
		return nil, errors.New("status.caCert is empty")
	}
	if !bytes.HasPrefix(data, []byte("-----BEGIN")) {
		decoded, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(data)), ""))
		if err != nil {
			return nil, fmt.Errorf("status.caCert: neither PEM nor base64-encoded PEM: %w", err)
		}
		data = bytes.TrimSpace(decoded)
	}
	certs := 0
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return nil, fmt.Errorf("status.caCert: certificate %d: %w", certs+1, err)
		}
		certs++
	}
	if certs == 0 {
		return nil, errors.New("status.caCert: no PEM CERTIFICATE block")
	}
	return append(data, '\n'), nil
}

// tokenCache holds the last token of a TokenSource for maxAge.
type tokenCache struct {
	source TokenSource
	maxAge time.Duration
	now    func() time.Time

	mu      sync.Mutex // held while fetching, so one request fetches and the others wait
	token   string
	fetched time.Time
}

// get returns the cached token, or a new one when there is none or it is
// maxAge old.
func (c *tokenCache) get(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && c.now().Sub(c.fetched) < c.maxAge {
		return c.token, nil
	}
	tok, err := c.source(ctx)
	if err != nil {
		return "", err
	}
	if tok == "" {
		return "", errors.New("token source returned an empty token")
	}
	c.token, c.fetched = tok, c.now()
	return tok, nil
}

// drop forgets tok if it is still the cached token.
func (c *tokenCache) drop(tok string) {
	c.mu.Lock()
	if c.token == tok {
		c.token = ""
	}
	c.mu.Unlock()
}

// bearerTransport sets the Authorization header from a tokenCache.
type bearerTransport struct {
	base   http.RoundTripper
	tokens *tokenCache
}

// RoundTrip implements http.RoundTripper.
func (t *bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" {
		return t.base.RoundTrip(req)
	}
	tok, err := t.tokens.get(req.Context())
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("access: bearer token: %w", err)
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	resp, err := t.base.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		t.tokens.drop(tok)
	}
	return resp, err
}

// WrappedRoundTripper returns the transport underneath, for client-go's
// request cancellation and debugging wrappers.
func (t *bearerTransport) WrappedRoundTripper() http.RoundTripper { return t.base }
