package gketest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Versions and defaults the emulator reports.
const (
	// DefaultKubernetesVersion is the minor version of a cluster created
	// without initialClusterVersion (or with "latest" or "-").
	DefaultKubernetesVersion = "1.31"
	// LatestPatch is the patch the emulator picks for a version given
	// without one: "1.31" runs as "1.31.5-gke.<LatestBuild>".
	LatestPatch = 5
	// LatestBuild is the GKE build N of "-gke.N" the emulator picks for a
	// version given without one: "1.31.2" runs as "1.31.2-gke.1000000".
	LatestBuild = 1000000
	// DefaultVersion is DefaultKubernetesVersion resolved, the
	// currentMasterVersion of a cluster created without a version.
	DefaultVersion = "1.31.5-gke.1000000"
	// DefaultPoolName is the node pool a cluster created with
	// initialNodeCount (and no nodePools) gets.
	DefaultPoolName = "default-pool"
	// DefaultNodeCount is the initialNodeCount of a node pool created
	// without one (nodes per zone).
	DefaultNodeCount = 3
	// DefaultMachineType is config.machineType of a node pool created
	// without one.
	DefaultMachineType = "e2-medium"
	// DefaultImageType is config.imageType of a node pool created without
	// one.
	DefaultImageType = "COS_CONTAINERD"
	// PrivateEndpoint is privateClusterConfig.privateEndpoint of a private
	// cluster (enablePrivateNodes or enablePrivateEndpoint).
	PrivateEndpoint = "10.0.0.2"
	// APIBase is the prefix of every selfLink and targetLink.
	APIBase = "https://container.googleapis.com/v1/"
)

// Defaults of a new cluster and node pool, see the package documentation.
const (
	defaultLogging       = "logging.googleapis.com/kubernetes"
	defaultMonitoring    = "monitoring.googleapis.com/kubernetes"
	defaultClusterCIDR   = "10.4.0.0/14"
	defaultServicesCIDR  = "10.8.0.0/20"
	defaultDiskSizeGb    = 100
	defaultDiskType      = "pd-balanced"
	defaultMaxPods       = 110
	defaultSvcAccount    = "default"
	maxResourceNameChars = 40
)

func defaultOAuthScopes() []string {
	return []string{
		"https://www.googleapis.com/auth/devstorage.read_only",
		"https://www.googleapis.com/auth/logging.write",
		"https://www.googleapis.com/auth/monitoring",
	}
}

// cluster is a GKE cluster: pb is its applied state with its status
// (NodePools empty: they live in pools), op the last operation started on
// it or one of its pools.
type cluster struct {
	project, location, name string
	pb                      *containerpb.Cluster
	pools                   []*pool
	op                      *operation
}

// pool is a node pool: its applied state with its status.
type pool struct {
	pb *containerpb.NodePool
}

func clusterKey(project, location, name string) string {
	return project + "/" + location + "/" + name
}

func locationName(project, location string) string {
	return "projects/" + project + "/locations/" + location
}

func locationLink(project, location string) string {
	return APIBase + locationName(project, location)
}

func clusterName(project, location, name string) string {
	return locationName(project, location) + "/clusters/" + name
}

func (c *cluster) resourceName() string { return clusterName(c.project, c.location, c.name) }

func (c *cluster) selfLink() string { return APIBase + c.resourceName() }

func (c *cluster) pool(name string) *pool {
	for _, p := range c.pools {
		if p.pb.GetName() == name {
			return p
		}
	}
	return nil
}

func (c *cluster) autopilot() bool { return c.pb.GetAutopilot().GetEnabled() }

// busy is GKE's answer to a mutation while an operation on the cluster or
// one of its pools runs.
func (c *cluster) busy() *APIError {
	if !c.op.done() {
		return errPrecondition("Cluster is running incompatible operation %s.", c.op.pb.GetName())
	}
	return nil
}

// touch gives the cluster a fresh etag (after an applied change).
func (c *cluster) touch() { c.pb.Etag = newEtag() }

func newEtag() string { return randomHex(16) }

