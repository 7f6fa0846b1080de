package gketest

import (
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/proto"
)

func (c *cluster) poolName(name string) string { return c.resourceName() + "/nodePools/" + name }

func (c *cluster) poolLink(name string) string { return APIBase + c.poolName(name) }

// config returns the pool's node config, made when missing.
func (p *pool) config() *containerpb.NodeConfig {
	if p.pb.Config == nil {
		p.pb.Config = &containerpb.NodeConfig{}
	}
	return p.pb.Config
}

// checkAutoscaling validates a pool's autoscaling: when enabled, 0 <=
// minNodeCount <= maxNodeCount.
func checkAutoscaling(field string, as *containerpb.NodePoolAutoscaling) *APIError {
	if !as.GetEnabled() {
		return nil
	}
	if as.GetMinNodeCount() < 0 || as.GetMaxNodeCount() < 0 {
		return errBadRequest("Invalid value for field %q: node counts must not be negative.", field)
	}
	if as.GetMinNodeCount() > as.GetMaxNodeCount() {
		return errBadRequest("Invalid value for field %q: minNodeCount (%d) must not be greater than maxNodeCount (%d).", field, as.GetMinNodeCount(), as.GetMaxNodeCount())
	}
	return nil
}

// checkPoolSpec validates what a new pool's spec says alone (field names
// it in messages): name, initialNodeCount, autoscaling and locations.
func (c *cluster) checkPoolSpec(spec *containerpb.NodePool, field string) *APIError {
	if spec == nil {
		return errBadRequest("Node pool must be specified.")
	}
	if e := checkName(field+".name", spec.GetName()); e != nil {
		return e
	}
	if spec.GetInitialNodeCount() < 0 {
		return errBadRequest("Invalid value for field %q: initialNodeCount must not be negative.", field+".initialNodeCount")
	}
	if e := checkAutoscaling(field+".autoscaling", spec.GetAutoscaling()); e != nil {
		return e
	}
	return checkZones(field+".locations", c.location, spec.GetLocations())
}

// newPool validates spec (field names it in messages) and returns the
// pool with the server's defaults, in status st, not added to c.
func (c *cluster) newPool(spec *containerpb.NodePool, field string, st containerpb.NodePool_Status) (*pool, *APIError) {
	if e := c.checkPoolSpec(spec, field); e != nil {
		return nil, e
	}
	v, e := c.nodeVersion(nil, spec.GetVersion())
	if e != nil {
		return nil, e
	}
	pb := proto.Clone(spec).(*containerpb.NodePool)
	p := &pool{pb: pb}
	pb.Version = v
	pb.SelfLink = c.poolLink(pb.Name)
	pb.Status, pb.StatusMessage = st, ""
	pb.Conditions, pb.InstanceGroupUrls, pb.UpdateInfo = nil, nil, nil
	pb.Etag = newEtag()
	if pb.InitialNodeCount == 0 {
		pb.InitialNodeCount = DefaultNodeCount
	}
	if len(pb.Locations) == 0 {
		pb.Locations = append([]string(nil), c.pb.GetLocations()...)
	}
	cfg := p.config()
	if cfg.MachineType == "" {
		cfg.MachineType = DefaultMachineType
	}
	if cfg.DiskSizeGb == 0 {
		cfg.DiskSizeGb = defaultDiskSizeGb
	}
	if cfg.DiskType == "" {
		cfg.DiskType = defaultDiskType
	}
	if cfg.ImageType == "" {
		cfg.ImageType = DefaultImageType
	}
	if len(cfg.OauthScopes) == 0 {
		cfg.OauthScopes = defaultOAuthScopes()
	}
	if cfg.ServiceAccount == "" {
		cfg.ServiceAccount = defaultSvcAccount
	}
	if pb.Management == nil {
		pb.Management = &containerpb.NodeManagement{AutoUpgrade: true, AutoRepair: true}
	}
	if pb.MaxPodsConstraint == nil {
		pb.MaxPodsConstraint = &containerpb.MaxPodsConstraint{MaxPodsPerNode: defaultMaxPods}
		if d := c.pb.GetDefaultMaxPodsConstraint().GetMaxPodsPerNode(); d > 0 {
			pb.MaxPodsConstraint.MaxPodsPerNode = d
		}
	}
	return p, nil
}

