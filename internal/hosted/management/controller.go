// Package management is the management controller of hosted clusters,
// written once for every cloud (Traits and a Reader are the cloud's
// half of the contract): for each Cluster with the cloud's config (spec.eksConfig) it
// keeps the operator object (an EKSClusterConfig), refreshes the upstream
// spec (status.eksStatus.upstreamSpec) from the cloud every refresh
// period, and applies the managed-field semantics of
// https://ranchermanager.docs.rancher.com/reference-guides/cluster-configuration/rancher-server-configuration/sync-clusters without its race window
// (package managed): outside changes are adopted into the config and
// reported as events, user changes go to the operator, and a field changed
// on both sides raises condition Conflict and is not written.
package management

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// DefaultRefresh is how often the upstream spec is refreshed (Rancher's
// eks-refresh and aks-refresh settings, 300 seconds).
const DefaultRefresh = 300 * time.Second

// Reconciler is the management controller for the Clusters of one cloud
// (Traits, Reader): it keeps an operator object per Cluster with the cloud's
// config, refreshes the upstream spec, adopts outside changes, reaches the
// cluster's API server and sets the conditions and phase.
type Reconciler[S any, O engine.Object[S]] struct {
	Client client.Client
	// Traits are the cloud's names and rules, and how a Cluster holds its
	// config and status; required.
	Traits Traits[S, O]
	// Reader reads the cloud and reaches the clusters' API servers;
	// required.
	Reader Reader[S, O]
	// APIReader reads the operator object past the cache to confirm an
	// adoption (the manager's GetAPIReader); nil means Client.
	APIReader client.Reader
	// Events records OutsideChange events on Clusters.
	Events events.EventRecorder
	// Refresh is the upstream refresh period; 0 means DefaultRefresh.
	Refresh time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Readings, when not nil, are the operator's readings of the cloud
	// (the same as the operator's Readings): a refresh takes one taken
	// since the last read instead of reading the cloud again.
	Readings *engine.Readings[S]

	// read is when each Cluster's cloud was last read (readDue).
	read reads
}

func (r *Reconciler[S, O]) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler[S, O]) refresh() time.Duration {
	if r.Refresh > 0 {
		return r.Refresh
	}
	return DefaultRefresh
}

