package persistentvolumes

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clustersync/clustersync/internal/virtual/policy"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// Syncer is the PersistentVolume resource syncer (the tenant's volumes to
// the host).
type Syncer struct {
	syncer.Kind[*corev1.PersistentVolume]
	// hostClass maps a virtual class name to the host's (pvcs.Classes).
	hostClass func(ctx context.Context, s *syncer.Context, name string) string
	// RefuseNodeFiles keeps hostPath and local volumes off the host
	// (policy.NodeFilesVolume): set unless policies.podSecurityStandard is
	// privileged.
	RefuseNodeFiles bool
}

// New returns the PersistentVolume syncer; hostClass names the host class
// of a virtual class.
func New(tr translate.Translator, hostClass func(ctx context.Context, s *syncer.Context, name string) string) *Syncer {
	return &Syncer{hostClass: hostClass, Kind: syncer.Kind[*corev1.PersistentVolume]{Plural: "persistentvolumes",
		Kind:      corev1.SchemeGroupVersion.WithKind("PersistentVolume"),
		NewObject: func() *corev1.PersistentVolume { return &corev1.PersistentVolume{} }, Translator: tr, ClusterScoped: true}}
}

// ShouldSync implements syncer.Selector: stand-ins for host volumes stay
// virtual.
func (r *Syncer) ShouldSync(_ context.Context, _ *syncer.Context, v *corev1.PersistentVolume) bool {
	return !IsFake(v)
}

func (r *Syncer) spec(ctx context.Context, s *syncer.Context, v *corev1.PersistentVolume) corev1.PersistentVolumeSpec {
	return HostSpec(v, r.Translator, func(name string) string { return r.hostClass(ctx, s, name) })
}

// SyncToHost implements syncer.Resource.
func (r *Syncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*corev1.PersistentVolume]) (ctrl.Result, error) {
	if src := policy.NodeFilesVolume(&c.Virtual.Spec); src != "" && r.RefuseNodeFiles {
		s.ReportSyncError(c.Virtual, "not synced to the host: a %s volume gives its pods the node's files, which the Pod Security Standard "+
			"of policies.podSecurityStandard forbids (hostPath volumes); only the privileged level allows it", src)
		return ctrl.Result{}, nil
	}
	return c.CreateHost(ctx, s, &corev1.PersistentVolume{ObjectMeta: syncer.HostMeta(s, c), Spec: r.spec(ctx, s, c.Virtual)})
}

// Sync implements syncer.Resource: the fields of a volume the API server
// lets change (capacity, access modes, reclaim policy, mount options, the
// claim it is reserved for) flow to the host; the phase back.
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*corev1.PersistentVolume]) (ctrl.Result, error) {
	want := r.spec(ctx, s, p.Virtual)
	v, h := syncer.ApplyMeta(p)
	h.Spec.Capacity, h.Spec.AccessModes = want.Capacity, want.AccessModes
	h.Spec.PersistentVolumeReclaimPolicy, h.Spec.MountOptions = want.PersistentVolumeReclaimPolicy, want.MountOptions
	if want.ClaimRef != nil && (h.Spec.ClaimRef == nil || h.Spec.ClaimRef.Name != want.ClaimRef.Name) {
		h.Spec.ClaimRef = want.ClaimRef
	}
	return ctrl.Result{}, p.Write(ctx, s, h, v, func(vs *corev1.PersistentVolume) { vs.Status = *p.Host.Status.DeepCopy() })
}
