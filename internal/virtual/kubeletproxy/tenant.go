package kubeletproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// NodeOf is the node a tenant's kubelet request is for, from its Host
// header host (HOST or HOST:PORT): a translate.NodeHostname names the node (through
// byHostname, which maps the dashed form back to a node name, "" when
// none), an IP is looked up with byIP (the host Services of
// proxyKubelets.byIP; nil: off). It returns "" when neither knows host.
func NodeOf(host string, byHostname func(dashed string) string, byIP func(ip string) string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if dashed, ok := strings.CutSuffix(host, "."+translate.NodeSuffix); ok && byHostname != nil && !strings.Contains(dashed, ".") {
		return byHostname(dashed)
	}
	if net.ParseIP(host) != nil && byIP != nil {
		return byIP(host)
	}
	return ""
}

// TenantPath is one kubelet path the proxy serves to the tenant (the
// paths node exporters and Prometheus read), and how its answer is
// filtered.
type TenantPath int

// The tenant paths.
const (
	// NotServed is every other path (exec, logs, run, checkpoints, …: those
	// go through the virtual API server, or not at all).
	NotServed TenantPath = iota
	Healthz
	Metrics
	Stats
	Pods
)

// TenantPathOf classifies a kubelet request path, as vCluster's allowlist
// does (pkg/server/filters/metrics.go, enforceKubeletSubpathAllowlist,
// v0.36.1): /healthz; /metrics, /metrics/cadvisor, /metrics/probes,
// /metrics/resource (and its v1alpha1, v1beta1); /stats/summary; /pods
// and /runningpods.
func TenantPathOf(path string) TenantPath {
	p := strings.TrimRight(path, "/")
	switch p {
	case "/healthz":
		return Healthz
	case "/metrics", "/metrics/cadvisor", "/metrics/probes", "/metrics/resource", "/metrics/resource/v1alpha1", "/metrics/resource/v1beta1":
		return Metrics
	case "/stats/summary":
		return Stats
	case "/pods", "/runningpods":
		return Pods
	}
	return NotServed
}

// KubeletSubresource is the nodes subresource a kubelet authorizes a
// request for path with (the kubelet's server/auth.go, GetRequestAttributes,
// https://kubernetes.io/docs/reference/access-authn-authz/kubelet-authn-authz/):
// stats, metrics, log, spec, else proxy.
func KubeletSubresource(path string) string {
	under := func(prefix string) bool { return path == prefix || strings.HasPrefix(path, prefix+"/") }
	switch {
	case under("/stats"):
		return "stats"
	case under("/metrics"):
		return "metrics"
	case under("/logs"):
		return "log"
	case under("/spec"):
		return "spec"
	}
	return "proxy"
}

// Owner maps a host object of the host namespace to the tenant's object it
// copies (namespace and name), ok false when it is not this virtual
// cluster's copy.
type Owner func(hostName string) (virtual types.NamespacedName, ok bool)

// Rewrite is what the tenant may see of a node: the objects of the host
// namespace that are its own.
type Rewrite struct {
	// HostNamespace is the virtual cluster's host namespace.
	HostNamespace string
	// Pods and Claims map host pods and claims to the tenant's.
	Pods, Claims Owner
}

// RewriteMetrics filters and renames a kubelet's Prometheus text metrics
// (data, exposition format) for the tenant: a sample labelled with a pod
// or a persistentvolumeclaim is kept only when it is the tenant's, with its
// pod, persistentvolumeclaim and namespace labels renamed to the tenant's
// names; one labelled only with a namespace is dropped (another tenant's,
// or the host's); node-level samples (none of these labels) are kept.
// Families left empty are dropped. It returns the text format, or an
// error when data does not parse.
func (rw Rewrite) RewriteMetrics(data []byte) ([]byte, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("read the kubelet's metrics: %w", err)
	}
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	sort.Strings(names)
	var out bytes.Buffer
	enc := expfmt.NewEncoder(&out, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, name := range names {
		fam := families[name]
		fam.Metric = slices.DeleteFunc(fam.Metric, func(m *dto.Metric) bool { return !rw.rewriteLabels(m) })
		if len(fam.Metric) == 0 {
			continue
		}
		if err := enc.Encode(fam); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), nil
}

// rewriteLabels renames m's labels to the tenant's names; false: m is not
// the tenant's to see.
func (rw Rewrite) rewriteLabels(m *dto.Metric) bool {
	var pod, pvc, ns *dto.LabelPair
	for _, l := range m.Label {
		switch l.GetName() {
		case "pod":
			pod = l
		case "persistentvolumeclaim":
			pvc = l
		case "namespace":
			ns = l
		}
	}
	if pod == nil && pvc == nil {
		return ns == nil
	}
	if ns == nil || ns.GetValue() != rw.HostNamespace {
		return false
	}
	var vns string
	for _, x := range []struct {
		l     *dto.LabelPair
		owner Owner
	}{{pod, rw.Pods}, {pvc, rw.Claims}} {
		if x.l == nil || x.l.GetValue() == "" {
			continue
		}
		v, ok := x.owner(x.l.GetValue())
		if !ok || vns != "" && vns != v.Namespace {
			return false
		}
		vns = v.Namespace
		x.l.Value = &v.Name
	}
	if vns == "" {
		return false
	}
	ns.Value = &vns
	return true
}

// RewriteSummary filters and renames a kubelet's /stats/summary (JSON) for
// the tenant: the node's stats stay; of the pods only the tenant's, named
// as the tenant knows them (UID: virtualUID, "" when unknown), each
// volume's claim renamed (a volume of another claim dropped).
func (rw Rewrite) RewriteSummary(data []byte, virtualUID func(types.NamespacedName) string) ([]byte, error) {
	var s statsv1alpha1.Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("read the kubelet's stats summary: %w", err)
	}
	pods := s.Pods[:0]
	for _, p := range s.Pods {
		if p.PodRef.Namespace != rw.HostNamespace {
			continue
		}
		v, ok := rw.Pods(p.PodRef.Name)
		if !ok {
			continue
		}
		p.PodRef = statsv1alpha1.PodReference{Name: v.Name, Namespace: v.Namespace, UID: virtualUID(v)}
		vols := p.VolumeStats[:0]
		for _, vol := range p.VolumeStats {
			if vol.PVCRef != nil {
				c, ok := rw.Claims(vol.PVCRef.Name)
				if vol.PVCRef.Namespace != rw.HostNamespace || !ok {
					continue
				}
				vol.PVCRef = &statsv1alpha1.PVCReference{Name: c.Name, Namespace: c.Namespace}
			}
			vols = append(vols, vol)
		}
		p.VolumeStats = vols
		pods = append(pods, p)
	}
	s.Pods = pods
	return json.Marshal(&s)
}

// RewritePods is a kubelet's /pods answer for the tenant: the tenant's own
// virtual pods among those of data (a PodList, JSON), looked up with
// virtual (false: gone).
func (rw Rewrite) RewritePods(data []byte, virtual func(types.NamespacedName) (*corev1.Pod, bool)) ([]byte, error) {
	var list corev1.PodList
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("read the kubelet's pods: %w", err)
	}
	out := corev1.PodList{TypeMeta: list.TypeMeta, Items: []corev1.Pod{}}
	for _, p := range list.Items {
		if p.Namespace != rw.HostNamespace {
			continue
		}
		key, ok := rw.Pods(p.Name)
		if !ok {
			continue
		}
		if v, ok := virtual(key); ok {
			out.Items = append(out.Items, *v.DeepCopy())
		}
	}
	return json.Marshal(&out)
}
