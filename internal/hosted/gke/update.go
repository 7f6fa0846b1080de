package gke

import (
	"context"
	"fmt"

	"cloud.google.com/go/container/apiv1/containerpb"
	"k8s.io/utils/ptr"

	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

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
