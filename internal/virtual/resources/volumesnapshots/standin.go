package volumesnapshots

import (
	"context"
	"fmt"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
)

// StandInController keeps one stand-in virtual content (StandIn) for each
// host content the host made for a virtual snapshot, with the host
// content's status, and deletes a stand-in whose snapshot is gone.
type StandInController struct {
	s    *syncer.Context
	host client.Reader
}

// RegisterStandIns adds the stand-in controller to mgr (the virtual
// cluster's manager), named "standin-volumesnapshotcontents", keyed by
// content name.
func RegisterStandIns(mgr ctrl.Manager, host cluster.Cluster, s *syncer.Context) error {
	bound := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		st := o.(*snapshotv1.VolumeSnapshot).Status
		if st == nil || st.BoundVolumeSnapshotContentName == nil {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: *st.BoundVolumeSnapshotContentName}}}
	})
	byName := func(_ context.Context, c *snapshotv1.VolumeSnapshotContent) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: c.Name}}}
	}
	return ctrl.NewControllerManagedBy(mgr).Named("standin-volumesnapshotcontents").
		For(&snapshotv1.VolumeSnapshotContent{}).
		Watches(&snapshotv1.VolumeSnapshot{}, bound).
		WatchesRawSource(source.Kind(host.GetCache(), &snapshotv1.VolumeSnapshotContent{}, handler.TypedEnqueueRequestsFromMapFunc(byName))).
		Complete(&StandInController{s: s, host: host.GetCache()})
}

// Reconcile implements reconcile.Reconciler for content name req.Name.
func (c *StandInController) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	s := c.s
	if _, ok := s.Mappings.VirtualOf("VolumeSnapshotContent", req.Name); ok {
		return ctrl.Result{}, nil // the host copy of the tenant's content
	}
	var cur snapshotv1.VolumeSnapshotContent
	err := s.Virtual.Get(ctx, req.NamespacedName, &cur)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	if exists && !IsStandIn(&cur) {
		return ctrl.Result{}, nil // the tenant's own
	}
	snap, err := c.boundSnapshot(ctx, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	var want *snapshotv1.VolumeSnapshotContent
	if snap != nil {
		var h snapshotv1.VolumeSnapshotContent
		if err := c.host.Get(ctx, req.NamespacedName, &h); err == nil {
			want = StandIn(&h, snap)
		} else if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
	}
	switch {
	case want == nil && exists:
		uid := cur.UID
		return ctrl.Result{}, client.IgnoreNotFound(s.Virtual.Delete(ctx, &cur, client.Preconditions{UID: &uid}))
	case want == nil:
		return ctrl.Result{}, nil
	case !exists:
		status := want.Status
		if err := s.Virtual.Create(ctx, want); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return ctrl.Result{RequeueAfter: syncer.ConflictRetry}, nil
			}
			return ctrl.Result{}, fmt.Errorf("create stand-in content %s: %w", want.Name, err)
		}
		want.Status = status
		return ctrl.Result{}, s.Virtual.Status().Update(ctx, want)
	case !equality.Semantic.DeepEqual(cur.Status, want.Status):
		after := cur.DeepCopy()
		after.Status = want.Status
		return ctrl.Result{}, s.PatchVirtualStatus(ctx, &cur, after)
	}
	return ctrl.Result{}, nil
}

// boundSnapshot is the virtual snapshot whose status names content name,
// nil when none does.
func (c *StandInController) boundSnapshot(ctx context.Context, name string) (*snapshotv1.VolumeSnapshot, error) {
	var list snapshotv1.VolumeSnapshotList
	if err := c.s.Virtual.List(ctx, &list); err != nil {
		return nil, err
	}
	for i := range list.Items {
		v := &list.Items[i]
		if st := v.Status; st != nil && st.BoundVolumeSnapshotContentName != nil && *st.BoundVolumeSnapshotContentName == name && v.DeletionTimestamp == nil {
			return v, nil
		}
	}
	return nil, nil
}
