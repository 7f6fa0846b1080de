package tunnel

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/gorilla/websocket"
	"github.com/rancher/remotedialer"

	"github.com/clustersync/clustersync/internal/registered/registration"
)

// CAChecksumError is the agent's refusal of a server whose CA does not
// match the checksum of the import manifest.
type CAChecksumError struct {
	// Want is the checksum the agent was given; Got the server's CA's.
	Want, Got string
}

func (e *CAChecksumError) Error() string {
	return fmt.Sprintf("the server's CA certificate has checksum %s, the import manifest expects %s: the server's certificate changed or this is not the right server; apply the import manifest again from the management server", e.Got, e.Want)
}

// RefusedError is the server's refusal of the agent (HTTP 401 or 403),
// with its message.
type RefusedError struct {
	// Status is the HTTP status code.
	Status int
	// Message is the server's explanation.
	Message string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("the management server refused the agent (HTTP %d): %s", e.Status, e.Message)
}

// FetchCA reads the server's CA certificate PEM from CACertsPath, without
// verifying the server (the checksum does that, as Rancher's agent does).
func FetchCA(ctx context.Context, serverURL string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(serverURL, "/")+CACertsPath, nil)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // #nosec G402 -- checked by checksum below
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch the server's CA: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("fetch the server's CA: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch the server's CA: HTTP %d: %s", resp.StatusCode, b)
	}
	return b, nil
}

// AgentOptions configure RunAgent.
type AgentOptions struct {
	// ServerURL is the management server's https URL.
	ServerURL string
	// CAChecksum is the expected CAChecksum of the server's CA PEM.
	CAChecksum string
	// Token returns the registration token, read again before each
	// connection (the Secret may have been updated).
	Token func(ctx context.Context) (string, error)
	// Registration describes the cluster, made again before each
	// connection.
	Registration func(ctx context.Context) (Registration, error)
	// AllowedDial limits what the server may dial through the tunnel; nil
	// allows everything.
	AllowedDial func(network, address string) bool
	// MinBackoff and MaxBackoff bound the wait between connection
	// attempts; 0 means 1 second and 30 seconds.
	MinBackoff, MaxBackoff time.Duration
	// Log receives connection events.
	Log logr.Logger
}

// stableAfter is how long a connection must last for the backoff to start
// over from MinBackoff.
const stableAfter = 30 * time.Second

// RunAgent keeps the agent's tunnel to the server up until ctx ends. First
// it fetches the server's CA and compares its checksum (a mismatch returns
// *CAChecksumError); then it connects, trusting only that CA, with the
// registration in the handshake, and reconnects with exponential backoff
// whenever the connection ends. It returns nil when ctx ends, or a
// permanent error: *CAChecksumError, or *RefusedError when the server
// answers 401 or 403.
func RunAgent(ctx context.Context, o AgentOptions) error {
	minB, maxB := o.MinBackoff, o.MaxBackoff
	if minB <= 0 {
		minB = time.Second
	}
	if maxB <= 0 {
		maxB = 30 * time.Second
	}
	backoff := minB
	var pool *x509.CertPool
	for {
		var err error
		if pool == nil {
			pool, err = verifiedCA(ctx, o.ServerURL, o.CAChecksum)
			var ce *CAChecksumError
			if errors.As(err, &ce) {
				return err
			}
		}
		var lasted time.Duration
		if err == nil {
			start := time.Now()
			err = connect(ctx, o, pool)
			lasted = time.Since(start)
			var re *RefusedError
			if errors.As(err, &re) {
				return err
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		if lasted >= stableAfter {
			backoff = minB
		}
		o.Log.Info("tunnel down; reconnecting", "error", fmt.Sprint(err), "in", backoff.String())
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		backoff = min(2*backoff, maxB)
	}
}

// verifiedCA fetches the server's CA and checks it against want.
func verifiedCA(ctx context.Context, serverURL, want string) (*x509.CertPool, error) {
	ca, err := FetchCA(ctx, serverURL)
	if err != nil {
		return nil, err
	}
	if got := registration.CAChecksum(ca); got != strings.ToLower(want) {
		return nil, &CAChecksumError{Want: want, Got: got}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("the server's CA (" + CACertsPath + ") holds no PEM certificate")
	}
	return pool, nil
}

// connect runs one tunnel connection until it ends or ctx does.
func connect(ctx context.Context, o AgentOptions, pool *x509.CertPool) error {
	reg, err := o.Registration(ctx)
	if err != nil {
		return fmt.Errorf("registration: %w", err)
	}
	token, err := o.Token(ctx)
	if err != nil {
		return fmt.Errorf("registration token: %w", err)
	}
	h := http.Header{}
	if err := EncodeRegistration(h, token, reg); err != nil {
		return err
	}
	wsURL := "wss://" + strings.TrimPrefix(strings.TrimSuffix(o.ServerURL, "/"), "https://") + ConnectPath
	dialer := &websocket.Dialer{TLSClientConfig: &tls.Config{RootCAs: pool}, HandshakeTimeout: remotedialer.HandshakeTimeOut}
	ws, resp, err := dialer.DialContext(ctx, wsURL, h)
	if err != nil {
		if resp != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
				return &RefusedError{Status: resp.StatusCode, Message: strings.TrimSpace(string(body))}
			}
			return fmt.Errorf("connect %s: HTTP %d: %s", wsURL, resp.StatusCode, strings.TrimSpace(string(body)))
		}
		return fmt.Errorf("connect %s: %w", wsURL, err)
	}
	o.Log.Info("tunnel up", "server", o.ServerURL, "cluster", reg.Cluster)
	auth := remotedialer.ConnectAuthorizer(func(network, address string) bool { return true })
	if o.AllowedDial != nil {
		auth = o.AllowedDial
	}
	session := remotedialer.NewClientSession(auth, ws)
	done := make(chan error, 1)
	go func() {
		_, err := session.Serve(ctx)
		done <- err
	}()
	served := false
	select {
	case <-ctx.Done():
	case err = <-done:
		served = true
	}
	session.Close()
	ws.Close()
	if !served {
		err = <-done // Serve returns once the connection is closed
	}
	if ctx.Err() != nil {
		return nil
	}
	return err
}
