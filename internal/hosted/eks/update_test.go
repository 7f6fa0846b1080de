package eks_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
)

// activeCluster creates cluster "prod" and drives it to active.
func activeCluster(t *testing.T) (types.NamespacedName, *ekstest.Server, *hostedtest.Clock, *operator) {
	t.Helper()
	ns, srv, clk, r := setup(t)
	key := types.NamespacedName{Namespace: ns, Name: "prod"}
	if err := k.Create(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}, Spec: spec(ns)}); err != nil {
		t.Fatal(err)
	}
	reconcile(t, r, key)
	clk.Advance(11 * time.Minute)
	reconcile(t, r, key)
	clk.Advance(11 * time.Minute) // node group ACTIVE
	if _, c := reconcile(t, r, key); c.Status.Phase != eksv1.PhaseActive {
		t.Fatalf("not active: %+v", c.Status)
	}
	return key, srv, clk, r
}

func mustCluster(t *testing.T, srv *ekstest.Server) ekstest.ClusterSnapshot {
	t.Helper()
	snap, ok := srv.Cluster("prod")
	if !ok {
		t.Fatal("no EKS cluster prod")
	}
	return snap
}

func editSpec(t *testing.T, key types.NamespacedName, edit func(*eksv1.EKSClusterConfigSpec)) {
	t.Helper()
	var c eksv1.EKSClusterConfig
	if err := k.Get(context.Background(), key, &c); err != nil {
		t.Fatal(err)
	}
	edit(&c.Spec)
	if err := k.Update(context.Background(), &c); err != nil {
		t.Fatal(err)
	}
}

// writes are the mutating EKS calls made since before.
func writes(before, after map[string]int) []string {
	var out []string
	for _, op := range []string{"UpdateClusterVersion", "UpdateClusterConfig", "TagResource", "UntagResource",
		"CreateNodegroup", "DeleteNodegroup", "UpdateNodegroupConfig", "UpdateNodegroupVersion"} {
		for range after[op] - before[op] {
			out = append(out, op)
		}
	}
	return out
}

// untilActive reconciles key, letting EKS updates finish between passes,
// until the operator is active again, and returns the mutating EKS calls
// it made in order.
func untilActive(t *testing.T, key types.NamespacedName, srv *ekstest.Server, clk *hostedtest.Clock, r *operator) []string {
	t.Helper()
	var sequence []string
	for pass := 0; pass < 12; pass++ {
		before := srv.Calls()
		_, c := reconcile(t, r, key)
		sequence = append(sequence, writes(before, srv.Calls())...)
		if c.Status.FailureMessage != "" {
			t.Fatalf("pass %d: failure %q", pass, c.Status.FailureMessage)
		}
		if c.Status.Phase == eksv1.PhaseActive && pass > 0 {
			return sequence
		}
		clk.Advance(6 * time.Minute)
	}
	t.Fatalf("not active after 12 passes; calls %v", sequence)
	return nil
}

// Each kind of change is sent with the EKS call that makes it and reaches
// the cluster: endpoint access, public access sources, logging, tags
// removed, node-group labels, a node group added, a node group removed.
func TestUpdateEachField(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name  string
		edit  func(*eksv1.EKSClusterConfigSpec)
		calls []string
		check func(ekstest.ClusterSnapshot) bool
	}{
		{"private access", func(s *eksv1.EKSClusterConfigSpec) { yes := true; s.PrivateAccess = &yes },
			[]string{"UpdateClusterConfig"}, func(c ekstest.ClusterSnapshot) bool { return c.EndpointPrivateAccess }},
		{"public access sources", func(s *eksv1.EKSClusterConfigSpec) { s.PublicAccessSources = &[]string{"10.0.0.0/8"} },
			[]string{"UpdateClusterConfig"}, func(c ekstest.ClusterSnapshot) bool {
				return reflect.DeepEqual(c.PublicAccessCIDRs, []string{"10.0.0.0/8"})
			}},
		{"logging", func(s *eksv1.EKSClusterConfigSpec) { s.LoggingTypes = &[]string{"api", "audit"} },
			[]string{"UpdateClusterConfig"}, func(c ekstest.ClusterSnapshot) bool {
				return reflect.DeepEqual(c.EnabledLogTypes, []string{"api", "audit"})
			}},
		{"tag removed", func(s *eksv1.EKSClusterConfigSpec) { s.Tags = &map[string]string{} },
			[]string{"UntagResource"}, func(c ekstest.ClusterSnapshot) bool { return len(c.Tags) == 0 }},
		{"node-group labels", func(s *eksv1.EKSClusterConfigSpec) { (*s.NodeGroups)[0].Labels = &map[string]string{"tier": "web"} },
			[]string{"UpdateNodegroupConfig"}, func(c ekstest.ClusterSnapshot) bool { return c.Nodegroups["workers"].Labels["tier"] == "web" }},
		{"node group added", func(s *eksv1.EKSClusterConfigSpec) {
			ng := (*s.NodeGroups)[0]
			ng.NodegroupName, ng.InstanceType = "batch", str("c5.xlarge")
			*s.NodeGroups = append(*s.NodeGroups, ng)
		}, []string{"CreateNodegroup"}, func(c ekstest.ClusterSnapshot) bool {
			return c.Nodegroups["batch"].Status == "ACTIVE" && c.Nodegroups["workers"].Status == "ACTIVE"
		}},
		{"node group removed", func(s *eksv1.EKSClusterConfigSpec) { *s.NodeGroups = []eksv1.NodeGroup{} },
			[]string{"DeleteNodegroup"}, func(c ekstest.ClusterSnapshot) bool { _, ok := c.Nodegroups["workers"]; return !ok }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, srv, clk, r := activeCluster(t)
			editSpec(t, key, tc.edit)
			if calls := untilActive(t, key, srv, clk, r); !reflect.DeepEqual(calls, tc.calls) {
				t.Errorf("calls = %v, want %v", calls, tc.calls)
			}
			clk.Advance(11 * time.Minute) // deletions and creations finish
			if snap := mustCluster(t, srv); !tc.check(snap) {
				t.Errorf("EKS after the update: %+v", snap)
			}
		})
	}
}

