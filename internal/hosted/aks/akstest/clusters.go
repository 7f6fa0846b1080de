package akstest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// tenantID is the Azure AD tenant reported in system-assigned identities.
const tenantID = "00000000-0000-0000-0000-0000000000aa"

// nodeImageVersion is the node image every agent pool reports.
const nodeImageVersion = "AKSUbuntu-2204gen2containerd-202501.12.0"

// cluster is a managed cluster. doc is its applied resource JSON without
// what is computed when it is rendered (id, name, type, eTag,
// provisioningState, powerState, agentPoolProfiles).
type cluster struct {
	sub, rg, name string
	doc           obj
	pools         []*pool
	state         string
	etag          string
	// op is the running operation that owns state, nil if none.
	op *operation
}

// pool is an agent pool: one state, rendered both in the cluster's
// agentPoolProfiles and under agentPools/. props is its applied properties
// JSON without name, provisioningState, eTag and powerState.
type pool struct {
	name  string
	props obj
	state string
	etag  string
	op    *operation
}

func clusterKey(sub, rg, name string) string { return strings.ToLower(sub + "/" + rg + "/" + name) }

func (c *cluster) key() string { return clusterKey(c.sub, c.rg, c.name) }

func (c *cluster) id() string {
	return "/subscriptions/" + c.sub + "/resourcegroups/" + c.rg + "/providers/Microsoft.ContainerService/managedClusters/" + c.name
}

func (c *cluster) location() string { return str(c.doc, "location") }

func (c *cluster) pool(name string) *pool {
	for _, p := range c.pools {
		if strings.EqualFold(p.name, name) {
			return p
		}
	}
	return nil
}

func newETag() string { return newUUID() }

// final reports whether a provisioningState lets a new operation start.
func final(state string) bool {
	return state == StateSucceeded || state == StateFailed || state == StateCanceled
}

// busy is the 409 AKS answers while the cluster or one of its pools has an
// operation in progress.
func (c *cluster) busy() *APIError {
	if !final(c.state) {
		return apiErr(http.StatusConflict, "OperationNotAllowed",
			"Operation is not allowed: Another operation (%s) is in progress, please wait for it to finish before starting a new operation. See https://aka.ms/aks-pending-operation for more details", c.state)
	}
	for _, p := range c.pools {
		if !final(p.state) {
			return apiErr(http.StatusConflict, "OperationNotAllowed",
				"Operation is not allowed: Another agentpool operation (%s - %s) is in progress, please wait for it to finish before starting a new operation.", p.name, p.state)
		}
	}
	return nil
}

// supersede hands the cluster and its pools to op (a resource-group
// deletion), canceling what they were doing.
func (c *cluster) supersede(op *operation, state string) {
	msg := "The operation was canceled because resource group '" + c.rg + "' is being deleted."
	c.op.cancel(op.start, msg)
	c.op, c.state = op, state
	for _, p := range c.pools {
		p.op.cancel(op.start, msg)
		p.op, p.state = op, state
	}
}

func errClusterNotFound(rg, name string) *APIError {
	return apiErr(http.StatusNotFound, "ResourceNotFound",
		"The Resource 'Microsoft.ContainerService/managedClusters/%s' under resource group '%s' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix", name, rg)
}

func errPoolNotFound(c *cluster, name string) *APIError {
	return apiErr(http.StatusNotFound, "NotFound", "Agent pool '%s' of managed cluster '%s' in resource group '%s' was not found.", name, c.name, c.rg)
}

func errInvalid(format string, a ...any) *APIError {
	return apiErr(http.StatusBadRequest, "InvalidParameter", format, a...)
}

func errNotAllowed(format string, a ...any) *APIError {
	return apiErr(http.StatusBadRequest, "OperationNotAllowed", format, a...)
}

func errChange(property string) *APIError {
	return apiErr(http.StatusBadRequest, "PropertyChangeNotAllowed", "Changing property '%s' is not allowed.", property)
}

// findCluster resolves r's resource group and cluster (404s otherwise).
func (s *Server) findCluster(r *req) (*cluster, *APIError) {
	if s.group(r.sub, r.rg) == nil {
		return nil, errGroupNotFound(r.rg)
	}
	c := s.clusters[clusterKey(r.sub, r.rg, r.name)]
	if c == nil {
		return nil, errClusterNotFound(r.rg, r.name)
	}
	return c, nil
}

func (s *Server) listClusters(sub, rg string) (*reply, *APIError) {
	var cs []*cluster
	for _, c := range s.clusters {
		if strings.EqualFold(c.sub, sub) && (rg == "" || strings.EqualFold(c.rg, rg)) {
			cs = append(cs, c)
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].key() < cs[j].key() })
	list := []any{}
	for _, c := range cs {
		list = append(list, s.renderCluster(c))
	}
	return &reply{status: http.StatusOK, body: obj{"value": list}}, nil
}

