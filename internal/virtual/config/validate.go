package config

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// StatefulSetLabels are the label keys the chart gives the control plane
// StatefulSet itself (charts/virtual-cluster/templates/_helpers.tpl,
// vc.labels), which controlPlane.statefulSet.labels cannot replace.
func StatefulSetLabels() []string {
	return []string{"app", "release", "app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by", "helm.sh/chart"}
}

// PodSelectorLabels are the label keys of the StatefulSet's selector
// (vc.selector), which controlPlane.statefulSet.pods.labels cannot replace.
func PodSelectorLabels() []string { return []string{"app", "release"} }

// Validate checks the semantic rules that the types alone cannot express:
// syncer.workers is at least 1, every QPS is greater than 0 and every burst
// at least 1; the embedded and the external etcd are not both enabled
// (neither means the embedded one, as a vCluster file whose backing store
// is vCluster's default database has it);
// an enabled external etcd has an http or https endpoint URL and, if it
// uses a client certificate, both certFile and keyFile; an enabled
// /etc/hosts rewrite has an init container image; the control plane's
// image has a repository, its pull policy is one Kubernetes knows, its
// claim size is positive and every extra SAN is a host name or an IP; the
// virtual scheduler has real nodes to place pods on; the control plane has
// one replica (controlPlane.statefulSet.highAvailability.replicas); the
// labels and annotations of the StatefulSet and its pods are valid keys
// and values and leave clustersync's own alone, as do the containers,
// volumes, mounts and variables it adds to the pod (validatePod), and the
// Service and Ingress of the API server (validateExposure). All problems are
// returned as FieldErrors joined with errors.Join, sorted by path.
func (c *Config) Validate() error {
	return joinFieldErrors(c.validate())
}