// findPool resolves a cluster and one of its node pools (404 otherwise).
func (s *Server) findPool(project, location, clusterName, name string) (*cluster, *pool, *APIError) {
	c, e := s.findCluster(project, location, clusterName)
	if e != nil {
		return nil, nil, e
	}
	p := c.pool(name)
	if p == nil {
		return nil, nil, errNotFound(c.poolName(name))
	}
	return c, p, nil
}

// listPools answers nodePools.list: the cluster's pools in creation order.
func (s *Server) listPools(r *req) (*containerpb.ListNodePoolsResponse, *APIError) {
	c, e := s.findCluster(r.project, r.location, r.cluster)
	if e != nil {
		return nil, e
	}
	out := &containerpb.ListNodePoolsResponse{}
	for _, p := range c.pools {
		out.NodePools = append(out.NodePools, proto.Clone(p.pb).(*containerpb.NodePool))
	}
	return out, nil
}

// startPoolChange starts an operation of type typ on pool p of c,
// RECONCILING meanwhile (the cluster keeps its status but is busy); apply
// runs when it is DONE and succeeded, and the pool and the cluster get new
// etags. A failed one restores the pool's former status.
func (s *Server) startPoolChange(c *cluster, p *pool, typ containerpb.Operation_Type, now time.Time, apply func()) *containerpb.Operation {
	prev, prevMsg := p.pb.Status, p.pb.StatusMessage
	p.pb.Status = containerpb.NodePool_RECONCILING
	op := s.newOperation(c.project, c.location, typ, p.pb.GetSelfLink(), now, s.opts.UpdateDelay)
	c.op = op
	op.finish = func(ok bool) {
		if !ok {
			p.pb.Status, p.pb.StatusMessage = prev, prevMsg
			return
		}
		apply()
		p.pb.Status, p.pb.StatusMessage = containerpb.NodePool_RUNNING, ""
		p.pb.Etag = newEtag()
		c.touch()
	}
	return proto.Clone(op.pb).(*containerpb.Operation)
}

// createPool answers nodePools.create: the pool appears at once,
// PROVISIONING, and is RUNNING when the CREATE_NODE_POOL operation is
// DONE, or ERROR when it fails.
func (s *Server) createPool(r *req, now time.Time) (*containerpb.Operation, *APIError) {
	var body containerpb.CreateNodePoolRequest
	if e := decode(r.body, &body); e != nil {
		return nil, e
	}
	c, e := s.findCluster(r.project, r.location, r.cluster)
	if e != nil {
		return nil, e
	}
	spec := body.GetNodePool()
	if spec == nil {
		return nil, errBadRequest("Node pool must be specified.")
	}
	if e := checkName("nodePool.name", spec.GetName()); e != nil {
		return nil, e
	}
	if c.pool(spec.GetName()) != nil {
		return nil, errExists(c.poolName(spec.GetName()))
	}
	if e := c.checkPoolSpec(spec, "nodePool"); e != nil {
		return nil, e
	}
	if c.autopilot() {
		return nil, errBadRequest("Autopilot clusters do not support node pool operations.")
	}
	if e := c.busy(); e != nil {
		return nil, e
	}
	p, e := c.newPool(spec, "nodePool", containerpb.NodePool_PROVISIONING)
	if e != nil {
		return nil, e
	}
	c.pools = append(c.pools, p)
	op := s.newOperation(c.project, c.location, containerpb.Operation_CREATE_NODE_POOL, p.pb.GetSelfLink(), now, s.opts.CreateDelay)
	c.op = op
	op.finish = func(ok bool) {
		if !ok {
			p.pb.Status, p.pb.StatusMessage = containerpb.NodePool_ERROR, op.fail
			return
		}
		p.pb.Status = containerpb.NodePool_RUNNING
		p.pb.Etag = newEtag()
		c.touch()
	}
	return proto.Clone(op.pb).(*containerpb.Operation), nil
}