// render is the cluster as a GET answers it: a deep copy with its node
// pools and the deprecated currentNodeVersion and currentNodeCount.
func (c *cluster) render() *containerpb.Cluster {
	out := proto.Clone(c.pb).(*containerpb.Cluster)
	out.CurrentNodeVersion = out.GetCurrentMasterVersion()
	out.CurrentNodeCount = 0
	for i, p := range c.pools {
		out.NodePools = append(out.NodePools, proto.Clone(p.pb).(*containerpb.NodePool))
		if i == 0 || compareVersions(p.pb.GetVersion(), out.CurrentNodeVersion) < 0 {
			out.CurrentNodeVersion = p.pb.GetVersion()
		}
		out.CurrentNodeCount += p.pb.GetInitialNodeCount() * int32(max(1, len(p.pb.GetLocations())))
	}
	return out
}

// findCluster resolves a cluster (404 otherwise).
func (s *Server) findCluster(project, location, name string) (*cluster, *APIError) {
	c := s.clusters[clusterKey(project, location, name)]
	if c == nil {
		return nil, errNotFound(clusterName(project, location, name))
	}
	return c, nil
}

// listClusters answers clusters.list: the clusters of the project in the
// location ("-": every location), by location and name.
func (s *Server) listClusters(r *req) *containerpb.ListClustersResponse {
	var cs []*cluster
	for _, c := range s.clusters {
		if c.project == r.project && (r.location == "-" || c.location == r.location) {
			cs = append(cs, c)
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].location != cs[j].location {
			return cs[i].location < cs[j].location
		}
		return cs[i].name < cs[j].name
	})
	out := &containerpb.ListClustersResponse{}
	for _, c := range cs {
		out.Clusters = append(out.Clusters, c.render())
	}
	return out
}

// checkName validates a cluster or node pool name.
func checkName(field, name string) *APIError {
	if !validName(name) {
		return errBadRequest(`Invalid value for field %q: %q. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?)' (only alphanumerics and '-' allowed, must start with a letter and end with an alphanumeric, and must be no longer than 40 characters).`, field, name)
	}
	return nil
}

