package scenarios_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/gke"
	"github.com/clustersync/clustersync/internal/hosted/gke/gketest"
	"github.com/clustersync/clustersync/internal/hosted/management"
)

// What GKE needs beyond the scenario table: GKE's own rules, and the
// problems Rancher's gke-operator users met (issues and pull requests
// named in each test).

func gkeWorld(t *testing.T, name string) (*world, *gkeCloud) {
	t.Helper()
	w := settled(t, func(imported bool) *world { return startGKE(t, name, imported) })
	return w, w.cloud.(*gkeCloud)
}

func (g *gkeCloud) writeCalls() map[string]int {
	out := map[string]int{}
	for op, n := range g.srv.Calls() {
		if v := opVerb(op); v != "get" && v != "list" {
			out[op] = n
		}
	}
	return out
}

func gkeOperatorOf(t *testing.T, w *world) *gkev1.GKEClusterConfig {
	t.Helper()
	var op gkev1.GKEClusterConfig
	if err := k.Get(context.Background(), client.ObjectKey{Namespace: hostedv1.Namespace, Name: w.name}, &op); err != nil {
		t.Fatal(err)
	}
	return &op
}

// pass runs each controller once, without moving the clock.
func (w *world) pass(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	_, _ = w.mgmt.Reconcile(ctx, reqFor(w.key()))
	_, _ = w.op.Reconcile(ctx, reqFor(w.opKey()))
}

// An operation clustersync did not start is waited for, never fought: no
// write is sent while the console's operation runs, and the user's change
// goes out once it ends.
func TestGKEWaitsForOutsideOperations(t *testing.T) {
	w, g := gkeWorld(t, "gke-busy")
	g.srv.ResetCalls()
	g.setCloudTags(t, map[string]string{"team": "a", "console": "1"}) // SET_LABELS, 1 minute
	w.edit(t, func(c *mgmtv1.Cluster) { c.Spec.GKEConfig.LoggingService = ptr.To("none") })
	for i := 0; i < 3; i++ {
		w.pass(t)
	}
	if n := g.writeCalls()[gketest.MethodClustersUpdate]; n != 0 {
		t.Errorf("%d cluster updates while the console's operation ran, want none", n)
	}
	if op := gkeOperatorOf(t, w); op.Status.Phase != hostedv1.PhaseUpdating || op.Status.FailureMessage != "" {
		t.Errorf("operator phase %q, failure %q while GKE is busy; want updating, no failure", op.Status.Phase, op.Status.FailureMessage)
	}
	w.settle(t, 6)
	cl := g.snapshot(t)
	if cl.GetResourceLabels()["console"] != "1" || cl.GetLoggingService() != "none" {
		t.Errorf("labels %v, logging %q: want the console's label kept and the user's logging applied", cl.GetResourceLabels(), cl.GetLoggingService())
	}
}

// GKE's refusal of a second operation (400 failedPrecondition, "Cluster is
// running incompatible operation") and of a stale label fingerprint is a
// wait, not a failure: classified by reason, retried, and the change lands
// (rancher/gke-operator#509).
func TestGKEFailedPreconditionIsNotAFailure(t *testing.T) {
	for _, tc := range []struct{ name, message string }{
		{"busy", "Cluster is running incompatible operation operation-1764151200000-abcdef12."},
		{"fingerprint", `Labels could not be set due to fingerprint mismatch; try again with the proper fingerprint: incorrect fingerprint supplied was "1234abcd", the expected one is "a9dc16a7".`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, g := gkeWorld(t, "gke-400-"+tc.name)
			g.srv.FailNext(gketest.MethodClustersSetResourceLabels, 400, "failedPrecondition", tc.message, 1)
			w.edit(t, func(c *mgmtv1.Cluster) { c.Spec.GKEConfig.Labels = &map[string]string{"team": "b"} })
			w.pass(t)
			if op := gkeOperatorOf(t, w); op.Status.FailureMessage != "" || w.cluster(t).Status.Phase == mgmtv1.PhaseError {
				t.Errorf("failure %q, phase %s after a 400 failedPrecondition; want a wait", op.Status.FailureMessage, w.cluster(t).Status.Phase)
			}
			w.settle(t, 4)
			if got := g.cloudTags(t); got["team"] != "b" {
				t.Errorf("cloud labels %v, want team=b", got)
			}
			if n := g.writeCalls()[gketest.MethodClustersSetResourceLabels]; n != 2 {
				t.Errorf("%d setResourceLabels calls, want 2 (refused, then sent again)", n)
			}
		})
	}
}

