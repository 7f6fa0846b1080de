package syncer

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CreateHost creates obj on the host. When an object of that name already
// exists — the host cache had not seen it yet, or it is a foreign object —
// the virtual object is reconciled again shortly, and the engine's managed
// check then decides between Sync and a SyncError.
func (s *Context) CreateHost(ctx context.Context, obj client.Object) (ctrl.Result, error) {
	err := s.Host.Create(ctx, obj)
	if kerrors.IsAlreadyExists(err) {
		return ctrl.Result{RequeueAfter: ConflictRetry}, nil
	}
	if err == nil {
		s.echoes.note(obj)
	}
	return ctrl.Result{}, refusedByHost(err)
}

// DeleteHost deletes a managed host object, with a UID precondition so that
// a newer object of the same name is never hit; gone already is success.
func (s *Context) DeleteHost(ctx context.Context, host client.Object) error {
	uid := host.GetUID()
	err := s.Host.Delete(ctx, host, client.Preconditions{UID: &uid})
	if err != nil && !kerrors.IsNotFound(err) && !kerrors.IsConflict(err) {
		return fmt.Errorf("delete host %s/%s: %w", host.GetNamespace(), host.GetName(), err)
	}
	return nil
}

// PatchHost sends a JSON merge patch from before to after to the host, or
// nothing when they are equal.
func (s *Context) PatchHost(ctx context.Context, before, after client.Object) error {
	return s.patch(ctx, s.Host, before, after, false)
}

// PatchVirtual sends a JSON merge patch from before to after to the virtual
// cluster, or nothing when they are equal.
func (s *Context) PatchVirtual(ctx context.Context, before, after client.Object) error {
	return s.patch(ctx, s.Virtual, before, after, false)
}

// PatchVirtualStatus patches the status subresource of a virtual object.
func (s *Context) PatchVirtualStatus(ctx context.Context, before, after client.Object) error {
	return s.patch(ctx, s.Virtual, before, after, true)
}

// PatchHostStatus patches the status subresource of a host object.
func (s *Context) PatchHostStatus(ctx context.Context, before, after client.Object) error {
	return s.patch(ctx, s.Host, before, after, true)
}

func (s *Context) patch(ctx context.Context, c client.Client, before, after client.Object, status bool) error {
	if equality.Semantic.DeepEqual(before, after) {
		return nil
	}
	// No optimistic lock: a merge patch carries only the keys that differ, so
	// keys other writers (host controllers, kwok) add meanwhile are kept, and
	// the frequent status writes on the host do not turn into conflicts.
	p := client.MergeFrom(before)
	var err error
	if status {
		err = c.Status().Patch(ctx, after, p)
	} else {
		err = c.Patch(ctx, after, p)
	}
	if err == nil {
		s.echoes.note(after)
	}
	if c == s.Host {
		return refusedByHost(err)
	}
	return err
}