// poolUpdateFields are the UpdateNodePoolRequest fields the emulator
// applies (or, like the ids, ignores); others are refused.
func poolUpdateFields() map[string]bool {
	return map[string]bool{
		"name": true, "projectId": true, "zone": true, "clusterId": true, "nodePoolId": true, "etag": true,
		"nodeVersion": true, "imageType": true, "labels": true, "taints": true, "tags": true,
		"resourceLabels": true, "locations": true, "machineType": true, "diskType": true, "diskSizeGb": true,
		"upgradeSettings": true,
	}
}

// updatePool answers nodePools.update: UPGRADE_NODES when nodeVersion
// changes the pool's version, UPDATE_CLUSTER otherwise; the changes are
// applied when the operation is DONE.
func (s *Server) updatePool(r *req, now time.Time) (*containerpb.Operation, *APIError) {
	var body containerpb.UpdateNodePoolRequest
	if e := decode(r.body, &body); e != nil {
		return nil, e
	}
	c, p, e := s.findPool(r.project, r.location, r.cluster, r.pool)
	if e != nil {
		return nil, e
	}
	known := poolUpdateFields()
	for _, f := range setFields(&body) {
		if !known[f] {
			return nil, errBadRequest("Update of node pool field %s is not supported by the GKE emulator.", f)
		}
	}
	if e := checkZones("locations", c.location, body.GetLocations()); e != nil {
		return nil, e
	}
	if body.GetDiskSizeGb() < 0 {
		return nil, errBadRequest("Invalid value for field \"diskSizeGb\": must not be negative.")
	}
	if e := c.busy(); e != nil {
		return nil, e
	}
	if body.GetEtag() != "" && body.GetEtag() != p.pb.GetEtag() {
		return nil, errAborted("Node pool etag mismatch.")
	}
	version := p.pb.GetVersion()
	if body.GetNodeVersion() != "" {
		v, e := c.nodeVersion(p, body.GetNodeVersion())
		if e != nil {
			return nil, e
		}
		version = v
	}
	typ := containerpb.Operation_UPDATE_CLUSTER
	if version != p.pb.GetVersion() {
		typ = containerpb.Operation_UPGRADE_NODES
	}
	u := proto.Clone(&body).(*containerpb.UpdateNodePoolRequest)
	return s.startPoolChange(c, p, typ, now, func() {
		p.pb.Version = version
		cfg := p.config()
		if u.ImageType != "" {
			cfg.ImageType = u.ImageType
		}
		if u.Labels != nil {
			cfg.Labels = copyMap(u.Labels.GetLabels())
		}
		if u.Taints != nil {
			cfg.Taints = u.Taints.GetTaints()
		}
		if u.Tags != nil {
			cfg.Tags = u.Tags.GetTags()
		}
		if u.ResourceLabels != nil {
			cfg.ResourceLabels = copyMap(u.ResourceLabels.GetLabels())
		}
		if u.MachineType != "" {
			cfg.MachineType = u.MachineType
		}
		if u.DiskType != "" {
			cfg.DiskType = u.DiskType
		}
		if u.DiskSizeGb > 0 {
			cfg.DiskSizeGb = int32(u.DiskSizeGb)
		}
		if len(u.Locations) > 0 {
			p.pb.Locations = u.Locations
		}
		if u.UpgradeSettings != nil {
			p.pb.UpgradeSettings = u.UpgradeSettings
		}
	}), nil
}

