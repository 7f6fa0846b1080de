package ekstest

import (
	"maps"
	"slices"
	"sort"
	"time"
)

// ClusterSpec describes a cluster for ImportCluster. Zero values get the
// same defaults as CreateCluster (version DefaultVersion, public endpoint
// only, 0.0.0.0/0, no logging).
type ClusterSpec struct {
	// Name is the cluster name (required).
	Name string
	// Version is the Kubernetes minor version, e.g. "1.31".
	Version string
	// RoleARN is the cluster IAM role.
	RoleARN string
	// SubnetIDs and SecurityGroupIDs are the VPC configuration.
	SubnetIDs, SecurityGroupIDs []string
	// EndpointPublicAccess and EndpointPrivateAccess are the endpoint access
	// flags; both false means the EKS default (public only).
	EndpointPublicAccess, EndpointPrivateAccess bool
	// PublicAccessCIDRs restricts the public endpoint.
	PublicAccessCIDRs []string
	// EnabledLogTypes are the control-plane log types turned on.
	EnabledLogTypes []string
	// Tags are the cluster tags.
	Tags map[string]string
	// Nodegroups are created ACTIVE together with the cluster.
	Nodegroups []NodegroupSpec
}

// NodegroupSpec describes a managed node group for ImportCluster and
// ConsoleCreateNodegroup. Zero values get CreateNodegroup's defaults.
type NodegroupSpec struct {
	// Name is the node group name (required).
	Name string
	// MinSize, MaxSize and DesiredSize are the scaling configuration
	// (all zero: 1, 2, 2).
	MinSize, MaxSize, DesiredSize int32
	// InstanceTypes defaults to t3.medium.
	InstanceTypes []string
	// Subnets defaults to the cluster's subnets.
	Subnets []string
	// AMIType, CapacityType, NodeRole and Version as in CreateNodegroup.
	AMIType, CapacityType, NodeRole, Version string
	// DiskSize in GiB, default 20.
	DiskSize int32
	// Labels and Tags of the node group.
	Labels, Tags map[string]string
}

// ClusterSnapshot is a deep copy of a cluster's emulated state.
type ClusterSnapshot struct {
	// Name, ARN, Status, Version, PlatformVersion, RoleARN and Endpoint are
	// as DescribeCluster reports them (Endpoint is empty while CREATING).
	Name, ARN, Status, Version, PlatformVersion, RoleARN, Endpoint string
	// SubnetIDs, SecurityGroupIDs and PublicAccessCIDRs are the VPC config.
	SubnetIDs, SecurityGroupIDs, PublicAccessCIDRs []string
	// EndpointPublicAccess and EndpointPrivateAccess are the access flags.
	EndpointPublicAccess, EndpointPrivateAccess bool
	// EnabledLogTypes are the control-plane log types turned on.
	EnabledLogTypes []string
	// Tags are the cluster's tags.
	Tags map[string]string
	// CreatedAt is the creation time (by the server's clock).
	CreatedAt time.Time
	// Nodegroups are the node groups by name.
	Nodegroups map[string]NodegroupSnapshot
	// Addons are the add-ons by name.
	Addons map[string]AddonSnapshot
	// Updates lists every update of the cluster and its node groups and
	// add-ons, oldest first.
	Updates []UpdateSnapshot
}

// NodegroupSnapshot is a deep copy of a node group's emulated state.
type NodegroupSnapshot struct {
	// Name, ARN, Status, ... are as DescribeNodegroup reports them.
	Name, ARN, Status, Version, ReleaseVersion, CapacityType, AMIType, NodeRole string
	// MinSize, MaxSize and DesiredSize are the scaling configuration.
	MinSize, MaxSize, DesiredSize int32
	// InstanceTypes and Subnets of the node group.
	InstanceTypes, Subnets []string
	// Labels and Tags of the node group.
	Labels, Tags map[string]string
}

// AddonSnapshot is a deep copy of an add-on's emulated state.
type AddonSnapshot struct {
	// Name, ARN, Status, Version and ServiceAccountRoleARN as DescribeAddon
	// reports them.
	Name, ARN, Status, Version, ServiceAccountRoleARN string
	// Tags of the add-on.
	Tags map[string]string
}

