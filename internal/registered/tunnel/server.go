package tunnel

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/rancher/remotedialer"
)

// Paths the server serves (mount the Server and CACertsHandler there).
const (
	ConnectPath = "/v1/connect"
	CACertsPath = "/v1/cacerts"
)

// Authorizer decides whether an agent may connect with registrationToken
// and reg; a non-nil error refuses it, and its message goes back to the
// agent. Wrap ErrForbidden for a refusal the agent must not retry blindly
// (it gets 403; any other error gives 401).
type Authorizer func(ctx context.Context, registrationToken string, reg Registration) error

// ErrForbidden marks an Authorizer refusal answered with 403 Forbidden.
var ErrForbidden = errors.New("forbidden")

// ServerOptions are the Server's callbacks and CA.
type ServerOptions struct {
	// OnConnect is called once the tunnel of reg.Cluster is up.
	OnConnect func(reg Registration)
	// OnDisconnect is called when the tunnel of a cluster ends and no newer
	// one has replaced it.
	OnDisconnect func(cluster string)
	// CACertPEM is served at CACertsPath for the agent's checksum.
	CACertPEM []byte
}

// Server is the management side of the tunnels: an http.Handler for
// ConnectPath. Safe for concurrent use.
type Server struct {
	auth Authorizer
	opts ServerOptions
	rd   *remotedialer.Server

	mu         sync.Mutex
	gen        map[string]uint64           // connection generation per cluster
	regs       map[string]Registration     // registration of the current connection
	transports map[string]clusterTransport // cached per cluster, see Transport
}

// clusterTransport is a cluster's cached transport and the CA it trusts.
type clusterTransport struct {
	ca []byte
	rt *http.Transport
}

// NewServer returns a Server that admits agents auth accepts (nil accepts
// all, for tests).
func NewServer(auth Authorizer, opts ServerOptions) *Server {
	s := &Server{auth: auth, opts: opts, gen: map[string]uint64{}, regs: map[string]Registration{}, transports: map[string]clusterTransport{}}
	s.rd = remotedialer.New(func(req *http.Request) (string, bool, error) {
		// Only reached after ServeHTTP's own checks.
		return req.Header.Get(HeaderCluster), true, nil
	}, remotedialer.DefaultErrorWriter)
	return s
}

// ServeHTTP authenticates a connect request (registration token and
// Registration in the headers), then holds the tunnel until it ends.
// Refusals: 400 for malformed headers, 401 or 403 with the Authorizer's
// message.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, reg, err := DecodeRegistration(r.Header)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if s.auth != nil {
		if err := s.auth(r.Context(), token, reg); err != nil {
			code := http.StatusUnauthorized
			if errors.Is(err, ErrForbidden) {
				code = http.StatusForbidden
			}
			http.Error(w, err.Error(), code)
			return
		}
	}
	s.mu.Lock()
	s.gen[reg.Cluster]++
	g := s.gen[reg.Cluster]
	s.regs[reg.Cluster] = reg
	s.mu.Unlock()

	ctx, cancel := context.WithCancel(r.Context())
	announced := make(chan bool, 1)
	go func() { announced <- s.announce(ctx, reg, g) }()
	s.rd.ServeHTTP(w, r) // returns when the session ends
	cancel()
	wasUp := <-announced

	s.mu.Lock()
	current := s.gen[reg.Cluster] == g
	if current {
		delete(s.regs, reg.Cluster)
		if t, ok := s.transports[reg.Cluster]; ok {
			t.rt.CloseIdleConnections()
			delete(s.transports, reg.Cluster)
		}
	}
	s.mu.Unlock()
	if current && wasUp && s.opts.OnDisconnect != nil {
		s.opts.OnDisconnect(reg.Cluster)
	}
}

// announce calls OnConnect once the session of connection g is up (the
// remotedialer server adds it after the websocket upgrade); it reports
// whether it did.
func (s *Server) announce(ctx context.Context, reg Registration, g uint64) bool {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for !s.rd.HasSession(reg.Cluster) {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	s.mu.Lock()
	current := s.gen[reg.Cluster] == g
	s.mu.Unlock()
	if current && s.opts.OnConnect != nil {
		s.opts.OnConnect(reg)
	}
	return current
}

// Dialer returns a function that dials address from inside cluster through
// its tunnel; false when cluster has no tunnel. The function fails once
// the tunnel is gone.
func (s *Server) Dialer(cluster string) (remotedialer.Dialer, bool) {
	if !s.rd.HasSession(cluster) {
		return nil, false
	}
	return s.rd.Dialer(cluster), true
}

// Transport returns the HTTP transport to cluster's API server through its
// tunnel, trusting the CA the agent registered, with that registration
// (its APIEndpoint and Token address and authenticate requests); false
// when the cluster has no tunnel. One transport is kept per cluster, so
// its connections are reused by every caller (pings, controllers, the
// proxy) until the tunnel ends or the agent registers another CA. It
// speaks HTTP/1.1, which protocol upgrades (exec, port-forward) need.
func (s *Server) Transport(cluster string) (*http.Transport, Registration, bool) {
	reg, ok := s.Registration(cluster)
	if !ok {
		return nil, Registration{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.transports[cluster]; ok {
		if bytes.Equal(t.ca, reg.CACert) {
			return t.rt, reg, true
		}
		t.rt.CloseIdleConnections()
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(reg.CACert)
	rt := &http.Transport{DialContext: s.rd.Dialer(cluster), TLSClientConfig: &tls.Config{RootCAs: roots},
		MaxIdleConnsPerHost: 8, IdleConnTimeout: 90 * time.Second}
	s.transports[cluster] = clusterTransport{ca: bytes.Clone(reg.CACert), rt: rt}
	return rt, reg, true
}

// Connected reports whether cluster has a tunnel.
func (s *Server) Connected(cluster string) bool { return s.rd.HasSession(cluster) }

// Registration returns what the agent of a connected cluster registered.
func (s *Server) Registration(cluster string) (Registration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	reg, ok := s.regs[cluster]
	return reg, ok && s.rd.HasSession(cluster)
}

// CACertsHandler serves the CA certificate PEM at CACertsPath, for the
// agent's checksum (Rancher's /cacerts).
func (s *Server) CACertsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(s.opts.CACertPEM)
	})
}
