package ekstest

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

func (s *Server) getCluster(name string) (*cluster, *APIError) {
	c := s.state[name]
	if c == nil {
		e := errNotFound("No cluster found for name: %s.", name)
		e.ClusterName = name
		return nil, e
	}
	return c, nil
}

func (s *Server) getNodegroup(cname, ngname string) (*cluster, *nodegroup, *APIError) {
	c, err := s.getCluster(cname)
	if err != nil {
		return nil, nil, err
	}
	ng := c.nodegroups[ngname]
	if ng == nil {
		e := errNotFound("No node group found for name: %s.", ngname)
		e.ClusterName, e.NodegroupName = cname, ngname
		return nil, nil, e
	}
	return c, ng, nil
}

func (s *Server) getAddon(cname, aname string) (*cluster, *addon, *APIError) {
	c, err := s.getCluster(cname)
	if err != nil {
		return nil, nil, err
	}
	a := c.addons[aname]
	if a == nil {
		e := errNotFound("No addon: %s found in cluster: %s", aname, cname)
		e.ClusterName, e.AddonName = cname, aname
		return nil, nil, e
	}
	return c, a, nil
}

func (s *Server) createCluster(req createClusterRequest, now time.Time) (*cluster, *APIError) {
	if req.Name == "" || len(req.Name) > 100 || !nameRE.MatchString(req.Name) {
		return nil, errInvalid("The cluster name %q is invalid.", req.Name)
	}
	if existing := s.state[req.Name]; existing != nil {
		if req.ClientRequestToken != "" && existing.token == req.ClientRequestToken {
			return existing, nil // idempotent retry
		}
		e := errInUse("Cluster already exists with name: %s", req.Name)
		e.ClusterName = req.Name
		return nil, e
	}
	if req.RoleArn == "" {
		return nil, errInvalid("roleArn is required")
	}
	if req.ResourcesVpcConfig == nil || len(req.ResourcesVpcConfig.SubnetIDs) < 2 {
		return nil, errInvalid("Subnets specified must be in at least two different AZs")
	}
	version := req.Version
	if version == "" {
		version = DefaultVersion
	}
	if _, ok := minor(version); !ok {
		return nil, errInvalid("unsupported Kubernetes version %s", version)
	}
	if err := validateTags(req.Tags); err != nil {
		return nil, err
	}
	c := &cluster{
		name: req.Name, arn: s.clusterARN(req.Name), version: version, roleArn: req.RoleArn,
		platformVersion: "eks.1", status: StatusCreating, token: req.ClientRequestToken,
		createdAt: now, readyAt: now.Add(s.opts.CreateDelay),
		subnets: req.ResourcesVpcConfig.SubnetIDs, securityGroups: req.ResourcesVpcConfig.SecurityGroupIDs,
		public: true, publicCidrs: []string{"0.0.0.0/0"},
		logging: map[string]bool{}, tags: copyMap(req.Tags), encryption: req.EncryptionConfig,
		ipFamily: "ipv4", serviceCidr: "10.100.0.0/16",
		accessConfig: map[string]any{"authenticationMode": "API_AND_CONFIG_MAP", "bootstrapClusterCreatorAdminPermissions": true},
		nodegroups:   map[string]*nodegroup{}, addons: map[string]*addon{},
	}
	if req.AccessConfig != nil {
		if m, ok := req.AccessConfig["authenticationMode"]; ok {
			c.accessConfig["authenticationMode"] = m
		}
	}
	c.vpcID = "vpc-" + shortHash(strings.Join(c.subnets, ","))
	if len(c.subnets) > 0 {
		if vpc := s.vpcOfSubnet(c.subnets[0]); vpc != "" {
			c.vpcID = vpc // subnets a CloudFormation stack created
		}
	}
	c.clusterSG = "sg-" + shortHash(c.arn, "cluster")
	v := req.ResourcesVpcConfig
	if v.EndpointPublicAccess != nil {
		c.public = *v.EndpointPublicAccess
	}
	if v.EndpointPrivateAccess != nil {
		c.private = *v.EndpointPrivateAccess
	}
	if len(v.PublicAccessCidrs) > 0 {
		c.publicCidrs = v.PublicAccessCidrs
	}
	if !c.public && !c.private {
		return nil, errInvalid("Both public and private endpoint access cannot be disabled")
	}
	if n := req.KubernetesNetworkConfig; n != nil {
		if n.IPFamily != "" {
			if n.IPFamily != "ipv4" && n.IPFamily != "ipv6" {
				return nil, errInvalid("ipFamily must be ipv4 or ipv6")
			}
			c.ipFamily = n.IPFamily
		}
		if n.ServiceIpv4Cidr != "" {
			c.serviceCidr = n.ServiceIpv4Cidr
		}
	}
	if req.Logging != nil {
		l, err := applyLogging(c.logging, req.Logging)
		if err != nil {
			return nil, err
		}
		c.logging = l
	}
	s.state[c.name] = c
	return c, nil
}