// Several changes at once are applied one per pass, in Rancher's order
// (version, one minor at a time, then tags, then node groups), each after
// the previous update has finished.
func TestUpdatesOnePerPass(t *testing.T) {
	key, srv, clk, r := activeCluster(t)
	editSpec(t, key, func(s *eksv1.EKSClusterConfigSpec) {
		v, size := "1.33", int64(3)
		s.KubernetesVersion = &v
		(*s.Tags)["cost"] = "42"
		(*s.NodeGroups)[0].DesiredSize = &size
	})
	sequence := untilActive(t, key, srv, clk, r)
	want := []string{"UpdateClusterVersion", "UpdateClusterVersion", "TagResource", "UpdateNodegroupConfig"}
	if !reflect.DeepEqual(sequence, want) {
		t.Errorf("calls = %v, want %v", sequence, want)
	}
	snap, _ := srv.Cluster("prod")
	if snap.Version != "1.33" || snap.Tags["cost"] != "42" || snap.Nodegroups["workers"].DesiredSize != 3 {
		t.Errorf("emulator after the updates: version %s tags %v node groups %+v", snap.Version, snap.Tags, snap.Nodegroups)
	}
}

// While an update started elsewhere (the console) is in progress, nothing
// is pushed; afterwards only what still differs is.
func TestWaitsForUpdateInProgress(t *testing.T) {
	key, srv, clk, r := activeCluster(t)
	if _, err := srv.ConsoleUpgrade("prod", "1.32"); err != nil {
		t.Fatal(err)
	}
	editSpec(t, key, func(s *eksv1.EKSClusterConfigSpec) {
		v := "1.32"
		s.KubernetesVersion = &v
		(*s.Tags)["cost"] = "42"
	})
	before := srv.Calls()
	if _, c := reconcile(t, r, key); c.Status.Phase != eksv1.PhaseUpdating {
		t.Errorf("phase %q while a console update runs", c.Status.Phase)
	}
	if w := writes(before, srv.Calls()); len(w) != 0 {
		t.Errorf("pushed %v while an update was in progress", w)
	}
	clk.Advance(6 * time.Minute)
	before = srv.Calls()
	reconcile(t, r, key)
	if w := writes(before, srv.Calls()); !reflect.DeepEqual(w, []string{"TagResource"}) {
		t.Errorf("after the console update: %v, want [TagResource]", w)
	}
}

// A downgrade is refused with a message naming both versions.
func TestDowngradeRefused(t *testing.T) {
	key, srv, _, r := activeCluster(t)
	editSpec(t, key, func(s *eksv1.EKSClusterConfigSpec) { v := "1.30"; s.KubernetesVersion = &v })
	before := srv.Calls()
	_, c := reconcile(t, r, key)
	if c.Status.FailureMessage == "" || !strings.Contains(c.Status.FailureMessage, "1.31 → 1.30") {
		t.Errorf("failure %q", c.Status.FailureMessage)
	}
	if w := writes(before, srv.Calls()); len(w) != 0 {
		t.Errorf("pushed %v", w)
	}
}

// A node group created in the console is not in the operator's spec until
// the management controller adopts it; meanwhile the operator leaves it
// alone while applying other changes.
func TestConsoleNodegroupNotDeleted(t *testing.T) {
	key, srv, clk, r := activeCluster(t)
	if err := srv.ConsoleCreateNodegroup("prod", ekstest.NodegroupSpec{Name: "console"}); err != nil {
		t.Fatal(err)
	}
	editSpec(t, key, func(s *eksv1.EKSClusterConfigSpec) { (*s.Tags)["cost"] = "42" })
	if calls := untilActive(t, key, srv, clk, r); !reflect.DeepEqual(calls, []string{"TagResource"}) {
		t.Errorf("calls = %v, want [TagResource]", calls)
	}
	if _, ok := mustCluster(t, srv).Nodegroups["console"]; !ok {
		t.Error("the console's node group was deleted")
	}
}
