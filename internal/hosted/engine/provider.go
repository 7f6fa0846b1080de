package engine

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	"github.com/clustersync/clustersync/internal/hosted/managed"
)

// Object is a provider's operator object (EKSClusterConfig,
// AKSClusterConfig) as the engine sees it; S is the provider's config spec
// type (EKSClusterConfigSpec). Its status embeds hostedv1.OperatorStatus
// and holds an appliedSpec of type *S.
type Object[S any] interface {
	client.Object
	// ConfigSpec returns the address of the object's spec.
	ConfigSpec() *S
	// OperatorRecord returns the address of the status the engine keeps.
	OperatorRecord() *hostedv1.OperatorStatus
	// AppliedSpecRef returns the address of status.appliedSpec.
	AppliedSpecRef() **S
}

// Traits are what the engine knows of a cloud without calling it: its
// names and the rules of its spec type, as data and pure functions. Each
// cloud returns its own (part of its management.Traits, e.g. eks.Traits);
// its calls are the Provider. S is the config spec type, O the operator
// object. Check reports a missing field.
type Traits[S any, O Object[S]] struct {
	// Name is the cloud service in messages: "EKS", "AKS", "GKE".
	Name string
	// Finalizer holds back the deletion of an object whose cluster
	// clustersync created until Session.Delete is done; imported clusters
	// never get it.
	Finalizer string
	// Options are the spec type's managed-field options (keyed lists,
	// fields never adopted).
	Options managed.Options
	// New returns an empty operator object.
	New func() O
	// Imported reports whether spec registers an existing cluster rather
	// than creating one.
	Imported func(spec S) bool
	// CreatedApplied returns the applied spec of a cluster whose creation
	// was just sent: the updatable fields the create call carried. Node
	// groups (pools) created later are recorded as each is created
	// (MarkApplied).
	CreatedApplied func(spec S) S
	// Order sorts pushed changes into the order they are applied, one call
	// per pass; changes of equal rank keep their order.
	Order func(push []managed.Change) []managed.Change
	// CallGroup names the cloud call a pushed field is sent with: the
	// changes of one group are pushed by one call and recorded together.
	CallGroup func(path string) string
	// Vet decides on one pushed change before anything is sent: push is
	// false for a change there is nothing to send for (it stays a
	// difference, not a failure); an error refuses the change with no call
	// made, its message naming the field.
	Vet func(spec S, ch managed.Change) (push bool, err error)
	// VerifyLanded is whether a push whose operation succeeded counts as
	// applied only once upstream shows its value (Azure: a PUT that
	// succeeds may still leave a field as it was); false trusts the
	// operation's status (EKS, whose upstream reports some fields in a
	// richer form than they are pushed, e.g. a launch template by ID and
	// name).
	VerifyLanded bool
	// Retryable reports whether an error of the cloud is transient
	// (throttling, a server error, a busy resource): the pass is retried
	// with controller-runtime's per-object backoff and the change is not
	// lost.
	Retryable func(err error) bool
	// Immediate reports whether a call of group (CallGroup) has set its
	// values once it succeeds, starting no operation the cloud goes on
	// with (EKS's TagResource): the push is settled in the pass that sent
	// it, with upstream taken as read with the pushed values over it, and
	// no read of the cloud follows. nil means no call is.
	Immediate func(group string) bool
}

// Check returns an error naming the first field of t that is not set.
func (t Traits[S, O]) Check() error {
	missing := ""
	switch {
	case t.Name == "":
		missing = "Name"
	case t.Finalizer == "":
		missing = "Finalizer"
	case t.New == nil:
		missing = "New"
	case t.Imported == nil:
		missing = "Imported"
	case t.CreatedApplied == nil:
		missing = "CreatedApplied"
	case t.Order == nil:
		missing = "Order"
	case t.CallGroup == nil:
		missing = "CallGroup"
	case t.Vet == nil:
		missing = "Vet"
	case t.Retryable == nil:
		missing = "Retryable"
	default:
		return nil
	}
	return fmt.Errorf("engine.Traits of %q: %s is not set", t.Name, missing)
}

