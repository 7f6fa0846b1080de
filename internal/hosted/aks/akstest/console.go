package akstest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// ClusterSpec describes a cluster for ImportCluster. Zero values get the
// defaults of a PUT (see the package documentation).
type ClusterSpec struct {
	// Name is the cluster name (required).
	Name string
	// Location is the region; default Options.Location.
	Location string
	// KubernetesVersion is the control plane version, e.g. "1.31";
	// default DefaultKubernetesVersion.
	KubernetesVersion string
	// DNSPrefix is the API server DNS prefix; default
	// "<name[:10]>-<rg[:16]>-<subscription[:6]>".
	DNSPrefix string
	// Tags are the cluster's tags (the policy tags are added).
	Tags map[string]string
	// NetworkPlugin ("kubenet" by default, "azure", "none"),
	// NetworkPolicy, PodCIDR, ServiceCIDR, DNSServiceIP and OutboundType
	// are properties.networkProfile.
	NetworkPlugin, NetworkPolicy, PodCIDR, ServiceCIDR, DNSServiceIP, OutboundType string
	// AuthorizedIPRanges and EnablePrivateCluster are
	// properties.apiServerAccessProfile.
	AuthorizedIPRanges []string
	// EnablePrivateCluster makes the cluster private (privateFQDN is set).
	EnablePrivateCluster bool
	// Identity is the managed identity type; default "SystemAssigned",
	// "None" for none.
	Identity string
	// Pools are the agent pools, created Succeeded; default one System
	// pool "nodepool1" of 1 node. The first pool's mode defaults to System.
	Pools []PoolSpec
	// Properties are further members of properties (e.g. "addonProfiles",
	// "disableLocalAccounts"), stored as given; the typed fields win.
	Properties map[string]any
}

// PoolSpec describes an agent pool for ImportCluster. Zero values get the
// defaults of a PUT.
type PoolSpec struct {
	// Name is the pool name (required): a lowercase letter then up to 11
	// lowercase letters or digits.
	Name string
	// Count is the node count; default 1, or MinCount when autoscaled.
	Count int32
	// VMSize defaults to DefaultVMSize.
	VMSize string
	// Mode is "System" or "User"; default System for the first pool, User
	// for the others.
	Mode string
	// OSType is "Linux" (default) or "Windows".
	OSType string
	// OrchestratorVersion defaults to the cluster's KubernetesVersion.
	OrchestratorVersion string
	// EnableAutoScaling turns the autoscaler on, between MinCount and
	// MaxCount nodes.
	EnableAutoScaling bool
	// MinCount and MaxCount bound an autoscaled pool.
	MinCount, MaxCount int32
	// MaxPods (default 110) and OSDiskSizeGB (default 128) as in AKS.
	MaxPods, OSDiskSizeGB int32
	// AvailabilityZones, e.g. ["1", "2", "3"].
	AvailabilityZones []string
	// NodeLabels and NodeTaints ("key=value:NoSchedule") of the nodes.
	NodeLabels map[string]string
	// NodeTaints are the taints of the pool's nodes.
	NodeTaints []string
	// VnetSubnetID is the subnet resource ID of the nodes.
	VnetSubnetID string
}

// ClusterSnapshot is a copy of a managed cluster as a GET answers it now.
type ClusterSnapshot struct {
	// Subscription, ResourceGroup and Name locate the cluster; ID is its
	// ARM resource ID.
	Subscription, ResourceGroup, Name, ID string
	// Location is the normalized region, e.g. "eastus".
	Location string
	// ProvisioningState is e.g. Succeeded, Creating, Upgrading, Failed.
	ProvisioningState string
	// KubernetesVersion is the applied version as given ("1.31");
	// CurrentKubernetesVersion its patch version ("1.31.2").
	KubernetesVersion, CurrentKubernetesVersion string
	// DNSPrefix, FQDN and NodeResourceGroup as AKS reports them.
	DNSPrefix, FQDN, NodeResourceGroup string
	// ETag is the current eTag (without quotes).
	ETag string
	// Tags are the applied tags.
	Tags map[string]string
	// NetworkPlugin, NetworkPolicy, PodCIDR, ServiceCIDR, DNSServiceIP,
	// OutboundType and LoadBalancerSKU are properties.networkProfile.
	NetworkPlugin, NetworkPolicy, PodCIDR, ServiceCIDR, DNSServiceIP, OutboundType, LoadBalancerSKU string
	// AuthorizedIPRanges is properties.apiServerAccessProfile.authorizedIPRanges.
	AuthorizedIPRanges []string
	// EnablePrivateCluster is properties.apiServerAccessProfile.enablePrivateCluster.
	EnablePrivateCluster bool
	// Pools are the agent pools in creation order.
	Pools []PoolSnapshot
	// JSON is the whole GET body (the SDK's ManagedCluster), for anything
	// else.
	JSON []byte
}