// Finalizer holds back the deletion of a Cluster until its operator
// object is gone, i.e. until the operator destroyed what it created (or,
// for an imported cluster, just let go of it).
const Finalizer = "management.clustersync.io/cleanup"

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler[S, O]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var c mgmtv1.Cluster
	if err := r.Client.Get(ctx, req.NamespacedName, &c); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cfg := r.Traits.Config(&c)
	if cfg == nil {
		return ctrl.Result{}, nil
	}
	if c.DeletionTimestamp != nil {
		return r.finalize(ctx, &c)
	}
	if controllerutil.AddFinalizer(&c, Finalizer) {
		if err := r.Client.Update(ctx, &c); err != nil {
			return ctrl.Result{}, err
		}
	}
	op := r.Traits.New()
	opExists := r.Client.Get(ctx, types.NamespacedName{Namespace: hostedv1.Namespace, Name: c.Name}, op) == nil
	config := managed.Copy(*cfg)
	opSpec := config
	var last O // the operator object, when it exists
	if opExists {
		last = op
	}
	var settled bool
	var generation int64
	if opExists {
		rec := op.OperatorRecord()
		settled, generation = engine.Settled(rec), rec.ObservedGeneration
	}
	now := r.now()
	prev, readBefore := r.read.get(c.UID)
	fresh := readDue(prev, readBefore, settled, generation, now, r.refresh())
	var up engine.Upstream[S]
	var found bool
	if fresh {
		at := now
		if rd, ok := r.reading(op, opExists, prev.At); ok {
			up, found, at = rd.Upstream, true, rd.At
		} else {
			var err error
			if up, found, err = r.Reader.Describe(ctx, config, last); err != nil {
				return ctrl.Result{}, err
			}
		}
		prev = lastRead{At: at, Settled: settled, Generation: generation}
		r.read.set(c.UID, prev)
	} else {
		up, found = r.stored(&c)
	}
	upstream, applied := r.Traits.Status(&c)
	obs := observed{cloud: r.Traits.Name, field: r.Traits.ConfigField, imported: r.Traits.Imported(config)}
	if opExists {
		obs.op = op.OperatorRecord()
		r.Traits.CopyStatus(&c, op)
		*applied = nil
		if a := *op.AppliedSpecRef(); a != nil {
			cp := managed.Copy(*a)
			*applied = &cp
		}
		for _, cf := range obs.op.Conflicts {
			obs.conflicts = append(obs.conflicts, fmt.Sprintf("%s (config %s, upstream %s, last applied %s)", cf.Path, cf.Config, cf.Upstream, cf.Applied))
		}
	}
	// The conflicts to answer, where the Cluster's editors read them.
	c.Status.Conflicts = nil
	if opExists {
		c.Status.Conflicts = slices.Clone(obs.op.Conflicts)
	}
	var keeps engine.Keeps // the answers the operator object carries
	if opExists {
		var err error
		if keeps, err = r.keeps(ctx, &c, op); err != nil {
			return ctrl.Result{}, err
		}
	}
	if found {
		*upstream = &up.Spec
		obs.pools = r.Traits.NodePools(up.Spec)
		if up.Version != "" {
			c.Status.Version = up.Version
		}
		c.Status.APIEndpoint, c.Status.CACert = up.Endpoint, up.CACert
	}
	// Outside changes are adopted only while the operator's record is
	// settled (active, no push pending); the operator itself decides what
	// to push and what is in conflict, on what the cloud reports when it
	// pushes.
	if fresh && found && opExists {
		adopted, err := r.adopt(ctx, &c, op, config, up.Spec)
		if err != nil {
			return ctrl.Result{}, err
		}
		if adopted != nil {
			opSpec = *adopted
		}
	}
	if phase := op.OperatorRecord().Phase; found && opExists && (phase == hostedv1.PhaseActive || phase == hostedv1.PhaseUpdating) {
		obs.access = r.reach(ctx, &c, config, up)
		obs.agent = agentAnswers(c.Status.Agent, r.now())
	}
	if err := r.ensureOperatorConfig(ctx, &c, opSpec, keeps); err != nil {
		return ctrl.Result{}, err
	}
	c.Status.Driver = r.Traits.Name
	c.Status.ObservedGeneration = c.Generation
	setConditions(&c, obs)
	if err := r.Client.Status().Update(ctx, &c); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: max(prev.At.Add(r.refresh()).Sub(now), time.Second)}, nil
}

// reading returns the operator's reading of op (when it exists) taken
// after since: one read of the cloud, which a refresh takes in place of
// its own (Readings).
func (r *Reconciler[S, O]) reading(op O, exists bool, since time.Time) (engine.Reading[S], bool) {
	if !exists {
		return engine.Reading[S]{}, false
	}
	return r.Readings.Since(op.GetUID(), since)
}

// stored is the upstream spec c's status holds from the last read (found
// false before the first), for a reconcile that does not read the cloud
// (readDue).
func (r *Reconciler[S, O]) stored(c *mgmtv1.Cluster) (engine.Upstream[S], bool) {
	upstream, _ := r.Traits.Status(c.DeepCopy())
	if *upstream == nil {
		return engine.Upstream[S]{}, false
	}
	return engine.Upstream[S]{Spec: managed.Copy(**upstream), Version: c.Status.Version, Endpoint: c.Status.APIEndpoint, CACert: c.Status.CACert}, true
}

// fresh reads operator object op from the API server (APIReader, else
// the client), not the cache: ok false when it is gone. Errors are the
// API's.
func (r *Reconciler[S, O]) fresh(ctx context.Context, op O) (current O, ok bool, err error) {
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	current = r.Traits.New()
	if err := reader.Get(ctx, client.ObjectKeyFromObject(op), current); err != nil {
		return current, false, client.IgnoreNotFound(err)
	}
	return current, true, nil
}

