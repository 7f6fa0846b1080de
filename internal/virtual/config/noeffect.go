package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// NoEffectKey is a key of the file that clustersync accepts, because
// vCluster has it, and does not act on.
type NoEffectKey struct {
	// Path is the key's dotted path, e.g. "exportKubeConfig.context"; a map
	// (annotations, labels) is named once, not each of its entries.
	Path string
	// Reason says why clustersync does not act on it: one of the Reason
	// constants.
	Reason string
}

// The reasons a vCluster key has no effect in clustersync.
const (
	ReasonPlatform    = "a vCluster Platform feature"
	ReasonDistro      = "clustersync's control plane is upstream Kubernetes (controlPlane.distro.k8s)"
	ReasonBacking     = "clustersync stores in etcd: embedded in the control plane pod, or external (controlPlane.backingStore.etcd)"
	ReasonOwnNodes    = "for vCluster's private nodes and standalone modes: clustersync's tenants run on the host's nodes"
	ReasonDocker      = "for vCluster's Docker driver"
	ReasonTelemetry   = "clustersync collects no telemetry"
	ReasonPlugins     = "vCluster plugins are vCluster's own extension API"
	ReasonHelmGlobal  = "Helm's values for subcharts: clustersync's chart has none"
	ReasonServiceCIDR = "deprecated in vCluster; clustersync takes the service range from the host"
	ReasonOwnBinary   = "vCluster's own program, image and Kubernetes build: clustersync's containers run clustersync's image and its Kubernetes"
	ReasonOwnDNS      = "clustersync's DNS server is a container of the control plane pod (as vCluster's embedded CoreDNS), not a Deployment and Service in the virtual cluster"
	ReasonOneReplica  = "the leader election of vCluster's replicas: clustersync runs one control plane pod"
	ReasonNotYet      = "not implemented in clustersync yet"
	ReasonNoKind      = "vCluster validates it and applies it to no kind: each kind's own patches apply"
	ReasonGrantsStay  = "ReferenceGrants stay in the virtual cluster, where they authorize the routes' references: there are no host copies to patch"
)

// noEffectReasons maps the dotted path of a vCluster section, or of a key,
// to why clustersync does not act on it; the longest prefix of a key's
// path that the table has wins, and ReasonNotYet stands for the rest.
func noEffectReasons() map[string]string {
	return map[string]string{
		"platform":                            ReasonPlatform,
		"external":                            ReasonPlatform,
		"sleepMode":                           ReasonPlatform,
		"sleep":                               ReasonPlatform,
		"snapshots":                           ReasonPlatform,
		"deletion":                            ReasonPlatform,
		"pro":                                 ReasonPlatform,
		"controlPlane.hostPathMapper.central": ReasonPlatform,
		// Patches of the copies of host objects: vCluster's open-source
		// syncer refuses them as a Pro feature
		// (pkg/pro/patches.go, ApplyPatchesVirtualObject).
		"sync.fromHost.configMaps.patches":                                ReasonPlatform,
		"sync.fromHost.secrets.patches":                                   ReasonPlatform,
		"sync.fromHost.events.patches":                                    ReasonPlatform,
		"sync.fromHost.nodes.patches":                                     ReasonPlatform,
		"sync.fromHost.ingressClasses.patches":                            ReasonPlatform,
		"sync.fromHost.runtimeClasses.patches":                            ReasonPlatform,
		"sync.fromHost.priorityClasses.patches":                           ReasonPlatform,
		"sync.fromHost.storageClasses.patches":                            ReasonPlatform,
		"sync.fromHost.csiNodes.patches":                                  ReasonPlatform,
		"sync.fromHost.csiDrivers.patches":                                ReasonPlatform,
		"sync.fromHost.csiStorageCapacities.patches":                      ReasonPlatform,
		"sync.fromHost.volumeSnapshotClasses.patches":                     ReasonPlatform,
		"sync.fromHost.customResources.*.patches":                         ReasonPlatform,
		"sync.fromHost.gatewayClasses.patches":                            ReasonPlatform,
		"sync.fromHost.gateways.patches":                                  ReasonPlatform,
		"sync.toHost.gatewayApi.patches":                                  ReasonNoKind,
		"sync.toHost.gatewayApi.referenceGrants.patches":                  ReasonGrantsStay,
		"controlPlane.distro.k3s":                                         ReasonDistro,
		"controlPlane.distro.k0s":                                         ReasonDistro,
		"controlPlane.distro.eks":                                         ReasonDistro,
		"controlPlane.backingStore.database":                              ReasonBacking,
		"controlPlane.backingStore.etcd.deploy":                           ReasonBacking,
		"controlPlane.backingStore.etcd.embedded.migrateFromDeployedEtcd": ReasonBacking,
		"controlPlane.standalone":                                         ReasonOwnNodes,
		// vCluster refuses an endpoint without privateNodes
		// (pkg/config/validation.go, validatePrivatedNodesMode).
		"controlPlane.endpoint":                               ReasonOwnNodes,
		"privateNodes":                                        ReasonOwnNodes,
		"deploy":                                              ReasonOwnNodes,
		"controlPlane.advanced.konnectivity":                  ReasonOwnNodes,
		"controlPlane.advanced.kubeVip":                       ReasonOwnNodes,
		"controlPlane.advanced.registry":                      ReasonOwnNodes,
		"controlPlane.advanced.cloudControllerManager":        ReasonOwnNodes,
		"controlPlane.statefulSet.image":                      ReasonOwnBinary,
		"controlPlane.statefulSet.args":                       ReasonOwnBinary,
		"controlPlane.statefulSet.command":                    ReasonOwnBinary,
		"controlPlane.statefulSet.persistence.binariesVolume": ReasonDistro,
		"controlPlane.distro.k8s.enabled":                     ReasonDistro,
		"controlPlane.distro.k8s.image":                       ReasonOwnBinary,
		"controlPlane.distro.k8s.version":                     ReasonOwnBinary,
		"controlPlane.distro.k8s.imagePullPolicy":             ReasonOwnBinary,
		"controlPlane.distro.k8s.env":                         ReasonOwnBinary,
		"controlPlane.distro.k8s.resources":                   ReasonOwnBinary,
		"controlPlane.distro.k8s.securityContext":             ReasonOwnBinary,
		"controlPlane.distro.k8s.apiServer":                   ReasonOwnBinary,
		"controlPlane.distro.k8s.controllerManager":           ReasonOwnBinary,
		"controlPlane.distro.k8s.scheduler.command":           ReasonOwnBinary,
		"controlPlane.statefulSet.highAvailability":           ReasonOneReplica,
		"controlPlane.coredns.deployment":                     ReasonOwnDNS,
		"controlPlane.coredns.service":                        ReasonOwnDNS,
		"controlPlane.coredns.embedded":                       ReasonOwnDNS,
		"controlPlane.coredns.overwriteManifests":             ReasonOwnDNS,
		"controlPlane.coredns.priorityClassName":              ReasonOwnDNS,
		"controlPlane.coredns.security":                       ReasonOwnDNS,
		"experimental.docker":                                 ReasonDocker,
		"telemetry":                                           ReasonTelemetry,
		"plugin":                                              ReasonPlugins,
		"plugins":                                             ReasonPlugins,
		"global":                                              ReasonHelmGlobal,
		"serviceCIDR":                                         ReasonServiceCIDR,
	}
}

