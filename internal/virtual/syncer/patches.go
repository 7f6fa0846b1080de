package syncer

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/patches"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// SetPatches sets the patches (sync.toHost.<kind>.patches, compiled) of
// the kind gvk; call it before the kind's Register. A nil set means none.
func (s *Context) SetPatches(gvk schema.GroupVersionKind, set *patches.Set) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if set == nil {
		delete(s.patches, gvk)
		return
	}
	s.patches[gvk] = set
}

// patchesOf returns the patches of kind gvk, nil when it has none.
func (s *Context) patchesOf(gvk schema.GroupVersionKind) *patches.Set {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.patches[gvk]
}

// PatchesRef is the referrer under which the mapping store records what
// the reference patches of virtual object r name, beside what the kind's
// own fields reference (recorded under r).
func PatchesRef(r mapping.Ref) mapping.Ref {
	r.Kind += "/patches"
	return r
}

// CreateHost creates obj, the host object for c.Virtual, on the host after
// applying the kind's patches to it in place (so obj has the host's UID
// afterwards, as with Context.CreateHost). A patch that fails returns a
// *patches.Error and nothing is created.
func (c *Create[T]) CreateHost(ctx context.Context, s *Context, obj T) (ctrl.Result, error) {
	if err := patchInPlace(c.patches, obj, c.Ref, s.Translator); err != nil {
		return ctrl.Result{}, err
	}
	res, err := s.CreateHost(ctx, obj)
	c.created = err == nil && res.IsZero()
	return res, err
}

// PatchHost patches the host object of p to after, which a resource built
// from a copy of p.Host: after gets the kind's patches applied (in place),
// and the merge patch is computed against the host object as the host has
// it (p.Host is the host object with the patches undone, see
// patches.Set.ToVirtual, and as a HostViewer shows it). A patch that fails
// returns a *patches.Error and nothing is written.
func (p *Pair[T]) PatchHost(ctx context.Context, s *Context, after T) error {
	if p.patches == nil {
		return s.PatchHost(ctx, p.patched, after)
	}
	if err := patchInPlace(p.patches, after, p.Ref, s.Translator); err != nil {
		return err
	}
	return s.PatchHost(ctx, p.patched, after)
}

// patchInPlace applies set to obj through its unstructured form.
func patchInPlace(set *patches.Set, obj client.Object, vref translate.VirtualRef, tr translate.Translator) error {
	if set == nil {
		return nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return fmt.Errorf("patches: %w", err)
	}
	if err := set.ToHost(m, vref, tr); err != nil {
		return err
	}
	return fromUnstructured(m, obj)
}

// fromUnstructured replaces obj's content by m: a field a patch removed
// must not survive from before.
func fromUnstructured(m map[string]any, obj client.Object) error {
	reflect.ValueOf(obj).Elem().SetZero()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, obj); err != nil {
		return fmt.Errorf("patches: the patched object does not decode: %w", err)
	}
	return nil
}

// unpatched returns host with set's patches undone against virtual
// (patches.Set.ToVirtual), as a new object of the same type.
func unpatched[T client.Object](set *patches.Set, host, virtual T, vref translate.VirtualRef) (T, error) {
	var zero T
	hm, err := runtime.DefaultUnstructuredConverter.ToUnstructured(host)
	if err != nil {
		return zero, err
	}
	vm, err := runtime.DefaultUnstructuredConverter.ToUnstructured(virtual)
	if err != nil {
		return zero, err
	}
	view, err := set.ToVirtual(hm, vm, vref)
	if err != nil {
		return zero, err
	}
	out := DeepCopy(host)
	return out, fromUnstructured(view, out)
}

// patchReferences lists what the reference patches of set name in virtual.
func patchReferences(set *patches.Set, virtual client.Object) []mapping.Ref {
	if !set.HasReferences() {
		return nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(virtual)
	if err != nil {
		return nil
	}
	return set.References(m, virtual.GetNamespace())
}

// Write ends a Sync: it patches the host object to h (PatchHost, built
// from a copy of p.Host), the virtual object to v (built from a copy of
// p.Virtual), and, when status is set, the virtual object's status
// subresource to a copy of p.Virtual that status changed. It returns the
// first error; what follows it is not written.
func (p *Pair[T]) Write(ctx context.Context, s *Context, h, v T, status func(vs T)) error {
	if err := p.PatchHost(ctx, s, h); err != nil {
		return err
	}
	if err := s.PatchVirtual(ctx, p.Virtual, v); err != nil {
		return err
	}
	if status == nil {
		return nil
	}
	vs := DeepCopy(p.Virtual)
	status(vs)
	return s.PatchVirtualStatus(ctx, p.Virtual, vs)
}