// adopt takes the outside changes upstream shows into c's config and
// reports each as an OutsideChange event naming the field, the old and the
// new value; it returns the new config, nil when nothing was adopted. op
// is the operator's object as read before upstream was described; an
// adoption is confirmed on op read again, past the cache (APIReader): the
// operator records a push before sending it to the cloud, so a value the
// cloud showed is then either on record or really someone else's.
func (r *Reconciler[S, O]) adopt(ctx context.Context, c *mgmtv1.Cluster, op O, config, upstream S) (*S, error) {
	plan, ready, err := r.plan(op, config, upstream)
	if err != nil || !ready || len(plan.Adopt) == 0 {
		return nil, err
	}
	current, ok, err := r.fresh(ctx, op)
	if !ok || err != nil {
		return nil, err
	}
	if plan, ready, err = r.plan(current, config, upstream); err != nil || !ready || len(plan.Adopt) == 0 {
		return nil, err
	}
	r.Traits.SetConfig(c, plan.Config)
	status := c.Status
	if err := r.Client.Update(ctx, c); err != nil {
		return nil, err
	}
	c.Status = status
	for _, a := range plan.Adopt {
		r.Events.Eventf(c, nil, corev1.EventTypeNormal, "OutsideChange", "Sync",
			"%s changed outside clustersync from %s to %s; adopted into spec.%s", a.Path, show(a.Old), show(a.New), r.Traits.ConfigField)
	}
	return &plan.Config, nil
}

// plan compares config and upstream with op's applied record; ready is
// false while that record is not settled (engine.AppliedFor).
func (r *Reconciler[S, O]) plan(op O, config, upstream S) (managed.Plan[S], bool, error) {
	applied, ready, err := engine.AppliedFor(op, config, r.Traits.Options)
	if err != nil || !ready {
		return managed.Plan[S]{}, false, err
	}
	return managed.Reconcile(config, upstream, applied, r.Traits.Options), true, nil
}

// finalize deletes the Cluster's operator object, reports phase Deleting
// while the operator cleans up, and lets the Cluster go once it is gone.
func (r *Reconciler[S, O]) finalize(ctx context.Context, c *mgmtv1.Cluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(c, Finalizer) {
		return ctrl.Result{}, nil
	}
	op := r.Traits.New()
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: hostedv1.Namespace, Name: c.Name}, op)
	switch {
	case apierrors.IsNotFound(err):
		controllerutil.RemoveFinalizer(c, Finalizer)
		r.read.forget(c.UID)
		return ctrl.Result{}, r.Client.Update(ctx, c)
	case err != nil:
		return ctrl.Result{}, err
	}
	r.Readings.Forget(op.GetUID())
	if op.GetDeletionTimestamp() == nil {
		if err := r.Client.Delete(ctx, op); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
	}
	name := r.Traits.Name
	msg := fmt.Sprintf("the %s operator is deleting the cluster in %s", name, name)
	if r.Traits.Imported(*r.Traits.Config(c)) {
		msg = fmt.Sprintf("disconnecting the imported cluster; %s is not changed", name)
	}
	if f := op.OperatorRecord().FailureMessage; f != "" {
		msg += ": " + f
	}
	if c.Status.Phase != mgmtv1.PhaseDeleting || !meta.IsStatusConditionFalse(c.Status.Conditions, mgmtv1.ConditionReady) {
		c.Status.Phase = mgmtv1.PhaseDeleting
		meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: mgmtv1.ConditionReady, Status: metav1.ConditionFalse,
			Reason: "Deleting", Message: msg, ObservedGeneration: c.Generation})
		if err := r.Client.Status().Update(ctx, c); err != nil {
			return ctrl.Result{}, err
		}
	}
	// The operator object's deletion wakes this controller (it is owned);
	// the requeue is a safety net.
	return ctrl.Result{RequeueAfter: time.Minute}, nil
}

// ensureOperatorConfig keeps the operator object of c with spec and the
// user's answers keeps (its engine.KeepAnnotation), owned by c.
func (r *Reconciler[S, O]) ensureOperatorConfig(ctx context.Context, c *mgmtv1.Cluster, spec S, keeps engine.Keeps) error {
	op := r.Traits.New()
	op.SetName(c.Name)
	op.SetNamespace(hostedv1.Namespace)
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, op, func() error {
		*op.ConfigSpec() = spec
		a, err := keeps.SetOn(op.GetAnnotations())
		if err != nil {
			return err
		}
		op.SetAnnotations(a)
		return controllerutil.SetControllerReference(c, op, r.Client.Scheme())
	})
	return err
}