// validName reports whether name is a valid cluster or node pool name:
// 1 to 40 characters, lowercase letters, digits and '-', starting with a
// letter and not ending with '-'.
func validName(name string) bool {
	if name == "" || len(name) > maxResourceNameChars || !isLower(name[0]) || name[len(name)-1] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isLower(c) && !isDigit(c) && c != '-' {
			return false
		}
	}
	return true
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// allOf reports whether s is not empty and every byte satisfies ok.
func allOf(s string, ok func(byte) bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// isRegion reports whether location looks like a region: letters, '-',
// letters then digits ("us-central1", "europe-west4").
func isRegion(location string) bool {
	area, rest, ok := strings.Cut(location, "-")
	if !ok || !allOf(area, isLower) {
		return false
	}
	i := strings.IndexFunc(rest, func(r rune) bool { return '0' <= r && r <= '9' })
	return i > 0 && allOf(rest[:i], isLower) && allOf(rest[i:], isDigit)
}

// isZone tells a zone ("us-central1-a": a region, '-' and one letter)
// from a region ("us-central1").
func isZone(location string) bool {
	i := strings.LastIndex(location, "-")
	return i > 0 && len(location) == i+2 && isLower(location[i+1]) && isRegion(location[:i])
}

// regionOf is the region of a zone or region.
func regionOf(location string) string {
	if isZone(location) {
		return location[:strings.LastIndex(location, "-")]
	}
	return location
}

// checkLocation validates the location of a new cluster.
func checkLocation(location string) *APIError {
	if !isZone(location) && !isRegion(location) {
		return errBadRequest("Location %q is not a valid GKE location (a region such as us-central1 or a zone such as us-central1-a).", location)
	}
	return nil
}

// defaultLocations are the node zones of a cluster in location: the zone,
// or three zones of the region.
func defaultLocations(location string) []string {
	if isZone(location) {
		return []string{location}
	}
	return []string{location + "-a", location + "-b", location + "-c"}
}

// checkZones validates node locations of a cluster in location: zones of
// its region, without repeats; a zonal cluster's must include its zone.
func checkZones(field, location string, zones []string) *APIError {
	seen := map[string]bool{}
	for _, z := range zones {
		if !isZone(z) || regionOf(z) != regionOf(location) {
			return errBadRequest("Invalid value for field %q: %q is not a zone of region %q.", field, z, regionOf(location))
		}
		if seen[z] {
			return errBadRequest("Invalid value for field %q: zone %q is given twice.", field, z)
		}
		seen[z] = true
	}
	if isZone(location) && len(zones) > 0 && !seen[location] {
		return errBadRequest("Invalid value for field %q: the locations of a zonal cluster must include its zone %q.", field, location)
	}
	return nil
}

// labelFingerprint is the fingerprint of a label map: the first 8 hex
// digits of the SHA-256 of its "key=value" pairs, sorted by key and
// joined with ",".
func labelFingerprint(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pairs := make([]string, len(keys))
	for i, k := range keys {
		pairs[i] = k + "=" + labels[k]
	}
	sum := sha256.Sum256([]byte(strings.Join(pairs, ",")))
	return hex.EncodeToString(sum[:])[:8]
}

// fakeEndpoint is the default Cluster.endpoint: a public-looking IP stable
// for a project, location and name.
func fakeEndpoint(project, location, name string) string {
	h := hashOf(project, location, name)
	return fmt.Sprintf("34.%d.%d.%d", h[0], h[1], 1+int(h[2])%254)
}

// newCluster validates spec (a create request's cluster or an import) and
// returns the cluster with the server's defaults, not stored, with status
// st for it and its pools. Called with s.mu held.
func (s *Server) newCluster(project, location string, spec *containerpb.Cluster, now time.Time, st containerpb.Cluster_Status) (*cluster, *APIError) {
	if spec == nil {
		return nil, errBadRequest("Cluster must be specified.")
	}
	if e := checkLocation(location); e != nil {
		return nil, e
	}
	name := spec.GetName()
	if e := checkName("cluster.name", name); e != nil {
		return nil, e
	}
	if s.clusters[clusterKey(project, location, name)] != nil {
		return nil, errExists(clusterName(project, location, name))
	}
	autopilot := spec.GetAutopilot().GetEnabled()
	specPools := spec.GetNodePools()
	switch {
	case autopilot && (len(specPools) > 0 || spec.GetInitialNodeCount() > 0):
		return nil, errBadRequest("Autopilot clusters do not support node pool operations: cluster.nodePools and cluster.initialNodeCount must not be set.")
	case len(specPools) > 0 && spec.GetInitialNodeCount() > 0:
		return nil, errBadRequest("Cluster.initialNodeCount and Cluster.nodePools are mutually exclusive.")
	case spec.GetInitialNodeCount() < 0:
		return nil, errBadRequest("Cluster.initialNodeCount must not be negative.")
	case !autopilot && len(specPools) == 0 && spec.GetInitialNodeCount() == 0:
		return nil, errBadRequest("Cluster must have at least one node pool: set cluster.nodePools or cluster.initialNodeCount.")
	}
	master, ok := ResolveVersion(spec.GetInitialClusterVersion())
	if !ok {
		return nil, errBadRequest("Invalid value for field \"cluster.initialClusterVersion\": %q is not a valid GKE version.", spec.GetInitialClusterVersion())
	}
	if e := checkZones("cluster.locations", location, spec.GetLocations()); e != nil {
		return nil, e
	}

	pb := proto.Clone(spec).(*containerpb.Cluster)
	pb.NodePools = nil
	c := &cluster{project: project, location: location, name: name, pb: pb}
	pb.Location, pb.Zone = location, location
	pb.SelfLink = c.selfLink()
	pb.Id = hex.EncodeToString(hashOf(project, location, name, timestamp(now), randomHex(8)))[:32]
	pb.CreateTime = timestamp(now)
	pb.ExpireTime, pb.Conditions, pb.InstanceGroupUrls = "", nil, nil
	pb.Status, pb.StatusMessage = st, ""
	pb.InitialClusterVersion, pb.CurrentMasterVersion = master, master
	if len(pb.Locations) == 0 {
		pb.Locations = defaultLocations(location)
	}
	if pb.LoggingService == "" {
		pb.LoggingService = defaultLogging
	}
	if pb.MonitoringService == "" {
		pb.MonitoringService = defaultMonitoring
	}
	if pb.Network == "" {
		pb.Network = "default"
	}
	if pb.Subnetwork == "" {
		pb.Subnetwork = "default"
	}
	if pb.IpAllocationPolicy == nil {
		pb.IpAllocationPolicy = &containerpb.IPAllocationPolicy{UseIpAliases: true}
	}
	ip := pb.IpAllocationPolicy
	if pb.ClusterIpv4Cidr == "" {
		pb.ClusterIpv4Cidr = ip.GetClusterIpv4CidrBlock()
	}
	if pb.ClusterIpv4Cidr == "" {
		pb.ClusterIpv4Cidr = defaultClusterCIDR
	}
	pb.ServicesIpv4Cidr = ip.GetServicesIpv4CidrBlock()
	if pb.ServicesIpv4Cidr == "" {
		pb.ServicesIpv4Cidr = defaultServicesCIDR
	}
	if ip.UseIpAliases {
		if ip.ClusterIpv4CidrBlock == "" {
			ip.ClusterIpv4CidrBlock = pb.ClusterIpv4Cidr
		}
		if ip.ServicesIpv4CidrBlock == "" {
			ip.ServicesIpv4CidrBlock = pb.ServicesIpv4Cidr
		}
	}
	if pb.AddonsConfig == nil {
		pb.AddonsConfig = &containerpb.AddonsConfig{}
	}
	if pb.AddonsConfig.HttpLoadBalancing == nil {
		pb.AddonsConfig.HttpLoadBalancing = &containerpb.HttpLoadBalancing{}
	}
	if pb.AddonsConfig.HorizontalPodAutoscaling == nil {
		pb.AddonsConfig.HorizontalPodAutoscaling = &containerpb.HorizontalPodAutoscaling{}
	}
	if pb.AddonsConfig.NetworkPolicyConfig == nil {
		pb.AddonsConfig.NetworkPolicyConfig = &containerpb.NetworkPolicyConfig{Disabled: true}
	}
	if pb.NetworkPolicy == nil {
		pb.NetworkPolicy = &containerpb.NetworkPolicy{}
	}
	pb.LabelFingerprint = labelFingerprint(pb.ResourceLabels)
	if pb.MaintenancePolicy != nil {
		pb.MaintenancePolicy.ResourceVersion = randomHex(8)
	}

	endpoint := fakeEndpoint(project, location, name)
	if s.opts.EndpointFor != nil {
		endpoint = s.opts.EndpointFor(name)
	}
	pb.Endpoint = endpoint
	if pc := pb.PrivateClusterConfig; pc != nil {
		pc.PrivateEndpoint, pc.PublicEndpoint = "", ""
		if pc.EnablePrivateNodes || pc.EnablePrivateEndpoint {
			pc.PrivateEndpoint, pc.PublicEndpoint = PrivateEndpoint, endpoint
		}
		if pc.EnablePrivateEndpoint {
			pb.Endpoint = PrivateEndpoint
		}
	}
	ca := s.caPEM
	if s.opts.CertificateAuthorityFor != nil {
		ca = s.opts.CertificateAuthorityFor(name)
	}
	if pb.MasterAuth == nil {
		pb.MasterAuth = &containerpb.MasterAuth{}
	}
	pb.MasterAuth.ClusterCaCertificate = base64.StdEncoding.EncodeToString(ca)
	pb.Etag = newEtag()

	if spec.GetInitialNodeCount() > 0 {
		specPools = []*containerpb.NodePool{{
			Name:             DefaultPoolName,
			InitialNodeCount: spec.GetInitialNodeCount(),
			Config:           spec.GetNodeConfig(),
		}}
	}
	poolStatus := containerpb.NodePool_RUNNING
	if st == containerpb.Cluster_PROVISIONING {
		poolStatus = containerpb.NodePool_PROVISIONING
	}
	for i, ps := range specPools {
		p, e := c.newPool(ps, fmt.Sprintf("cluster.nodePools[%d]", i), poolStatus)
		if e != nil {
			return nil, e
		}
		if c.pool(p.pb.GetName()) != nil {
			return nil, errBadRequest("Node pool names must be unique: %q is given twice.", p.pb.GetName())
		}
		c.pools = append(c.pools, p)
	}
	return c, nil
}

// createCluster answers clusters.create: the cluster appears at once,
// PROVISIONING (its pools too), and is RUNNING when the CREATE_CLUSTER
// operation is DONE, or ERROR when it fails.
func (s *Server) createCluster(r *req, now time.Time) (*containerpb.Operation, *APIError) {
	var body containerpb.CreateClusterRequest
	if e := decode(r.body, &body); e != nil {
		return nil, e
	}
	c, e := s.newCluster(r.project, r.location, body.GetCluster(), now, containerpb.Cluster_PROVISIONING)
	if e != nil {
		return nil, e
	}
	s.clusters[clusterKey(c.project, c.location, c.name)] = c
	op := s.newOperation(c.project, c.location, containerpb.Operation_CREATE_CLUSTER, c.selfLink(), now, s.opts.CreateDelay)
	c.op = op
	op.finish = func(ok bool) {
		if !ok {
			c.pb.Status, c.pb.StatusMessage = containerpb.Cluster_ERROR, op.fail
			for _, p := range c.pools {
				p.pb.Status, p.pb.StatusMessage = containerpb.NodePool_ERROR, op.fail
			}
			return
		}
		c.pb.Status = containerpb.Cluster_RUNNING
		for _, p := range c.pools {
			p.pb.Status = containerpb.NodePool_RUNNING
			p.pb.Etag = newEtag()
		}
		c.touch()
	}
	return proto.Clone(op.pb).(*containerpb.Operation), nil
}

// startClusterChange starts an operation of type typ on the cluster,
// RECONCILING meanwhile; apply runs when it is DONE and succeeded. A
// failed one restores the cluster's former status.
func (s *Server) startClusterChange(c *cluster, typ containerpb.Operation_Type, now time.Time, apply func()) *containerpb.Operation {
	prev, prevMsg := c.pb.Status, c.pb.StatusMessage
	c.pb.Status = containerpb.Cluster_RECONCILING
	op := s.newOperation(c.project, c.location, typ, c.selfLink(), now, s.opts.UpdateDelay)
	c.op = op
	op.finish = func(ok bool) {
		if !ok {
			c.pb.Status, c.pb.StatusMessage = prev, prevMsg
			return
		}
		apply()
		c.pb.Status, c.pb.StatusMessage = containerpb.Cluster_RUNNING, ""
		c.touch()
	}
	return proto.Clone(op.pb).(*containerpb.Operation)
}

// deleteCluster answers clusters.delete: the cluster is STOPPING until the
// DELETE_CLUSTER operation is DONE, then gone; a failed one leaves it
// ERROR.
func (s *Server) deleteCluster(r *req, now time.Time) (*containerpb.Operation, *APIError) {
	c, e := s.findCluster(r.project, r.location, r.cluster)
	if e != nil {
		return nil, e
	}
	if e := c.busy(); e != nil {
		return nil, e
	}
	c.pb.Status = containerpb.Cluster_STOPPING
	op := s.newOperation(c.project, c.location, containerpb.Operation_DELETE_CLUSTER, c.selfLink(), now, s.opts.DeleteDelay)
	c.op = op
	op.finish = func(ok bool) {
		if !ok {
			c.pb.Status, c.pb.StatusMessage = containerpb.Cluster_ERROR, op.fail
			return
		}
		key := clusterKey(c.project, c.location, c.name)
		if s.clusters[key] == c {
			delete(s.clusters, key)
		}
	}
	return proto.Clone(op.pb).(*containerpb.Operation), nil
}

// setLabels answers clusters.setResourceLabels: the fingerprint must be
// the current one; the labels replace the cluster's when the SET_LABELS
// operation is DONE.
func (s *Server) setLabels(r *req, now time.Time) (*containerpb.Operation, *APIError) {
	var body containerpb.SetLabelsRequest
	if e := decode(r.body, &body); e != nil {
		return nil, e
	}
	c, e := s.findCluster(r.project, r.location, r.cluster)
	if e != nil {
		return nil, e
	}
	if e := c.busy(); e != nil {
		return nil, e
	}
	if got, want := body.GetLabelFingerprint(), c.pb.GetLabelFingerprint(); got != want {
		return nil, errPrecondition("Labels could not be set due to fingerprint mismatch; try again with the proper fingerprint: incorrect fingerprint supplied was %q, the expected one is %q.", got, want)
	}
	labels := copyMap(body.GetResourceLabels())
	return s.startClusterChange(c, containerpb.Operation_SET_LABELS, now, func() {
		c.pb.ResourceLabels = labels
		c.pb.LabelFingerprint = labelFingerprint(labels)
	}), nil
}

// setNetworkPolicy answers clusters.setNetworkPolicy: the policy replaces
// the cluster's when the SET_NETWORK_POLICY operation is DONE.
func (s *Server) setNetworkPolicy(r *req, now time.Time) (*containerpb.Operation, *APIError) {
	var body containerpb.SetNetworkPolicyRequest
	if e := decode(r.body, &body); e != nil {
		return nil, e
	}
	c, e := s.findCluster(r.project, r.location, r.cluster)
	if e != nil {
		return nil, e
	}
	if body.GetNetworkPolicy() == nil {
		return nil, errBadRequest("Network policy must be specified.")
	}
	if e := c.busy(); e != nil {
		return nil, e
	}
	np := proto.Clone(body.GetNetworkPolicy()).(*containerpb.NetworkPolicy)
	return s.startClusterChange(c, containerpb.Operation_SET_NETWORK_POLICY, now, func() {
		c.pb.NetworkPolicy = np
	}), nil
}

// setMaintenancePolicy answers clusters.setMaintenancePolicy: a given
// resourceVersion must be the current one (409 ABORTED otherwise); the
// policy replaces the cluster's, with a new resourceVersion, when the
// SET_MAINTENANCE_POLICY operation is DONE.
func (s *Server) setMaintenancePolicy(r *req, now time.Time) (*containerpb.Operation, *APIError) {
	var body containerpb.SetMaintenancePolicyRequest
	if e := decode(r.body, &body); e != nil {
		return nil, e
	}
	c, e := s.findCluster(r.project, r.location, r.cluster)
	if e != nil {
		return nil, e
	}
	if body.GetMaintenancePolicy() == nil {
		return nil, errBadRequest("Maintenance policy must be specified.")
	}
	if e := c.busy(); e != nil {
		return nil, e
	}
	if rv := body.GetMaintenancePolicy().GetResourceVersion(); rv != "" && rv != c.pb.GetMaintenancePolicy().GetResourceVersion() {
		return nil, errAborted("Maintenance policy resource version mismatch: %q is not the current resourceVersion %q.", rv, c.pb.GetMaintenancePolicy().GetResourceVersion())
	}
	mp := proto.Clone(body.GetMaintenancePolicy()).(*containerpb.MaintenancePolicy)
	return s.startClusterChange(c, containerpb.Operation_SET_MAINTENANCE_POLICY, now, func() {
		mp.ResourceVersion = randomHex(8)
		c.pb.MaintenancePolicy = mp
	}), nil
}

// setFields lists the JSON names of the fields set in m.
func setFields(m proto.Message) []string {
	b, err := protojson.Marshal(m)
	if err != nil {
		return nil
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(b, &fields)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mergeAddons replaces the add-ons of cur that upd gives, whole.
func mergeAddons(cur, upd *containerpb.AddonsConfig) *containerpb.AddonsConfig {
	var a, b map[string]json.RawMessage
	ja, _ := protojson.Marshal(cur)
	jb, _ := protojson.Marshal(upd)
	_ = json.Unmarshal(ja, &a)
	_ = json.Unmarshal(jb, &b)
	if a == nil {
		a = map[string]json.RawMessage{}
	}
	for k, v := range b {
		a[k] = v
	}
	j, _ := json.Marshal(a)
	out := &containerpb.AddonsConfig{}
	_ = protojson.Unmarshal(j, out)
	return out
}

// updateCluster answers clusters.update: exactly one desired* field
// (besides etag and desiredNodePoolId), applied when the operation is
// DONE.
func (s *Server) updateCluster(r *req, now time.Time) (*containerpb.Operation, *APIError) {
	var body containerpb.UpdateClusterRequest
	if e := decode(r.body, &body); e != nil {
		return nil, e
	}
	c, e := s.findCluster(r.project, r.location, r.cluster)
	if e != nil {
		return nil, e
	}
	u := body.GetUpdate()
	var fields []string
	for _, f := range setFields(u) {
		if f != "etag" && f != "desiredNodePoolId" {
			fields = append(fields, f)
		}
	}
	if len(fields) != 1 {
		return nil, errBadRequest("Exactly one update can be applied to a cluster with each request.")
	}
	field := fields[0]
	// Checks of the request alone, and the target pool.
	var p *pool
	switch field {
	case "desiredMasterVersion", "desiredAddonsConfig", "desiredLoggingService",
		"desiredMonitoringService", "desiredMasterAuthorizedNetworksConfig":
	case "desiredLocations":
		if e := checkZones("update.desiredLocations", c.location, u.GetDesiredLocations()); e != nil {
			return nil, e
		}
	case "desiredNodePoolAutoscaling", "desiredNodeVersion", "desiredImageType":
		if e := checkAutoscaling("update.desiredNodePoolAutoscaling", u.GetDesiredNodePoolAutoscaling()); e != nil {
			return nil, e
		}
		if p, e = c.targetPool(u.GetDesiredNodePoolId(), field); e != nil {
			return nil, e
		}
	case "desiredPrivateClusterConfig":
		return nil, errBadRequest("Update of desiredPrivateClusterConfig is not supported: the private cluster configuration is set when the cluster is created.")
	default:
		return nil, errBadRequest("Update of %s is not supported by the GKE emulator.", field)
	}
	if e := c.busy(); e != nil {
		return nil, e
	}
	if u.GetEtag() != "" && u.GetEtag() != c.pb.GetEtag() {
		return nil, errAborted("Cluster etag mismatch.")
	}

	typ := containerpb.Operation_UPDATE_CLUSTER
	var apply func()
	switch field {
	case "desiredNodePoolAutoscaling":
		as := proto.Clone(u.GetDesiredNodePoolAutoscaling()).(*containerpb.NodePoolAutoscaling)
		return s.startPoolChange(c, p, typ, now, func() { p.pb.Autoscaling = as }), nil
	case "desiredNodeVersion":
		v, e := c.nodeVersion(p, u.GetDesiredNodeVersion())
		if e != nil {
			return nil, e
		}
		return s.startPoolChange(c, p, containerpb.Operation_UPGRADE_NODES, now, func() { p.pb.Version = v }), nil
	case "desiredImageType":
		it := u.GetDesiredImageType()
		return s.startPoolChange(c, p, typ, now, func() { p.config().ImageType = it }), nil
	case "desiredMasterVersion":
		v, e := masterVersion(c.pb.GetCurrentMasterVersion(), u.GetDesiredMasterVersion())
		if e != nil {
			return nil, e
		}
		typ = containerpb.Operation_UPGRADE_MASTER
		apply = func() { c.pb.CurrentMasterVersion = v }
	case "desiredAddonsConfig":
		merged := mergeAddons(c.pb.GetAddonsConfig(), u.GetDesiredAddonsConfig())
		apply = func() { c.pb.AddonsConfig = merged }
	case "desiredLocations":
		locs := append([]string(nil), u.GetDesiredLocations()...)
		apply = func() {
			c.pb.Locations = locs
			for _, p := range c.pools {
				p.pb.Locations = append([]string(nil), locs...)
				p.pb.Etag = newEtag()
			}
		}
	case "desiredLoggingService":
		v := u.GetDesiredLoggingService()
		apply = func() { c.pb.LoggingService = v }
	case "desiredMonitoringService":
		v := u.GetDesiredMonitoringService()
		apply = func() { c.pb.MonitoringService = v }
	case "desiredMasterAuthorizedNetworksConfig":
		v := proto.Clone(u.GetDesiredMasterAuthorizedNetworksConfig()).(*containerpb.MasterAuthorizedNetworksConfig)
		apply = func() { c.pb.MasterAuthorizedNetworksConfig = v }
	}
	return s.startClusterChange(c, typ, now, apply), nil
}

// targetPool is the node pool a desiredNodeVersion, desiredImageType or
// desiredNodePoolAutoscaling update applies to: desiredNodePoolId, which
// may be left out when the cluster has exactly one pool.
func (c *cluster) targetPool(id, field string) (*pool, *APIError) {
	if id == "" {
		if len(c.pools) != 1 {
			return nil, errBadRequest("update.desiredNodePoolId must be specified with %s when the cluster does not have exactly one node pool.", field)
		}
		return c.pools[0], nil
	}
	p := c.pool(id)
	if p == nil {
		return nil, errNotFound(c.resourceName() + "/nodePools/" + id)
	}
	return p, nil
}

// ResolveVersion returns the GKE version a requested version runs as:
// "", "latest" and "-" are DefaultVersion; "1.31" is
// "1.31.<LatestPatch>-gke.<LatestBuild>"; "1.31.2" is
// "1.31.2-gke.<LatestBuild>"; a full "1.31.2-gke.1200" stays (a leading
// "v" is dropped). ok is false for anything else.
func ResolveVersion(v string) (version string, ok bool) {
	switch v {
	case "", "latest", "-":
		return DefaultVersion, true
	}
	n, ok := parseVersion(v)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%d.%d.%d-gke.%d", n[0], n[1], n[2], n[3]), true
}

// gkeVersion is a parsed version: major, minor, patch, build.
type gkeVersion [4]int

// parseVersion parses "1.31", "1.31.2" or "1.31.2-gke.1200" (with an
// optional leading "v"), filling a missing patch with LatestPatch and a
// missing build with LatestBuild.
func parseVersion(v string) (gkeVersion, bool) {
	n := gkeVersion{0, 0, LatestPatch, LatestBuild}
	core, build, hasBuild := strings.Cut(strings.TrimPrefix(v, "v"), "-gke.")
	parts := strings.Split(core, ".")
	if len(parts) < 2 || len(parts) > 3 || (hasBuild && len(parts) != 3) {
		return n, false
	}
	if hasBuild {
		parts = append(parts, build)
	}
	for i, p := range parts {
		if !allOf(p, isDigit) || len(p) > 9 {
			return n, false
		}
		n[i], _ = strconv.Atoi(p)
	}
	return n, true
}

// parseResolved parses a resolved version (zero if it is not one).
func parseResolved(v string) gkeVersion {
	n, _ := parseVersion(v)
	return n
}

// compareVersions orders two resolved versions: -1, 0 or 1.
func compareVersions(a, b string) int {
	va, vb := parseResolved(a), parseResolved(b)
	for i := range va {
		switch {
		case va[i] < vb[i]:
			return -1
		case va[i] > vb[i]:
			return 1
		}
	}
	return 0
}

// minorDelta is the number of minor versions from a to b (same major;
// across majors it is a large number with the sign of the change).
func minorDelta(a, b string) int {
	va, vb := parseResolved(a), parseResolved(b)
	if va[0] != vb[0] {
		return (vb[0] - va[0]) * 1000
	}
	return vb[1] - va[1]
}

// masterVersion validates a desiredMasterVersion against the current one
// and resolves it ("-" and "latest": DefaultVersion).
func masterVersion(cur, desired string) (string, *APIError) {
	v, ok := ResolveVersion(desired)
	if !ok {
		return "", errBadRequest("Invalid value for field \"update.desiredMasterVersion\": %q is not a valid GKE version.", desired)
	}
	switch d := minorDelta(cur, v); {
	case d < 0:
		return "", errBadRequest("Master cannot be downgraded from %s to %s.", cur, v)
	case d > 1:
		return "", errBadRequest("Master cannot be upgraded from %s to %s: upgrade one minor version at a time.", cur, v)
	}
	return v, nil
}

// nodeVersion validates a node version for pool p (nil: a new pool) and
// resolves it: "", "-" and "latest" are the master's; it must not be newer
// than the master nor, for an existing pool, of a lower minor.
func (c *cluster) nodeVersion(p *pool, desired string) (string, *APIError) {
	master := c.pb.GetCurrentMasterVersion()
	v := master
	if desired != "" && desired != "-" && desired != "latest" {
		var ok bool
		if v, ok = ResolveVersion(desired); !ok {
			return "", errBadRequest("Invalid node version %q: not a valid GKE version.", desired)
		}
	}
	if compareVersions(v, master) > 0 {
		return "", errBadRequest("Node version %s cannot be newer than the master version %s.", v, master)
	}
	if p != nil && minorDelta(p.pb.GetVersion(), v) < 0 {
		return "", errBadRequest("Node pool %s cannot be downgraded from %s to %s.", p.pb.GetName(), p.pb.GetVersion(), v)
	}
	return v, nil
}
