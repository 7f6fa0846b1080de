package endpointslices

import (
	"context"

	discoveryv1 "k8s.io/api/discovery/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Syncer is the EndpointSlice resource syncer.
type Syncer struct {
	syncer.Kind[*discoveryv1.EndpointSlice]
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
	return c.CreateHost(ctx, s, &discoveryv1.EndpointSlice{ObjectMeta: meta, AddressType: c.Virtual.AddressType,
		Endpoints: HostEndpoints(c.Virtual, r.Translator), Ports: HostPorts(c.Virtual)})
}

// Sync implements syncer.Resource: endpoints and ports flow to the host
// (the address type cannot change); nothing flows back but labels and
// annotations.
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*discoveryv1.EndpointSlice]) (ctrl.Result, error) {
	v, h := syncer.ApplyMeta(p)
	h.Labels = HostLabels(h.Labels, p.Virtual, r.Translator)
	h.Endpoints = HostEndpoints(p.Virtual, r.Translator)
	h.Ports = HostPorts(p.Virtual)
	return ctrl.Result{}, p.Write(ctx, s, h, v, nil)
}