// applyLogging returns a copy of cur with the log setups applied.
func applyLogging(cur map[string]bool, l *wireLogging) (map[string]bool, *APIError) {
	out := map[string]bool{}
	for k, v := range cur {
		out[k] = v
	}
	for _, setup := range l.ClusterLogging {
		for _, t := range setup.Types {
			valid := false
			for _, lt := range logTypes {
				valid = valid || lt == t
			}
			if !valid {
				return nil, errInvalid("Invalid log type %s. Valid types are %s", t, strings.Join(logTypes, ", "))
			}
			out[t] = setup.Enabled != nil && *setup.Enabled
		}
	}
	return out, nil
}

func (s *Server) deleteCluster(name string, now time.Time) (*cluster, *APIError) {
	c, err := s.getCluster(name)
	if err != nil {
		return nil, err
	}
	if c.status == StatusDeleting {
		return c, nil
	}
	if len(c.nodegroups) > 0 {
		e := errInUse("Cluster has nodegroups attached")
		e.ClusterName = name
		return nil, e
	}
	if c.status == StatusCreating || c.inProgress("", "") != nil {
		e := errInUse("Cannot delete because cluster %s currently has an update in progress", name)
		e.ClusterName = name
		return nil, e
	}
	c.status = StatusDeleting
	c.deleteAt = now.Add(s.opts.DeleteDelay)
	return c, nil
}

// startClusterUpdate checks that a cluster-level update may start.
func (s *Server) startClusterUpdate(c *cluster) *APIError {
	switch {
	case c.inProgress("", "") != nil:
		e := errInUse("Update already in progress")
		e.ClusterName = c.name
		return e
	case c.status != StatusActive:
		e := errInUse("Cluster %s is currently in %s state and cannot be updated", c.name, c.status)
		e.ClusterName = c.name
		return e
	}
	return nil
}

func (s *Server) updateClusterConfig(name string, req updateClusterConfigRequest, now time.Time) (*update, *APIError) {
	c, err := s.getCluster(name)
	if err != nil {
		return nil, err
	}
	if u := c.findUpdateByToken(req.ClientRequestToken, ""); u != nil {
		return u, nil
	}
	v := req.ResourcesVpcConfig
	hasVpc := v != nil && (v.EndpointPublicAccess != nil || v.EndpointPrivateAccess != nil || v.PublicAccessCidrs != nil || v.SubnetIDs != nil || v.SecurityGroupIDs != nil)
	hasLog := req.Logging != nil
	switch {
	case hasVpc && hasLog:
		return nil, errInvalid("Only one type of update can be allowed.")
	case !hasVpc && !hasLog:
		return nil, errInvalid("No changes were specified.")
	}
	if err := s.startClusterUpdate(c); err != nil {
		return nil, err
	}
	if hasLog {
		next, err := applyLogging(c.logging, req.Logging)
		if err != nil {
			return nil, err
		}
		if mustJSON(next) == mustJSON(c.logging) {
			return nil, errInvalid("No changes needed for the logging config provided")
		}
		u := s.newUpdate(c, now, "LoggingUpdate", "", req.ClientRequestToken,
			[]wireUpdateParam{{Type: "ClusterLogging", Value: mustJSON(wireLoggingOf(next))}},
			func(time.Time) { c.logging = next })
		c.status = StatusUpdating
		return u, nil
	}
	if v.SubnetIDs != nil || v.SecurityGroupIDs != nil {
		var params []wireUpdateParam
		subnets, sgs := c.subnets, c.securityGroups
		if v.SubnetIDs != nil {
			subnets = v.SubnetIDs
			params = append(params, wireUpdateParam{Type: "Subnets", Value: mustJSON(subnets)})
		}
		if v.SecurityGroupIDs != nil {
			sgs = v.SecurityGroupIDs
			params = append(params, wireUpdateParam{Type: "SecurityGroups", Value: mustJSON(sgs)})
		}
		if v.EndpointPublicAccess != nil || v.EndpointPrivateAccess != nil || v.PublicAccessCidrs != nil {
			return nil, errInvalid("Only one type of update can be allowed.")
		}
		u := s.newUpdate(c, now, "VpcConfigUpdate", "", req.ClientRequestToken, params,
			func(time.Time) { c.subnets, c.securityGroups = subnets, sgs })
		c.status = StatusUpdating
		return u, nil
	}
	return s.endpointUpdate(c, v.EndpointPublicAccess, v.EndpointPrivateAccess, v.PublicAccessCidrs, req.ClientRequestToken, now)
}

