package gke

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/api/googleapi"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
)

// Provider is the GKE operator's calls (engine.Provider): the engine
// (internal/hosted/engine) drives GKEClusterConfig objects with it and
// Traits, as Rancher's gke-operator does: "" (one create call with the
// pools) → creating → active (GKE reports RUNNING; the CA Secret is
// written), then one call per pass — a cluster update of one field, the
// network or maintenance policy, the resource labels (with the label
// fingerprint of the same pass), a pool created, changed, resized or
// removed — each GKE operation followed to DONE, and on deletion the
// cluster. Existing clusters are imported without any write. Every busy
// status is waited for, whoever started the operation, and GKE's refusal
// of a second operation (400 failedPrecondition) is a wait, not a
// failure (rancher/gke-operator#509).
type Provider struct {
	// Client reads and writes the GKEClusterConfig objects and Secrets.
	Client client.Client
	// NewClients makes the GKE clients from the credential Secret
	// (NewClientsFactory); required.
	NewClients ClientsFactory
}

var _ engine.Provider[gkev1.GKEClusterConfigSpec, *gkev1.GKEClusterConfig] = (*Provider)(nil)

// Open makes the GKE client from the credential Secret.
func (p *Provider) Open(ctx context.Context, c *gkev1.GKEClusterConfig) (engine.Session[gkev1.GKEClusterConfigSpec], error) {
	cl, err := LoadClients(ctx, p.Client, p.NewClients, c.Spec)
	if err != nil {
		return nil, err
	}
	return &conn{r: p, gc: cl, c: c}, nil
}

// apiError returns GKE's error in err, nil when err is not one.
func apiError(err error) *googleapi.Error {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge
	}
	return nil
}

// hasReason reports whether a GKE error carries reason (e.g.
// "failedPrecondition") in its error items (the client parses them from
// the answer's body).
func hasReason(ge *googleapi.Error, reason string) bool {
	return slices.ContainsFunc(ge.Errors, func(it googleapi.ErrorItem) bool { return it.Reason == reason })
}

// waiting reports whether GKE refused a write because of the cluster's
// state, not the request: 400 failedPrecondition (another operation runs
// on the cluster, "Cluster is running incompatible operation", or the
// label fingerprint is stale) or 409 aborted (the etag is stale). It is
// matched by reason, never by message (rancher/gke-operator#509): the
// next pass reads the cluster again and decides anew.
func waiting(err error) bool {
	ge := apiError(err)
	if ge == nil {
		return false
	}
	return ge.Code == http.StatusBadRequest && hasReason(ge, "failedPrecondition") ||
		ge.Code == http.StatusConflict && hasReason(ge, "aborted")
}

// Retryable reports whether a GKE error is transient: throttling and
// server errors (the client's own retries gave up), a cluster busy with
// another operation or changed since this pass read it (waiting), and
// broken connections.
func Retryable(err error) bool {
	if err == nil {
		return false
	}
	if ge := apiError(err); ge != nil {
		return ge.Code == http.StatusTooManyRequests || ge.Code >= 500 || waiting(err)
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// notFound reports whether err is GKE's 404.
func notFound(err error) bool {
	ge := apiError(err)
	return ge != nil && ge.Code == http.StatusNotFound
}

// conn is one GKEClusterConfig's connection to GKE for one pass
// (engine.Session).
type conn struct {
	r  *Provider
	gc *Clients
	c  *gkev1.GKEClusterConfig
	// cl is the cluster as the last read of this pass found it.
	cl *containerpb.Cluster
}

func (s *conn) get(ctx context.Context) (*containerpb.Cluster, error) {
	cl, err := s.gc.Clusters.GetCluster(ctx, &containerpb.GetClusterRequest{Name: clusterName(s.c.Spec)})
	if err != nil {
		return nil, err
	}
	s.cl = cl
	return cl, nil
}

// Create sends one create call with the pools, after checking that the
// name is free. status.createRequested is written before the call and
// taken back when GKE refuses it, so that a cluster found under the name
// later is known to be this object's. It is not waited for here
// (Provision).
func (s *conn) Create(ctx context.Context, claim func(context.Context) error) (bool, error) {
	c := s.c
	_, err := s.get(ctx)
	switch {
	case err == nil && c.Status.CreateRequested:
		return true, nil // created by an earlier pass whose status write was lost
	case err == nil:
		return false, engine.Fail(fmt.Errorf("a GKE cluster named %s already exists in %s; set imported: true to manage it", c.Spec.ClusterName, parent(c.Spec)))
	case !notFound(err):
		return false, fmt.Errorf("get cluster %s: %w", c.Spec.ClusterName, err)
	}
	if err := ValidateCreate(c.Spec); err != nil {
		return false, engine.Fail(err)
	}
	if err := claim(ctx); err != nil {
		return false, err
	}
	c.Status.CreateRequested = true
	if err := s.r.Client.Status().Update(ctx, c); err != nil {
		return false, err
	}
	_, err = s.gc.Clusters.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: parent(c.Spec), Cluster: createCluster(c.Spec)})
	if err != nil {
		if apiError(err) != nil {
			// GKE answered: nothing was created (a 409 means someone else's
			// cluster took the name meanwhile), so the name is not this
			// object's.
			c.Status.CreateRequested = false
			if uerr := s.r.Client.Status().Update(ctx, c); uerr != nil {
				return false, uerr
			}
		}
		return false, engine.Fail(fmt.Errorf("create cluster: %w", err))
	}
	return true, nil
}

