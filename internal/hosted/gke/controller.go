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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// Finalizer holds back the deletion of a GKEClusterConfig whose cluster
// clustersync created until the cluster is gone.
const Finalizer = "gke.clustersync.io/cleanup"

// ManagedOptions returns the managed-field options of
// GKEClusterConfigSpec: pools are compared by name.
func ManagedOptions() managed.Options {
	return managed.Options{KeyedLists: map[string]string{"nodePools": "name"}}
}

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

// Observe reads the cluster, its pools with it (one GET), and the
// operations of this object's pushes still pending: the cluster is busy
// while any of them runs, or while GKE reports a busy status.
func (s *conn) Observe(ctx context.Context) (engine.Observation[gkev1.GKEClusterConfigSpec], error) {
	obs := engine.Observation[gkev1.GKEClusterConfigSpec]{Finished: map[string]string{}}
	cl, err := s.get(ctx)
	if err != nil {
		return obs, fmt.Errorf("get cluster %s: %w", s.c.Spec.ClusterName, err)
	}
	if obs.Busy, _ = Busy(cl); obs.Busy {
		return obs, nil
	}
	for _, p := range s.c.Status.PendingUpdates {
		if p.UpdateID == "" {
			continue
		}
		if _, seen := obs.Finished[p.UpdateID]; seen {
			continue
		}
		done, failure, err := s.operation(ctx, p.UpdateID)
		if err != nil {
			return obs, err
		}
		if !done {
			obs.Busy = true
			return obs, nil
		}
		obs.Finished[p.UpdateID] = failure
	}
	obs.Upstream = reading(s.c.Spec, s.c.Status.AppliedSpec, cl)
	return obs, nil
}

// operation reads operation name: done once GKE reports it DONE, failure
// its error ("" when it succeeded).
func (s *conn) operation(ctx context.Context, name string) (done bool, failure string, err error) {
	op, err := s.gc.Clusters.GetOperation(ctx, &containerpb.GetOperationRequest{Name: operationName(s.c.Spec, name)})
	switch {
	case notFound(err):
		return true, "", nil // GKE no longer keeps it: its outcome shows upstream
	case err != nil:
		return false, "", fmt.Errorf("get operation %s: %w", name, err)
	case op.GetStatus() != containerpb.Operation_DONE:
		return false, "", nil
	}
	if e := op.GetError(); e != nil && e.GetCode() != 0 {
		return true, fmt.Sprintf("GKE operation %s (%s) failed: %s", name, op.GetOperationType(), e.GetMessage()), nil
	}
	return true, "", nil
}

// Outcome asks GKE how a pending update's operation ended: "" when it
// succeeded, else GKE's message.
func (s *conn) Outcome(ctx context.Context, p hostedv1.PendingUpdate) (string, error) {
	_, failure, err := s.operation(ctx, p.UpdateID)
	return failure, err
}

// Prepare takes a Kubernetes upgrade of the control plane or of a pool
// one minor version at a time.
func (s *conn) Prepare(call []managed.Change, target *gkev1.GKEClusterConfigSpec) error {
	for _, ch := range call {
		name, field, isPool := splitPoolPath(ch.Path)
		switch {
		case ch.Path == "kubernetesVersion":
			next, err := nextVersion(s.cl.GetCurrentMasterVersion(), ptr.Deref(s.c.Spec.KubernetesVersion, ""))
			if err != nil {
				return fmt.Errorf("kubernetesVersion: %w", err)
			}
			if next != "" {
				target.KubernetesVersion = &next
			}
		case isPool && field == "version":
			cur, want := s.pool(name), poolNamed(s.c.Spec, name)
			if cur == nil || want == nil || want.Version == nil {
				continue
			}
			next, err := nextVersion(cur.GetVersion(), *want.Version)
			if err != nil {
				return fmt.Errorf("%s: %w", ch.Path, err)
			}
			if next != "" {
				poolNamed(*target, name).Version = &next
			}
		}
	}
	return nil
}

// pool returns the pool named name as this pass read it, nil when GKE has
// none.
func (s *conn) pool(name string) *containerpb.NodePool {
	for _, np := range s.cl.GetNodePools() {
		if np.GetName() == name {
			return np
		}
	}
	return nil
}

