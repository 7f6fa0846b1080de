package nodes

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/syncer"
)

// PodNodeNameIndex is the field index on virtual pods by spec.nodeName that
// the node controllers use; Register and RegisterReal create it.
const PodNodeNameIndex = "spec.nodeName"

// Controller removes fake nodes that are no longer needed and creates those
// that are (a pod bound by its spec, e.g. a DaemonSet pod).
type Controller struct{ s *syncer.Context }

// watchNodes builds a controller named name on virtual Nodes that is also
// woken for node N by virtual pods bound to N and by host node N; it
// creates PodNodeNameIndex.
func watchNodes(ctx context.Context, mgr ctrl.Manager, host cluster.Cluster, name string) (*builder.Builder, error) {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, PodNodeNameIndex, func(o client.Object) []string {
		if n := o.(*corev1.Pod).Spec.NodeName; n != "" {
			return []string{n}
		}
		return nil
	}); err != nil {
		return nil, err
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
	return ctrl.NewControllerManagedBy(mgr).Named(name).
		For(&corev1.Node{}).
		Watches(&corev1.Pod{}, podNode).
		WatchesRawSource(source.Kind(host.GetCache(), &corev1.Node{}, handler.TypedEnqueueRequestsFromMapFunc(byName))), nil
}

// Register adds the fake-node controller to mgr.
func Register(ctx context.Context, mgr ctrl.Manager, host cluster.Cluster, s *syncer.Context) error {
	b, err := watchNodes(ctx, mgr, host, "fake-nodes")
	if err != nil {
		return err
	}
	return b.Complete(&Controller{s: s})
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
		return requeueOnConflict(EnsureFake(ctx, s, req.Name))
	}
	var virtual corev1.Node
	if err := s.Virtual.Get(ctx, req.NamespacedName, &virtual); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !Managed(&virtual) {
		return ctrl.Result{}, nil // a node someone else made
	}
	return ctrl.Result{}, deleteVirtual(ctx, s, &virtual)
}

