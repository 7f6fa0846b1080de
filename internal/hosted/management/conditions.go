package management

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
)

// NoNodesMessage is the Waiting condition's message for a cluster with no
// managed node group and no self-managed node, word for word Rancher's
// (Rancher's EKS driver, https://github.com/rancher/eks-operator).
const NoNodesMessage = "Cluster must have at least one managed nodegroup or one self-managed node."

// observed is what one pass learned, the input of the conditions.
type observed struct {
	// cloud names the cloud service in messages ("EKS"); field is the
	// Cluster's config field ("eksConfig").
	cloud, field string
	// imported is whether the config registers an existing cluster.
	imported bool
	// op is the operator object's record; nil before it exists.
	op *hostedv1.OperatorStatus
	// pools is the number of node groups (pools) the cloud reports.
	pools int
	// conflicts are the Conflict condition's field descriptions.
	conflicts []string
	// access is the outcome of reaching the cluster's API server; nil when
	// it was not tried (not active yet).
	access *accessResult
	// agent is whether the cluster's agent answered a ping through its
	// tunnel lately (AgentFresh).
	agent bool
}

// accessResult is what reaching a cluster's API server found.
type accessResult struct {
	// err is why the API server could not be reached, nil when it was.
	err error
	// reason is the Connected condition's reason when err is set.
	reason string
	// nodes is the number of nodes the cluster has (when err is nil).
	nodes int
}

// setConditions derives the Cluster's conditions and phase from what one
// pass observed. Pending: the driver accepted the cluster (Unknown while an
// import is being registered). Provisioned: the cluster exists in the cloud.
// Updated: no change is being applied and none failed. Waiting: the cluster
// has somewhere to run workloads. Connected: its API server answered.
// Conflict: see setConflict. Ready: all of them hold.
func setConditions(c *mgmtv1.Cluster, o observed) {
	gen := c.Generation
	set := func(typ string, status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen})
	}
	phase, failure := "", ""
	if o.op != nil {
		phase, failure = o.op.Phase, o.op.FailureMessage
	}
	imported, cloud := o.imported, o.cloud

	switch {
	case o.op == nil || phase == "" && failure == "":
		set(mgmtv1.ConditionPending, metav1.ConditionUnknown, "WaitingForOperator", "the "+cloud+" operator has not taken the cluster up yet")
	case phase == "" && failure != "":
		set(mgmtv1.ConditionPending, metav1.ConditionFalse, "Refused", failure)
	case phase == hostedv1.PhaseImporting:
		set(mgmtv1.ConditionPending, metav1.ConditionUnknown, "Importing", "waiting for "+cloud+" to report the cluster ready")
	default:
		set(mgmtv1.ConditionPending, metav1.ConditionTrue, "Accepted", "")
	}

	switch {
	case phase == hostedv1.PhaseActive || phase == hostedv1.PhaseUpdating:
		msg := "the cluster exists in " + cloud
		if imported {
			msg = "the cluster was imported from " + cloud
		}
		set(mgmtv1.ConditionProvisioned, metav1.ConditionTrue, "Provisioned", msg)
	case phase == hostedv1.PhaseCreating && failure != "":
		set(mgmtv1.ConditionProvisioned, metav1.ConditionFalse, "CreateFailed", failure)
	case phase == hostedv1.PhaseCreating:
		set(mgmtv1.ConditionProvisioned, metav1.ConditionUnknown, "Creating", cloud+" is creating the cluster")
	case phase == "" && failure != "":
		set(mgmtv1.ConditionProvisioned, metav1.ConditionFalse, "CreateFailed", failure)
	default:
		set(mgmtv1.ConditionProvisioned, metav1.ConditionUnknown, "NotCreated", "")
	}

	switch {
	case phase == hostedv1.PhaseActive && failure != "", phase == hostedv1.PhaseUpdating && failure != "":
		set(mgmtv1.ConditionUpdated, metav1.ConditionFalse, "UpdateFailed", failure)
	case phase == hostedv1.PhaseUpdating:
		set(mgmtv1.ConditionUpdated, metav1.ConditionUnknown, "Updating", "a change is being applied in "+cloud)
	case phase == hostedv1.PhaseActive && len(o.conflicts) > 0:
		set(mgmtv1.ConditionUpdated, metav1.ConditionFalse, "Conflict", "fields in conflict are not written; see condition Conflict")
	case phase == hostedv1.PhaseActive:
		set(mgmtv1.ConditionUpdated, metav1.ConditionTrue, "UpToDate", cloud+" matches every managed field")
	default:
		set(mgmtv1.ConditionUpdated, metav1.ConditionUnknown, "NotProvisioned", "")
	}

	nodeGroups := o.pools
	switch {
	case phase != hostedv1.PhaseActive && phase != hostedv1.PhaseUpdating:
		set(mgmtv1.ConditionWaiting, metav1.ConditionUnknown, "NotProvisioned", "")
	case nodeGroups > 0:
		set(mgmtv1.ConditionWaiting, metav1.ConditionTrue, "NodesAvailable", fmt.Sprintf("%d managed node group(s)", nodeGroups))
	case o.access != nil && o.access.err == nil && o.access.nodes > 0:
		set(mgmtv1.ConditionWaiting, metav1.ConditionTrue, "NodesAvailable", fmt.Sprintf("%d self-managed node(s)", o.access.nodes))
	case o.access != nil && o.access.err != nil:
		set(mgmtv1.ConditionWaiting, metav1.ConditionFalse, "NoNodeGroups", NoNodesMessage+" (self-managed nodes could not be counted: "+o.access.err.Error()+")")
	default:
		set(mgmtv1.ConditionWaiting, metav1.ConditionFalse, "NoNodes", NoNodesMessage)
	}

	switch {
	case o.access == nil:
		set(mgmtv1.ConditionConnected, metav1.ConditionUnknown, "NotProvisioned", "")
	case o.access.err != nil && o.agent:
		set(mgmtv1.ConditionConnected, metav1.ConditionTrue, ReasonAgentConnected,
			"the API server answers through the agent's tunnel (the manager cannot reach it directly: "+o.access.reason+": "+o.access.err.Error()+")")
	case o.access.err != nil:
		set(mgmtv1.ConditionConnected, metav1.ConditionFalse, o.access.reason, o.access.err.Error())
	default:
		set(mgmtv1.ConditionConnected, metav1.ConditionTrue, "Connected", "the cluster's API server answered")
	}

	setConflict(c, o.field, o.conflicts)

	var notReady []string
	for _, want := range []struct {
		typ    string
		status metav1.ConditionStatus
	}{
		{mgmtv1.ConditionProvisioned, metav1.ConditionTrue},
		{mgmtv1.ConditionUpdated, metav1.ConditionTrue},
		{mgmtv1.ConditionWaiting, metav1.ConditionTrue},
		{mgmtv1.ConditionConnected, metav1.ConditionTrue},
		{mgmtv1.ConditionConflict, metav1.ConditionFalse},
	} {
		if cond := meta.FindStatusCondition(c.Status.Conditions, want.typ); cond == nil || cond.Status != want.status {
			notReady = append(notReady, want.typ)
		}
	}
	if len(notReady) == 0 {
		set(mgmtv1.ConditionReady, metav1.ConditionTrue, "Ready", "")
	} else {
		set(mgmtv1.ConditionReady, metav1.ConditionFalse, "NotReady", "waiting on condition(s) "+strings.Join(notReady, ", "))
	}

	c.Status.Phase = phaseOf(phase, failure, o.op != nil)
}

