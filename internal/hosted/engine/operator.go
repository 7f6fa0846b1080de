package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// DefaultPoll is how often a cluster that is being created, changed or
// deleted is read again (Rancher's operators: 30 seconds).
const DefaultPoll = 30 * time.Second

// firstPassDelay is how soon the first update pass follows activation: long
// enough for the informer cache to hold the status just written.
const firstPassDelay = time.Second

// ErrWaiting is what Session.Apply returns (or wraps) when a change waits
// for something: a resource the provider generates first (a CloudFormation
// stack), or the cloud busy with an operation someone else started (AKS's
// 409 OperationNotAllowed) or changed since this pass read it (a 412 on
// If-Match). The write-ahead is undone, the pass ends without a failure,
// the phase is updating, and the next pass reads the cloud again.
var ErrWaiting = errors.New("waiting for a generated resource")

// failure is an error Fail marked for status.failureMessage.
type failure struct{ err error }

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

// Fail marks err as one the user should see: the engine records it in
// status.failureMessage, and retries the pass with backoff when the
// provider's Retryable says so (adding " (retrying)" to the message), else
// waits for the spec to change. Fail(nil) is nil.
func Fail(err error) error {
	if err == nil {
		return nil
	}
	return &failure{err: err}
}

// Operator drives a provider's operator objects through their phases, as
// Rancher's EKS, AKS and GKE operators do: "" (Session.Create, which may
// generate what the spec leaves empty) → creating (Session.Provision) →
// active, then applies spec changes one call per pass (active ⇄ updating,
// update), and on deletion destroys what it created (Session.Delete;
// imported clusters carry no finalizer and are only disconnected).
// Existing clusters are imported without any write (Session.Import).
type Operator[S any, O Object[S]] struct {
	// Client reads and writes the operator objects.
	Client client.Client
	// Traits are the cloud's names and rules.
	Traits Traits[S, O]
	// Provider makes the cloud's sessions.
	Provider Provider[S, O]
	// Poll is the read interval while the cloud is busy; 0 means
	// DefaultPoll.
	Poll time.Duration
	// Readings, when not nil, receive every reading of the cloud an
	// update pass takes, for the management controller.
	Readings *Readings[S]
	// Now is the clock of Readings; nil means time.Now.
	Now func() time.Time
}

// retrying ends a failure message whose pass is retried with backoff.
const retrying = " (retrying)"

// Reconcile implements reconcile.Reconciler.
func (e *Operator[S, O]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	o := e.Traits.New()
	if err := e.Client.Get(ctx, req.NamespacedName, o); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	p := &pass[S, O]{e: e, o: o, rec: o.OperatorRecord(), opts: e.Traits.Options}
	p.snapshot()
	if o.GetDeletionTimestamp() != nil {
		if !controllerutil.ContainsFinalizer(o, e.Traits.Finalizer) {
			return ctrl.Result{}, nil // imported, or never created: nothing in the cloud to remove
		}
		if err := p.open(ctx); err != nil {
			return ctrl.Result{}, p.fail(ctx, err.Error())
		}
		return p.delete(ctx)
	}
	if nothingToDo(o) {
		return ctrl.Result{}, nil
	}
	if err := p.open(ctx); err != nil {
		return ctrl.Result{}, p.fail(ctx, err.Error())
	}
	switch p.rec.Phase {
	case "", hostedv1.PhaseImporting:
		if e.Traits.Imported(*o.ConfigSpec()) {
			return p.importCluster(ctx)
		}
		return p.create(ctx)
	case hostedv1.PhaseCreating:
		return p.provision(ctx)
	case hostedv1.PhaseActive, hostedv1.PhaseUpdating:
		return p.update(ctx)
	}
	return ctrl.Result{}, nil
}

func (e *Operator[S, O]) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Operator[S, O]) poll() time.Duration {
	if e.Poll > 0 {
		return e.Poll
	}
	return DefaultPoll
}

