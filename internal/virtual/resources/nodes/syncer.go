package nodes

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/clustersync/clustersync/internal/virtual/syncer"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

// PodNodeNameIndex is the field index on virtual pods by spec.nodeName that
// the node controller uses; Register creates it.
const PodNodeNameIndex = "spec.nodeName"

// Controller removes fake nodes that are no longer needed and creates those
// that are (a pod bound by its spec, e.g. a DaemonSet pod).
type Controller struct{ s *syncer.Context }

// Register adds the fake-node controller to mgr.
func Register(ctx context.Context, mgr ctrl.Manager, host cluster.Cluster, s *syncer.Context) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, PodNodeNameIndex, func(o client.Object) []string {
		if n := o.(*corev1.Pod).Spec.NodeName; n != "" {
			return []string{n}
		}
		return nil
	}); err != nil {
		return err
	}
	byName := func(_ context.Context, n *corev1.Node) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: n.Name}}}
	}
	podNode := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		if n := o.(*corev1.Pod).Spec.NodeName; n != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: n}}}
		}
		return nil
	})
	return ctrl.NewControllerManagedBy(mgr).Named("fake-nodes").
		For(&corev1.Node{}).
		Watches(&corev1.Pod{}, podNode).
		WatchesRawSource(source.Kind(host.GetCache(), &corev1.Node{}, handler.TypedEnqueueRequestsFromMapFunc(byName))).
		Complete(&Controller{s: s})
}

// Reconcile implements reconcile.Reconciler.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	s := c.s
	var pods corev1.PodList
	if err := s.Virtual.List(ctx, &pods, client.MatchingFields{PodNodeNameIndex: req.Name}); err != nil {
		return ctrl.Result{}, err
	}
	needed := len(pods.Items) > 0
	var host corev1.Node
	hostErr := s.Host.Get(ctx, req.NamespacedName, &host)
	if hostErr != nil && !apierrors.IsNotFound(hostErr) {
		return ctrl.Result{}, hostErr
	}
	hostExists := hostErr == nil
	if needed && hostExists {
		return ctrl.Result{}, EnsureFake(ctx, s, req.Name)
	}
	var virtual corev1.Node
	if err := s.Virtual.Get(ctx, req.NamespacedName, &virtual); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if virtual.Labels[translate.LabelFakeNode] != "true" {
		return ctrl.Result{}, nil // a node someone else made
	}
	return ctrl.Result{}, client.IgnoreNotFound(s.Virtual.Delete(ctx, &virtual))
}
