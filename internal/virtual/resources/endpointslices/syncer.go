package endpointslices

import (
	"context"
	"net/netip"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/clustersync/clustersync/internal/virtual/policy"
	"github.com/clustersync/clustersync/internal/virtual/resources/pods"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Syncer is the EndpointSlice resource syncer.
type Syncer struct {
	syncer.Kind[*discoveryv1.EndpointSlice]
	// RestrictAddresses keeps on the host only the addresses of the
	// tenant's own pods in IPv4 and IPv6 slices
	// (policies.isolation.endpoints, pods.OwnPodIPs).
	RestrictAddresses bool
}

// RestrictEndpoints keeps in eps only the addresses policy.AllowedAddresses
// allows for own (the tenant's pod IPs); refused lists the others, in
// order. An endpoint left with no address is dropped. FQDN slices are kept
// as they are: kube-proxy does not route to them. eps is not modified.
func RestrictEndpoints(addressType discoveryv1.AddressType, eps []discoveryv1.Endpoint, own map[netip.Addr]bool) (kept []discoveryv1.Endpoint, refused []string) {
	if addressType == discoveryv1.AddressTypeFQDN {
		return eps, nil
	}
	for _, ep := range eps {
		allowed, no := policy.AllowedAddresses(ep.Addresses, own)
		refused = append(refused, no...)
		if len(allowed) > 0 {
			ep = *ep.DeepCopy()
			ep.Addresses = allowed
			kept = append(kept, ep)
		}
	}
	return kept, refused
}

// hostEndpoints are the host copy's endpoints: HostEndpoints, restricted
// to the tenant's own pods when RestrictAddresses, with a Warning
// PolicyEnforced event naming the addresses left out.
func (r *Syncer) hostEndpoints(ctx context.Context, s *syncer.Context, v *discoveryv1.EndpointSlice) ([]discoveryv1.Endpoint, error) {
	eps := HostEndpoints(v, r.Translator)
	if !r.RestrictAddresses {
		return eps, nil
	}
	own, err := pods.OwnPodIPs(ctx, s)
	if err != nil {
		return nil, err
	}
	eps, refused := RestrictEndpoints(v.AddressType, eps, own)
	pods.ReportRefusedAddresses(s, v, refused)
	return eps, nil
}

// Watch implements syncer.Watcher: with RestrictAddresses, a slice is
// checked again when a pod whose IP it names gets or loses it.
func (r *Syncer) Watch(b *builder.Builder, s *syncer.Context, host cluster.Cluster) *builder.Builder {
	if !r.RestrictAddresses {
		return b
	}
	return pods.WatchPodIPs(b, s, host, func() *discoveryv1.EndpointSliceList { return &discoveryv1.EndpointSliceList{} },
		func(l *discoveryv1.EndpointSliceList) map[reconcile.Request][]string {
			out := map[reconcile.Request][]string{}
			for _, es := range l.Items {
				req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: es.Namespace, Name: es.Name}}
				for _, ep := range es.Endpoints {
					out[req] = append(out[req], ep.Addresses...)
				}
			}
			return out
		})
}

// New returns the EndpointSlice syncer.
func New(tr translate.Translator) *Syncer {
	return &Syncer{Kind: syncer.Kind[*discoveryv1.EndpointSlice]{Plural: "endpointslices",
		Kind:      discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"),
		NewObject: func() *discoveryv1.EndpointSlice { return &discoveryv1.EndpointSlice{} }, Translator: tr}}
}

// ShouldSync implements syncer.Selector with IsSynced: the slices of
// Kubernetes' controllers stay in the virtual cluster, and the host copy
// of a slice relabelled as theirs is deleted.
func (r *Syncer) ShouldSync(_ context.Context, _ *syncer.Context, v *discoveryv1.EndpointSlice) bool {
	return IsSynced(v)
}

// VirtualView implements syncer.HostViewer: the service-name and
// managed-by labels the syncer sets on the host copy are not host edits.
func (r *Syncer) VirtualView(host, virtual *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
	out := host.DeepCopy()
	out.Labels = VirtualViewLabels(host.Labels, virtual)
	return out
}

// SyncToHost implements syncer.Resource.
func (r *Syncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*discoveryv1.EndpointSlice]) (ctrl.Result, error) {
	meta := syncer.HostMeta(s, c)
	meta.Labels = HostLabels(meta.Labels, c.Virtual, r.Translator)
	eps, err := r.hostEndpoints(ctx, s, c.Virtual)
	if err != nil {
		return ctrl.Result{}, err
	}
	return c.CreateHost(ctx, s, &discoveryv1.EndpointSlice{ObjectMeta: meta, AddressType: c.Virtual.AddressType,
		Endpoints: eps, Ports: HostPorts(c.Virtual)})
}

// Sync implements syncer.Resource: endpoints and ports flow to the host
// (the address type cannot change); nothing flows back but labels and
// annotations.
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*discoveryv1.EndpointSlice]) (ctrl.Result, error) {
	eps, err := r.hostEndpoints(ctx, s, p.Virtual)
	if err != nil {
		return ctrl.Result{}, err
	}
	v, h := syncer.ApplyMeta(p)
	h.Labels = HostLabels(h.Labels, p.Virtual, r.Translator)
	h.Endpoints = eps
	h.Ports = HostPorts(p.Virtual)
	return ctrl.Result{}, p.Write(ctx, s, h, v, nil)
}