// nothingToDo reports whether an active object's last update pass
// settled on its current spec with nothing left for a pass to do: no push
// pending, no failure (a refused or failed push is tried again by any
// pass), and no "keep my value" answer to a recorded conflict. A pass
// would only read the cloud (the start of the process reconciles every
// object); outside changes are the management controller's to find, on
// its own refresh.
func nothingToDo[S any, O Object[S]](o O) bool {
	rec := o.OperatorRecord()
	if !Settled(rec) || rec.ObservedGeneration != o.GetGeneration() || rec.FailureMessage != "" {
		return false
	}
	keeps := keepsOf(o)
	for _, cf := range rec.Conflicts {
		if keeps.Answers(cf) {
			return false
		}
	}
	return true
}

// pass is one Reconcile of one object.
type pass[S any, O Object[S]] struct {
	e    *Operator[S, O]
	o    O
	rec  *hostedv1.OperatorStatus
	opts managed.Options
	s    Session[S]
	// written is o's status as last read or written, to skip writes that
	// change nothing.
	written any
}

func (p *pass[S, O]) open(ctx context.Context) error {
	s, err := p.e.Provider.Open(ctx, p.o)
	p.s = s
	return err
}

// statusOf returns o's status as a generic value, for comparison.
func statusOf(o runtime.Object) any {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil
	}
	return m["status"]
}

func (p *pass[S, O]) snapshot() { p.written = statusOf(p.o) }

// save writes o's status; always, as the write-ahead's undo must replace
// the record written ahead even when the in-memory object looks the same.
func (p *pass[S, O]) save(ctx context.Context) error {
	if err := p.e.Client.Status().Update(ctx, p.o); err != nil {
		return err
	}
	p.snapshot()
	return nil
}

// saveIfChanged writes o's status when it differs from what was last read
// or written.
func (p *pass[S, O]) saveIfChanged(ctx context.Context) error {
	if s := statusOf(p.o); s != nil && equality.Semantic.DeepEqual(s, p.written) {
		return nil
	}
	return p.save(ctx)
}

// saveAndPoll writes o's status and asks to be called again after the
// poll interval (without the requeue when the write failed: the error
// requeues with backoff).
func (p *pass[S, O]) saveAndPoll(ctx context.Context) (ctrl.Result, error) {
	if err := p.save(ctx); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: p.e.poll()}, nil
}

// fail records message in status.failureMessage (and keeps the phase).
func (p *pass[S, O]) fail(ctx context.Context, message string) error {
	return RecordFailure(ctx, p.e.Client, p.o, message)
}

// RecordFailure records message in o's status.failureMessage, keeping the
// phase; a conflicting write is dropped (the next pass sees the newer
// object). It is for a provider that reports a problem while going on
// (e.g. a stack whose deletion failed and is deleted again).
func RecordFailure(ctx context.Context, k client.Client, o interface {
	client.Object
	OperatorRecord() *hostedv1.OperatorStatus
}, message string) error {
	rec := o.OperatorRecord()
	if rec.FailureMessage == message {
		return nil
	}
	rec.FailureMessage = message
	if err := k.Status().Update(ctx, o); err != nil && !apierrors.IsConflict(err) {
		return err
	}
	return nil
}

// outcome ends a pass after a Session step failed: a Fail error is
// recorded in status.failureMessage, and returned too when it is
// retryable, so that controller-runtime runs the pass again with its
// per-object exponential backoff (and the change is applied then); any
// other Fail error waits for the spec to change. Other errors are returned
// as they are.
func (p *pass[S, O]) outcome(ctx context.Context, err error) (ctrl.Result, error) {
	var f *failure
	if !errors.As(err, &f) {
		return ctrl.Result{}, err
	}
	if !p.e.Traits.Retryable(f.err) {
		return ctrl.Result{}, p.fail(ctx, f.err.Error())
	}
	if ferr := p.fail(ctx, f.err.Error()+retrying); ferr != nil {
		return ctrl.Result{}, ferr
	}
	return ctrl.Result{}, f.err
}

