// Package server is the management server's HTTPS endpoint for registered
// clusters (Rancher's cluster registration,
// https://rancher.com/docs/rancher/v2.x/en/cluster-provisioning/imported-clusters/):
// the import manifest at /v1/import/<token>_<cluster>.yaml, the CA at
// /v1/cacerts, the agents' tunnel at /v1/connect, a
// Kubernetes API proxy at /k8s/clusters/<cluster>/… that authenticates the
// caller against the management cluster and impersonates them downstream,
// and kubeconfigs for people at /v1/clusters/<cluster>/kubeconfig.
package server

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/registered/kubetoken"
	"github.com/clustersync/clustersync/internal/registered/registration"
	"github.com/clustersync/clustersync/internal/registered/tunnel"
)

// TokenNamespace holds the ClusterRegistrationTokens (Rancher keeps them
// with the cluster; clustersync beside the hosted-cluster objects).
const TokenNamespace = hostedv1.Namespace

// Server serves the registered-cluster endpoints.
type Server struct {
	// Client reads Clusters and ClusterRegistrationTokens of the
	// management cluster.
	Client client.Reader
	// Kube authenticates callers of the proxy (TokenReview) against the
	// management cluster.
	Kube kubernetes.Interface
	// Tunnel holds the agents' tunnels; its Authorizer should be
	// Server.Authorize.
	Tunnel *tunnel.Server
	// URL is the server's external https URL, as agents reach it.
	URL string
	// CAPEM is the CA agents trust (its checksum goes into manifests).
	CAPEM []byte
	// AgentImage is the agent's container image in manifests.
	AgentImage string
	// Issuer issues the kubeconfig tokens of kubetoken.PathPattern and looks up
	// those the proxy is sent; nil: neither.
	Issuer *kubetoken.Issuer
	// ClientCA returns the CAs whose client certificates the management
	// cluster's API server accepts (ClientCA.Pool); nil: client
	// certificates are not accepted.
	ClientCA func(context.Context) (*x509.CertPool, error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Handler returns the HTTP handler of all endpoints.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+registration.ImportPathPrefix+"{file}", s.serveImport)
	mux.Handle(tunnel.CACertsPath, s.Tunnel.CACertsHandler())
	mux.Handle(tunnel.ConnectPath, s.Tunnel)
	mux.HandleFunc("POST "+kubetoken.PathPattern, s.serveKubeconfig)
	mux.HandleFunc(ProxyPrefix+"{cluster}/{rest...}", s.serveProxy)
	mux.HandleFunc(ProxyPrefix+"{cluster}", s.serveProxy)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	return mux
}

// tokens reads the registration tokens of cluster; ok is false when it has
// none.
func (s *Server) tokens(ctx context.Context, cluster string) (*mgmtv1.ClusterRegistrationToken, error) {
	var crt mgmtv1.ClusterRegistrationToken
	err := s.Client.Get(ctx, types.NamespacedName{Namespace: TokenNamespace, Name: cluster}, &crt)
	if err != nil {
		return nil, err
	}
	return &crt, nil
}

// Tokens converts a ClusterRegistrationToken's status to
// registration.Tokens.
func Tokens(st mgmtv1.ClusterRegistrationTokenStatus) registration.Tokens {
	t := registration.Tokens{Current: st.Token, Previous: st.PreviousToken}
	if st.ExpiresAt != nil {
		t.CurrentExpires = st.ExpiresAt.Time
	}
	if st.PreviousValidUntil != nil {
		t.PreviousValidUntil = st.PreviousValidUntil.Time
	}
	return t
}

// serveImport answers /v1/import/<token>_<cluster>.yaml with the import
// manifest carrying the cluster's current token. An unknown cluster, a
// cluster being deleted and an invalid or expired token all get 404, so
// that the endpoint tells nothing without a valid token.
func (s *Server) serveImport(w http.ResponseWriter, r *http.Request) {
	token, cluster, err := registration.ParseImportPath(r.URL.Path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	crt, err := s.tokens(r.Context(), cluster)
	if err != nil || !Tokens(crt.Status).Valid(token, s.now()) {
		if err != nil && !apierrors.IsNotFound(err) {
			http.Error(w, "reading the registration token failed", http.StatusInternalServerError)
			return
		}
		http.Error(w, "no such import manifest (unknown cluster, or the token expired: run clustersync cluster import again)", http.StatusNotFound)
		return
	}
	var c mgmtv1.Cluster
	if err := s.Client.Get(r.Context(), types.NamespacedName{Name: cluster}, &c); err != nil || c.DeletionTimestamp != nil || !c.AgentWanted() {
		http.Error(w, "no such import manifest (the cluster is being deleted, or its agent is turned off with annotation "+mgmtv1.AnnotationAgent+")", http.StatusNotFound)
		return
	}
	m, err := registration.Manifest(registration.ManifestOptions{ServerURL: s.URL, CAChecksum: registration.CAChecksum(s.CAPEM),
		Token: crt.Status.Token, Cluster: cluster, Image: s.AgentImage})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(m)
}

// Authorize is the tunnel's Authorizer: the registration token must be
// valid for the cluster the agent names, the Cluster must want an agent
// (Cluster.AgentWanted: registered, or hosted without annotation
// clustersync.io/agent: "false") and not be being deleted, and no other Cluster may be Active with the
// same kube-system UID (re-importing an active cluster is refused, as in
// Rancher; a cluster whose record was deleted comes back as new).
func (s *Server) Authorize(ctx context.Context, token string, reg tunnel.Registration) error {
	crt, err := s.tokens(ctx, reg.Cluster)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("cluster %s is not registered on this server", reg.Cluster)
	}
	if err != nil {
		return err
	}
	if !Tokens(crt.Status).Valid(token, s.now()) {
		return fmt.Errorf("the registration token of cluster %s is not valid (expired or rotated past its grace period): apply the import manifest again", reg.Cluster)
	}
	var c mgmtv1.Cluster
	if err := s.Client.Get(ctx, types.NamespacedName{Name: reg.Cluster}, &c); err != nil {
		return fmt.Errorf("cluster %s: %w", reg.Cluster, err)
	}
	if c.DeletionTimestamp != nil || !c.AgentWanted() {
		return fmt.Errorf("%w: cluster %s is being deleted or its agent is turned off (annotation %s: \"false\")", tunnel.ErrForbidden, reg.Cluster, mgmtv1.AnnotationAgent)
	}
	var all mgmtv1.ClusterList
	if err := s.Client.List(ctx, &all); err != nil {
		return err
	}
	for _, other := range all.Items {
		if other.Name != reg.Cluster && other.Status.Agent != nil && other.Status.Agent.KubeSystemUID == reg.KubeSystemUID &&
			other.Status.Phase == mgmtv1.PhaseActive && other.DeletionTimestamp == nil {
			return fmt.Errorf("%w: this cluster (kube-system UID %s) is already Active as cluster %s on this server; delete that record first to import it again",
				tunnel.ErrForbidden, reg.KubeSystemUID, other.Name)
		}
	}
	return nil
}

// ProxyPrefix is where the Kubernetes API proxy is served.
const ProxyPrefix = "/k8s/clusters/"

// trimProxy returns the downstream path of a proxy request.
func trimProxy(path, cluster string) string {
	rest := strings.TrimPrefix(path, ProxyPrefix+cluster)
	if rest == "" {
		return "/"
	}
	return rest
}