// Pool returns the snapshot of the named agent pool.
func (c ClusterSnapshot) Pool(name string) (PoolSnapshot, bool) {
	for _, p := range c.Pools {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return PoolSnapshot{}, false
}

// PoolSnapshot is a copy of an agent pool as the agentPools API answers
// it (also the typed view the emulator checks request bodies with).
type PoolSnapshot struct {
	// Name is the pool name.
	Name string `json:"name"`
	// ProvisioningState is e.g. Succeeded, Creating, Scaling, Deleting.
	ProvisioningState string `json:"provisioningState"`
	// ETag is the pool's eTag.
	ETag string `json:"eTag"`
	// Count is the node count.
	Count int32 `json:"count"`
	// VMSize, OSType, Mode as in AKS.
	VMSize string `json:"vmSize"`
	// OSType is Linux or Windows.
	OSType string `json:"osType"`
	// Mode is System or User.
	Mode string `json:"mode"`
	// OrchestratorVersion as given; CurrentOrchestratorVersion its patch
	// version.
	OrchestratorVersion string `json:"orchestratorVersion"`
	// CurrentOrchestratorVersion is the running patch version.
	CurrentOrchestratorVersion string `json:"currentOrchestratorVersion"`
	// EnableAutoScaling, MinCount and MaxCount are the autoscaler settings.
	EnableAutoScaling bool `json:"enableAutoScaling"`
	// MinCount is the autoscaler's lower bound.
	MinCount int32 `json:"minCount"`
	// MaxCount is the autoscaler's upper bound.
	MaxCount int32 `json:"maxCount"`
	// MaxPods is the pod limit per node.
	MaxPods int32 `json:"maxPods"`
	// OSDiskSizeGB is the OS disk size in GiB.
	OSDiskSizeGB int32 `json:"osDiskSizeGB"`
	// AvailabilityZones of the nodes.
	AvailabilityZones []string `json:"availabilityZones"`
	// NodeLabels of the nodes.
	NodeLabels map[string]string `json:"nodeLabels"`
	// NodeTaints of the nodes.
	NodeTaints []string `json:"nodeTaints"`
	// VnetSubnetID is the nodes' subnet.
	VnetSubnetID string `json:"vnetSubnetID"`
}

// ResourceGroupSnapshot is a copy of a resource group.
type ResourceGroupSnapshot struct {
	// Subscription and Name locate the group.
	Subscription, Name string
	// Location is the normalized region.
	Location string
	// Tags are the group's tags.
	Tags map[string]string
	// ProvisioningState is Succeeded or Deleting.
	ProvisioningState string
}

// ImportCluster creates a cluster that already exists, Succeeded at once,
// as if made outside the code under test (in the portal), with the same
// defaults and validation as a PUT; the resource group is created too when
// missing (in the cluster's location). It returns an *APIError if the
// cluster exists (409 Conflict) or the spec is invalid (the 400 a PUT
// would get).
func (s *Server) ImportCluster(sub, rg string, spec ClusterSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.settle()
	if spec.Name == "" {
		return apiErr(http.StatusBadRequest, "InvalidParameter", "ClusterSpec.Name is required.")
	}
	loc := spec.Location
	if loc == "" {
		loc = s.opts.Location
	}
	loc = normLocation(loc)
	g := s.group(sub, rg)
	if g != nil && g.deleting != nil {
		return errGroupDeleting(g.name)
	}
	if g != nil {
		sub, rg = g.sub, g.name
	}
	if s.clusters[clusterKey(sub, rg, spec.Name)] != nil {
		return apiErr(http.StatusConflict, "Conflict", "Managed cluster '%s' already exists in resource group '%s'.", spec.Name, rg)
	}
	body := spec.body(loc)
	var shape shapeCluster
	if e := checkShape(body, &shape); e != nil {
		return e
	}
	if _, e := s.createCluster(sub, rg, spec.Name, body, now, true); e != nil {
		return e
	}
	if g == nil {
		s.groups[groupKey(sub, rg)] = &group{sub: sub, name: rg, location: loc}
	}
	return nil
}

// body is the PUT body equivalent to the spec.
func (spec ClusterSpec) body(loc string) obj {
	props := obj{}
	for k, v := range spec.Properties {
		props[k] = deepCopy(normalizeJSON(v))
	}
	set := func(m obj, k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set(props, "kubernetesVersion", spec.KubernetesVersion)
	set(props, "dnsPrefix", spec.DNSPrefix)
	np := obj{}
	set(np, "networkPlugin", spec.NetworkPlugin)
	set(np, "networkPolicy", spec.NetworkPolicy)
	set(np, "podCidr", spec.PodCIDR)
	set(np, "serviceCidr", spec.ServiceCIDR)
	set(np, "dnsServiceIP", spec.DNSServiceIP)
	set(np, "outboundType", spec.OutboundType)
	if len(np) > 0 {
		props["networkProfile"] = np
	}
	if len(spec.AuthorizedIPRanges) > 0 || spec.EnablePrivateCluster {
		ap := obj{"enablePrivateCluster": spec.EnablePrivateCluster}
		if len(spec.AuthorizedIPRanges) > 0 {
			ap["authorizedIPRanges"] = anyList(spec.AuthorizedIPRanges)
		}
		props["apiServerAccessProfile"] = ap
	}
	pools := spec.Pools
	if len(pools) == 0 {
		pools = []PoolSpec{{Name: "nodepool1"}}
	}
	var profiles []any
	for _, p := range pools {
		pr := obj{"name": p.Name}
		set(pr, "vmSize", p.VMSize)
		set(pr, "mode", p.Mode)
		set(pr, "osType", p.OSType)
		set(pr, "orchestratorVersion", p.OrchestratorVersion)
		set(pr, "vnetSubnetID", p.VnetSubnetID)
		for k, v := range map[string]int32{"count": p.Count, "maxPods": p.MaxPods, "osDiskSizeGB": p.OSDiskSizeGB} {
			if v != 0 {
				pr[k] = float64(v)
			}
		}
		if p.EnableAutoScaling {
			pr["enableAutoScaling"] = true
			pr["minCount"] = float64(p.MinCount)
			pr["maxCount"] = float64(p.MaxCount)
		}
		if len(p.AvailabilityZones) > 0 {
			pr["availabilityZones"] = anyList(p.AvailabilityZones)
		}
		if len(p.NodeLabels) > 0 {
			pr["nodeLabels"] = tagsObj(p.NodeLabels)
		}
		if len(p.NodeTaints) > 0 {
			pr["nodeTaints"] = anyList(p.NodeTaints)
		}
		profiles = append(profiles, pr)
	}
	props["agentPoolProfiles"] = profiles
	doc := obj{"location": loc, "properties": props}
	switch {
	case strings.EqualFold(spec.Identity, "None"):
	case spec.Identity == "":
		doc["identity"] = obj{"type": "SystemAssigned"}
	default:
		doc["identity"] = obj{"type": spec.Identity}
	}
	if len(spec.Tags) > 0 {
		doc["tags"] = tagsObj(spec.Tags)
	}
	return doc
}

// normalizeJSON turns any Go value into its decoded-JSON form.
func normalizeJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// Cluster returns a snapshot of a managed cluster as a GET would answer it
// now (operations due by Options.Now are completed first); ok is false if
// it does not exist.
func (s *Server) Cluster(sub, rg, name string) (snap ClusterSnapshot, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	c := s.clusters[clusterKey(sub, rg, name)]
	if c == nil {
		return ClusterSnapshot{}, false
	}
	b, err := json.Marshal(s.renderCluster(c))
	if err != nil {
		panic(err)
	}
	var w struct {
		ID, Location, ETag string
		Tags               map[string]string
		Properties         struct {
			ProvisioningState, KubernetesVersion, CurrentKubernetesVersion string
			DNSPrefix, FQDN, NodeResourceGroup                             string
			NetworkProfile                                                 struct {
				NetworkPlugin, NetworkPolicy, PodCidr, ServiceCidr, DNSServiceIP, OutboundType, LoadBalancerSku string
			}
			APIServerAccessProfile struct {
				AuthorizedIPRanges   []string
				EnablePrivateCluster bool
			}
			AgentPoolProfiles []PoolSnapshot
		}
	}
	_ = json.Unmarshal(b, &w) // bodies were checked on the way in; keep what decodes
	p, n := w.Properties, w.Properties.NetworkProfile
	return ClusterSnapshot{
		Subscription: c.sub, ResourceGroup: c.rg, Name: c.name, ID: w.ID, Location: w.Location,
		ProvisioningState: p.ProvisioningState, KubernetesVersion: p.KubernetesVersion,
		CurrentKubernetesVersion: p.CurrentKubernetesVersion, DNSPrefix: p.DNSPrefix, FQDN: p.FQDN,
		NodeResourceGroup: p.NodeResourceGroup, ETag: w.ETag, Tags: w.Tags,
		NetworkPlugin: n.NetworkPlugin, NetworkPolicy: n.NetworkPolicy, PodCIDR: n.PodCidr,
		ServiceCIDR: n.ServiceCidr, DNSServiceIP: n.DNSServiceIP, OutboundType: n.OutboundType,
		LoadBalancerSKU: n.LoadBalancerSku, AuthorizedIPRanges: p.APIServerAccessProfile.AuthorizedIPRanges,
		EnablePrivateCluster: p.APIServerAccessProfile.EnablePrivateCluster,
		Pools:                p.AgentPoolProfiles, JSON: b,
	}, true
}

// ResourceGroup returns a snapshot of a resource group; ok is false if it
// does not exist.
func (s *Server) ResourceGroup(sub, name string) (snap ResourceGroupSnapshot, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	g := s.group(sub, name)
	if g == nil {
		return ResourceGroupSnapshot{}, false
	}
	state := StateSucceeded
	if g.deleting != nil {
		state = StateDeleting
	}
	return ResourceGroupSnapshot{Subscription: g.sub, Name: g.name, Location: g.location, Tags: copyTags(g.tags), ProvisioningState: state}, true
}

// Autoscale plays the cluster autoscaler of an agent pool with
// enableAutoScaling: it sets the pool's count to count clamped to
// [minCount, maxCount] at once, whatever operation runs, without changing
// any provisioningState; the pool and the cluster get new eTags. It
// returns the count set, or an *APIError: 404 if the cluster or pool does
// not exist, 400 OperationNotAllowed if the pool is not autoscaled.
func (s *Server) Autoscale(sub, rg, clusterName, poolName string, count int32) (int32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	c := s.clusters[clusterKey(sub, rg, clusterName)]
	if c == nil {
		return 0, errClusterNotFound(rg, clusterName)
	}
	p := c.pool(poolName)
	if p == nil {
		return 0, errPoolNotFound(c, poolName)
	}
	if !boolOf(p.props, "enableAutoScaling") {
		return 0, errNotAllowed("Agent pool '%s' does not have the cluster autoscaler enabled.", p.name)
	}
	n := clampCount(p.props, int64(count))
	p.props["count"] = n
	p.etag, c.etag = newETag(), newETag()
	return int32(n), nil
}

// kver is a parsed Kubernetes version "major.minor[.patch]".
type kver struct {
	major, minor, patch int
	hasPatch            bool
}

func parseVersion(v string) (kver, bool) {
	parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
	if len(parts) < 2 || len(parts) > 3 {
		return kver{}, false
	}
	var n [3]int
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 {
			return kver{}, false
		}
		n[i] = x
	}
	return kver{major: n[0], minor: n[1], patch: n[2], hasPatch: len(parts) == 3}, true
}

// less orders versions by major and minor, and by patch when both have
// one.
func (a kver) less(b kver) bool {
	if a.major != b.major {
		return a.major < b.major
	}
	if a.minor != b.minor {
		return a.minor < b.minor
	}
	return a.hasPatch && b.hasPatch && a.patch < b.patch
}

// currentVersion is the patch version running for a requested version.
func currentVersion(v string) string {
	k, ok := parseVersion(v)
	if !ok || k.hasPatch {
		return v
	}
	return strconv.Itoa(k.major) + "." + strconv.Itoa(k.minor) + "." + strconv.Itoa(LatestPatch)
}