// create takes phase "" to creating. The finalizer goes on (claim) before
// anything exists, so that a delete never leaves something behind.
func (p *pass[S, O]) create(ctx context.Context) (ctrl.Result, error) {
	claim := func(ctx context.Context) error {
		if !controllerutil.AddFinalizer(p.o, p.e.Traits.Finalizer) {
			return nil
		}
		return p.e.Client.Update(ctx, p.o)
	}
	done, err := p.s.Create(ctx, claim)
	if err != nil {
		return p.outcome(ctx, err)
	}
	if !done {
		p.rec.FailureMessage = ""
		if err := p.saveIfChanged(ctx); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: p.e.poll()}, nil
	}
	p.rec.Phase, p.rec.FailureMessage = hostedv1.PhaseCreating, ""
	applied := p.e.Traits.CreatedApplied(managed.Copy(*p.o.ConfigSpec()))
	*p.o.AppliedSpecRef() = &applied
	return p.saveAndPoll(ctx)
}

// provision waits in phase creating for Session.Provision, then becomes
// active.
func (p *pass[S, O]) provision(ctx context.Context) (ctrl.Result, error) {
	done, err := p.s.Provision(ctx)
	if err != nil {
		return p.outcome(ctx, err)
	}
	if !done {
		if err := p.saveIfChanged(ctx); err != nil { // e.g. node groups created so far
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: p.e.poll()}, nil
	}
	return p.becomeActive(ctx)
}

// importCluster waits (phase importing) for Session.Import, then becomes
// active; nothing is written to the cloud.
func (p *pass[S, O]) importCluster(ctx context.Context) (ctrl.Result, error) {
	done, err := p.s.Import(ctx)
	if err != nil {
		return p.outcome(ctx, err)
	}
	if !done {
		p.rec.Phase = hostedv1.PhaseImporting
		if err := p.saveIfChanged(ctx); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: p.e.poll()}, nil
	}
	return p.becomeActive(ctx)
}

// becomeActive sets phase active. The first update pass follows at once:
// it records in status.appliedSpec every managed field the cloud already
// agrees with, so that an outside change after that is told from a user
// change.
func (p *pass[S, O]) becomeActive(ctx context.Context) (ctrl.Result, error) {
	p.rec.Phase, p.rec.FailureMessage = hostedv1.PhaseActive, ""
	if err := p.save(ctx); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: firstPassDelay}, nil
}

// delete sets phase deleting and runs Session.Delete until it is done,
// then lets the object go.
func (p *pass[S, O]) delete(ctx context.Context) (ctrl.Result, error) {
	if p.rec.Phase != hostedv1.PhaseDeleting {
		p.rec.Phase = hostedv1.PhaseDeleting
		if err := p.save(ctx); err != nil {
			return ctrl.Result{}, err
		}
	}
	done, err := p.s.Delete(ctx)
	if err != nil {
		return p.outcome(ctx, err)
	}
	if !done {
		return ctrl.Result{RequeueAfter: p.e.poll()}, nil
	}
	controllerutil.RemoveFinalizer(p.o, p.e.Traits.Finalizer)
	return ctrl.Result{}, p.e.Client.Update(ctx, p.o)
}