// setConflict sets condition Conflict from the fields changed on both
// sides since they were last applied (each "path (config …, upstream …,
// last applied …)").
func setConflict(c *mgmtv1.Cluster, field string, paths []string) {
	cond := metav1.Condition{Type: mgmtv1.ConditionConflict, Status: metav1.ConditionFalse, Reason: "NoConflict",
		Message: "no field was changed both in clustersync and outside it", ObservedGeneration: c.Generation}
	if len(paths) > 0 {
		cond.Status, cond.Reason = metav1.ConditionTrue, "ChangedOnBothSides"
		cond.Message = "changed both in clustersync and outside it since last applied; not written until answered (keep your value, take the cloud's, or edit spec." + field + "): " + strings.Join(paths, "; ")
	}
	meta.SetStatusCondition(&c.Status.Conditions, cond)
}

// phaseOf maps the operator's phase and failure message to the Cluster's
// phase.
func phaseOf(op, failure string, exists bool) string {
	switch {
	case op == hostedv1.PhaseDeleting:
		return mgmtv1.PhaseDeleting
	case failure != "":
		return mgmtv1.PhaseError
	case !exists || op == "":
		return mgmtv1.PhasePending
	case op == hostedv1.PhaseCreating || op == hostedv1.PhaseImporting:
		return mgmtv1.PhaseProvisioning
	case op == hostedv1.PhaseUpdating:
		return mgmtv1.PhaseUpdating
	}
	return mgmtv1.PhaseActive
}