// An operation that ends with an error is followed to DONE: the field and
// GKE's message are in failureMessage, the applied value is the previous
// one (nothing taken for an outside change), and the change is pushed
// again.
func TestGKEFailedOperationReported(t *testing.T) {
	w, g := gkeWorld(t, "gke-opfail")
	g.srv.FailOperations(1, "Insufficient regional quota to satisfy request: resource \"CPUS\"")
	w.edit(t, func(c *mgmtv1.Cluster) { c.Spec.GKEConfig.LoggingService = ptr.To("none") })
	var failures []string
	for i := 0; i < 6; i++ {
		w.settle(t, 1)
		op := gkeOperatorOf(t, w)
		if op.Status.FailureMessage != "" {
			failures = append(failures, op.Status.FailureMessage)
		}
		if a := op.Status.AppliedSpec; a != nil && a.LoggingService != nil && *a.LoggingService == "none" && g.snapshot(t).GetLoggingService() != "none" &&
			len(op.Status.PendingUpdates) == 0 {
			t.Errorf("round %d: applied loggingService none while GKE has %q and nothing is pending", i, g.snapshot(t).GetLoggingService())
		}
	}
	if len(failures) == 0 || !strings.Contains(failures[0], "loggingService") || !strings.Contains(failures[0], "Insufficient regional quota") {
		t.Errorf("failure messages %q, want one naming loggingService and GKE's message", failures)
	}
	if got := g.snapshot(t).GetLoggingService(); got != "none" {
		t.Errorf("logging %q, want none once pushed again", got)
	}
	if notes := w.outsideChanges(t); len(notes) != 0 {
		t.Errorf("OutsideChange events %q for a failed push", notes)
	}
}

// What GKE cannot change is refused before any call, naming the field: a
// minor downgrade (rancher/gke-operator#714), a field set only at
// creation, a node config field GKE cannot change on a pool.
func TestGKERefusesBeforeAnyCall(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func(s *gkev1.GKEClusterConfigSpec)
	}{
		{"downgrade", "cannot downgrade", func(s *gkev1.GKEClusterConfigSpec) { s.KubernetesVersion = ptr.To("1.30") }},
		{"network", "network: GKE sets it only when the cluster is created", func(s *gkev1.GKEClusterConfigSpec) { s.Network = ptr.To("other") }},
		{"machine", "config.machineType only when pool pool1 is created", func(s *gkev1.GKEClusterConfigSpec) {
			(*s.NodePools)[0].Config = &gkev1.GKENodeConfig{MachineType: "n2-standard-8"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, g := gkeWorld(t, "gke-refuse-"+tc.name)
			before := g.writeCalls()
			w.edit(t, func(c *mgmtv1.Cluster) { tc.edit(c.Spec.GKEConfig) })
			w.settle(t, 4)
			if op := gkeOperatorOf(t, w); !strings.Contains(op.Status.FailureMessage, tc.want) {
				t.Errorf("failureMessage %q, want it to name %q", op.Status.FailureMessage, tc.want)
			}
			after := g.writeCalls()
			for call, n := range after {
				if n != before[call] {
					t.Errorf("%s calls %d → %d: a refused change was sent", call, before[call], n)
				}
			}
		})
	}
}

// An upgrade made in the console, followed by a user edit of another
// field before the next refresh, is adopted: the control plane is never
// sent back to the old version (the case of rancher/rancher#31909, for
// GKE).
func TestGKEConsoleUpgradeKept(t *testing.T) {
	w, g := gkeWorld(t, "gke-upgrade")
	w.edit(t, func(c *mgmtv1.Cluster) { c.Spec.GKEConfig.KubernetesVersion = ptr.To("1.31") })
	w.settle(t, 2)
	ctx := context.Background()
	if _, err := g.console.Clusters.UpdateCluster(ctx, &containerpb.UpdateClusterRequest{Name: g.resource(),
		Update: &containerpb.ClusterUpdate{DesiredMasterVersion: "1.32"}}); err != nil {
		t.Fatal(err)
	}
	w.clk.Advance(2 * time.Minute)
	w.edit(t, func(c *mgmtv1.Cluster) { c.Spec.GKEConfig.Labels = &map[string]string{"team": "after-upgrade"} })
	g.srv.ResetCalls()
	w.settle(t, 6)
	if n := g.writeCalls()[gketest.MethodClustersUpdate]; n != 0 {
		t.Errorf("%d cluster updates after the console's upgrade, want none (no downgrade attempt)", n)
	}
	if v := g.snapshot(t).GetCurrentMasterVersion(); !strings.HasPrefix(v, "1.32.") {
		t.Errorf("control plane %s, want the console's 1.32", v)
	}
	c := w.cluster(t)
	if v := ptr.Deref(c.Spec.GKEConfig.KubernetesVersion, ""); v != "1.32" {
		t.Errorf("config kubernetesVersion %q, want the console's 1.32 adopted", v)
	}
	if got := g.cloudTags(t); got["team"] != "after-upgrade" {
		t.Errorf("cloud labels %v, want the user's edit applied", got)
	}
}

