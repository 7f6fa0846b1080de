package scenarios_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/aks/akstest"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/management"
	"github.com/clustersync/clustersync/internal/manager"
)

// What AKS needs beyond the scenario table: Azure's own rules, and the
// problems Rancher's users met (rancher/rancher issues named in each test).

func aksWorld(t *testing.T, name string) (*world, *aksCloud) {
	t.Helper()
	w := settled(t, func(imported bool) *world { return startAKS(t, name, imported) })
	return w, w.cloud.(*aksCloud)
}

func (a *aksCloud) writeCalls() map[string]int {
	out := map[string]int{}
	for op, n := range a.srv.Calls() {
		if v := opVerb(op); v == "createOrUpdate" || v == "updateTags" || v == "delete" {
			out[op] = n
		}
	}
	return out
}

func operatorOf(t *testing.T, w *world) *aksv1.AKSClusterConfig {
	t.Helper()
	var op aksv1.AKSClusterConfig
	if err := k.Get(context.Background(), client.ObjectKey{Namespace: hostedv1.Namespace, Name: w.name}, &op); err != nil {
		t.Fatal(err)
	}
	return &op
}

// An operation clustersync did not start is waited for, never fought: no
// write is sent while the cluster is Updating, and the user's change goes
// out once it ends.
func TestAKSWaitsForOutsideOperations(t *testing.T) {
	w, a := aksWorld(t, "aks-busy")
	a.srv.ResetCalls()
	// The portal starts a long upgrade-like update (tags, 1 minute here).
	a.setCloudTags(t, map[string]string{"team": "a", "portal": "1"})
	w.edit(t, func(c *mgmtv1.Cluster) { c.Spec.AKSConfig.AuthorizedIPRanges = &[]string{"10.0.0.0/8"} })
	ctx := context.Background()
	// Passes while Azure is busy: the operator only reads.
	for i := 0; i < 3; i++ {
		_, _ = w.mgmt.Reconcile(ctx, reqFor(w.key()))
		_, _ = w.op.Reconcile(ctx, reqFor(w.opKey()))
	}
	if n := a.writeCalls()["managedClusters.createOrUpdate"]; n != 0 {
		t.Errorf("%d cluster PUTs while the portal's operation ran, want none", n)
	}
	if op := operatorOf(t, w); op.Status.Phase != hostedv1.PhaseUpdating || op.Status.FailureMessage != "" {
		t.Errorf("operator phase %q, failure %q while Azure is busy; want updating, no failure", op.Status.Phase, op.Status.FailureMessage)
	}
	w.settle(t, 6)
	if got := a.cloudTags(t); got["portal"] != "1" {
		t.Errorf("cloud tags %v: the portal's change was reverted", got)
	}
	if up := w.cluster(t).Status.AKSStatus.UpstreamSpec; up == nil || up.AuthorizedIPRanges == nil || strings.Join(*up.AuthorizedIPRanges, ",") != "10.0.0.0/8" {
		t.Errorf("upstream authorizedIpRanges %v, want the user's 10.0.0.0/8", up)
	}
}

// A 409 OperationNotAllowed (an operation started between clustersync's
// read and its write) is waited out: no failure is reported, the change is
// sent again.
func TestAKSBusyConflictIsNotAFailure(t *testing.T) {
	w, a := aksWorld(t, "aks-409")
	a.srv.FailNext("managedClusters.updateTags", 409, "OperationNotAllowed",
		"Operation is not allowed: Another operation (Updating) is in progress, please wait for it to finish before starting a new operation.", 1)
	w.edit(t, func(c *mgmtv1.Cluster) { c.Spec.AKSConfig.Tags = &map[string]string{"team": "b"} })
	w.settle(t, 1)
	c := w.cluster(t)
	if c.Status.Phase == mgmtv1.PhaseError {
		t.Errorf("phase Error after a 409 while busy (conditions %+v)", c.Status.Conditions)
	}
	w.settle(t, 4)
	if got := a.cloudTags(t); got["team"] != "b" {
		t.Errorf("cloud tags %v, want team=b", got)
	}
}