// Provision waits for GKE to report the cluster RUNNING with no pool
// being created, then writes the CA Secret.
func (s *conn) Provision(ctx context.Context) (bool, error) {
	cl, err := s.get(ctx)
	if err != nil {
		return false, fmt.Errorf("get cluster %s: %w", s.c.Spec.ClusterName, err)
	}
	if cl.GetStatus() == containerpb.Cluster_ERROR {
		return false, engine.Fail(fmt.Errorf("GKE reports the cluster ERROR: %s", cl.GetStatusMessage()))
	}
	if busy, _ := Busy(cl); busy || cl.GetStatus() != containerpb.Cluster_RUNNING {
		return false, nil
	}
	return true, s.becomeActive(ctx, cl)
}

// Import connects an existing cluster without changing it: it waits until
// no operation runs on it, then records how to reach it.
func (s *conn) Import(ctx context.Context) (bool, error) {
	c := s.c
	cl, err := s.get(ctx)
	switch {
	case notFound(err):
		return false, engine.Fail(fmt.Errorf("spec.clusterName: no GKE cluster named %s in %s to import", c.Spec.ClusterName, parent(c.Spec)))
	case err != nil:
		return false, fmt.Errorf("get cluster %s: %w", c.Spec.ClusterName, err)
	}
	if busy, _ := Busy(cl); busy {
		return false, nil
	}
	return true, s.becomeActive(ctx, cl)
}

// becomeActive writes the CA Secret of a ready cluster: its API endpoint
// (https://ENDPOINT) and CA (base64 PEM, as GKE reports it).
func (s *conn) becomeActive(ctx context.Context, cl *containerpb.Cluster) error {
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: s.c.Name, Namespace: s.c.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, s.r.Client, sec, func() error {
		sec.StringData = nil
		sec.Data = map[string][]byte{"endpoint": []byte(endpointURL(cl)), "ca": []byte(cl.GetMasterAuth().GetClusterCaCertificate())}
		return controllerutil.SetControllerReference(s.c, sec, s.r.Client.Scheme())
	})
	if err != nil {
		return fmt.Errorf("CA secret %s/%s: %w", s.c.Namespace, s.c.Name, err)
	}
	return nil
}

// endpointURL is the API server URL of cl: https:// and its endpoint
// (an address, with a port only in an emulator); "" before it has one.
func endpointURL(cl *containerpb.Cluster) string {
	if cl.GetEndpoint() == "" {
		return ""
	}
	return "https://" + cl.GetEndpoint()
}

// Delete deletes the cluster (waiting while another operation runs on
// it) if GKE accepted this object's create call (status.createRequested),
// never a cluster of the same name someone else made; done once GKE no
// longer has it.
func (s *conn) Delete(ctx context.Context) (bool, error) {
	c := s.c
	if !c.Status.CreateRequested {
		return true, nil
	}
	cl, err := s.get(ctx)
	switch {
	case notFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("get cluster %s: %w", c.Spec.ClusterName, err)
	}
	if busy, _ := Busy(cl); busy {
		return false, nil // deleting already, or another operation runs
	}
	if _, err := s.gc.Clusters.DeleteCluster(ctx, &containerpb.DeleteClusterRequest{Name: clusterName(c.Spec)}); err != nil && !waiting(err) && !notFound(err) {
		return false, engine.Fail(fmt.Errorf("delete cluster %s: %w", c.Spec.ClusterName, err))
	}
	return false, nil
}
