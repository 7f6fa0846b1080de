package persistentvolumes

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
)

// ClaimVolumeIndex is the field index on virtual claims by spec.volumeName
// that the stand-in controller uses; RegisterFake creates it.
const ClaimVolumeIndex = "spec.volumeName"

// FakeController keeps one stand-in virtual volume (Fake) for each volume
// name a bound virtual claim carries that no volume of the tenant has, and
// deletes a stand-in no claim is bound to. It only reads and writes the
// virtual cluster.
type FakeController struct{ s *syncer.Context }

// RegisterFake adds the stand-in controller to mgr (the virtual cluster's
// manager), named "fake-persistentvolumes".
func RegisterFake(ctx context.Context, mgr ctrl.Manager, s *syncer.Context) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.PersistentVolumeClaim{}, ClaimVolumeIndex, func(o client.Object) []string {
		if n := o.(*corev1.PersistentVolumeClaim).Spec.VolumeName; n != "" {
			return []string{n}
		}
		return nil
	}); err != nil {
		return err
	}
	byVolume := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		if n := o.(*corev1.PersistentVolumeClaim).Spec.VolumeName; n != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: n}}}
		}
		return nil
	})
	return ctrl.NewControllerManagedBy(mgr).Named("fake-persistentvolumes").
		For(&corev1.PersistentVolume{}).
		Watches(&corev1.PersistentVolumeClaim{}, byVolume).
		Complete(&FakeController{s: s})
}

// Reconcile implements reconcile.Reconciler for the volume name req.Name.
func (c *FakeController) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	s := c.s
	var claims corev1.PersistentVolumeClaimList
	if err := s.Virtual.List(ctx, &claims, client.MatchingFields{ClaimVolumeIndex: req.Name}); err != nil {
		return ctrl.Result{}, err
	}
	var claim *corev1.PersistentVolumeClaim
	for i := range claims.Items {
		if Bound(&claims.Items[i]) && claims.Items[i].DeletionTimestamp == nil {
			claim = &claims.Items[i]
			break
		}
	}
	var pv corev1.PersistentVolume
	err := s.Virtual.Get(ctx, req.NamespacedName, &pv)
	switch {
	case apierrors.IsNotFound(err):
		if claim == nil {
			return ctrl.Result{}, nil
		}
		want := Fake(claim)
		if err := s.Virtual.Create(ctx, want); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return ctrl.Result{RequeueAfter: syncer.ConflictRetry}, nil
			}
			return ctrl.Result{}, fmt.Errorf("create stand-in volume %s: %w", want.Name, err)
		}
		want.Status.Phase = corev1.VolumeBound
		return ctrl.Result{}, s.Virtual.Status().Update(ctx, want)
	case err != nil:
		return ctrl.Result{}, err
	case !IsFake(&pv):
		return ctrl.Result{}, nil // the tenant's own volume
	case claim == nil:
		if pv.Status.Phase == corev1.VolumeBound {
			// Released first: the virtual pv-protection controller keeps
			// the finalizer of a Bound volume, and the deletion would wait.
			before := pv.DeepCopy()
			pv.Status.Phase = corev1.VolumeReleased
			if err := s.PatchVirtualStatus(ctx, before, &pv); err != nil {
				return ctrl.Result{}, client.IgnoreNotFound(err)
			}
		}
		uid := pv.UID
		return ctrl.Result{}, client.IgnoreNotFound(s.Virtual.Delete(ctx, &pv, client.Preconditions{UID: &uid}))
	case pv.Status.Phase != corev1.VolumeBound:
		before := pv.DeepCopy()
		pv.Status.Phase = corev1.VolumeBound
		return ctrl.Result{}, s.PatchVirtualStatus(ctx, before, &pv)
	}
	return ctrl.Result{}, nil
}