// update applies at most one call per pass, in the provider's order, and
// waits while the cloud is busy. Each pass decides on what the cloud
// reports now (Session.Observe of this pass): it first settles the pushes
// whose outcome was pending (settlePending), then compares spec, upstream
// and status.appliedSpec field by field (managed.Reconcile): a field the
// user changed that the cloud did not is pushed; one the cloud changed
// that the user did not is left for the management controller to adopt;
// one changed on both sides is recorded in status.conflicts and not
// written. A push is recorded before the call (status.pendingUpdates,
// appliedSpec), so that nobody who sees the new value in the cloud takes
// it for an outside change, and undone if the cloud refuses it.
func (p *pass[S, O]) update(ctx context.Context) (ctrl.Result, error) {
	spec := *p.o.ConfigSpec()
	obs, err := p.s.Observe(ctx)
	if err != nil {
		return p.outcome(ctx, err)
	}
	if obs.Busy {
		p.rec.Phase = hostedv1.PhaseUpdating
		return p.saveAndPoll(ctx)
	}
	p.e.Readings.Put(p.o.GetUID(), Reading[S]{Upstream: obs.Upstream, At: p.e.now()})
	up := obs.Upstream.Spec
	applied := AppliedOf[S](p.o)
	failures, reverted, err := p.settlePending(ctx, up, obs.Finished, &applied)
	if err != nil {
		return ctrl.Result{}, err
	}
	recorded := append(slices.Clone(p.rec.Conflicts), reverted...)
	keeps := keepsOf(p.o)
	if err := answerConflicts(&applied, spec, recorded, keeps, p.opts); err != nil {
		return ctrl.Result{}, err
	}
	plan := managed.Reconcile(spec, up, applied, p.opts)
	*p.o.AppliedSpecRef() = &plan.Applied
	if p.rec.Conflicts, err = recordConflicts(plan.Conflicts); err != nil {
		return ctrl.Result{}, err
	}
	var pushable []managed.Change
	for _, ch := range p.e.Traits.Order(plan.Push) {
		if cf, held, err := heldBack(recorded, keeps, spec, up, ch.Path, p.opts); err != nil {
			return ctrl.Result{}, err
		} else if held {
			p.rec.Conflicts = append(p.rec.Conflicts, cf)
			continue
		}
		push, err := p.e.Traits.Vet(spec, ch)
		if err != nil {
			failures = append(failures, err.Error())
		}
		if push && err == nil {
			pushable = append(pushable, ch)
		}
	}
	p.rec.ObservedGeneration = p.o.GetGeneration()
	if len(pushable) == 0 {
		p.rec.Phase, p.rec.FailureMessage = hostedv1.PhaseActive, strings.Join(failures, "; ")
		return ctrl.Result{}, p.save(ctx)
	}
	call := SameCall(pushable, p.e.Traits.CallGroup)
	target, err := managed.Target(spec, up, call, p.opts)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := p.s.Prepare(call, &target); err != nil {
		return p.outcome(ctx, Fail(err))
	}
	// Write ahead: the push is on record before the cloud can show it.
	if err := writeAhead(p.o, target, call, p.opts); err != nil {
		return ctrl.Result{}, err
	}
	if err := p.save(ctx); err != nil {
		return ctrl.Result{}, err
	}
	id, err := p.s.Apply(ctx, call, up, target)
	if err != nil {
		if uerr := undo(p.o, call, p.opts); uerr != nil {
			return ctrl.Result{}, uerr
		}
		if errors.Is(err, ErrWaiting) {
			p.rec.Phase = hostedv1.PhaseUpdating
			return p.saveAndPoll(ctx)
		}
		var f *failure
		if errors.As(err, &f) {
			err = f.err
		}
		// Always written, even when the message repeats: the undo must
		// replace the record written ahead.
		err = fmt.Errorf("%s: %w", pathsOf(call), err)
		retry := p.e.Traits.Retryable(err)
		p.rec.FailureMessage = err.Error()
		if retry {
			p.rec.FailureMessage += retrying
		}
		if uerr := p.save(ctx); uerr != nil {
			return ctrl.Result{}, uerr
		}
		if retry {
			return ctrl.Result{}, err // controller-runtime's per-object backoff
		}
		return ctrl.Result{}, nil // waits for the spec to change
	}
	p.rec.FailureMessage = strings.Join(failures, "; ")
	if id == "" && p.e.Traits.Immediate != nil && p.e.Traits.Immediate(p.e.Traits.CallGroup(call[0].Path)) {
		return p.settled(ctx, call, Upstream[S]{Spec: target, Version: obs.Upstream.Version, Endpoint: obs.Upstream.Endpoint, CACert: obs.Upstream.CACert},
			len(pushable) > len(call))
	}
	for i := range p.rec.PendingUpdates {
		if isIn(call, p.rec.PendingUpdates[i].Path) {
			p.rec.PendingUpdates[i].UpdateID = id
		}
	}
	p.rec.Phase = hostedv1.PhaseUpdating
	return p.saveAndPoll(ctx)
}

