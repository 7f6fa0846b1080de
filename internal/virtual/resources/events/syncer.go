// Package events copies host events about synced objects into the virtual
// cluster (vCluster's default fromHost.events): an event about host pod
// web-x-team-x-vc appears in namespace team about pod web, with host names
// in its message replaced by the virtual ones. Events flow one way only.
package events

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/clustersync/clustersync/internal/virtual/mapping"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// kinds are the involved-object kinds whose events are copied, with a
// constructor for reading the virtual object.
var kinds = map[string]func() client.Object{
	"Pod":                   func() client.Object { return &corev1.Pod{} },
	"Service":               func() client.Object { return &corev1.Service{} },
	"Secret":                func() client.Object { return &corev1.Secret{} },
	"ConfigMap":             func() client.Object { return &corev1.ConfigMap{} },
	"PersistentVolumeClaim": func() client.Object { return &corev1.PersistentVolumeClaim{} },
	"Ingress":               func() client.Object { return &networkingv1.Ingress{} },
}

// Controller copies host events to the virtual cluster.
type Controller struct{ s *syncer.Context }

// Register adds the event controller to mgr.
func Register(mgr ctrl.Manager, host cluster.Cluster, s *syncer.Context) error {
	return ctrl.NewControllerManagedBy(mgr).Named("events").
		WatchesRawSource(source.Kind(host.GetCache(), &corev1.Event{}, &handler.TypedEnqueueRequestForObject[*corev1.Event]{})).
		Complete(&Controller{s: s})
}

// VirtualEvent translates host event h about the host object of virtual
// object virtual into the event to create in the virtual cluster. hostName
// is the involved object's host name.
func VirtualEvent(h *corev1.Event, virtual client.Object, hostName string) *corev1.Event {
	name := virtual.GetName() + strings.TrimPrefix(h.Name, hostName)
	if !strings.HasPrefix(h.Name, hostName) {
		name = virtual.GetName() + "." + h.Name
	}
	e := h.DeepCopy()
	e.ObjectMeta = metav1.ObjectMeta{Name: name, Namespace: virtual.GetNamespace()}
	e.InvolvedObject = corev1.ObjectReference{
		Kind: h.InvolvedObject.Kind, APIVersion: h.InvolvedObject.APIVersion, FieldPath: h.InvolvedObject.FieldPath,
		Namespace: virtual.GetNamespace(), Name: virtual.GetName(), UID: virtual.GetUID(),
	}
	e.Related = nil
	// "Successfully assigned HOSTNS/HOSTNAME to node": the host namespace
	// goes with the name, so that the tenant reads only virtual names.
	msg := h.Message
	if hns := h.InvolvedObject.Namespace; hns != "" && virtual.GetNamespace() != "" {
		msg = strings.ReplaceAll(msg, hns+"/"+hostName, virtual.GetNamespace()+"/"+virtual.GetName())
	}
	e.Message = strings.ReplaceAll(msg, hostName, virtual.GetName())
	return e
}

// Reconcile implements reconcile.Reconciler.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	s := c.s
	var h corev1.Event
	if err := s.Host.Get(ctx, req.NamespacedName, &h); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	newObj, ok := kinds[h.InvolvedObject.Kind]
	if !ok || h.InvolvedObject.Namespace != s.Translator.HostNamespace {
		return ctrl.Result{}, nil
	}
	ref, ok := s.Mappings.VirtualOf(h.InvolvedObject.Kind, h.InvolvedObject.Name)
	if !ok {
		// The syncer records a mapping once the host object's create has
		// returned, and the host (its scheduler, say) can report on the
		// object before that: ask the host object itself, past the cache.
		host := newObj()
		err := s.HostReader.Get(ctx, types.NamespacedName{Namespace: h.InvolvedObject.Namespace, Name: h.InvolvedObject.Name}, host)
		// The host copy's object-kind annotation is the kind's
		// GroupVersionKind string (e.g. "/v1, Kind=Pod"), from the event's
		// apiVersion and kind.
		gvk := schema.FromAPIVersionAndKind(h.InvolvedObject.APIVersion, h.InvolvedObject.Kind).String()
		if err != nil || !s.Translator.IsManaged(host, gvk, nil) {
			return ctrl.Result{}, client.IgnoreNotFound(err) // not an object of this virtual cluster
		}
		v := translate.VirtualRefOf(host)
		ref = mapping.Ref{Kind: h.InvolvedObject.Kind, Namespace: v.Namespace, Name: v.Name}
	}
	virtual := newObj()
	if err := s.Virtual.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, virtual); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	want := VirtualEvent(&h, virtual, h.InvolvedObject.Name)
	var cur corev1.Event
	err := s.Virtual.Get(ctx, client.ObjectKeyFromObject(want), &cur)
	if apierrors.IsNotFound(err) {
		err := client.IgnoreAlreadyExists(s.Virtual.Create(ctx, want))
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return ctrl.Result{}, nil // the namespace goes, and its events with it
		}
		return ctrl.Result{}, err
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	next := cur.DeepCopy()
	next.Count, next.LastTimestamp, next.Message, next.Series = want.Count, want.LastTimestamp, want.Message, want.Series
	return ctrl.Result{}, s.PatchVirtual(ctx, &cur, next)
}