func (s *Server) endpointUpdate(c *cluster, pub, priv *bool, cidrs []string, token string, now time.Time) (*update, *APIError) {
	np, nv, nc := c.public, c.private, c.publicCidrs
	if pub != nil {
		np = *pub
	}
	if priv != nil {
		nv = *priv
	}
	if cidrs != nil {
		nc = cidrs
	}
	if !np && !nv {
		return nil, errInvalid("Both public and private endpoint access cannot be disabled")
	}
	if np == c.public && nv == c.private && mustJSON(nc) == mustJSON(c.publicCidrs) {
		return nil, errInvalid("Cluster is already at the desired configuration with endpointPrivateAccess: %t , endpointPublicAccess: %t, and Public Endpoint Restrictions: %s",
			c.private, c.public, strings.Join(c.publicCidrs, ","))
	}
	params := []wireUpdateParam{
		{Type: "EndpointPublicAccess", Value: strconv.FormatBool(np)},
		{Type: "EndpointPrivateAccess", Value: strconv.FormatBool(nv)},
	}
	if cidrs != nil {
		params = append(params, wireUpdateParam{Type: "PublicAccessCidrs", Value: mustJSON(nc)})
	}
	u := s.newUpdate(c, now, "EndpointAccessUpdate", "", token, params,
		func(time.Time) { c.public, c.private, c.publicCidrs = np, nv, nc })
	c.status = StatusUpdating
	return u, nil
}

func (s *Server) updateClusterVersion(name, version, token string, now time.Time) (*update, *APIError) {
	c, err := s.getCluster(name)
	if err != nil {
		return nil, err
	}
	if u := c.findUpdateByToken(token, ""); u != nil {
		return u, nil
	}
	if err := s.startClusterUpdate(c); err != nil {
		return nil, err
	}
	cur, _ := minor(c.version)
	next, ok := minor(version)
	if !ok || next != cur+1 {
		e := errInvalid("Unsupported Kubernetes minor version update from %s to %s", c.version, version)
		e.ClusterName = name
		return nil, e
	}
	u := s.newUpdate(c, now, "VersionUpdate", "", token,
		[]wireUpdateParam{{Type: "Version", Value: version}, {Type: "PlatformVersion", Value: "eks.1"}},
		func(time.Time) { c.version, c.platformVersion = version, "eks.1" })
	c.status = StatusUpdating
	return u, nil
}

func releaseFor(version string) string { return version + ".0-20250101" }

