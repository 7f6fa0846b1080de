package tunnel_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/clustersync/clustersync/internal/pki"
	"github.com/clustersync/clustersync/internal/registered/registration"
	"github.com/clustersync/clustersync/internal/registered/tunnel"
)

// tlsIdentity is a CA and a serving certificate for 127.0.0.1.
type tlsIdentity struct {
	caPEM []byte
	cert  tls.Certificate
}

func newIdentity(t *testing.T) tlsIdentity {
	t.Helper()
	ca, err := pki.NewCA("tunnel-test-ca")
	if err != nil {
		t.Fatal(err)
	}
	c, k, err := ca.Issue(pki.Request{CommonName: "mgmt", Server: true, IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(c, k)
	if err != nil {
		t.Fatal(err)
	}
	return tlsIdentity{caPEM: ca.CertPEM(), cert: pair}
}

// events records OnConnect and OnDisconnect in order.
type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) add(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.log = append(e.log, s)
}

func (e *events) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.log, " ")
}

// conns is a listener that remembers its connections, so that a test can
// drop them all as a dying process would (httptest.Server.Close leaves
// hijacked connections, such as websockets, open).
type conns struct {
	net.Listener
	mu  sync.Mutex
	all []net.Conn
}

func (l *conns) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.all = append(l.all, c)
		l.mu.Unlock()
	}
	return c, err
}

func (l *conns) dropAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.all {
		c.Close()
	}
}

// serve runs srv over TLS on addr ("" for any loopback port); kill stops
// it as a process exit would.
func serve(t *testing.T, addr string, id tlsIdentity, srv *tunnel.Server) (hs *httptest.Server, kill func()) {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var l net.Listener
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; {
		if l, err = net.Listen("tcp", addr); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // the old listener's port is being released
	}
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(tunnel.ConnectPath, srv)
	mux.Handle(tunnel.CACertsPath, srv.CACertsHandler())
	tracked := &conns{Listener: l}
	hs = httptest.NewUnstartedServer(mux)
	hs.Listener.Close()
	hs.Listener = tracked
	hs.TLS = &tls.Config{Certificates: []tls.Certificate{id.cert}}
	hs.StartTLS()
	kill = func() { tracked.dropAll(); hs.Close() }
	t.Cleanup(kill)
	return hs, kill
}

func downstream(t *testing.T) string {
	t.Helper()
	d := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello from downstream")
	}))
	t.Cleanup(d.Close)
	return d.Listener.Addr().String()
}

func registrationOf(cluster string) tunnel.Registration {
	return tunnel.Registration{Cluster: cluster, APIEndpoint: "https://10.96.0.1:443", Token: "sa-token", CACert: []byte("ca"), KubeSystemUID: "uid-" + cluster}
}

// runAgent starts an agent; the returned function stops it and returns
// RunAgent's result.
func runAgent(t *testing.T, url string, checksum, token string, cluster string) func() error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- tunnel.RunAgent(ctx, tunnel.AgentOptions{ServerURL: url, CAChecksum: checksum,
			Token:        func(context.Context) (string, error) { return token, nil },
			Registration: func(context.Context) (tunnel.Registration, error) { return registrationOf(cluster), nil },
			MinBackoff:   20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Log: logr.Discard()})
	}()
	var once sync.Once
	var err error
	stop := func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// get fetches / from addr through cluster's tunnel.