// An autoscaled pool's count belongs to the autoscaler: it moves in Azure
// without being adopted or reverted (rancher/rancher#33446).
func TestAKSAutoscaledCountLeftAlone(t *testing.T) {
	w, a := aksWorld(t, "aks-autoscale")
	w.edit(t, func(c *mgmtv1.Cluster) {
		*c.Spec.AKSConfig.NodePools = append(*c.Spec.AKSConfig.NodePools, aksv1.AKSNodePool{Name: "auto", VMSize: to.Ptr("Standard_D2s_v3"),
			Mode: to.Ptr("User"), Count: to.Ptr(int32(2)), EnableAutoScaling: to.Ptr(true), MinCount: to.Ptr(int32(1)), MaxCount: to.Ptr(int32(5))})
	})
	w.settle(t, 8)
	if _, err := a.srv.Autoscale(subscription, a.rg, a.name, "auto", 4); err != nil {
		t.Fatal(err)
	}
	a.srv.ResetCalls()
	w.settle(t, 6)
	if n := a.writeCalls()["agentPools.createOrUpdate"]; n != 0 {
		t.Errorf("%d agent-pool writes after the autoscaler moved the count, want none", n)
	}
	snap := a.snapshot(t)
	for _, p := range snap.Pools {
		if p.Name == "auto" && p.Count != 4 {
			t.Errorf("pool auto count %d in Azure, want the autoscaler's 4", p.Count)
		}
	}
	for _, p := range *w.cluster(t).Spec.AKSConfig.NodePools {
		if p.Name == "auto" && (p.Count == nil || *p.Count != 2) {
			t.Errorf("config count of pool auto %v, want the user's 2 (not adopted)", p.Count)
		}
	}
	if notes := w.outsideChanges(t); len(notes) != 0 {
		t.Errorf("OutsideChange events %q for the autoscaler's count", notes)
	}
}

// A tag Azure Policy keeps adding back ends in one Conflict naming tags,
// not an endless Updating (rancher/rancher#37608).
func TestAKSPolicyTagEndsInConflict(t *testing.T) {
	w, a := aksWorld(t, "aks-policy")
	a.srv.SetPolicyTags(map[string]string{"costcenter": "42"})
	w.settle(t, 4)                                                                                 // the policy's tag is an outside change, adopted on the next tag write at the latest
	w.edit(t, func(c *mgmtv1.Cluster) { c.Spec.AKSConfig.Tags = &map[string]string{"team": "b"} }) // removes costcenter
	w.settle(t, 6)
	first := a.writeCalls()["managedClusters.updateTags"]
	w.settle(t, 6)
	if again := a.writeCalls()["managedClusters.updateTags"]; again != first {
		t.Errorf("updateTags calls went from %d to %d: the tags are pushed again and again", first, again)
	}
	c := w.cluster(t)
	if cond := condition(c, mgmtv1.ConditionConflict); cond == nil || cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, "tags") {
		t.Errorf("Conflict = %+v, want True naming tags", cond)
	}
	if c.Status.Phase == mgmtv1.PhaseUpdating {
		t.Error("phase Updating for ever")
	}
}

// Keeping the value of a tag conflict Azure Policy made pushes it once
// more; the policy adds its tag back, which is a new Conflict, not an
// endless push: the answer was removed once its conflict was gone.
func TestAKSPolicyTagKeptOnce(t *testing.T) {
	w, a := aksWorld(t, "aks-policy-keep")
	a.srv.SetPolicyTags(map[string]string{"costcenter": "42"})
	w.settle(t, 4)
	w.edit(t, func(c *mgmtv1.Cluster) { c.Spec.AKSConfig.Tags = &map[string]string{"team": "b"} })
	w.settle(t, 6)
	if cond := condition(w.cluster(t), mgmtv1.ConditionConflict); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Fatalf("Conflict = %+v, want True", cond)
	}
	before := a.writeCalls()["managedClusters.updateTags"]
	if _, err := management.Resolve(context.Background(), k, manager.Hosted, w.name, "tags", management.Keep); err != nil {
		t.Fatal(err)
	}
	w.settle(t, 6)
	first := a.writeCalls()["managedClusters.updateTags"]
	if first != before+1 {
		t.Errorf("updateTags calls %d → %d after keeping, want one push", before, first)
	}
	w.settle(t, 6)
	if again := a.writeCalls()["managedClusters.updateTags"]; again != first {
		t.Errorf("updateTags calls went from %d to %d: the kept tags are pushed again and again", first, again)
	}
	c := w.cluster(t)
	if cond := condition(c, mgmtv1.ConditionConflict); cond == nil || cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, "tags") {
		t.Errorf("Conflict = %+v, want True naming tags again (the policy's tag is back)", cond)
	}
	if v, ok := c.Annotations[engine.KeepAnnotation]; ok {
		t.Errorf("the answer %s is still on the Cluster", v)
	}
}

