package management_test

import (
	"context"
	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
)

// diff is the calls made between two counts of the emulator's calls, by
// operation.
func diff(before, after map[string]int) map[string]int {
	out := map[string]int{}
	for op, n := range after {
		if d := n - before[op]; d != 0 {
			out[op] = d
		}
	}
	return out
}

// A tag edit reads EKS once: the operator's push pass reads the cluster
// (with its node group, updates and add-on) and tags it; TagResource has
// set the tags once it succeeds, so that pass settles the push, and the
// management controller takes the operator's reading, with the pushed
// tags, as its refresh instead of describing the cluster again.
func TestOneReadingPerPush(t *testing.T) {
	w := imported(t, "one-read")
	w.editConfig(t, func(s *eksv1.EKSClusterConfigSpec) { (*s.Tags)["pushed"] = "1" })
	if _, err := w.mgmt.Reconcile(context.Background(), ctrl.Request{NamespacedName: w.key}); err != nil { // the edit reaches the operator object
		t.Fatal(err)
	}
	before := w.srv.Calls()
	w.opPass(t)
	op := w.operator(t)
	if op.Status.Phase != hostedv1.PhaseActive || len(op.Status.PendingUpdates) != 0 || (*op.Status.AppliedSpec.Tags)["pushed"] != "1" {
		t.Fatalf("after the push pass: phase %q, pending %+v, applied tags %v; want active, settled, pushed=1 applied",
			op.Status.Phase, op.Status.PendingUpdates, op.Status.AppliedSpec.Tags)
	}
	if _, err := w.mgmt.Reconcile(context.Background(), ctrl.Request{NamespacedName: w.key}); err != nil {
		t.Fatal(err)
	}
	calls := diff(before, w.srv.Calls())
	want := map[string]int{"DescribeCluster": 1, "ListNodegroups": 1, "DescribeNodegroup": 1, "ListUpdates": 1, "DescribeAddon": 1, "TagResource": 1}
	if !maps.Equal(calls, want) {
		t.Errorf("EKS calls for one tag push %v, want the operator's read and write only %v", calls, want)
	}
	c := w.cluster(t)
	if got := *c.Status.EKSStatus.UpstreamSpec.Tags; got["pushed"] != "1" {
		t.Errorf("status.eksStatus.upstreamSpec.tags %v, want the pushed tag", got)
	}
	if cond := meta.FindStatusCondition(c.Status.Conditions, mgmtv1.ConditionUpdated); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("Updated = %+v", cond)
	}
	snap, _ := w.srv.Cluster("one-read")
	if snap.Tags["pushed"] != "1" {
		t.Errorf("EKS tags %v", snap.Tags)
	}

	// The operator restarting (a pass on its settled object, as a new
	// process makes) reads nothing: finding outside changes is the
	// management controller's refresh.
	before = w.srv.Calls()
	w.opPass(t)
	if calls := diff(before, w.srv.Calls()); len(calls) != 0 {
		t.Errorf("a pass on a settled object called EKS: %v", calls)
	}
}