// deletePool answers nodePools.delete: the pool is STOPPING until the
// DELETE_NODE_POOL operation is DONE, then gone; a failed one leaves it
// ERROR.
func (s *Server) deletePool(r *req, now time.Time) (*containerpb.Operation, *APIError) {
	c, p, e := s.findPool(r.project, r.location, r.cluster, r.pool)
	if e != nil {
		return nil, e
	}
	if e := c.busy(); e != nil {
		return nil, e
	}
	p.pb.Status = containerpb.NodePool_STOPPING
	op := s.newOperation(c.project, c.location, containerpb.Operation_DELETE_NODE_POOL, p.pb.GetSelfLink(), now, s.opts.DeleteDelay)
	c.op = op
	op.finish = func(ok bool) {
		if !ok {
			p.pb.Status, p.pb.StatusMessage = containerpb.NodePool_ERROR, op.fail
			return
		}
		for i, q := range c.pools {
			if q == p {
				c.pools = append(c.pools[:i:i], c.pools[i+1:]...)
				break
			}
		}
		c.touch()
	}
	return proto.Clone(op.pb).(*containerpb.Operation), nil
}

// setPoolSize answers nodePools.setSize: initialNodeCount becomes
// nodeCount (>= 0) when the SET_NODE_POOL_SIZE operation is DONE.
func (s *Server) setPoolSize(r *req, now time.Time) (*containerpb.Operation, *APIError) {
	var body containerpb.SetNodePoolSizeRequest
	if e := decode(r.body, &body); e != nil {
		return nil, e
	}
	c, p, e := s.findPool(r.project, r.location, r.cluster, r.pool)
	if e != nil {
		return nil, e
	}
	n := body.GetNodeCount()
	if n < 0 {
		return nil, errBadRequest("Invalid value for field \"nodeCount\": %d must not be negative.", n)
	}
	if e := c.busy(); e != nil {
		return nil, e
	}
	return s.startPoolChange(c, p, containerpb.Operation_SET_NODE_POOL_SIZE, now, func() { p.pb.InitialNodeCount = n }), nil
}

// setPoolAutoscaling answers nodePools.setAutoscaling: autoscaling is
// replaced when the UPDATE_CLUSTER operation is DONE.
func (s *Server) setPoolAutoscaling(r *req, now time.Time) (*containerpb.Operation, *APIError) {
	var body containerpb.SetNodePoolAutoscalingRequest
	if e := decode(r.body, &body); e != nil {
		return nil, e
	}
	c, p, e := s.findPool(r.project, r.location, r.cluster, r.pool)
	if e != nil {
		return nil, e
	}
	as := body.GetAutoscaling()
	if as == nil {
		return nil, errBadRequest("Autoscaling must be specified.")
	}
	if e := checkAutoscaling("autoscaling", as); e != nil {
		return nil, e
	}
	if e := c.busy(); e != nil {
		return nil, e
	}
	as = proto.Clone(as).(*containerpb.NodePoolAutoscaling)
	return s.startPoolChange(c, p, containerpb.Operation_UPDATE_CLUSTER, now, func() { p.pb.Autoscaling = as }), nil
}

// setPoolManagement answers nodePools.setManagement: management is
// replaced when the SET_NODE_POOL_MANAGEMENT operation is DONE.
func (s *Server) setPoolManagement(r *req, now time.Time) (*containerpb.Operation, *APIError) {
	var body containerpb.SetNodePoolManagementRequest
	if e := decode(r.body, &body); e != nil {
		return nil, e
	}
	c, p, e := s.findPool(r.project, r.location, r.cluster, r.pool)
	if e != nil {
		return nil, e
	}
	m := body.GetManagement()
	if m == nil {
		return nil, errBadRequest("Management must be specified.")
	}
	if e := c.busy(); e != nil {
		return nil, e
	}
	m = proto.Clone(m).(*containerpb.NodeManagement)
	return s.startPoolChange(c, p, containerpb.Operation_SET_NODE_POOL_MANAGEMENT, now, func() { p.pb.Management = m }), nil
}