// Provider is the operator half of what only a cloud can implement: its
// calls, one Session per object and pass. Everything else of the cloud is
// data (Traits); the engine owns the rest: phases, the applied record
// with its write-ahead, pending pushes, conflicts, failure messages and
// retries.
type Provider[S any, O Object[S]] interface {
	// Open makes the cloud clients for one object, from its credential
	// Secret, for one pass. Its error is recorded in status.failureMessage
	// and the object waits for its spec to change.
	Open(ctx context.Context, o O) (Session[S], error)
}

// Session is one object's connection to the cloud for one pass. Its
// methods may change the object's status (the provider's own fields; the
// engine saves it), and return errors of two kinds: Fail(err) for what
// the user should see in status.failureMessage (retried when the
// provider's Retryable says so), any other error for a transient read
// failure that is only retried.
type Session[S any] interface {
	// Create takes a new cluster towards creation (phase ""): done once the
	// create call was sent, or found sent by an earlier pass whose status
	// write was lost. It may take several passes (generated networking).
	// It calls claim, which puts the provider's finalizer on the object,
	// once it knows the cluster's name is free (or taken by an earlier pass
	// of this object) and before it creates anything: a refused name must
	// not lead to the deletion of someone else's cluster.
	Create(ctx context.Context, claim func(context.Context) error) (done bool, err error)
	// Provision waits for a cluster being created (phase creating) to be
	// ready and creates what follows it (node groups, the CA Secret); done
	// when the cluster can take updates.
	Provision(ctx context.Context) (done bool, err error)
	// Import waits for an existing cluster to be ready and records how to
	// reach it (the CA Secret), without writing to the cloud.
	Import(ctx context.Context) (done bool, err error)
	// Observe reads the cluster for an update pass: everything the
	// management controller's refresh reads too (Reader.Describe), so that
	// its reading serves both (Readings).
	Observe(ctx context.Context) (Observation[S], error)
	// Outcome reports how the operation of pending update p ended when
	// Observe did not see it finish: "" when it succeeded, else the reason
	// (e.g. "EKS update 42 ended Failed").
	Outcome(ctx context.Context, p hostedv1.PendingUpdate) (failure string, err error)
	// Prepare adjusts target, the values call will send, before they are
	// recorded (e.g. one minor version at a time).
	Prepare(call []managed.Change, target *S) error
	// Apply sends call, the changes of one call group, with target's
	// values (upstream with the pushed values over it); up is what Observe
	// reported. It returns the ID of the cloud operation that applies it,
	// "" for calls that return none (settled at once when
	// Traits.Immediate says so, else when upstream shows the values), or
	// ErrWaiting.
	Apply(ctx context.Context, call []managed.Change, up, target S) (operationID string, err error)
	// Delete removes a cluster clustersync created and what it generated
	// for it; done once all is gone.
	Delete(ctx context.Context) (done bool, err error)
}

// Upstream is what the cloud reports of a cluster.
type Upstream[S any] struct {
	// Spec is the cluster as a config spec, every field set.
	Spec S
	// Version is the Kubernetes version of the control plane.
	Version string
	// Endpoint is the API server URL; CACert the base64 PEM of its CA.
	Endpoint, CACert string
}

// Observation is what Session.Observe read.
type Observation[S any] struct {
	// Busy is true while the cloud is changing the cluster, whoever
	// started it: nothing is written until it ends.
	Busy bool
	// Upstream is the cluster as the cloud reports it: its spec, version,
	// endpoint and CA, what the management controller's refresh reads too
	// (set when not Busy; Readings hands it over).
	Upstream Upstream[S]
	// Finished maps the ID of each operation seen finishing in this
	// observation to how it ended: "" when it succeeded, else the reason.
	Finished map[string]string
}