// asClustersyncDoes lists vCluster keys whose value states what clustersync
// does anyway, so setting them is no news: a file that picks the k8s distro
// gets the k8s distro, one that turns telemetry off gets none.
func asClustersyncDoes() map[string]any {
	return map[string]any{
		"controlPlane.distro.k8s.enabled": true,
		"telemetry.enabled":               false,
	}
}

// reasonFor returns why the vCluster key at path has no effect. An entry
// of a map or list in path (customResources[widgets.example.com]) also
// matches a table key that has "*" in its place, as vCluster's key list
// writes it.
func reasonFor(path string, reasons map[string]string) string {
	for _, full := range []string{dottedPath(entryPattern().ReplaceAllString(path, ".*")), dottedPath(path)} {
		for p := full; p != ""; {
			if r, ok := reasons[p]; ok {
				return r
			}
			i := strings.LastIndexByte(p, '.')
			if i < 0 {
				break
			}
			p = p[:i]
		}
	}
	return ReasonNotYet
}

// entryPattern matches the [key] of a map entry or list item in a path.
func entryPattern() *regexp.Regexp { return regexp.MustCompile(`\[[^\]]*\]`) }

// NoEffect lists the keys of the file that clustersync accepts and does
// not act on, sorted by path, each with why: the vCluster keys that Parse
// found set to a value that no vCluster release (v0.20.0 on) gives them by
// default. A vCluster values.yaml as vCluster ships it has none.
func (c *Config) NoEffect() []NoEffectKey {
	reasons := noEffectReasons()
	var out []NoEffectKey
	for _, p := range slices.Compact(slices.Sorted(slices.Values(c.noted))) {
		out = append(out, NoEffectKey{Path: p, Reason: reasonFor(p, reasons)})
	}
	return out
}

// NoEffectMessage is NoEffect as `virtual create` prints it: a first line,
// then one line per reason with its keys; "" when there are none.
func (c *Config) NoEffectMessage() string {
	keys := c.NoEffect()
	if len(keys) == 0 {
		return ""
	}
	var order []string
	byReason := map[string][]string{}
	for _, k := range keys {
		if _, ok := byReason[k.Reason]; !ok {
			order = append(order, k.Reason)
		}
		byReason[k.Reason] = append(byReason[k.Reason], k.Path)
	}
	slices.Sort(order)
	var b strings.Builder
	fmt.Fprintf(&b, "accepted, no effect in clustersync (%d %s set to other than vCluster's default):", len(keys), plural(len(keys), "key"))
	for _, r := range order {
		fmt.Fprintf(&b, "\n  %s: %s", r, strings.Join(byReason[r], ", "))
	}
	return b.String()
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