// UpdateSnapshot is a copy of an update. Nodegroup is empty for cluster
// updates; Params maps parameter type to value.
type UpdateSnapshot struct {
	// ID, Status and Type as DescribeUpdate reports them.
	ID, Status, Type string
	// Nodegroup is the node group the update belongs to, if any.
	Nodegroup string
	// Params maps update parameter type (e.g. "DesiredSize") to value.
	Params map[string]string
}

// Cluster returns a snapshot of the named cluster after applying due
// transitions, and whether it exists.
func (s *Server) Cluster(name string) (ClusterSnapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	c := s.state[name]
	if c == nil {
		return ClusterSnapshot{}, false
	}
	snap := ClusterSnapshot{
		Name: c.name, ARN: c.arn, Status: c.status, Version: c.version, PlatformVersion: c.platformVersion,
		RoleARN: c.roleArn, SubnetIDs: nonNil(c.subnets), SecurityGroupIDs: nonNil(c.securityGroups),
		PublicAccessCIDRs: nonNil(c.publicCidrs), EndpointPublicAccess: c.public, EndpointPrivateAccess: c.private,
		Tags: copyMap(c.tags), CreatedAt: c.createdAt,
		Nodegroups: map[string]NodegroupSnapshot{}, Addons: map[string]AddonSnapshot{},
	}
	if c.status != StatusCreating {
		snap.Endpoint = s.opts.EndpointFor(c.name)
	}
	for _, t := range logTypes {
		if c.logging[t] {
			snap.EnabledLogTypes = append(snap.EnabledLogTypes, t)
		}
	}
	for n, ng := range c.nodegroups {
		snap.Nodegroups[n] = NodegroupSnapshot{
			Name: ng.name, ARN: ng.arn, Status: ng.status, Version: ng.version, ReleaseVersion: ng.releaseVersion,
			CapacityType: ng.capacityType, AMIType: ng.amiType, NodeRole: ng.nodeRole,
			MinSize: ng.minSize, MaxSize: ng.maxSize, DesiredSize: ng.desired,
			InstanceTypes: nonNil(ng.instanceTypes), Subnets: nonNil(ng.subnets),
			Labels: copyMap(ng.labels), Tags: copyMap(ng.tags),
		}
	}
	for n, a := range c.addons {
		snap.Addons[n] = AddonSnapshot{Name: a.name, ARN: a.arn, Status: a.status, Version: a.version, ServiceAccountRoleARN: a.roleArn, Tags: copyMap(a.tags)}
	}
	for _, u := range c.updates {
		p := map[string]string{}
		for _, kv := range u.params {
			p[kv.Type] = kv.Value
		}
		snap.Updates = append(snap.Updates, UpdateSnapshot{ID: u.id, Status: u.status, Type: u.typ, Nodegroup: u.nodegroup, Params: p})
	}
	return snap, true
}

// ClusterNames returns the names of all clusters, sorted.
func (s *Server) ClusterNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	names := slices.Sorted(maps.Keys(s.state))
	sort.Strings(names)
	return names
}

func nodegroupRequest(spec NodegroupSpec, c *cluster) createNodegroupRequest {
	req := createNodegroupRequest{
		NodegroupName: spec.Name, Subnets: spec.Subnets, InstanceTypes: spec.InstanceTypes,
		AmiType: spec.AMIType, CapacityType: spec.CapacityType, NodeRole: spec.NodeRole,
		Version: spec.Version, Labels: spec.Labels, Tags: spec.Tags,
	}
	if len(req.Subnets) == 0 {
		req.Subnets = c.subnets
	}
	if req.NodeRole == "" {
		req.NodeRole = "arn:aws:iam::000000000000:role/console-node-role"
	}
	if spec.DiskSize != 0 {
		req.DiskSize = ptr(spec.DiskSize)
	}
	if spec.MinSize != 0 || spec.MaxSize != 0 || spec.DesiredSize != 0 {
		req.ScalingConfig = &wireScaling{MinSize: ptr(spec.MinSize), MaxSize: ptr(spec.MaxSize), DesiredSize: ptr(spec.DesiredSize)}
	}
	return req
}

