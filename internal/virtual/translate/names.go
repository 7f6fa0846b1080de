package translate

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxNameLength is the longest host name the translation produces: the
// DNS-label limit of 63 characters.
const MaxNameLength = 63

// SafeConcatName joins parts with "-". A result longer than 63 characters is
// cut to its first 52 characters, followed by "-" and the first 10 hex digits
// of the SHA-256 of the whole joined string; finally every ".-" becomes "-".
// This is vCluster's SafeConcatName
// (https://github.com/loft-sh/vcluster/blob/main/pkg/util/translate/translate.go), so
// long names land on the same host name as under vCluster.
func SafeConcatName(parts ...string) string {
	full := strings.Join(parts, "-")
	if len(full) <= MaxNameLength {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	return strings.ReplaceAll(full[:52]+"-"+hex.EncodeToString(sum[:])[:10], ".-", "-")
}

// hash10 is the first 10 hex digits of the SHA-256 of s.
func hash10(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:10]
}

// Translator maps the names of one virtual cluster onto its host namespace.
// It is a value type with no state beyond its two names; the zero value is
// not useful.
type Translator struct {
	// VCluster is the virtual cluster's name, the last part of every host name.
	VCluster string
	// HostNamespace is the host namespace that holds every synced object.
	HostNamespace string
}

// HostName is the host name of the namespaced virtual object name/namespace:
// NAME-x-NAMESPACE-x-VCLUSTER, shortened by SafeConcatName when over 63
// characters (https://www.vcluster.com/docs/vcluster/configure/vcluster-yaml/sync, "Name Rewritten").
func (t Translator) HostName(name, namespace string) string {
	return SafeConcatName(name, "x", namespace, "x", t.VCluster)
}

// HostClusterScopedName is the host name of a cluster-scoped virtual object:
// vcluster-NAME-x-HOSTNAMESPACE-x-VCLUSTER, shortened like HostName.
func (t Translator) HostClusterScopedName(name string) string {
	return SafeConcatName("vcluster", name, "x", t.HostNamespace, "x", t.VCluster)
}

// KubernetesServiceName is the host Service that backs the virtual
// default/kubernetes Service: it carries the virtual cluster's own name.
func (t Translator) KubernetesServiceName() string { return t.VCluster }

// DNSServiceHostName is the host name of the virtual kube-system/kube-dns Service.
func (t Translator) DNSServiceHostName() string { return t.HostName("kube-dns", "kube-system") }

// NodeServiceName is the host Service that proxies the kubelet of host node
// nodeName for this virtual cluster (networking.advanced.proxyKubelets.byIP):
// <vcluster>-node-<node> (dots in the node's name dashed), shortened like
// HostName, as vCluster names it
// (pkg/controllers/resources/nodes/nodeservice at
// https://github.com/loft-sh/vcluster/tree/v0.36.1).
func (t Translator) NodeServiceName(nodeName string) string {
	return SafeConcatName(t.VCluster, "node", strings.ReplaceAll(nodeName, ".", "-"))
}

// LabelNodeService is the label of a NodeServiceName Service naming the
// node it stands for (vCluster's key).
const LabelNodeService = "vcluster.loft.sh/node"

// NodeSuffix is the DNS suffix of the fake nodes' kubelet host names with
// networking.advanced.proxyKubelets.byHostname, vCluster's
// (pkg/constants/annotation.go at https://github.com/loft-sh/vcluster/tree/v0.36.1).
const NodeSuffix = "nodes.vcluster.com"

// NodeHostname is the kubelet host name of node name (byHostname):
// NAME.nodes.vcluster.com, dots in NAME dashed.
func NodeHostname(name string) string {
	return strings.ReplaceAll(name, ".", "-") + "." + NodeSuffix
}