// keeps reads the user's "keep my value" answers in c's
// engine.KeepAnnotation and returns those that answer a conflict op
// records, for the operator object. The others are removed from c, each
// with an event: ConflictAnswered when the operator object carried it
// (the operator took the answer, or the conflict ended otherwise),
// KeepIgnored (a warning) when it answered no recorded conflict — a
// stale or mistyped entry — or the annotation does not parse. An entry is
// dropped only after op, read again past the cache (APIReader), confirms
// its conflict is gone.
func (r *Reconciler[S, O]) keeps(ctx context.Context, c *mgmtv1.Cluster, op O) (engine.Keeps, error) {
	ks, err := engine.KeepsOf(c.Annotations)
	if err != nil {
		r.Events.Eventf(c, nil, corev1.EventTypeWarning, "KeepIgnored", "Sync", "%v; removed", err)
		return nil, r.setKeeps(ctx, c, nil)
	}
	live, gone := ks.Split(op.OperatorRecord().Conflicts)
	if len(gone) == 0 {
		return live, nil
	}
	current, ok, err := r.fresh(ctx, op)
	if !ok || err != nil {
		return nil, err
	}
	live, gone = ks.Split(current.OperatorRecord().Conflicts)
	if len(gone) == 0 {
		return live, nil
	}
	carried, _ := engine.KeepsOf(current.GetAnnotations())
	for _, path := range slices.Sorted(maps.Keys(gone)) {
		now, err := managed.Value(*r.Traits.Config(c), path, r.Traits.Options)
		if err != nil {
			now = nil // a path of no field: no conflict either
		}
		typ, reason, note := keepGone(path, gone[path], carried, current.OperatorRecord().Conflicts, now, r.Traits.Name, r.Traits.ConfigField)
		r.Events.Eventf(c, nil, typ, reason, "Sync", "%s", note)
	}
	return live, r.setKeeps(ctx, c, live)
}

// keepGone is the event (type, reason, note) reporting the removal of
// the answer k at path, which answers none of the conflicts recorded now:
// carried are the answers the operator object carries, now the config's
// value at path (nil when unknown), cloud and field name the cloud and the
// Cluster's config field in the note.
func keepGone(path string, k engine.Keep, carried engine.Keeps, conflicts []hostedv1.FieldConflict, now []byte, cloud, field string) (typ, reason, note string) {
	cf := hostedv1.FieldConflict{Path: path, Config: string(k.Config), Upstream: string(k.Upstream)}
	for _, other := range conflicts {
		if other.Path == path && carried.Answers(cf) {
			return corev1.EventTypeWarning, "KeepIgnored", fmt.Sprintf("%s: %s moved again (config %s, upstream %s now) before your value %s was pushed over %s; answer the new conflict; removed from annotation %s",
				path, cloud, other.Config, other.Upstream, k.Config, k.Upstream, engine.KeepAnnotation)
		}
	}
	switch {
	case carried.Answers(cf) && now != nil && managed.SameValue(now, k.Config):
		return corev1.EventTypeNormal, "ConflictAnswered", fmt.Sprintf("%s: kept your value %s over %s's %s; removed from annotation %s",
			path, k.Config, cloud, k.Upstream, engine.KeepAnnotation)
	case carried.Answers(cf):
		return corev1.EventTypeNormal, "ConflictAnswered", fmt.Sprintf("%s: the conflict ended otherwise (spec.%s.%s was edited to %s); removed from annotation %s",
			path, field, path, now, engine.KeepAnnotation)
	}
	return corev1.EventTypeWarning, "KeepIgnored", fmt.Sprintf("%s: annotation %s keeps config %s over upstream %s, but no conflict with those values is recorded; removed",
		path, engine.KeepAnnotation, k.Config, k.Upstream)
}

// setKeeps writes ks as c's engine.KeepAnnotation (removed when empty),
// keeping c's status as it is in memory.
func (r *Reconciler[S, O]) setKeeps(ctx context.Context, c *mgmtv1.Cluster, ks engine.Keeps) error {
	a, err := ks.SetOn(c.Annotations)
	if err != nil {
		return err
	}
	c.Annotations = a
	status := c.Status
	if err := r.Client.Update(ctx, c); err != nil {
		return err
	}
	c.Status = status
	return nil
}

func show(v any) string {
	if v == nil {
		return "(unset)"
	}
	return fmt.Sprintf("%v", v)
}