// deleteVirtual deletes virtual node n, guarded by its UID, and its host
// kubelet Service (networking.advanced.proxyKubelets.byIP).
func deleteVirtual(ctx context.Context, s *syncer.Context, n *corev1.Node) error {
	if s.Config != nil && s.Config.Networking.Advanced.ProxyKubelets.ByIP {
		if err := deleteNodeService(ctx, s, n.Name); err != nil {
			return err
		}
	}
	uid := n.UID
	err := s.Virtual.Delete(ctx, n, client.Preconditions{UID: &uid})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// requeueOnConflict turns a conflict (the object changed since it was
// read) into a retry a second later; other errors are returned.
func requeueOnConflict(err error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return ctrl.Result{}, err
}

// Ensure makes virtual node name exist before a virtual pod is bound to
// it: with sync.fromHost.nodes.enabled a copy of the host node
// (EnsureCopy), else a fake node (EnsureFake).
func Ensure(ctx context.Context, s *syncer.Context, name string) error {
	if s.Config != nil && s.Config.Sync.FromHost.Nodes.Enabled {
		return EnsureCopy(ctx, s, name)
	}
	return EnsureFake(ctx, s, name)
}

// EnsureCopy creates the virtual copy of host node name unless a virtual
// node of that name exists (RealController keeps it up to date, and turns
// a fake node into a copy). It fails when the host node is not found.
func EnsureCopy(ctx context.Context, s *syncer.Context, name string) error {
	key := types.NamespacedName{Name: name}
	var existing corev1.Node
	if err := s.Virtual.Get(ctx, key, &existing); err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	var h corev1.Node
	if err := s.Host.Get(ctx, key, &h); err != nil {
		return err
	}
	var o CopyOptions
	if s.Config != nil {
		o.ClearImageStatus = s.Config.Sync.FromHost.Nodes.ClearImageStatus
	}
	o.Kubelet = s.Kubelet
	t, err := tenantAddresses(ctx, s, name)
	if err != nil {
		return err
	}
	o.Tenant = t
	err = s.Virtual.Create(ctx, VirtualNode(&h, FieldsOf(&h), o))
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// RealController keeps the virtual copies of host nodes
// (sync.fromHost.nodes.enabled): one per host node that Wanted picks,
// created, kept up to date from the host (status always; labels and taints
// merged with the tenant's changes when syncBackChanges is on or the
// virtual scheduler runs, else the host's) and deleted when the host node
// is gone or no longer wanted. With the virtual scheduler, a copy is what
// that scheduler reads (schedulerView).
type RealController struct {
	s   *syncer.Context
	cfg config.SyncNodes
	// hostPods, set with the virtual scheduler, is the cache of every host
	// pod (HostPodTransform, HostPodNodeIndex).
	hostPods client.Reader
	// synced holds, by node name, the labels and taints of each pair after
	// its last sync, the base of Merge (a syncedFields). It lives as long
	// as the syncer: after a restart the first sync of a node has no base.
	synced sync.Map
}

// syncedFields are a pair's Fields after its last sync, and the UID of the
// virtual node they were written to (a node deleted and made again starts
// without a base). hostRV and virtualRV are the versions of the two nodes
// that sync changed, at: a cache still holding one of them is behind that
// sync's writes.
type syncedFields struct {
	uid               types.UID
	fields            Fields
	hostRV, virtualRV string
	at                time.Time
	// hostFields are the host node's Fields after the sync (TenantFields'
	// base).
	hostFields Fields
	// resources are the host's capacity names (TenantResources' base).
	resources []corev1.ResourceName
}

// behindFor bounds how long a cached node that is a version the last sync
// replaced is taken as stale (its watch event may never come, e.g. across
// a relist; then the cache is as fresh as it gets).
const behindFor = 3 * time.Second

// behind reports whether host or virtual, read from the caches, is a
// version the last sync of the pair replaced: merging it against that
// sync's Fields would take the old values for new changes (and write them
// back over the new ones).
func (f syncedFields) behind(host, virtual *corev1.Node, now time.Time) bool {
	if now.Sub(f.at) > behindFor {
		return false
	}
	return (f.hostRV != "" && host.ResourceVersion == f.hostRV) || (f.virtualRV != "" && virtual.ResourceVersion == f.virtualRV)
}

// RegisterReal adds the controller of real nodes, configured by cfg
// (sync.fromHost.nodes), to mgr. hostPods, a cache of every host pod made
// with HostPodTransform, is given with the virtual scheduler (nil
// without): the copies' allocatable then leaves out what the host's other
// pods request.
func RegisterReal(ctx context.Context, mgr ctrl.Manager, host cluster.Cluster, s *syncer.Context, cfg config.SyncNodes, hostPods cache.Cache) error {
	b, err := watchNodes(ctx, mgr, host, "real-nodes")
	if err != nil {
		return err
	}
	c := &RealController{s: s, cfg: cfg}
	if hostPods != nil {
		if err := IndexHostPods(ctx, hostPods); err != nil {
			return err
		}
		c.hostPods = hostPods
		b = b.WatchesRawSource(hostPodSource(hostPods))
	}
	return b.Complete(c)
}

// copyOptions are the CopyOptions of host node name's copy; with
// proxyKubelets.byIP they make the node's host Service.
func (c *RealController) copyOptions(ctx context.Context, name string) (CopyOptions, error) {
	t, err := tenantAddresses(ctx, c.s, name)
	return CopyOptions{ClearImageStatus: c.cfg.ClearImageStatus, Kubelet: c.s.Kubelet, Tenant: t}, err
}

// Reconcile implements reconcile.Reconciler.
func (c *RealController) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	s := c.s
	var pods corev1.PodList
	if err := s.Virtual.List(ctx, &pods, client.MatchingFields{PodNodeNameIndex: req.Name}); err != nil {
		return ctrl.Result{}, err
	}
	var host corev1.Node
	hostErr := s.Host.Get(ctx, req.NamespacedName, &host)
	if hostErr != nil && !apierrors.IsNotFound(hostErr) {
		return ctrl.Result{}, hostErr
	}
	var virtual corev1.Node
	virtualErr := s.Virtual.Get(ctx, req.NamespacedName, &virtual)
	if virtualErr != nil && !apierrors.IsNotFound(virtualErr) {
		return ctrl.Result{}, virtualErr
	}
	virtualExists := virtualErr == nil

	if hostErr != nil || !Wanted(c.cfg.Selector, &host, len(pods.Items) > 0) {
		c.synced.Delete(req.Name)
		if virtualExists && Managed(&virtual) {
			return ctrl.Result{}, deleteVirtual(ctx, s, &virtual)
		}
		return ctrl.Result{}, nil
	}
	var foreign []corev1.Pod
	if c.hostPods != nil {
		var err error
		if foreign, err = c.hostPodsOn(ctx, req.Name); err != nil {
			return ctrl.Result{}, err
		}
	}
	if !virtualExists {
		f := FieldsOf(&host)
		o, err := c.copyOptions(ctx, req.Name)
		if err != nil {
			return ctrl.Result{}, err
		}
		n := VirtualNode(&host, f, o)
		if c.hostPods != nil {
			schedulerView(n, nil, &host, foreign, nil)
		}
		if err := s.Virtual.Create(ctx, n); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return ctrl.Result{RequeueAfter: time.Second}, nil
			}
			return ctrl.Result{}, err
		}
		if got := FieldsOf(n); !equality.Semantic.DeepEqual(got, f) {
			// The virtual API server added to the copy (its NodeTaint
			// admission taints every new node node.kubernetes.io/not-ready):
			// no base, so the next sync (the create wakes it) sets the
			// host's, instead of keeping the addition as the tenant's.
			c.synced.Delete(req.Name)
			return ctrl.Result{}, nil
		}
		c.synced.Store(req.Name, syncedFields{uid: n.UID, fields: f, hostFields: f, resources: resourceNames(host.Status.Capacity)})
		return ctrl.Result{}, nil
	}
	if !Managed(&virtual) {
		return ctrl.Result{}, nil // the tenant's own Node of that name
	}

	var last *syncedFields
	if v, ok := c.synced.Load(req.Name); ok && IsCopy(&virtual) && v.(syncedFields).uid == virtual.UID {
		l := v.(syncedFields)
		last = &l
	}
	if last != nil && last.behind(&host, &virtual, time.Now()) {
		return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	hostFields := FieldsOf(&host)
	done := syncedFields{uid: virtual.UID, fields: hostFields, hostFields: hostFields, at: time.Now(), resources: resourceNames(host.Status.Capacity)}
	var baseVirtual, baseHost *Fields
	if last != nil {
		baseVirtual, baseHost = &last.fields, &last.hostFields
	}
	switch {
	case c.cfg.SyncBackChanges:
		done.fields = Merge(baseVirtual, FieldsOf(&virtual), hostFields)
		done.hostFields = done.fields
	case c.hostPods != nil:
		// The virtual scheduler reads the tenant's labels and taints.
		done.fields = TenantFields(baseVirtual, baseHost, FieldsOf(&virtual), hostFields)
	}
	if c.cfg.SyncBackChanges {
		if patched, changed := WithFields(&host, done.fields); changed {
			// Optimistic lock: a host change since the cache read is
			// merged at the next reconcile instead of being overwritten.
			if err := s.Host.Patch(ctx, patched, client.MergeFromWithOptions(&host, client.MergeFromWithOptimisticLock{})); err != nil {
				return requeueOnConflict(err)
			}
			done.hostRV = host.ResourceVersion
		}
	}
	o, err := c.copyOptions(ctx, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	want := VirtualNode(&host, done.fields, o)
	if c.hostPods != nil {
		var base []corev1.ResourceName
		if last != nil {
			base = last.resources
		}
		schedulerView(want, &virtual, &host, foreign, base)
	}
	changed, err := update(ctx, s, &virtual, want)
	if err != nil {
		return requeueOnConflict(err)
	}
	if changed {
		done.virtualRV = virtual.ResourceVersion
	}
	c.synced.Store(req.Name, done)
	return ctrl.Result{}, nil
}