func (s *Server) createNodegroup(cname string, req createNodegroupRequest, now time.Time) (*cluster, *nodegroup, *APIError) {
	c, err := s.getCluster(cname)
	if err != nil {
		return nil, nil, err
	}
	if req.NodegroupName == "" || !nameRE.MatchString(req.NodegroupName) {
		return nil, nil, errInvalid("The nodegroup name %q is invalid.", req.NodegroupName)
	}
	if existing := c.nodegroups[req.NodegroupName]; existing != nil {
		if req.ClientRequestToken != "" && existing.token == req.ClientRequestToken {
			return c, existing, nil
		}
		e := errInUse("NodeGroup already exists with name %s and cluster name %s", req.NodegroupName, cname)
		e.ClusterName, e.NodegroupName = cname, req.NodegroupName
		return nil, nil, e
	}
	if c.status != StatusActive {
		e := errRequest("Cluster '%s' is not in ACTIVE status", cname)
		e.ClusterName = cname
		return nil, nil, e
	}
	if len(req.Subnets) == 0 {
		return nil, nil, errInvalid("Subnets are required")
	}
	if req.NodeRole == "" {
		return nil, nil, errInvalid("nodeRole is required")
	}
	if req.LaunchTemplate != nil {
		if req.DiskSize != nil {
			return nil, nil, errInvalid("Disk size must be specified within the launch template.")
		}
		if req.RemoteAccess != nil {
			return nil, nil, errInvalid("Remote access configuration cannot be specified with a launch template.")
		}
		if req.LaunchTemplate.ID == "" && req.LaunchTemplate.Name == "" {
			return nil, nil, errInvalid("Either launch template ID or name must be specified.")
		}
		lt := *req.LaunchTemplate
		if err := s.resolveLaunchTemplate(&lt); err != nil {
			return nil, nil, err
		}
		req.LaunchTemplate = &lt
	}
	ng := &nodegroup{
		name: req.NodegroupName, arn: s.nodegroupARN(cname, req.NodegroupName), version: c.version,
		status: StatusCreating, token: req.ClientRequestToken, capacityType: "ON_DEMAND",
		amiType: "AL2023_x86_64_STANDARD", nodeRole: req.NodeRole, createdAt: now, modifiedAt: now,
		readyAt: now.Add(s.opts.CreateDelay), minSize: 1, maxSize: 2, desired: 2,
		instanceTypes: req.InstanceTypes, subnets: req.Subnets, labels: copyMap(req.Labels),
		tags: copyMap(req.Tags), taints: req.Taints, remoteAccess: req.RemoteAccess,
		launchTemplate: req.LaunchTemplate, diskSize: req.DiskSize,
	}
	if err := s.fillNodegroup(c, ng, req); err != nil {
		return nil, nil, err
	}
	c.nodegroups[ng.name] = ng
	return c, ng, nil
}

func (s *Server) fillNodegroup(c *cluster, ng *nodegroup, req createNodegroupRequest) *APIError {
	if req.Version != "" {
		cv, _ := minor(c.version)
		nv, ok := minor(req.Version)
		if !ok || nv > cv {
			return errInvalid("Requested Nodegroup Kubernetes version %s is not supported for cluster version %s", req.Version, c.version)
		}
		ng.version = req.Version
	}
	ng.releaseVersion = releaseFor(ng.version)
	if req.ReleaseVersion != "" {
		ng.releaseVersion = req.ReleaseVersion
	}
	if req.CapacityType != "" {
		if req.CapacityType != "ON_DEMAND" && req.CapacityType != "SPOT" && req.CapacityType != "CAPACITY_BLOCK" {
			return errInvalid("Invalid capacityType %s", req.CapacityType)
		}
		ng.capacityType = req.CapacityType
	}
	if req.AmiType != "" {
		ng.amiType = req.AmiType
	}
	if ng.launchTemplate == nil {
		if len(ng.instanceTypes) == 0 {
			ng.instanceTypes = []string{"t3.medium"}
		}
		if ng.diskSize == nil {
			ng.diskSize = ptr(int32(20))
		}
	} else if ng.launchTemplate.Version == "" {
		ng.launchTemplate.Version = "1"
	}
	if sc := req.ScalingConfig; sc != nil {
		if sc.MinSize != nil {
			ng.minSize = *sc.MinSize
		}
		if sc.MaxSize != nil {
			ng.maxSize = *sc.MaxSize
		}
		if sc.DesiredSize != nil {
			ng.desired = *sc.DesiredSize
		} else {
			ng.desired = ng.minSize
		}
	}
	if err := checkScaling(ng.minSize, ng.maxSize, ng.desired); err != nil {
		return err
	}
	ng.asgName = "eks-" + ng.name + "-" + ng.arn[strings.LastIndex(ng.arn, "/")+1:]
	return nil
}

func checkScaling(mn, mx, desired int32) *APIError {
	switch {
	case mn < 0 || desired < 0:
		return errInvalid("Minimum and desired size must be non-negative")
	case mx < 1:
		return errInvalid("Maximum capacity must be at least 1")
	case mn > mx:
		return errInvalid("Minimum capacity %d can't be greater than maximum capacity %d", mn, mx)
	case desired < mn:
		return errInvalid("Desired capacity %d can't be lower than minimum capacity %d", desired, mn)
	case desired > mx:
		return errInvalid("Desired capacity %d can't be greater than maximum capacity %d", desired, mx)
	}
	return nil
}