// ImportCluster adds a cluster that existed before clustersync saw it: it is
// ACTIVE immediately, created "now", with its node groups ACTIVE. It fails
// with a ResourceInUseException APIError if the name is taken.
func (s *Server) ImportCluster(spec ClusterSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.settle()
	subnets := spec.SubnetIDs
	if len(subnets) < 2 {
		subnets = []string{"subnet-" + shortHash(spec.Name, "a"), "subnet-" + shortHash(spec.Name, "b")}
	}
	role := spec.RoleARN
	if role == "" {
		role = "arn:aws:iam::" + s.opts.AccountID + ":role/eks-cluster"
	}
	req := createClusterRequest{
		Name: spec.Name, Version: spec.Version, RoleArn: role, Tags: spec.Tags,
		ResourcesVpcConfig: &wireVpcRequest{SubnetIDs: subnets, SecurityGroupIDs: spec.SecurityGroupIDs, PublicAccessCidrs: spec.PublicAccessCIDRs},
	}
	if spec.EndpointPublicAccess || spec.EndpointPrivateAccess {
		req.ResourcesVpcConfig.EndpointPublicAccess = ptr(spec.EndpointPublicAccess)
		req.ResourcesVpcConfig.EndpointPrivateAccess = ptr(spec.EndpointPrivateAccess)
	}
	if len(spec.EnabledLogTypes) > 0 {
		req.Logging = &wireLogging{ClusterLogging: []wireLogSetup{{Types: spec.EnabledLogTypes, Enabled: ptr(true)}}}
	}
	c, err := s.createCluster(req, now)
	if err != nil {
		return err
	}
	c.status = StatusActive
	for _, ngs := range spec.Nodegroups {
		_, ng, err := s.createNodegroup(c.name, nodegroupRequest(ngs, c), now)
		if err != nil {
			delete(s.state, c.name)
			return err
		}
		ng.status = StatusActive
	}
	return nil
}

// ConsoleSetEndpointAccess changes endpoint access as the console does: it
// starts an EndpointAccessUpdate (cluster UPDATING, applied after
// UpdateDelay) and returns its ID. It fails like UpdateClusterConfig
// (ResourceInUseException during another update, InvalidParameterException
// for a no-op or both flags false).
func (s *Server) ConsoleSetEndpointAccess(cluster string, public, private bool) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.settle()
	u, err := s.updateClusterConfig(cluster, updateClusterConfigRequest{
		ResourcesVpcConfig: &wireVpcRequest{EndpointPublicAccess: ptr(public), EndpointPrivateAccess: ptr(private)},
	}, now)
	if err != nil {
		return "", err
	}
	return u.id, nil
}

// ConsoleUpgrade starts a cluster version upgrade as the console does (a
// VersionUpdate applied after UpdateDelay) and returns the update ID. The
// same rules as UpdateClusterVersion apply.
func (s *Server) ConsoleUpgrade(cluster, version string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.settle()
	u, err := s.updateClusterVersion(cluster, version, "", now)
	if err != nil {
		return "", err
	}
	return u.id, nil
}

// ConsoleSetTags replaces the whole tag set of a cluster, node group or
// add-on (by ARN) immediately, as the console's "Manage tags" does.
func (s *Server) ConsoleSetTags(arn string, tags map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	t, err := s.tagsFor(arn)
	if err != nil {
		return err
	}
	*t = copyMap(tags)
	return nil
}

// ConsoleScaleNodegroup sets a node group's desired size as the console
// does: a ConfigUpdate (node group UPDATING, applied after UpdateDelay)
// whose ID is returned. A size outside [min, max] is an
// InvalidParameterException, as in EKS.
func (s *Server) ConsoleScaleNodegroup(cluster, ng string, desired int32) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.settle()
	u, err := s.updateNodegroupConfig(cluster, ng, updateNodegroupConfigRequest{ScalingConfig: &wireScaling{DesiredSize: ptr(desired)}}, now)
	if err != nil {
		return "", err
	}
	return u.id, nil
}

// ConsoleDeleteNodegroup deletes a node group: DELETING at once, gone after
// DeleteDelay.
func (s *Server) ConsoleDeleteNodegroup(cluster, ng string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.settle()
	_, _, err := s.deleteNodegroup(cluster, ng, now)
	if err != nil {
		return err
	}
	return nil
}

// ConsoleCreateNodegroup creates a node group outside clustersync: CREATING
// at once, ACTIVE after CreateDelay. Same rules as CreateNodegroup (the
// cluster must be ACTIVE).
func (s *Server) ConsoleCreateNodegroup(cluster string, spec NodegroupSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.settle()
	c, err := s.getCluster(cluster)
	if err != nil {
		return err
	}
	if _, _, err := s.createNodegroup(cluster, nodegroupRequest(spec, c), now); err != nil {
		return err
	}
	return nil
}