// validate returns every problem Validate reports, unsorted.
func (c *Config) validate() []*FieldError {
	var errs []*FieldError
	fail := func(path, format string, args ...any) {
		errs = append(errs, &FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
	}

	s := c.Syncer
	if s.Workers < 1 {
		fail("syncer.workers", "must be at least 1, got %d", s.Workers)
	}
	for _, q := range []struct {
		path string
		qps  float32
	}{{"syncer.hostQPS", s.HostQPS}, {"syncer.virtualQPS", s.VirtualQPS}} {
		if !(q.qps > 0) {
			fail(q.path, "must be greater than 0, got %g", q.qps)
		}
	}
	for _, b := range []struct {
		path  string
		burst int
	}{{"syncer.hostBurst", s.HostBurst}, {"syncer.virtualBurst", s.VirtualBurst}} {
		if b.burst < 1 {
			fail(b.path, "must be at least 1, got %d", b.burst)
		}
	}

	switch n := c.ControlPlane.StatefulSet.HighAvailability.Replicas; {
	case n > 1:
		fail("controlPlane.statefulSet.highAvailability.replicas", "%d: clustersync runs one control plane pod; a highly available control plane is not implemented yet, so more replicas are refused rather than run as one", n)
	case n < 1:
		fail("controlPlane.statefulSet.highAvailability.replicas", "%d: clustersync runs one control plane pod; to stop it, run clustersync virtual pause", n)
	}

	sts := c.ControlPlane.StatefulSet
	for _, m := range []struct {
		path     string
		values   map[string]string
		label    bool
		reserved []string
	}{
		{"controlPlane.statefulSet.labels", sts.Labels, true, StatefulSetLabels()},
		{"controlPlane.statefulSet.annotations", sts.Annotations, false, []string{"clustersync.io/persistence"}},
		{"controlPlane.statefulSet.pods.labels", sts.Pods.Labels, true, PodSelectorLabels()},
		{"controlPlane.statefulSet.pods.annotations", sts.Pods.Annotations, false, []string{"checksum/config"}},
		{"controlPlane.service.labels", c.ControlPlane.Service.Labels, true, ServiceLabels()},
		{"controlPlane.service.annotations", c.ControlPlane.Service.Annotations, false, nil},
		{"controlPlane.ingress.labels", c.ControlPlane.Ingress.Labels, true, IngressLabels()},
		{"controlPlane.ingress.annotations", c.ControlPlane.Ingress.Annotations, false, nil},
		{"controlPlane.advanced.serviceAccount.labels", c.ControlPlane.Advanced.ServiceAccount.Labels, true, StatefulSetLabels()},
		{"controlPlane.advanced.serviceAccount.annotations", c.ControlPlane.Advanced.ServiceAccount.Annotations, false, nil},
		{"controlPlane.advanced.workloadServiceAccount.labels", c.ControlPlane.Advanced.WorkloadServiceAccount.Labels, true, []string{"vcluster.loft.sh/managed-by"}},
		{"controlPlane.advanced.workloadServiceAccount.annotations", c.ControlPlane.Advanced.WorkloadServiceAccount.Annotations, false, nil},
		{"controlPlane.advanced.headlessService.labels", c.ControlPlane.Advanced.HeadlessService.Labels, true, StatefulSetLabels()},
		{"controlPlane.advanced.headlessService.annotations", c.ControlPlane.Advanced.HeadlessService.Annotations, false, nil},
		{"controlPlane.advanced.globalMetadata.annotations", c.ControlPlane.Advanced.GlobalMetadata.Annotations, false, nil},
	} {
		for _, k := range slices.Sorted(maps.Keys(m.values)) {
			p := entryPath(m.path, k)
			switch {
			case slices.Contains(m.reserved, k):
				fail(p, "clustersync sets this key itself (%s)", strings.Join(m.reserved, ", "))
			case len(validation.IsQualifiedName(k)) > 0:
				fail(p, "invalid key: %s", strings.Join(validation.IsQualifiedName(k), "; "))
			case m.label && len(validation.IsValidLabelValue(m.values[k])) > 0:
				fail(p, "invalid value %q: %s", m.values[k], strings.Join(validation.IsValidLabelValue(m.values[k]), "; "))
			}
		}
	}

	const etcdPath = "controlPlane.backingStore.etcd"
	etcd := c.ControlPlane.BackingStore.Etcd
	switch {
	case etcd.Embedded.Enabled && etcd.External.Enabled:
		fail(etcdPath, "embedded.enabled and external.enabled are both true; enable exactly one")
	}
	if ext := etcd.External; ext.Enabled {
		const endpointPath = etcdPath + ".external.endpoint"
		if ext.Endpoint == "" {
			fail(endpointPath, "required when external etcd is enabled (e.g. https://127.0.0.1:2379)")
		} else if u, err := url.Parse(ext.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			fail(endpointPath, "must be an http or https URL such as https://127.0.0.1:2379, got %q", ext.Endpoint)
		}
		if (ext.TLS.CertFile == "") != (ext.TLS.KeyFile == "") {
			fail(etcdPath+".external.tls", "certFile and keyFile must be set together")
		}
	}

	sts.validatePod(fail)
	c.ControlPlane.validateExposure(fail)
	c.ExportKubeConfig.validate(fail)
	c.ControlPlane.Advanced.validate(fail)
	switch sts.Scheduling.PodManagementPolicy {
	case "Parallel", "OrderedReady":
	default:
		fail("controlPlane.statefulSet.scheduling.podManagementPolicy", "must be Parallel or OrderedReady, got %q", sts.Scheduling.PodManagementPolicy)
	}
	switch sts.DNSPolicy {
	case "", "ClusterFirst", "ClusterFirstWithHostNet", "Default":
	case "None":
		if sts.DNSConfig == nil || len(sts.DNSConfig.Nameservers) == 0 {
			fail("controlPlane.statefulSet.dnsConfig.nameservers", "required with dnsPolicy None (Kubernetes refuses a pod without a nameserver then)")
		}
	default:
		fail("controlPlane.statefulSet.dnsPolicy", `must be "", ClusterFirst, ClusterFirstWithHostNet, Default or None, got %q`, sts.DNSPolicy)
	}
	switch sts.ImagePullPolicy {
	case "", "Always", "IfNotPresent", "Never":
	default:
		fail("controlPlane.statefulSet.imagePullPolicy", `must be "", Always, IfNotPresent or Never, got %q`, sts.ImagePullPolicy)
	}
	if sts.Image.Repository == "" {
		fail("controlPlane.statefulSet.image.repository", "required")
	}
	if vc := sts.Persistence.VolumeClaim; vc.Enabled != AutoSwitchOff && vc.Size.Sign() <= 0 {
		fail("controlPlane.statefulSet.persistence.volumeClaim.size", "must be greater than 0 when a claim may be made, got %s", vc.Size.String())
	}
	if c.VirtualScheduler() && !c.Sync.FromHost.Nodes.Enabled {
		p := "controlPlane.advanced.virtualScheduler.enabled"
		if !c.ControlPlane.Advanced.VirtualScheduler.Enabled {
			p = "controlPlane.distro.k8s.scheduler.enabled"
		}
		fail(p,
			"needs sync.fromHost.nodes.enabled: true (the virtual scheduler places pods on the virtual copies of the host's nodes)")
	}
	for i, san := range c.ControlPlane.Proxy.ExtraSANs {
		if strings.TrimSpace(san) == "" || strings.ContainsAny(san, " /:") && net.ParseIP(san) == nil {
			fail(fmt.Sprintf("controlPlane.proxy.extraSANs[%d]", i), "must be a host name or an IP address, got %q", san)
		}
	}

	rs := c.Networking.ReplicateServices
	for _, dir := range []struct {
		key  string
		list []ServiceMapping
	}{{"networking.replicateServices.toHost", rs.ToHost}, {"networking.replicateServices.fromHost", rs.FromHost}} {
		targets := map[string]int{}
		for i, m := range dir.list {
			key := fmt.Sprintf("%s[%d]", dir.key, i)
			for _, side := range []struct{ name, v string }{{"from", m.From}, {"to", m.To}} {
				ns, name, ok := strings.Cut(side.v, "/")
				if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1035Label(name)) > 0 {
					fail(key+"."+side.name, "must be namespace/name of a Service, got %q", side.v)
				}
			}
			if j, dup := targets[m.To]; dup {
				fail(key+".to", "%s is %s[%d].to too", m.To, dir.key, j)
			}
			targets[m.To] = i
			ns, _, _ := strings.Cut(m.To, "/")
			switch {
			case dir.key == "networking.replicateServices.toHost" && (ns == "kube-system" || ns == "kube-public" || ns == "kube-node-lease"):
				fail(key+".to", "%s: a virtual cluster does not write in the host's %s namespace", m.To, ns)
			case dir.key == "networking.replicateServices.fromHost" && m.To == "default/kubernetes":
				fail(key+".to", "default/kubernetes is the virtual cluster's own API server")
			}
		}
	}
	if d := c.Networking.Advanced.ClusterDomain; len(validation.IsDNS1123Subdomain(d)) > 0 {
		fail("networking.advanced.clusterDomain", "must be a DNS subdomain such as cluster.local, got %q", d)
	}
	c.validateDeploy(fail)

	switch c.Policies.PodSecurityStandard {
	case PodSecurityPrivileged, PodSecurityBaseline, PodSecurityRestricted:
	default:
		fail("policies.podSecurityStandard", "must be privileged, baseline or restricted, got %q", c.Policies.PodSecurityStandard)
	}
	np := c.Policies.NetworkPolicy
	if np.FallbackDNS != "" && net.ParseIP(np.FallbackDNS) == nil {
		fail("policies.networkPolicy.fallbackDns", "must be an IP address, got %q", np.FallbackDNS)
	}
	blocks := map[string]IPBlock{"policies.networkPolicy.outgoingConnections.ipBlock": np.OutgoingConnections.IPBlock}
	if pe := np.Workload.PublicEgress; pe != nil {
		blocks["policies.networkPolicy.workload.publicEgress"] = IPBlock{CIDR: pe.CIDR, Except: pe.Except}
	}
	for path, b := range blocks {
		if b.CIDR != "" {
			if _, _, err := net.ParseCIDR(b.CIDR); err != nil {
				fail(path+".cidr", "must be a CIDR such as 0.0.0.0/0, got %q", b.CIDR)
			}
		}
		for i, e := range b.Except {
			if _, _, err := net.ParseCIDR(e); err != nil {
				fail(fmt.Sprintf("%s.except[%d]", path, i), "must be a CIDR such as 10.0.0.0/8, got %q", e)
			}
		}
	}

	if rh := c.Sync.ToHost.Pods.RewriteHosts; rh.Enabled && rh.InitContainer.Image == "" {
		fail("sync.toHost.pods.rewriteHosts.initContainer.image", "required when rewriteHosts is enabled")
	}
	return errs
}