// Apply sends one call: a one-field cluster update (with the etag this
// pass read), the network or maintenance policy, the resource labels
// (with the label fingerprint this pass read), or one pool's creation,
// version, node config (with the pool's etag), autoscaling, size,
// management or removal. It returns the name of GKE's operation.
func (s *conn) Apply(ctx context.Context, call []managed.Change, _, target gkev1.GKEClusterConfigSpec) (string, error) {
	spec, cl, path := s.c.Spec, s.cl, call[0].Path
	cm := s.gc.Clusters
	var (
		op  *containerpb.Operation
		err error
	)
	name, field, isPool := splitPoolPath(path)
	switch {
	case path == "labels":
		op, err = cm.SetLabels(ctx, &containerpb.SetLabelsRequest{Name: clusterName(spec), ResourceLabels: ptr.Deref(target.Labels, map[string]string{}),
			LabelFingerprint: cl.GetLabelFingerprint()})
	case path == "networkPolicyEnabled":
		op, err = cm.SetNetworkPolicy(ctx, &containerpb.SetNetworkPolicyRequest{Name: clusterName(spec), NetworkPolicy: networkPolicy(ptr.Deref(target.NetworkPolicyEnabled, false))})
	case path == "maintenanceWindow":
		policy := maintenancePolicy(ptr.Deref(target.MaintenanceWindow, ""))
		policy.ResourceVersion = cl.GetMaintenancePolicy().GetResourceVersion()
		op, err = cm.SetMaintenancePolicy(ctx, &containerpb.SetMaintenancePolicyRequest{Name: clusterName(spec), MaintenancePolicy: policy})
	case !isPool:
		u, uerr := clusterUpdate(path, target, cl.GetEtag())
		if uerr != nil {
			return "", uerr
		}
		op, err = cm.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: clusterName(spec), Update: u})
	default:
		want, cur := poolNamed(target, name), s.pool(name)
		switch {
		case want == nil && cur == nil:
			return "", nil // already gone
		case want == nil:
			op, err = cm.DeleteNodePool(ctx, &containerpb.DeleteNodePoolRequest{Name: poolName(spec, name)})
		case field == "" || cur == nil:
			op, err = cm.CreateNodePool(ctx, &containerpb.CreateNodePoolRequest{Parent: clusterName(spec), NodePool: nodePool(*want)})
		case field == "version", field == "config":
			op, err = cm.UpdateNodePool(ctx, updatePool(spec, cur, *want, field))
		case field == "initialNodeCount":
			op, err = cm.SetNodePoolSize(ctx, &containerpb.SetNodePoolSizeRequest{Name: poolName(spec, name), NodeCount: int32(ptr.Deref(want.InitialNodeCount, 0))})
		case field == "autoscaling":
			op, err = cm.SetNodePoolAutoscaling(ctx, &containerpb.SetNodePoolAutoscalingRequest{Name: poolName(spec, name),
				Autoscaling: autoscaling(ptr.Deref(want.Autoscaling, gkev1.GKENodePoolAutoscaling{}))})
		case field == "management":
			m := ptr.Deref(want.Management, gkev1.GKENodePoolManagement{})
			op, err = cm.SetNodePoolManagement(ctx, &containerpb.SetNodePoolManagementRequest{Name: poolName(spec, name),
				Management: &containerpb.NodeManagement{AutoRepair: m.AutoRepair, AutoUpgrade: m.AutoUpgrade}})
		default:
			return "", fmt.Errorf("%s: GKE has no call for it", path)
		}
	}
	if waiting(err) {
		return "", fmt.Errorf("%w: %s", engine.ErrWaiting, apiError(err).Message)
	}
	if err != nil {
		return "", err
	}
	return op.GetName(), nil
}

// updatePool is the UpdateNodePool request of a pool's version or node
// config: GKE requires the node version and image type in every such
// request, so the pool's current ones are sent for what does not change.
func updatePool(spec gkev1.GKEClusterConfigSpec, cur *containerpb.NodePool, want gkev1.GKENodePoolConfig, field string) *containerpb.UpdateNodePoolRequest {
	req := &containerpb.UpdateNodePoolRequest{Name: poolName(spec, cur.GetName()), NodeVersion: cur.GetVersion(),
		ImageType: cur.GetConfig().GetImageType(), Etag: cur.GetEtag()}
	switch field {
	case "version":
		req.NodeVersion = ptr.Deref(want.Version, cur.GetVersion())
	case "config":
		c := ptr.Deref(want.Config, gkev1.GKENodeConfig{})
		if c.ImageType != "" {
			req.ImageType = c.ImageType
		}
		req.Labels = &containerpb.NodeLabels{Labels: c.Labels}
		req.Taints = &containerpb.NodeTaints{Taints: taints(c.Taints)}
		req.Tags = &containerpb.NetworkTags{Tags: c.Tags}
	}
	return req
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