func (s *Server) renderCluster(c *cluster) obj {
	return s.renderClusterWith(c, c.doc, c.pools, c.state, c.etag)
}

// renderClusterWith renders a cluster as ARM answers it (the SDK's
// ManagedCluster), from the given document, pools, state and eTag.
func (s *Server) renderClusterWith(c *cluster, doc obj, pools []*pool, state, etag string) obj {
	out := copyObj(doc)
	out["id"] = c.id()
	out["name"] = c.name
	out["type"] = "Microsoft.ContainerService/ManagedClusters"
	out["eTag"] = etag
	props := ensure(out, "properties")
	props["provisioningState"] = state
	props["powerState"] = obj{"code": "Running"}
	if sp := child(props, "servicePrincipalProfile"); sp != nil {
		delete(sp, "secret")
	}
	profiles := []any{}
	for _, p := range pools {
		pr := renderProfile(p)
		pr["name"] = p.name
		profiles = append(profiles, pr)
	}
	props["agentPoolProfiles"] = profiles
	return out
}

func renderProfile(p *pool) obj {
	out := copyObj(p.props)
	out["provisioningState"] = p.state
	out["eTag"] = p.etag
	out["powerState"] = obj{"code": "Running"}
	return out
}

// renderPool renders an agent pool as the agentPools API answers it (the
// SDK's AgentPool).
func (s *Server) renderPool(c *cluster, p *pool) obj {
	return obj{
		"id":         c.id() + "/agentPools/" + p.name,
		"name":       p.name,
		"type":       "Microsoft.ContainerService/managedClusters/agentPools",
		"properties": renderProfile(p),
	}
}

// The read-only members a PUT may carry (after a GET) but that the server
// computes; they are ignored. Top level, cluster properties, pool.
func readOnlyTop() []string { return []string{"id", "name", "type", "eTag", "systemData"} }

func readOnlyCluster() []string {
	return []string{"provisioningState", "powerState", "currentKubernetesVersion", "fqdn", "azurePortalFQDN", "privateFQDN", "maxAgentPools", "resourceUID"}
}

func readOnlyPool() []string {
	return []string{"provisioningState", "powerState", "currentOrchestratorVersion", "eTag", "nodeImageVersion", "name"}
}

func strip(m obj, keys []string) {
	for _, k := range keys {
		delete(m, k)
	}
}

// agentPoolProfiles takes properties.agentPoolProfiles out of props: each
// must be an object with a name.
func agentPoolProfiles(props obj) ([]obj, *APIError) {
	if props == nil {
		return nil, nil
	}
	raw, present := props["agentPoolProfiles"]
	delete(props, "agentPoolProfiles")
	if !present || raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, apiErr(http.StatusBadRequest, "InvalidRequestContent", "The request content was invalid: properties.agentPoolProfiles must be an array.")
	}
	var out []obj
	seen := map[string]bool{}
	for i, e := range list {
		pr, ok := e.(obj)
		if !ok {
			return nil, apiErr(http.StatusBadRequest, "InvalidRequestContent", "The request content was invalid: properties.agentPoolProfiles[%d] must be an object.", i)
		}
		name := str(pr, "name")
		if name == "" {
			return nil, errInvalid("Required parameter 'properties.agentPoolProfiles[%d].name' is missing (null).", i)
		}
		if seen[strings.ToLower(name)] {
			return nil, errInvalid("The value of parameter properties.agentPoolProfiles is invalid: agent pool name '%s' appears more than once.", name)
		}
		seen[strings.ToLower(name)] = true
		strip(pr, readOnlyPool())
		pr["name"] = name
		out = append(out, pr)
	}
	return out, nil
}

// checkShape decodes a body into typed views of the members the emulator
// reads, so that wrong JSON types are refused as ARM refuses them.
func checkShape(v any, into any) *APIError {
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, into)
	}
	if err != nil {
		return apiErr(http.StatusBadRequest, "InvalidRequestContent", "The request content was invalid and could not be deserialized: %v.", err)
	}
	return nil
}

// shapeCluster is what checkShape decodes a cluster body into.
type shapeCluster struct {
	Location   string
	Tags       map[string]string
	Properties struct {
		KubernetesVersion, DNSPrefix, NodeResourceGroup string
		EnableRBAC, DisableLocalAccounts                bool
		NetworkProfile                                  struct{ NetworkPlugin, PodCidr, ServiceCidr, DNSServiceIP string }
		APIServerAccessProfile                          struct{ EnablePrivateCluster bool }
		AgentPoolProfiles                               []PoolSnapshot
	}
}