// What AKS cannot change is refused before any call, naming the field: a
// downgrade, a pool's VM size, the last System pool's removal.
func TestAKSRefusesBeforeAnyCall(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func(s *aksv1.AKSClusterConfigSpec)
	}{
		{"downgrade", "cannot downgrade", func(s *aksv1.AKSClusterConfigSpec) { s.KubernetesVersion = to.Ptr("1.30") }},
		{"vmsize", "nodePools[pool1].vmSize", func(s *aksv1.AKSClusterConfigSpec) { (*s.NodePools)[0].VMSize = to.Ptr("Standard_D8s_v3") }},
		{"lastsystem", "last System-mode pool", func(s *aksv1.AKSClusterConfigSpec) { *s.NodePools = []aksv1.AKSNodePool{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, a := aksWorld(t, "aks-refuse-"+tc.name)
			if tc.name == "downgrade" {
				w.edit(t, func(c *mgmtv1.Cluster) { c.Spec.AKSConfig.KubernetesVersion = to.Ptr("1.31") })
				w.settle(t, 2)
			}
			before := a.writeCalls()
			w.edit(t, func(c *mgmtv1.Cluster) { tc.edit(c.Spec.AKSConfig) })
			w.settle(t, 4)
			op := operatorOf(t, w)
			if !strings.Contains(op.Status.FailureMessage, tc.want) {
				t.Errorf("failureMessage %q, want it to name %q", op.Status.FailureMessage, tc.want)
			}
			after := a.writeCalls()
			for _, call := range []string{"managedClusters.createOrUpdate", "agentPools.createOrUpdate", "agentPools.delete"} {
				if after[call] != before[call] {
					t.Errorf("%s calls %d → %d: a refused change was sent", call, before[call], after[call])
				}
			}
		})
	}
}

// A cluster changed in the portal between clustersync's read and write is
// not overwritten: the PUT carries the eTag it read, Azure answers 412,
// and the next pass decides on the new state.
func TestAKSStalePutRefused(t *testing.T) {
	w, a := aksWorld(t, "aks-etag")
	w.edit(t, func(c *mgmtv1.Cluster) { c.Spec.AKSConfig.AuthorizedIPRanges = &[]string{"10.0.0.0/8"} })
	ctx := context.Background()
	_, _ = w.mgmt.Reconcile(ctx, reqFor(w.key()))
	// The portal changes the cluster's tags (a new eTag) right before the
	// operator's pass; the emulator answers the operator's stale If-Match
	// with 412 only if the eTag is checked.
	mc, err := a.portal.ManagedClusters.Get(ctx, a.rg, a.name, nil)
	if err != nil {
		t.Fatal(err)
	}
	etag := mc.ETag
	if _, err := a.portal.ManagedClusters.BeginUpdateTags(ctx, a.rg, a.name, armcontainerservice.TagsObject{Tags: ptrMap(map[string]string{"team": "a", "x": "1"})}, nil); err != nil {
		t.Fatal(err)
	}
	w.clk.Advance(2 * time.Minute)
	if _, err := a.portal.ManagedClusters.BeginCreateOrUpdate(ctx, a.rg, a.name, mc.ManagedCluster,
		&armcontainerservice.ManagedClustersClientBeginCreateOrUpdateOptions{IfMatch: etag}); err == nil {
		t.Fatal("a PUT with a stale If-Match was accepted")
	}
	w.settle(t, 6)
	got := a.snapshot(t)
	if got.Tags["x"] != "1" {
		t.Errorf("cloud tags %v: the portal's change was reverted", got.Tags)
	}
}

// A cluster someone else creates under the name between clustersync's
// check and its create call is never clustersync's: the create is refused
// (If-None-Match), reported, and deleting the Cluster leaves that cluster
// and its resource group alone.
func TestAKSNameTakenMeanwhileIsNotDeleted(t *testing.T) {
	w := startAKS(t, "aks-taken", false)
	a := w.cloud.(*aksCloud)
	// The create PUT is answered as if the name had just been taken; then
	// someone does take it.
	a.srv.FailNext("managedClusters.createOrUpdate", 412, "PreconditionFailed", "The resource already exists.", 1)
	w.settle(t, 1)
	if err := a.srv.ImportCluster(subscription, a.rg, akstest.ClusterSpec{Name: a.name, KubernetesVersion: "1.31"}); err != nil {
		t.Fatal(err)
	}
	w.settle(t, 3)
	if op := operatorOf(t, w); op.Status.CreateRequested || !strings.Contains(op.Status.FailureMessage, "already exists") {
		t.Errorf("createRequested %v, failure %q; want false and the name reported taken", op.Status.CreateRequested, op.Status.FailureMessage)
	}
	if err := k.Delete(context.Background(), w.cluster(t)); err != nil {
		t.Fatal(err)
	}
	w.settle(t, 6)
	if !a.exists() {
		t.Error("someone else's cluster was deleted with the Cluster")
	}
	if _, ok := a.srv.ResourceGroup(subscription, a.rg); !ok {
		t.Error("the resource group holding someone else's cluster was deleted")
	}
}