func (s *Server) deleteNodegroup(cname, ngname string, now time.Time) (*cluster, *nodegroup, *APIError) {
	c, ng, err := s.getNodegroup(cname, ngname)
	if err != nil {
		return nil, nil, err
	}
	if ng.status == StatusDeleting {
		return c, ng, nil
	}
	if c.inProgress(ngname, "") != nil {
		e := errInUse("Nodegroup %s currently has an update in progress", ngname)
		e.ClusterName, e.NodegroupName = cname, ngname
		return nil, nil, e
	}
	ng.status = StatusDeleting
	ng.modifiedAt = now
	ng.deleteAt = now.Add(s.opts.DeleteDelay)
	return c, ng, nil
}

// startNodegroupUpdate checks that a node group update may start.
func startNodegroupUpdate(c *cluster, ng *nodegroup) *APIError {
	if c.inProgress(ng.name, "") != nil || ng.status != StatusActive {
		e := errInUse("Nodegroup cannot be updated as it is currently not in Active State")
		e.ClusterName, e.NodegroupName = c.name, ng.name
		return e
	}
	return nil
}

func (s *Server) updateNodegroupConfig(cname, ngname string, req updateNodegroupConfigRequest, now time.Time) (*update, *APIError) {
	c, ng, err := s.getNodegroup(cname, ngname)
	if err != nil {
		return nil, err
	}
	if u := c.findUpdateByToken(req.ClientRequestToken, ngname); u != nil {
		return u, nil
	}
	if req.Labels == nil && req.ScalingConfig == nil {
		return nil, errInvalid("No changes were specified.")
	}
	if err := startNodegroupUpdate(c, ng); err != nil {
		return nil, err
	}
	var params []wireUpdateParam
	labels := copyMap(ng.labels)
	if l := req.Labels; l != nil {
		for _, k := range l.RemoveLabels {
			if _, dup := l.AddOrUpdateLabels[k]; dup {
				return nil, errInvalid("The label key %s cannot be both added and removed.", k)
			}
			delete(labels, k)
		}
		for k, v := range l.AddOrUpdateLabels {
			labels[k] = v
		}
		if len(l.AddOrUpdateLabels) > 0 {
			params = append(params, wireUpdateParam{Type: "LabelsToAdd", Value: mustJSON(l.AddOrUpdateLabels)})
		}
		if len(l.RemoveLabels) > 0 {
			params = append(params, wireUpdateParam{Type: "LabelsToRemove", Value: mustJSON(l.RemoveLabels)})
		}
	}
	mn, mx, d := ng.minSize, ng.maxSize, ng.desired
	if sc := req.ScalingConfig; sc != nil {
		if sc.MinSize != nil {
			mn = *sc.MinSize
			params = append(params, wireUpdateParam{Type: "MinSize", Value: strconv.Itoa(int(mn))})
		}
		if sc.MaxSize != nil {
			mx = *sc.MaxSize
			params = append(params, wireUpdateParam{Type: "MaxSize", Value: strconv.Itoa(int(mx))})
		}
		if sc.DesiredSize != nil {
			d = *sc.DesiredSize
			params = append(params, wireUpdateParam{Type: "DesiredSize", Value: strconv.Itoa(int(d))})
		}
		if err := checkScaling(mn, mx, d); err != nil {
			return nil, err
		}
	}
	u := s.newUpdate(c, now, "ConfigUpdate", ngname, req.ClientRequestToken, params, func(at time.Time) {
		ng.labels, ng.minSize, ng.maxSize, ng.desired, ng.modifiedAt = labels, mn, mx, d, at
	})
	ng.status = StatusUpdating
	return u, nil
}