// applyPolicy adds the policy tags a cluster document lacks.
func (s *Server) applyPolicy(doc obj) {
	if len(s.policy) == 0 {
		return
	}
	tags := ensure(doc, "tags")
	for k, v := range s.policy {
		found := false
		for have := range tags {
			if strings.EqualFold(have, k) {
				found = true
				break
			}
		}
		if !found {
			tags[k] = v
		}
	}
}

func defaultDNSPrefix(name, rg, sub string) string {
	clean := func(s string, n int) string {
		var b strings.Builder
		for _, r := range s {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
				b.WriteRune(r)
			}
		}
		out := b.String()
		if len(out) > n {
			out = out[:n]
		}
		return out
	}
	return clean(name, 10) + "-" + clean(rg, 16) + "-" + clean(sub, 6)
}

func hashUUID(parts ...string) string {
	h := hashOf(32, parts...)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// fillClusterDefaults sets what AKS computes or defaults in a cluster
// document (not its pools).
func fillClusterDefaults(doc obj, sub, rg, name string) {
	loc := str(doc, "location")
	props := ensure(doc, "properties")
	setDefault(props, "kubernetesVersion", DefaultKubernetesVersion)
	setDefault(props, "dnsPrefix", defaultDNSPrefix(name, rg, sub))
	setDefault(props, "nodeResourceGroup", fmt.Sprintf("MC_%s_%s_%s", rg, name, loc))
	setDefault(props, "enableRBAC", true)
	setDefault(props, "supportPlan", "KubernetesOfficial")
	props["maxAgentPools"] = float64(100)
	props["currentKubernetesVersion"] = currentVersion(str(props, "kubernetesVersion"))
	dns, h := str(props, "dnsPrefix"), hashOf(8, sub, rg, name)
	props["fqdn"] = fmt.Sprintf("%s-%s.hcp.%s.azmk8s.io", dns, h, loc)
	props["azurePortalFQDN"] = fmt.Sprintf("%s-%s.portal.hcp.%s.azmk8s.io", dns, h, loc)
	if boolOf(child(props, "apiServerAccessProfile"), "enablePrivateCluster") {
		props["privateFQDN"] = fmt.Sprintf("%s-%s.%s.privatelink.%s.azmk8s.io", dns, h, hashOf(32, sub, rg, name, "private"), loc)
	} else {
		delete(props, "privateFQDN")
	}
	np := ensure(props, "networkProfile")
	setDefault(np, "networkPlugin", "kubenet")
	if strings.EqualFold(str(np, "networkPlugin"), "kubenet") {
		setDefault(np, "podCidr", "10.244.0.0/16")
	}
	setDefault(np, "serviceCidr", "10.0.0.0/16")
	setDefault(np, "dnsServiceIP", "10.0.0.10")
	setDefault(np, "outboundType", "loadBalancer")
	setDefault(np, "loadBalancerSku", "standard")
	setDefault(doc, "sku", obj{"name": "Base", "tier": "Free"})
	if id := child(doc, "identity"); id != nil {
		if strings.EqualFold(str(id, "type"), "SystemAssigned") {
			setDefault(id, "principalId", hashUUID(sub, rg, name, "identity"))
			setDefault(id, "tenantId", tenantID)
		}
		if !strings.EqualFold(str(id, "type"), "None") {
			setDefault(props, "servicePrincipalProfile", obj{"clientId": "msi"})
		}
	}
}

// fillPoolDefaults sets what AKS defaults or computes in an agent pool.
func fillPoolDefaults(p obj, mode, version string) {
	setDefault(p, "mode", mode)
	setDefault(p, "vmSize", DefaultVMSize)
	setDefault(p, "osType", "Linux")
	setDefault(p, "osSKU", "Ubuntu")
	setDefault(p, "osDiskSizeGB", float64(128))
	setDefault(p, "osDiskType", "Managed")
	setDefault(p, "kubeletDiskType", "OS")
	setDefault(p, "maxPods", float64(110))
	setDefault(p, "type", "VirtualMachineScaleSets")
	setDefault(p, "enableAutoScaling", false)
	setDefault(p, "enableNodePublicIP", false)
	setDefault(p, "enableFIPS", false)
	setDefault(p, "orchestratorVersion", version)
	setDefault(p, "upgradeSettings", obj{"maxSurge": "10%"})
	if boolOf(p, "enableAutoScaling") {
		if mn, ok := num(p, "minCount"); ok {
			setDefault(p, "count", float64(mn))
		}
	}
	setDefault(p, "count", float64(1))
	p["nodeImageVersion"] = nodeImageVersion
	p["currentOrchestratorVersion"] = currentVersion(str(p, "orchestratorVersion"))
}

// validatePool checks an agent pool's own properties (after defaults).
func validatePool(name string, p obj, creating bool) *APIError {
	if !validPoolName(name) {
		return errInvalid("The value of parameter agentPoolProfile.name '%s' is invalid: agent pool names must start with a lowercase letter, have at most 12 characters and only contain a-z and 0-9.", name)
	}
	mode := str(p, "mode")
	if !strings.EqualFold(mode, "System") && !strings.EqualFold(mode, "User") {
		return errInvalid("The value of parameter agentPoolProfile.mode '%s' of agent pool '%s' is invalid: it must be System or User.", mode, name)
	}
	if v := str(p, "orchestratorVersion"); v != "" {
		if _, ok := parseVersion(v); !ok {
			return errInvalid("The value of parameter agentPoolProfile.orchestratorVersion '%s' of agent pool '%s' is invalid.", v, name)
		}
	}
	count, _ := num(p, "count")
	if count < 0 {
		return errInvalid("The value of parameter agentPoolProfile.count of agent pool '%s' is invalid: it must not be negative.", name)
	}
	if !boolOf(p, "enableAutoScaling") {
		if count < 1 && strings.EqualFold(mode, "System") {
			return errInvalid("The value of parameter agentPoolProfile.count of agent pool '%s' is invalid: a System pool needs at least 1 node.", name)
		}
		return nil
	}
	mn, okMin := num(p, "minCount")
	mx, okMax := num(p, "maxCount")
	if !okMin || !okMax {
		return errInvalid("The value of parameter agentPoolProfile.minCount and agentPoolProfile.maxCount of agent pool '%s' are required when enableAutoScaling is true.", name)
	}
	if mn < 0 || mn > mx {
		return errInvalid("The value of parameter agentPoolProfile.minCount (%d) of agent pool '%s' is invalid: it must be between 0 and maxCount (%d).", mn, name, mx)
	}
	if creating && (count < mn || count > mx) {
		return errInvalid("The value of parameter agentPoolProfile.count (%d) of agent pool '%s' is invalid: it must be between minCount (%d) and maxCount (%d).", count, name, mn, mx)
	}
	return nil
}

func validPoolName(n string) bool {
	if len(n) == 0 || len(n) > 12 || n[0] < 'a' || n[0] > 'z' {
		return false
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// validatePoolChange checks the change of an existing agent pool: the
// properties AKS cannot change in place, and version moves.
func validatePoolChange(name string, old, cur obj) *APIError {
	for _, k := range []string{"vmSize", "osType", "osDiskType", "vnetSubnetID"} {
		if !strings.EqualFold(str(old, k), str(cur, k)) {
			return apiErr(http.StatusBadRequest, "PropertyChangeNotAllowed", "Changing property 'agentPoolProfile.%s' of agent pool '%s' is not allowed.", k, name)
		}
	}
	for _, k := range []string{"osDiskSizeGB", "maxPods"} {
		a, _ := num(old, k)
		b, _ := num(cur, k)
		if a != b {
			return apiErr(http.StatusBadRequest, "PropertyChangeNotAllowed", "Changing property 'agentPoolProfile.%s' of agent pool '%s' is not allowed.", k, name)
		}
	}
	if !sameSet(strList(old, "availabilityZones"), strList(cur, "availabilityZones")) {
		return apiErr(http.StatusBadRequest, "PropertyChangeNotAllowed", "Changing property 'agentPoolProfile.availabilityZones' of agent pool '%s' is not allowed.", name)
	}
	ov, nv := str(old, "orchestratorVersion"), str(cur, "orchestratorVersion")
	if a, ok := parseVersion(ov); ok {
		if b, ok := parseVersion(nv); ok && b.less(a) {
			return errNotAllowed("Downgrading Kubernetes version %s to %s of agent pool '%s' is not allowed.", ov, nv, name)
		}
	}
	return nil
}

// checkPoolVersion refuses an agent pool newer than the control plane.
func checkPoolVersion(name string, p obj, cp string) *APIError {
	pv := str(p, "orchestratorVersion")
	a, ok1 := parseVersion(pv)
	b, ok2 := parseVersion(cp)
	if ok1 && ok2 && b.less(a) {
		return apiErr(http.StatusBadRequest, "NodePoolMcVersionIncompatible",
			"Node pool version %s of agent pool '%s' and control plane version %s are incompatible: a node pool cannot be newer than the control plane.", pv, name, cp)
	}
	return nil
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x := append([]string(nil), a...)
	y := append([]string(nil), b...)
	sort.Strings(x)
	sort.Strings(y)
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

func hasSystemPool(pools []*pool, except *pool) bool {
	for _, p := range pools {
		if p != except && p.state != StateDeleting && strings.EqualFold(str(p.props, "mode"), "System") {
			return true
		}
	}
	return false
}

// clampCount keeps an autoscaled pool's count within [minCount, maxCount].
func clampCount(p obj, count int64) float64 {
	if mn, ok := num(p, "minCount"); ok && count < mn {
		count = mn
	}
	if mx, ok := num(p, "maxCount"); ok && count > mx {
		count = mx
	}
	return float64(count)
}

// poolState is the provisioningState of a change from old to cur props.
func poolState(old, cur obj) string {
	if !strings.EqualFold(str(old, "orchestratorVersion"), str(cur, "orchestratorVersion")) {
		return StateUpgrading
	}
	o := copyObj(old)
	o["count"] = cur["count"]
	if sameJSON(o, cur) && !sameJSON(old, cur) {
		return StateScaling
	}
	return StateUpdating
}

// putCluster answers managedClusters.createOrUpdate.
func (s *Server) putCluster(r *req, now time.Time) (*reply, *APIError) {
	body, e := decodeBody(r.body)
	if e != nil {
		return nil, e
	}
	var shape shapeCluster
	if e := checkShape(body, &shape); e != nil {
		return nil, e
	}
	g := s.group(r.sub, r.rg)
	if g == nil {
		return nil, errGroupNotFound(r.rg)
	}
	if g.deleting != nil {
		return nil, errGroupDeleting(g.name)
	}
	c := s.clusters[clusterKey(r.sub, r.rg, r.name)]
	etag := ""
	if c != nil {
		etag = c.etag
	}
	if e := checkPreconditions(r.header, c != nil, etag, "managed cluster '"+r.name+"'"); e != nil {
		return nil, e
	}
	strip(body, readOnlyTop())
	strip(child(body, "properties"), readOnlyCluster())
	if c == nil {
		c, e := s.createCluster(g.sub, g.name, r.name, body, now, false)
		if e != nil {
			return nil, e
		}
		return &reply{status: http.StatusCreated, header: s.lroHeaders(r, c.op), body: s.renderCluster(c)}, nil
	}
	if e := c.busy(); e != nil {
		return nil, e
	}
	return s.updateCluster(r, c, body, now)
}

// createCluster validates a new cluster and stores it, Creating until
// CreateDelay has passed (Succeeded at once when instant).
func (s *Server) createCluster(sub, rg, name string, body obj, now time.Time, instant bool) (*cluster, *APIError) {
	doc := copyObj(body)
	loc := normLocation(str(doc, "location"))
	if loc == "" {
		return nil, apiErr(http.StatusBadRequest, "LocationRequired", "The location property is required for this definition.")
	}
	doc["location"] = loc
	props := ensure(doc, "properties")
	profiles, e := agentPoolProfiles(props)
	if e != nil {
		return nil, e
	}
	if len(profiles) == 0 {
		return nil, errInvalid("Required parameter 'properties.agentPoolProfiles' is missing (null): a managed cluster needs at least one agent pool.")
	}
	s.applyPolicy(doc)
	fillClusterDefaults(doc, sub, rg, name)
	version := str(props, "kubernetesVersion")
	if _, ok := parseVersion(version); !ok {
		return nil, errInvalid("The value of parameter properties.kubernetesVersion '%s' is invalid.", version)
	}
	c := &cluster{sub: sub, rg: rg, name: name, doc: doc, state: StateCreating, etag: newETag()}
	for i, pr := range profiles {
		pname := str(pr, "name")
		delete(pr, "name")
		mode := "User"
		if i == 0 {
			mode = "System"
		}
		fillPoolDefaults(pr, mode, version)
		if e := validatePool(pname, pr, true); e != nil {
			return nil, e
		}
		if e := checkPoolVersion(pname, pr, version); e != nil {
			return nil, e
		}
		c.pools = append(c.pools, &pool{name: pname, props: pr, state: StateCreating, etag: newETag()})
	}
	if !hasSystemPool(c.pools, nil) {
		return nil, apiErr(http.StatusBadRequest, "MustDefineAtLeastOneSystemPool", "Must define at least one system pool (agentPoolProfile.mode System).")
	}
	if instant {
		c.state = StateSucceeded
		for _, p := range c.pools {
			p.state = StateSucceeded
		}
	} else {
		op := s.newOperation(sub, loc, c.id(), StateCreating, now, s.opts.CreateDelay, true)
		c.op = op
		for _, p := range c.pools {
			p.op = op
		}
		op.finish = func(ok bool) { c.finish(op, ok, nil, nil) }
	}
	s.clusters[c.key()] = c
	return c, nil
}

// finish ends op on the cluster: when ok, doc (if not nil) and the pools'
// new props (by pool) are applied; the cluster and the pools op owns become
// Succeeded (Failed when !ok) with new eTags.
func (c *cluster) finish(op *operation, ok bool, doc obj, props map[*pool]obj) {
	st := StateSucceeded
	if !ok {
		st = StateFailed
	}
	if c.op == op {
		if ok && doc != nil {
			c.doc = doc
		}
		c.state, c.op = st, nil
	}
	for _, p := range c.pools {
		if p.op != op {
			continue
		}
		if np := props[p]; ok && np != nil {
			p.props = carryAutoscaledCount(p.props, np)
		}
		p.state, p.op, p.etag = st, nil, newETag()
	}
	c.etag = newETag()
}

// carryAutoscaledCount keeps the count an autoscaler set while an update
// ran, when the updated pool is still autoscaled.
func carryAutoscaledCount(live, next obj) obj {
	if boolOf(next, "enableAutoScaling") && boolOf(live, "enableAutoScaling") {
		if n, ok := num(live, "count"); ok {
			next["count"] = clampCount(next, n)
		}
	}
	return next
}

// updateCluster validates and starts an update PUT of an existing cluster:
// the body is merged into the stored document (see mergeInto), pools it
// names are merged by name, new ones added, absent ones kept.
func (s *Server) updateCluster(r *req, c *cluster, body obj, now time.Time) (*reply, *APIError) {
	if l := str(body, "location"); l != "" && normLocation(l) != c.location() {
		return nil, apiErr(http.StatusBadRequest, "InvalidResourceLocation",
			"The resource '%s' already exists in location '%s' in resource group '%s'. A resource with the same name cannot be created in location '%s'. Please select a new resource name.",
			c.name, c.location(), c.rg, normLocation(l))
	}
	body = copyObj(body)
	profiles, e := agentPoolProfiles(child(body, "properties"))
	if e != nil {
		return nil, e
	}
	doc := copyObj(c.doc)
	mergeInto(doc, body)
	doc["location"] = c.location()
	s.applyPolicy(doc)
	fillClusterDefaults(doc, c.sub, c.rg, c.name)
	if e := validateClusterChange(c.doc, doc); e != nil {
		return nil, e
	}
	oldProps, props := child(c.doc, "properties"), child(doc, "properties")
	oldVer, newVer := str(oldProps, "kubernetesVersion"), str(props, "kubernetesVersion")
	if e := checkVersionMove(oldVer, newVer); e != nil {
		return nil, e
	}
	versionChanged := !strings.EqualFold(oldVer, newVer)

	specified := 0
	for _, pr := range profiles {
		if has(pr, "orchestratorVersion") {
			specified++
		}
	}
	if specified > 0 && specified < len(profiles) {
		return nil, errMixedVersions()
	}
	byName := map[string]obj{}
	for _, pr := range profiles {
		byName[strings.ToLower(str(pr, "name"))] = pr
	}

	next := map[*pool]obj{}
	states := map[*pool]string{}
	for _, p := range c.pools {
		pr, inBody := byName[strings.ToLower(p.name)]
		delete(byName, strings.ToLower(p.name))
		np := copyObj(p.props)
		if inBody {
			pr = copyObj(pr)
			delete(pr, "name")
			if specified > 0 {
				v := str(pr, "orchestratorVersion")
				if !strings.EqualFold(v, str(p.props, "orchestratorVersion")) && !strings.EqualFold(v, newVer) {
					return nil, errMixedVersions()
				}
			}
			oldCount, _ := num(p.props, "count")
			mergeInto(np, pr)
			if boolOf(np, "enableAutoScaling") {
				np["count"] = clampCount(np, oldCount)
			}
		}
		if versionChanged && (!inBody || specified == 0) {
			np["orchestratorVersion"] = newVer
		}
		fillPoolDefaults(np, "User", newVer)
		if e := validatePool(p.name, np, false); e != nil {
			return nil, e
		}
		if e := validatePoolChange(p.name, p.props, np); e != nil {
			return nil, e
		}
		if e := checkPoolVersion(p.name, np, newVer); e != nil {
			return nil, e
		}
		if !sameJSON(p.props, np) {
			next[p] = np
			states[p] = poolState(p.props, np)
		}
	}
	var added []*pool
	for _, pr := range profiles {
		pname := str(pr, "name")
		if _, isNew := byName[strings.ToLower(pname)]; !isNew {
			continue
		}
		np := copyObj(pr)
		delete(np, "name")
		fillPoolDefaults(np, "User", newVer)
		if e := validatePool(pname, np, true); e != nil {
			return nil, e
		}
		if e := checkPoolVersion(pname, np, newVer); e != nil {
			return nil, e
		}
		added = append(added, &pool{name: pname, props: np, state: StateCreating, etag: newETag()})
	}
	// The pools as they will be, to check that a System pool remains.
	var after []*pool
	for _, p := range c.pools {
		if np := next[p]; np != nil {
			after = append(after, &pool{name: p.name, props: np, state: StateSucceeded})
		} else {
			after = append(after, p)
		}
	}
	after = append(after, added...)
	if !hasSystemPool(after, nil) {
		return nil, errNotAllowed("Operation is not allowed: the managed cluster must keep at least one agent pool of mode System.")
	}

	state := StateUpdating
	switch {
	case versionChanged:
		state = StateUpgrading
	case len(added) == 0 && len(next) > 0 && sameJSON(c.doc, doc):
		state = StateScaling
		for _, st := range states {
			if st != StateScaling {
				state = StateUpdating
			}
		}
	}
	op := s.newOperation(c.sub, c.location(), c.id(), state, now, s.opts.UpdateDelay, true)
	c.state, c.op, c.etag = state, op, newETag()
	var pending []*pool
	for _, p := range c.pools {
		if np := next[p]; np != nil {
			p.state, p.op, p.etag = states[p], op, newETag()
			pending = append(pending, &pool{name: p.name, props: np, state: p.state, etag: p.etag})
		} else {
			pending = append(pending, p)
		}
	}
	for _, p := range added {
		p.op = op
		c.pools = append(c.pools, p)
		pending = append(pending, p)
	}
	op.finish = func(ok bool) { c.finish(op, ok, doc, next) }
	return &reply{status: http.StatusOK, header: s.lroHeaders(r, op), body: s.renderClusterWith(c, doc, pending, state, c.etag)}, nil
}

func errMixedVersions() *APIError {
	return apiErr(http.StatusBadRequest, "NotAllAgentPoolOrchestratorVersionSpecifiedAndUnchanged",
		"Using the managed cluster API, the orchestratorVersion of the agent pools in properties.agentPoolProfiles must be all specified or all unspecified; if specified, each must be unchanged or equal to the control plane's kubernetesVersion. Change one agent pool with the agent pool API instead.")
}

// validateClusterChange refuses changes AKS cannot make to an existing
// cluster.
func validateClusterChange(old, cur obj) *APIError {
	op, np := child(old, "properties"), child(cur, "properties")
	for _, k := range []string{"dnsPrefix", "nodeResourceGroup"} {
		if str(op, k) != str(np, k) {
			return errChange(k)
		}
	}
	on, nn := child(op, "networkProfile"), child(np, "networkProfile")
	for _, k := range []string{"networkPlugin", "podCidr", "serviceCidr", "dnsServiceIP"} {
		if !strings.EqualFold(str(on, k), str(nn, k)) {
			return errChange("networkProfile." + k)
		}
	}
	if boolOf(child(op, "apiServerAccessProfile"), "enablePrivateCluster") != boolOf(child(np, "apiServerAccessProfile"), "enablePrivateCluster") {
		return errChange("apiServerAccessProfile.enablePrivateCluster")
	}
	return nil
}

// checkVersionMove refuses downgrades and upgrades of more than one minor.
func checkVersionMove(from, to string) *APIError {
	a, ok := parseVersion(from)
	b, ok2 := parseVersion(to)
	if !ok2 {
		return errInvalid("The value of parameter properties.kubernetesVersion '%s' is invalid.", to)
	}
	if !ok {
		return nil
	}
	if b.less(a) {
		return errNotAllowed("Downgrading Kubernetes version %s to %s is not allowed.", from, to)
	}
	if b.major != a.major || b.minor > a.minor+1 {
		return errNotAllowed("Upgrading Kubernetes version %s to %s is not allowed: the control plane can only move to the next minor version (%d.%d).", from, to, a.major, a.minor+1)
	}
	return nil
}

// patchCluster answers managedClusters.updateTags: the body's tags replace
// the cluster's (after the policy tags), applied when the operation ends.
func (s *Server) patchCluster(r *req, now time.Time) (*reply, *APIError) {
	body, e := decodeBody(r.body)
	if e != nil {
		return nil, e
	}
	var shape struct{ Tags map[string]string }
	if e := checkShape(body, &shape); e != nil {
		return nil, e
	}
	c, e := s.findCluster(r)
	if e != nil {
		return nil, e
	}
	if e := checkPreconditions(r.header, true, c.etag, "managed cluster '"+c.name+"'"); e != nil {
		return nil, e
	}
	if e := c.busy(); e != nil {
		return nil, e
	}
	doc := copyObj(c.doc)
	if has(body, "tags") {
		doc["tags"] = tagsObj(shape.Tags)
	}
	s.applyPolicy(doc)
	op := s.newOperation(c.sub, c.location(), c.id(), StateUpdating, now, s.opts.UpdateDelay, true)
	c.state, c.op, c.etag = StateUpdating, op, newETag()
	op.finish = func(ok bool) { c.finish(op, ok, doc, nil) }
	return &reply{status: http.StatusOK, header: s.lroHeaders(r, op), body: s.renderClusterWith(c, doc, c.pools, StateUpdating, c.etag)}, nil
}

// deleteCluster answers managedClusters.delete: 202 and Deleting until
// DeleteDelay has passed, 204 if the cluster does not exist; repeating the
// delete of a Deleting cluster answers 202 with the same operation.
func (s *Server) deleteCluster(r *req, now time.Time) (*reply, *APIError) {
	if s.group(r.sub, r.rg) == nil {
		return nil, errGroupNotFound(r.rg)
	}
	c := s.clusters[clusterKey(r.sub, r.rg, r.name)]
	if c == nil {
		if e := checkPreconditions(r.header, false, "", "managed cluster '"+r.name+"'"); e != nil {
			return nil, e
		}
		return &reply{status: http.StatusNoContent}, nil
	}
	if e := checkPreconditions(r.header, true, c.etag, "managed cluster '"+c.name+"'"); e != nil {
		return nil, e
	}
	if c.state == StateDeleting && c.op != nil {
		return &reply{status: http.StatusAccepted, header: s.lroHeaders(r, c.op)}, nil
	}
	if e := c.busy(); e != nil {
		return nil, e
	}
	op := s.newOperation(c.sub, c.location(), c.id(), StateDeleting, now, s.opts.DeleteDelay, true)
	c.state, c.op, c.etag = StateDeleting, op, newETag()
	for _, p := range c.pools {
		p.state, p.op = StateDeleting, op
	}
	op.finish = func(ok bool) {
		if ok && c.op == op {
			if s.clusters[c.key()] == c {
				delete(s.clusters, c.key())
			}
			return
		}
		c.finish(op, false, nil, nil)
	}
	return &reply{status: http.StatusAccepted, header: s.lroHeaders(r, op)}, nil
}

// endpoint is the API server URL of a cluster's kubeconfig.
func (s *Server) endpoint(c *cluster) string {
	if s.opts.EndpointFor != nil {
		return s.opts.EndpointFor(c.name)
	}
	return "https://" + str(child(c.doc, "properties"), "fqdn") + ":443"
}

// credentials answers listClusterAdminCredential (role "clusterAdmin") and
// listClusterUserCredential ("clusterUser"): one kubeconfig whose user
// authenticates with the token "<role>-<cluster name>".
func (s *Server) credentials(r *req, role string) (*reply, *APIError) {
	c, e := s.findCluster(r)
	if e != nil {
		return nil, e
	}
	if role == "clusterAdmin" && boolOf(child(c.doc, "properties"), "disableLocalAccounts") {
		return nil, apiErr(http.StatusBadRequest, "BadRequest", "Getting static credential is not allowed because this cluster is set to disable local accounts.")
	}
	ca := s.caPEM
	if s.opts.CertificateAuthorityFor != nil {
		ca = s.opts.CertificateAuthorityFor(c.name)
	}
	token := role + "-" + c.name
	if s.opts.TokenFor != nil {
		token = s.opts.TokenFor(c.name, role)
	}
	kc := kubeconfig(c, role, s.endpoint(c), token, ca)
	return &reply{status: http.StatusOK, body: obj{"kubeconfigs": []any{obj{"name": role, "value": base64.StdEncoding.EncodeToString(kc)}}}}, nil
}

// kubeconfig writes a kubeconfig in the shape AKS gives: cluster and
// context named after the cluster ("-admin" suffix for the admin role),
// user "<role>_<rg>_<name>".
func kubeconfig(c *cluster, role, server, token string, ca []byte) []byte {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	ctx := c.name
	if role == "clusterAdmin" {
		ctx += "-admin"
	}
	user := role + "_" + c.rg + "_" + c.name
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Config\nclusters:\n- name: %s\n  cluster:\n    certificate-authority-data: %s\n    server: %s\n",
		q(c.name), base64.StdEncoding.EncodeToString(ca), q(server))
	fmt.Fprintf(&b, "contexts:\n- name: %s\n  context:\n    cluster: %s\n    user: %s\ncurrent-context: %s\n", q(ctx), q(c.name), q(user), q(ctx))
	fmt.Fprintf(&b, "preferences: {}\nusers:\n- name: %s\n  user:\n    token: %s\n", q(user), q(token))
	return []byte(b.String())
}
