package manager

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/registered/controller"
	"github.com/clustersync/clustersync/internal/registered/kubetoken"
	"github.com/clustersync/clustersync/internal/registered/server"
	"github.com/clustersync/clustersync/internal/registered/servingcert"
	"github.com/clustersync/clustersync/internal/registered/tunnel"
	"github.com/clustersync/clustersync/internal/version"
)

// DefaultAgentImage returns the agent image import manifests name unless
// told otherwise: this build's clustersync image
// (ghcr.io/clustersync/clustersync:v0.2.0 for release v0.2.0, :latest for a
// development build), so that the manager never installs an agent of
// another version.
func DefaultAgentImage() string {
	return images.Reference(images.DefaultRegistry, images.ClustersyncRepository, version.ImageTag(version.Version()))
}

// RegisteredOptions configure registered clusters (Rancher's cluster
// import): one HTTPS server for import manifests, agent tunnels and the
// /k8s/clusters proxy, and the registered-cluster controller.
type RegisteredOptions struct {
	// ServeAddr is the HTTPS server's listen address, e.g. ":8443".
	ServeAddr string
	// Listener, when set, is used instead of listening on ServeAddr.
	Listener net.Listener
	// ExternalURL is the server's https URL as agents and users reach it;
	// "" means https://<listen address>.
	ExternalURL string
	// TLSCertFile and TLSKeyFile are the serving certificate chain and key
	// (PEM); empty means a certificate from a self-signed CA generated once
	// and kept in Secret clustersync-system/clustersync-serving-ca.
	TLSCertFile, TLSKeyFile string
	// TLSCAFile is the CA agents are to trust with TLSCertFile; empty means
	// the chain's last certificate.
	TLSCAFile string
	// AgentImage is the agent's image in import manifests; "" means
	// DefaultAgentImage.
	AgentImage string
	// Ping is the ping period of connected clusters; 0 means 15 seconds.
	Ping time.Duration
}