func (s *Server) updateNodegroupVersion(cname, ngname string, req updateNodegroupVersionRequest, now time.Time) (*update, *APIError) {
	c, ng, err := s.getNodegroup(cname, ngname)
	if err != nil {
		return nil, err
	}
	if u := c.findUpdateByToken(req.ClientRequestToken, ngname); u != nil {
		return u, nil
	}
	if err := startNodegroupUpdate(c, ng); err != nil {
		return nil, err
	}
	version := req.Version
	if version == "" && req.LaunchTemplate == nil {
		version = c.version
	}
	var params []wireUpdateParam
	newVersion, newRelease := ng.version, ng.releaseVersion
	if version != "" {
		cv, _ := minor(c.version)
		nv, ok := minor(version)
		if !ok || nv > cv {
			return nil, errInvalid("Requested Nodegroup Kubernetes version %s is not supported for cluster version %s", version, c.version)
		}
		newVersion = version
		newRelease = releaseFor(version)
		if req.ReleaseVersion != "" {
			newRelease = req.ReleaseVersion
		}
		params = append(params, wireUpdateParam{Type: "Version", Value: newVersion}, wireUpdateParam{Type: "ReleaseVersion", Value: newRelease})
	}
	var lt *wireLaunchTemplate
	if req.LaunchTemplate != nil {
		if ng.launchTemplate == nil {
			return nil, errInvalid("You cannot specify a launch template for a node group that was not created with one.")
		}
		if (req.LaunchTemplate.ID != "" && req.LaunchTemplate.ID != ng.launchTemplate.ID) ||
			(req.LaunchTemplate.Name != "" && req.LaunchTemplate.Name != ng.launchTemplate.Name) {
			return nil, errInvalid("You cannot change the launch template of a node group; only its version.")
		}
		cp := *ng.launchTemplate
		cp.Version = req.LaunchTemplate.Version
		if err := s.resolveLaunchTemplate(&cp); err != nil {
			return nil, err
		}
		lt = &cp
		params = append(params, wireUpdateParam{Type: "LaunchTemplateName", Value: cp.Name}, wireUpdateParam{Type: "LaunchTemplateVersion", Value: cp.Version})
	}
	u := s.newUpdate(c, now, "VersionUpdate", ngname, req.ClientRequestToken, params, func(at time.Time) {
		ng.version, ng.releaseVersion, ng.modifiedAt = newVersion, newRelease, at
		if lt != nil {
			ng.launchTemplate = lt
		}
	})
	ng.status = StatusUpdating
	return u, nil
}

func (s *Server) createAddon(cname string, req createAddonRequest, now time.Time) (*cluster, *addon, *APIError) {
	c, err := s.getCluster(cname)
	if err != nil {
		return nil, nil, err
	}
	if req.AddonName == "" {
		return nil, nil, errInvalid("addonName is required")
	}
	if existing := c.addons[req.AddonName]; existing != nil {
		e := errInUse("Addon already exists.")
		e.ClusterName, e.AddonName = cname, req.AddonName
		return nil, nil, e
	}
	if c.status != StatusActive && c.status != StatusUpdating {
		e := errRequest("Cluster '%s' is not in ACTIVE status", cname)
		e.ClusterName = cname
		return nil, nil, e
	}
	version := req.AddonVersion
	if version == "" {
		version = "v1.0.0-eksbuild.1"
	}
	a := &addon{
		name: req.AddonName, arn: s.addonARN(cname, req.AddonName), version: version, status: StatusCreating,
		roleArn: req.ServiceAccountRoleArn, config: req.ConfigurationValues, createdAt: now, modifiedAt: now,
		readyAt: now.Add(s.opts.CreateDelay), tags: copyMap(req.Tags),
	}
	c.addons[a.name] = a
	return c, a, nil
}

// tagsFor finds the tag map of a cluster, node group or add-on by ARN.
func (s *Server) tagsFor(arn string) (*map[string]string, *APIError) {
	prefix := fmt.Sprintf("arn:aws:eks:%s:%s:", s.opts.Region, s.opts.AccountID)
	if !strings.HasPrefix(arn, "arn:") {
		return nil, &APIError{Status: http.StatusBadRequest, Type: "BadRequestException", Message: "Invalid ARN: " + arn}
	}
	if strings.HasPrefix(arn, prefix) {
		for _, c := range s.state {
			if c.arn == arn {
				return &c.tags, nil
			}
			for _, ng := range c.nodegroups {
				if ng.arn == arn {
					return &ng.tags, nil
				}
			}
			for _, a := range c.addons {
				if a.arn == arn {
					return &a.tags, nil
				}
			}
		}
	}
	return nil, &APIError{Status: http.StatusNotFound, Type: "NotFoundException", Message: "Resource not found: " + arn}
}