// settled ends a pass whose call set its values as it succeeded
// (Traits.Immediate): its pushes leave status.pendingUpdates as applied,
// and up (upstream as read, with the pushed values over it) is the
// reading of the pass. With more to push, the next pass follows at once
// (phase updating); else the object is active.
func (p *pass[S, O]) settled(ctx context.Context, call []managed.Change, up Upstream[S], more bool) (ctrl.Result, error) {
	p.rec.PendingUpdates = slices.DeleteFunc(p.rec.PendingUpdates, func(pu hostedv1.PendingUpdate) bool { return isIn(call, pu.Path) })
	p.e.Readings.Put(p.o.GetUID(), Reading[S]{Upstream: up, At: p.e.now()})
	if more {
		p.rec.Phase = hostedv1.PhaseUpdating
		if err := p.save(ctx); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: firstPassDelay}, nil
	}
	p.rec.Phase = hostedv1.PhaseActive
	return ctrl.Result{}, p.save(ctx)
}

func isIn(call []managed.Change, path string) bool {
	for _, ch := range call {
		if ch.Path == path {
			return true
		}
	}
	return false
}

// settlePending decides the outcome of every push in
// status.pendingUpdates, now that the cloud is idle, and empties the list.
// A push with an operation ID took effect when the cloud reports that
// operation succeeded (finished, else Session.Outcome) — and, for a
// provider that asks for it (VerifyLanded), upstream shows its value; one
// without took effect when upstream shows its value. A push that did not take effect
// gets its previous applied value back, so that it is neither taken for an
// outside change nor lost. One whose operation failed is pushed again at
// the next pass; one the cloud accepted and then shows otherwise (a value
// the cloud, e.g. a policy, keeps changing back: rancher/rancher#37608) is
// returned in reverted, a conflict held until the user edits the field
// (heldBack), so that it is not pushed for ever. The returned messages
// name each such field.
func (p *pass[S, O]) settlePending(ctx context.Context, up S, finished map[string]string, applied *S) (failures []string, reverted []hostedv1.FieldConflict, err error) {
	for _, pu := range p.rec.PendingUpdates {
		var failed string
		if pu.UpdateID != "" {
			reason, ok := finished[pu.UpdateID]
			if !ok {
				if reason, err = p.s.Outcome(ctx, pu); err != nil {
					return nil, nil, err
				}
			}
			if reason != "" {
				failed = pu.Path + ": " + reason
			}
		}
		if pu.UpdateID == "" || failed == "" && p.e.Traits.VerifyLanded {
			landed, err := managed.Landed(up, pu.Path, []byte(pu.Value), p.opts)
			if err != nil {
				return nil, nil, err
			}
			if !landed {
				now, _ := managed.Value(up, pu.Path, p.opts)
				failed = fmt.Sprintf("%s: pushed %s but %s reports %s; not pushed again until spec changes", pu.Path, pu.Value, p.e.Traits.Name, now)
				reverted = append(reverted, hostedv1.FieldConflict{Path: pu.Path, Config: pu.Value, Upstream: string(now), Applied: pu.Previous})
			}
		}
		if failed == "" {
			continue
		}
		failures = append(failures, failed)
		if err := managed.SetValue(applied, pu.Path, []byte(pu.Previous), p.opts); err != nil {
			return nil, nil, err
		}
	}
	p.rec.PendingUpdates = nil
	return failures, reverted, nil
}

// heldBack reports whether the push of path is held by a recorded
// conflict, and returns that conflict to keep on record: the cloud took a
// value of this field back after accepting it (settlePending), and
// neither the config nor the cloud has moved since. Editing the field,
// or keeping the value (keeps, the object's KeepAnnotation), answers the
// conflict (answerConflicts) and the value is pushed.
func heldBack[S any](recorded []hostedv1.FieldConflict, keeps Keeps, config, up S, path string, opts managed.Options) (hostedv1.FieldConflict, bool, error) {
	for _, cf := range recorded {
		if cf.Path != path || keeps.Answers(cf) {
			continue
		}
		c, err := managed.Value(config, path, opts)
		if err != nil {
			return cf, false, err
		}
		u, err := managed.Value(up, path, opts)
		if err != nil {
			return cf, false, err
		}
		if managed.SameValue(c, []byte(cf.Config)) && managed.SameValue(u, []byte(cf.Upstream)) {
			return cf, true, nil
		}
	}
	return hostedv1.FieldConflict{}, false, nil
}
