// Package endpointslices syncs the EndpointSlices (discovery.k8s.io/v1) a
// tenant writes itself to the host (sync.toHost.endpointSlices, on by
// default as in vCluster): typically those of a Service without a selector
// whose endpoints the tenant manages. The host copy, NAME-x-NAMESPACE-x-
// VCLUSTER, points at the host copy of the Service (label
// kubernetes.io/service-name) and of each pod it names, so the host's
// service proxy routes the host Service to those addresses.
//
// The slices Kubernetes' own controllers make in the virtual cluster (from
// a Service's selector, or mirrored from an Endpoints object) are not
// synced: the host's controllers make their own from the synced pods and
// Endpoints, and a copy would list every endpoint twice.
//
// The host copies carry endpointslice.kubernetes.io/managed-by=ManagedBy.
// Each EndpointSlice controller of Kubernetes only lists and writes the
// slices labelled with its own name
// (https://kubernetes.io/docs/concepts/services-networking/endpoint-slices/#management),
// so the host's controllers neither adopt nor delete these copies.
package endpointslices

import (
	"maps"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// ManagedBy is the value of label endpointslice.kubernetes.io/managed-by on
// the host copies: the syncer, not a Kubernetes controller, manages them.
// A label value has no "/", so it is written in the form of Kubernetes' own
// values (ControllerManager), a name under the project's domain.
const ManagedBy = "syncer.clustersync.io"

// Managers of the EndpointSlices that Kubernetes' controllers make, as
// they write them in label endpointslice.kubernetes.io/managed-by
// (kubernetes/kubernetes pkg/controller/endpointslice and
// pkg/controller/endpointslicemirroring).
const (
	// ControllerManager is the EndpointSlice controller's, which makes the
	// slices of a Service with a selector.
	ControllerManager = "endpointslice-controller.k8s.io"
	// MirroringManager is the EndpointSliceMirroring controller's, which
	// mirrors the Endpoints of a Service without a selector.
	MirroringManager = "endpointslicemirroring-controller.k8s.io"
)

// IsSynced reports whether virtual EndpointSlice v goes to the host: not
// when one of Kubernetes' controllers made it (ControllerManager,
// MirroringManager), nor the slice of the virtual API server's own
// default/kubernetes Service, which stands for the virtual API server the
// host reaches by other means (that Service is not synced either).
func IsSynced(v *discoveryv1.EndpointSlice) bool {
	switch v.Labels[discoveryv1.LabelManagedBy] {
	case ControllerManager, MirroringManager:
		return false
	}
	if v.Namespace == "default" && (v.Name == "kubernetes" || v.Labels[discoveryv1.LabelServiceName] == "kubernetes") {
		return false
	}
	return true
}

// HostLabels returns labels, the host copy's labels as the engine
// translated them, with the two labels the syncer owns set: the service
// name is the host name of v's Service (absent when v names none), and the
// manager is ManagedBy. labels is not modified.
func HostLabels(labels map[string]string, v *discoveryv1.EndpointSlice, tr translate.Translator) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	if svc := v.Labels[discoveryv1.LabelServiceName]; svc != "" {
		out[discoveryv1.LabelServiceName] = tr.HostName(svc, v.Namespace)
	} else {
		delete(out, discoveryv1.LabelServiceName)
	}
	out[discoveryv1.LabelManagedBy] = ManagedBy
	return out
}

// VirtualViewLabels returns the host copy's labels with the two labels the
// syncer owns (HostLabels) as virtual slice v has them, or absent where v
// has none: the metadata merge then sees no host edit in them, and never
// copies the host's values back. host is not modified.
func VirtualViewLabels(host map[string]string, v *discoveryv1.EndpointSlice) map[string]string {
	out := maps.Clone(host)
	if out == nil {
		out = map[string]string{}
	}
	for _, k := range []string{discoveryv1.LabelServiceName, discoveryv1.LabelManagedBy} {
		if val, ok := v.Labels[k]; ok {
			out[k] = val
		} else {
			delete(out, k)
		}
	}
	return out
}

// HostEndpoints returns the endpoints of virtual slice v as the host copy
// has them: each target reference to a Pod names the host pod (its name
// and namespace translated, UID and resourceVersion dropped: they are the
// virtual pod's); addresses, conditions, hints, node and zone are kept. v
// is not modified.
func HostEndpoints(v *discoveryv1.EndpointSlice, tr translate.Translator) []discoveryv1.Endpoint {
	if v.Endpoints == nil {
		return nil
	}
	out := make([]discoveryv1.Endpoint, len(v.Endpoints))
	for i := range v.Endpoints {
		out[i] = *v.Endpoints[i].DeepCopy()
		if ref := out[i].TargetRef; ref != nil && ref.Kind == "Pod" {
			ns := ref.Namespace
			if ns == "" {
				ns = v.Namespace
			}
			ref.Name, ref.Namespace, ref.UID, ref.ResourceVersion = tr.HostName(ref.Name, ns), tr.HostNamespace, "", ""
		}
	}
	return out
}

// HostPorts returns a copy of the ports of virtual slice v, kept as they
// are.
func HostPorts(v *discoveryv1.EndpointSlice) []discoveryv1.EndpointPort {
	if v.Ports == nil {
		return nil
	}
	out := make([]discoveryv1.EndpointPort, len(v.Ports))
	for i := range v.Ports {
		out[i] = *v.Ports[i].DeepCopy()
	}
	return out
}