func get(srv *tunnel.Server, cluster, addr string) (string, error) {
	dial, ok := srv.Dialer(cluster)
	if !ok {
		return "", errors.New("no tunnel")
	}
	c := &http.Client{Transport: &http.Transport{DialContext: dial}, Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// The agent connects and registers in one step; the server reaches the
// downstream API through the tunnel; restarts of either end are survived.
func TestTunnel(t *testing.T) {
	id := newIdentity(t)
	var ev events
	var authorized []tunnel.Registration
	var mu sync.Mutex
	srv := tunnel.NewServer(func(_ context.Context, token string, reg tunnel.Registration) error {
		if token != "good" {
			return fmt.Errorf("registration token for cluster %s is not valid", reg.Cluster)
		}
		mu.Lock()
		authorized = append(authorized, reg)
		mu.Unlock()
		return nil
	}, tunnel.ServerOptions{CACertPEM: id.caPEM,
		OnConnect:    func(reg tunnel.Registration) { ev.add("connect:" + reg.Cluster) },
		OnDisconnect: func(c string) { ev.add("disconnect:" + c) }})
	hs, kill := serve(t, "", id, srv)
	api := downstream(t)
	goroutines := runtime.NumGoroutine()

	stop := runAgent(t, hs.URL, registration.CAChecksum(id.caPEM), "good", "edge")
	eventually(t, "the tunnel", func() bool { return srv.Connected("edge") && ev.String() == "connect:edge" })
	if reg, ok := srv.Registration("edge"); !ok || reg.KubeSystemUID != "uid-edge" || reg.Token != "sa-token" {
		t.Errorf("registration %+v %v", reg, ok)
	}
	if body, err := get(srv, "edge", api); err != nil || body != "hello from downstream" {
		t.Fatalf("through the tunnel: %q %v", body, err)
	}

	// Agent restart: the server sees the disconnect, then the new tunnel.
	if err := stop(); err != nil {
		t.Fatalf("RunAgent after cancel: %v", err)
	}
	eventually(t, "the disconnect", func() bool { return !srv.Connected("edge") && ev.String() == "connect:edge disconnect:edge" })
	stop = runAgent(t, hs.URL, registration.CAChecksum(id.caPEM), "good", "edge")
	eventually(t, "the reconnect", func() bool {
		return srv.Connected("edge") && ev.String() == "connect:edge disconnect:edge connect:edge"
	})

	// Server restart on the same address: the agent comes back by itself.
	addr := hs.Listener.Addr().String()
	kill()
	srv2 := tunnel.NewServer(nil, tunnel.ServerOptions{CACertPEM: id.caPEM})
	_, kill2 := serve(t, addr, id, srv2)
	eventually(t, "the agent to reconnect to the new server", func() bool { return srv2.Connected("edge") })
	if body, err := get(srv2, "edge", api); err != nil || body != "hello from downstream" {
		t.Fatalf("through the new tunnel: %q %v", body, err)
	}

	// Nothing of the tunnel is left running once both ends stop.
	if err := stop(); err != nil {
		t.Fatalf("RunAgent after cancel: %v", err)
	}
	kill2()
	eventually(t, "tunnel goroutines to end", func() bool { return runtime.NumGoroutine() <= goroutines+2 })
}

// A server whose CA does not match the manifest's checksum is refused and
// never connected to; the error names both checksums.
func TestWrongCAChecksum(t *testing.T) {
	id := newIdentity(t)
	srv := tunnel.NewServer(nil, tunnel.ServerOptions{CACertPEM: id.caPEM})
	hs, _ := serve(t, "", id, srv)
	want := registration.CAChecksum([]byte("another CA"))
	var stopErr error
	done := make(chan error, 1)
	go func() {
		done <- tunnel.RunAgent(context.Background(), tunnel.AgentOptions{ServerURL: hs.URL, CAChecksum: want,
			Token:        func(context.Context) (string, error) { return "good", nil },
			Registration: func(context.Context) (tunnel.Registration, error) { return registrationOf("edge"), nil },
			Log:          logr.Discard()})
	}()
	select {
	case stopErr = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("RunAgent kept running against a server with the wrong CA")
	}
	var ce *tunnel.CAChecksumError
	if !errors.As(stopErr, &ce) || !strings.Contains(stopErr.Error(), want) || !strings.Contains(stopErr.Error(), registration.CAChecksum(id.caPEM)) {
		t.Fatalf("err = %v, want a CAChecksumError naming both checksums", stopErr)
	}
	if srv.Connected("edge") {
		t.Error("the agent connected anyway")
	}
}

// A refused registration token ends RunAgent with the server's message.
func TestRefused(t *testing.T) {
	id := newIdentity(t)
	srv := tunnel.NewServer(func(_ context.Context, token string, reg tunnel.Registration) error {
		return fmt.Errorf("%w: cluster %s is Active under another record", tunnel.ErrForbidden, reg.Cluster)
	}, tunnel.ServerOptions{CACertPEM: id.caPEM})
	hs, _ := serve(t, "", id, srv)
	done := make(chan error, 1)
	go func() {
		done <- tunnel.RunAgent(context.Background(), tunnel.AgentOptions{ServerURL: hs.URL, CAChecksum: registration.CAChecksum(id.caPEM),
			Token:        func(context.Context) (string, error) { return "any", nil },
			Registration: func(context.Context) (tunnel.Registration, error) { return registrationOf("dup"), nil },
			Log:          logr.Discard()})
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("RunAgent kept retrying a refusal")
	}
	var re *tunnel.RefusedError
	if !errors.As(err, &re) || re.Status != http.StatusForbidden || !strings.Contains(re.Message, "Active under another record") {
		t.Fatalf("err = %v, want a 403 RefusedError with the server's message", err)
	}
}