// A pool's size: with the autoscaler on, it is neither pushed nor adopted;
// without it, a size set outside (a script scaling a pool to 0 at night,
// rancher/gke-operator#190) is adopted, not reverted.
func TestGKEPoolSizeOwnership(t *testing.T) {
	w, g := gkeWorld(t, "gke-size")
	w.edit(t, func(c *mgmtv1.Cluster) {
		(*c.Spec.GKEConfig.NodePools)[0].InitialNodeCount = ptr.To(int64(2))
		*c.Spec.GKEConfig.NodePools = append(*c.Spec.GKEConfig.NodePools, gkev1.GKENodePoolConfig{Name: "auto", InitialNodeCount: ptr.To(int64(2)),
			Autoscaling: &gkev1.GKENodePoolAutoscaling{Enabled: true, MinNodeCount: 1, MaxNodeCount: 5}})
	})
	w.settle(t, 6)
	ctx := context.Background()
	for pool, size := range map[string]int32{"pool1": 0, "auto": 4} {
		if _, err := g.console.Clusters.SetNodePoolSize(ctx, &containerpb.SetNodePoolSizeRequest{Name: g.resource() + "/nodePools/" + pool, NodeCount: size}); err != nil {
			t.Fatal(err)
		}
		w.clk.Advance(2 * time.Minute)
	}
	g.srv.ResetCalls()
	w.settle(t, 6)
	if n := g.writeCalls()[gketest.MethodNodePoolsSetSize]; n != 0 {
		t.Errorf("%d setSize calls after the outside resizes, want none", n)
	}
	sizes := map[string]int32{}
	for _, np := range g.snapshot(t).GetNodePools() {
		sizes[np.GetName()] = np.GetInitialNodeCount()
	}
	if sizes["pool1"] != 0 || sizes["auto"] != 4 {
		t.Errorf("GKE sizes %v, want pool1 0 and auto 4 as set outside", sizes)
	}
	for _, p := range *w.cluster(t).Spec.GKEConfig.NodePools {
		switch n := ptr.Deref(p.InitialNodeCount, -1); {
		case p.Name == "pool1" && n != 0:
			t.Errorf("config size of pool1 %d, want the outside 0 adopted", n)
		case p.Name == "auto" && n != 2:
			t.Errorf("config size of the autoscaled pool %d, want the user's 2 (not adopted)", n)
		}
	}
	notes := w.outsideChanges(t)
	if len(notes) != 1 || !strings.Contains(notes[0], "nodePools[pool1].initialNodeCount") {
		t.Errorf("OutsideChange events %q, want one for pool1's size only", notes)
	}
}

// A created cluster: one create call with its pools, Active once GKE
// reports it RUNNING, the endpoint and CA in the Cluster's status; a
// private endpoint the management server cannot reach is reported as
// needing a tunnel (status.gkeStatus.privateRequiresTunnel).
func TestGKECreatePrivate(t *testing.T) {
	w := startGKEWith(t, "gke-private", false, func(s *gkev1.GKEClusterConfigSpec) {
		s.PrivateClusterConfig = &gkev1.GKEPrivateClusterConfig{EnablePrivateEndpoint: true, EnablePrivateNodes: true, MasterIpv4CidrBlock: "172.16.0.0/28"}
	})
	g := w.cloud.(*gkeCloud)
	cloud := w.mgmt.(*management.Reconciler[gkev1.GKEClusterConfigSpec, *gkev1.GKEClusterConfig]).Reader.(*gke.Management)
	cloud.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
		return nil, &net.DNSError{Err: "no route", Name: address, IsTimeout: true}
	}
	w.settle(t, 10)
	c := w.cluster(t)
	if n := g.srv.Calls()[gketest.MethodClustersCreate]; n != 1 {
		t.Errorf("%d create calls, want 1", n)
	}
	if c.Status.GKEStatus == nil || !ptr.Deref(c.Status.GKEStatus.PrivateRequiresTunnel, false) {
		t.Errorf("gkeStatus %+v, want privateRequiresTunnel true", c.Status.GKEStatus)
	}
	if cond := condition(c, mgmtv1.ConditionConnected); cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != management.ReasonTunnelRequired {
		t.Errorf("Connected = %+v, want False TunnelRequired", cond)
	}
	if c.Status.APIEndpoint != "https://"+gketest.PrivateEndpoint || c.Status.CACert == "" {
		t.Errorf("endpoint %q, CA %d bytes; want the private endpoint and GKE's CA", c.Status.APIEndpoint, len(c.Status.CACert))
	}
}
