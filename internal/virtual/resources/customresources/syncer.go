package customresources

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/virtual/resources/fromhost"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// CopyDefinition copies the host's CustomResourceDefinition name into the
// virtual cluster (creating it, or updating a copy made before) and waits,
// up to a minute, until the virtual API server serves it. A virtual CRD
// of that name the tenant made itself is left as it is and used. It
// returns the Definition, or an error saying the host has no such CRD.
// It reads both sides live (host, virtual: API readers, as it runs before
// the caches start) and writes with write.
func CopyDefinition(ctx context.Context, host, virtual client.Reader, write client.Writer, name string) (Definition, error) {
	var h apiextensionsv1.CustomResourceDefinition
	if err := host.Get(ctx, client.ObjectKey{Name: name}, &h); err != nil {
		if apierrors.IsNotFound(err) {
			return Definition{}, fmt.Errorf("the host has no CustomResourceDefinition %s", name)
		}
		return Definition{}, fmt.Errorf("read the host's CustomResourceDefinition %s: %w", name, err)
	}
	def, err := Describe(&h)
	if err != nil {
		return Definition{}, err
	}
	if err := InstallDefinition(ctx, virtual, write, VirtualDefinition(&h)); err != nil {
		return Definition{}, err
	}
	return def, nil
}

// InstallDefinition creates CRD want in the virtual cluster, or updates a
// copy made before (labelled fromhost.Label) whose spec differs, and
// waits, up to a minute, until the virtual API server serves it. A CRD of
// that name the tenant made itself is left as it is. It reads with
// virtual (an API reader) and writes with write.
func InstallDefinition(ctx context.Context, virtual client.Reader, write client.Writer, want *apiextensionsv1.CustomResourceDefinition) error {
	name := want.Name
	var cur apiextensionsv1.CustomResourceDefinition
	switch err := virtual.Get(ctx, client.ObjectKey{Name: name}, &cur); {
	case apierrors.IsNotFound(err):
		if err := write.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("copy CustomResourceDefinition %s: %w", name, err)
		}
	case err != nil:
		return err
	case cur.Labels[fromhost.Label] == "true" && !equality.Semantic.DeepEqual(cur.Spec, want.Spec):
		cur.Spec = want.Spec
		if err := write.Update(ctx, &cur); err != nil {
			return fmt.Errorf("update the copy of CustomResourceDefinition %s: %w", name, err)
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := virtual.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CustomResourceDefinition %s is not established in the virtual cluster: %w", name, err)
	}
	return nil
}

// Syncer syncs the objects of one namespaced custom resource kind to the
// host.
type Syncer struct {
	syncer.Kind[*unstructured.Unstructured]
	def Definition
}

// New returns the Syncer of def, whose controller is named after the
// customResources key name.
func New(tr translate.Translator, name string, def Definition) *Syncer {
	return &Syncer{def: def, Kind: syncer.Kind[*unstructured.Unstructured]{Plural: name, Kind: def.GVK, Translator: tr,
		NewObject: func() *unstructured.Unstructured {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(def.GVK)
			return u
		}}}
}

// SyncToHost implements syncer.Resource.
func (r *Syncer) SyncToHost(ctx context.Context, s *syncer.Context, c *syncer.Create[*unstructured.Unstructured]) (ctrl.Result, error) {
	return c.CreateHost(ctx, s, HostObject(c.Virtual, r.def.GVK, c.HostName, s.Translator.HostNamespace, c.Labels, c.Annotations))
}

// Sync implements syncer.Resource: the content flows to the host, the
// status back (through the status subresource when the kind has one).
func (r *Syncer) Sync(ctx context.Context, s *syncer.Context, p *syncer.Pair[*unstructured.Unstructured]) (ctrl.Result, error) {
	v, h := syncer.ApplyMeta(p)
	SetContent(h, p.Virtual)
	if err := p.PatchHost(ctx, s, h); err != nil {
		return ctrl.Result{}, err
	}
	status, hasStatus := p.Host.Object["status"]
	if !r.def.StatusSubresource {
		if hasStatus {
			v.Object["status"] = status
		} else {
			delete(v.Object, "status")
		}
		return ctrl.Result{}, s.PatchVirtual(ctx, p.Virtual, v)
	}
	if err := s.PatchVirtual(ctx, p.Virtual, v); err != nil {
		return ctrl.Result{}, err
	}
	if !hasStatus {
		return ctrl.Result{}, nil
	}
	vs := syncer.DeepCopy(p.Virtual)
	vs.Object["status"] = status
	return ctrl.Result{}, s.PatchVirtualStatus(ctx, p.Virtual, vs)
}
