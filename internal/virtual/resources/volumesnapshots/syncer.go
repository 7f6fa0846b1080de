package volumesnapshots

import (
	"context"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// SnapshotSyncer is the VolumeSnapshot resource syncer.
type SnapshotSyncer struct {
	syncer.Kind[*snapshotv1.VolumeSnapshot]
}

// NewSnapshots returns the VolumeSnapshot syncer.
func NewSnapshots(tr translate.Translator) *SnapshotSyncer {
	return &SnapshotSyncer{Kind: syncer.Kind[*snapshotv1.VolumeSnapshot]{Plural: "volumesnapshots",
		Kind:      snapshotv1.SchemeGroupVersion.WithKind("VolumeSnapshot"),
		NewObject: func() *snapshotv1.VolumeSnapshot { return &snapshotv1.VolumeSnapshot{} }, Translator: tr}}
}

// SyncToHost implements syncer.Resource.
func (r *SnapshotSyncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*snapshotv1.VolumeSnapshot]) (ctrl.Result, error) {
	return c.CreateHost(ctx, s, &snapshotv1.VolumeSnapshot{ObjectMeta: syncer.HostMeta(s, c), Spec: HostSnapshotSpec(c.Virtual, r.Translator)})
}

// Sync implements syncer.Resource: the spec to the host, the status back.
func (r *SnapshotSyncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*snapshotv1.VolumeSnapshot]) (ctrl.Result, error) {
	v, h := syncer.ApplyMeta(p)
	h.Spec = HostSnapshotSpec(p.Virtual, r.Translator)
	return ctrl.Result{}, p.Write(ctx, s, h, v, func(vs *snapshotv1.VolumeSnapshot) {
		vs.Status = VirtualSnapshotStatus(p.Host.Status, func(host string) string { return virtualContentName(s, host) })
	})
}

// virtualContentName is the virtual name of host content host: the
// tenant's content it copies, else its own (a stand-in's).
func virtualContentName(s *syncer.Context, host string) string {
	if ref, ok := s.Mappings.VirtualOf("VolumeSnapshotContent", host); ok {
		return ref.Name
	}
	return host
}

// ContentSyncer is the VolumeSnapshotContent resource syncer (the tenant's
// pre-provisioned contents to the host).
type ContentSyncer struct {
	syncer.Kind[*snapshotv1.VolumeSnapshotContent]
}

// NewContents returns the VolumeSnapshotContent syncer.
func NewContents(tr translate.Translator) *ContentSyncer {
	return &ContentSyncer{Kind: syncer.Kind[*snapshotv1.VolumeSnapshotContent]{Plural: "volumesnapshotcontents",
		Kind:      snapshotv1.SchemeGroupVersion.WithKind("VolumeSnapshotContent"),
		NewObject: func() *snapshotv1.VolumeSnapshotContent { return &snapshotv1.VolumeSnapshotContent{} }, Translator: tr, ClusterScoped: true}}
}

// ShouldSync implements syncer.Selector: stand-ins stay virtual.
func (r *ContentSyncer) ShouldSync(_ context.Context, _ *syncer.Context, v *snapshotv1.VolumeSnapshotContent) bool {
	return !IsStandIn(v)
}

// SyncToHost implements syncer.Resource.
func (r *ContentSyncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*snapshotv1.VolumeSnapshotContent]) (ctrl.Result, error) {
	return c.CreateHost(ctx, s, &snapshotv1.VolumeSnapshotContent{ObjectMeta: syncer.HostMeta(s, c), Spec: HostContentSpec(c.Virtual, r.Translator)})
}

// Sync implements syncer.Resource: the deletion policy and the snapshot
// reference to the host (the rest is immutable), the status back.
func (r *ContentSyncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*snapshotv1.VolumeSnapshotContent]) (ctrl.Result, error) {
	want := HostContentSpec(p.Virtual, r.Translator)
	v, h := syncer.ApplyMeta(p)
	h.Spec.DeletionPolicy = want.DeletionPolicy
	if h.Spec.VolumeSnapshotRef.Name != want.VolumeSnapshotRef.Name || h.Spec.VolumeSnapshotRef.Namespace != want.VolumeSnapshotRef.Namespace {
		h.Spec.VolumeSnapshotRef = want.VolumeSnapshotRef
	}
	return ctrl.Result{}, p.Write(ctx, s, h, v, func(vs *snapshotv1.VolumeSnapshotContent) { vs.Status = p.Host.Status.DeepCopy() })
}