// setupRegistered adds the registered-cluster controller and the HTTPS
// server to mgr. The server runs on the leader only, so that agents'
// tunnels end where the controller runs; only the leader listens on
// ServeAddr, so a follower refuses connections and a Service in front of
// several replicas (with a readiness probe on that port) reaches the leader.
func setupRegistered(ctx context.Context, mgr ctrl.Manager, o Options) error {
	ro := o.Registered
	listen := func() (net.Listener, error) { return ro.Listener, nil }
	var addr net.Addr
	if ro.Listener != nil {
		addr = ro.Listener.Addr()
	} else {
		a, err := net.ResolveTCPAddr("tcp", ro.ServeAddr)
		if err != nil {
			return fmt.Errorf("registered clusters: serve address %q: %w", ro.ServeAddr, err)
		}
		addr = a
		listen = func() (net.Listener, error) {
			l, err := net.Listen("tcp", ro.ServeAddr)
			if err != nil {
				return nil, fmt.Errorf("registered clusters: listen %s: %w", ro.ServeAddr, err)
			}
			return l, nil
		}
	}
	external := ro.ExternalURL
	if external == "" {
		external = defaultExternalURL(addr)
	}
	u, err := url.Parse(external)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("registered clusters: external URL %q: want https://host[:port]", external)
	}
	var id *servingcert.Identity
	if ro.TLSCertFile != "" || ro.TLSKeyFile != "" {
		id, err = servingcert.FromFiles(ro.TLSCertFile, ro.TLSKeyFile, ro.TLSCAFile)
	} else {
		if err := ensureNamespaces(ctx, o.Config, servingcert.DefaultSecretNamespace); err != nil {
			return err
		}
		var direct client.Client
		if direct, err = client.New(o.Config, client.Options{Scheme: mgr.GetScheme()}); err != nil {
			return err
		}
		id, err = servingcert.SelfSigned(ctx, direct, types.NamespacedName{Namespace: servingcert.DefaultSecretNamespace, Name: servingcert.DefaultSecretName}, []string{u.Hostname()})
	}
	if err != nil {
		return fmt.Errorf("registered clusters: %w", err)
	}
	kube, err := kubernetes.NewForConfig(o.Config)
	if err != nil {
		return err
	}
	image := ro.AgentImage
	if image == "" {
		image = DefaultAgentImage()
	}

	wake := make(chan event.GenericEvent)
	notify := func(cluster string) {
		go func() {
			select {
			case wake <- event.GenericEvent{Object: &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}}:
			case <-ctx.Done():
			}
		}()
	}
	clientCA, err := server.NewClientCA(kube)
	if err != nil {
		return fmt.Errorf("registered clusters: %w", err)
	}
	srv := &server.Server{Client: mgr.GetClient(), Kube: kube, URL: external, CAPEM: id.CAPEM, AgentImage: image,
		Issuer:   &kubetoken.Issuer{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Namespace: server.TokenNamespace},
		ClientCA: clientCA.Pool}
	srv.Tunnel = tunnel.NewServer(srv.Authorize, tunnel.ServerOptions{CACertPEM: id.CAPEM,
		OnConnect: func(reg tunnel.Registration) { notify(reg.Cluster) }, OnDisconnect: notify})
	rec := &controller.Reconciler{Client: mgr.GetClient(), Tunnel: srv.Tunnel, URL: external, AgentImage: image, CAPEM: id.CAPEM,
		Hosted: Hosted, Events: mgr.GetEventRecorder("clustersync-registered"), Ping: ro.Ping}
	if err := ctrl.NewControllerManagedBy(mgr).Named("registered-cluster").
		For(&mgmtv1.Cluster{}, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{},
			predicate.AnnotationChangedPredicate{}, accessChanged()))).
		WatchesRawSource(source.Channel(wake, &handler.EnqueueRequestForObject{})).
		Complete(rec); err != nil {
		return fmt.Errorf("registered-cluster controller: %w", err)
	}
	// A client certificate is asked for, not required: people whose
	// credential of the management cluster is one get kubeconfigs with it
	// (server.ClientCA verifies it); agents send tokens.
	hs := &http.Server{Handler: srv.Handler(), TLSConfig: &tls.Config{Certificates: []tls.Certificate{id.Certificate}, MinVersion: tls.VersionTLS12,
		ClientAuth: tls.RequestClientCert},
		ReadHeaderTimeout: 30 * time.Second}
	return mgr.Add(leaderRunnable(func(ctx context.Context) error {
		go clientCA.Run(ctx)
		if err := server.PublishInfo(ctx, kube, server.Info{URL: external, CAPEM: id.CAPEM}); err != nil {
			return fmt.Errorf("registered clusters: %w", err)
		}
		l, err := listen()
		if err != nil {
			return err
		}
		tracked := &connTracker{Listener: l, conns: map[net.Conn]struct{}{}}
		go func() {
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = hs.Shutdown(sctx)
			tracked.closeAll() // the hijacked tunnel connections Shutdown leaves open
		}()
		if err := hs.ServeTLS(tracked, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("registered clusters: HTTPS server: %w", err)
		}
		return nil
	}))
}

// accessChanged passes the Cluster updates that change whether the
// manager can install a hosted cluster's agent: condition Provisioned or
// Connected (status or reason) changed, as the hosted management
// controller sets them.
func accessChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*mgmtv1.Cluster)
		n, ok2 := e.ObjectNew.(*mgmtv1.Cluster)
		if !ok1 || !ok2 {
			return true
		}
		for _, typ := range []string{mgmtv1.ConditionProvisioned, mgmtv1.ConditionConnected} {
			a, b := meta.FindStatusCondition(o.Status.Conditions, typ), meta.FindStatusCondition(n.Status.Conditions, typ)
			if (a == nil) != (b == nil) || a != nil && (a.Status != b.Status || a.Reason != b.Reason) {
				return true
			}
		}
		return false
	}}
}

// connTracker remembers the connections it accepted, so that stopping the
// server also ends the agents' tunnels (http.Server forgets hijacked
// connections) and the agents reconnect to the next leader.
type connTracker struct {
	net.Listener
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func (t *connTracker) Accept() (net.Conn, error) {
	c, err := t.Listener.Accept()
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.conns[c] = struct{}{}
	t.mu.Unlock()
	return &trackedConn{Conn: c, t: t}, nil
}

func (t *connTracker) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c := range t.conns {
		c.Close()
	}
}

type trackedConn struct {
	net.Conn
	t *connTracker
}

func (c *trackedConn) Close() error {
	c.t.mu.Lock()
	delete(c.t.conns, c.Conn)
	c.t.mu.Unlock()
	return c.Conn.Close()
}

// defaultExternalURL is https://<listen address>, with the host name in
// place of an unspecified address (":8443" listens on all of them).
func defaultExternalURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "https://" + addr.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	return "https://" + net.JoinHostPort(host, port)
}
