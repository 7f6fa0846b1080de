package eks_test

import (
	"slices"
	"testing"
	"time"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/eks"
)

// ebsCSIDriver: true installs the EBS CSI driver add-on when DescribeAddon
// does not find it, last in the update order (after a tag change made at
// the same time), and only once; false never removes it.
func TestEBSCSIDriverAddon(t *testing.T) {
	t.Parallel()
	key, srv, clk, r := activeCluster(t)
	editSpec(t, key, func(s *eksv1.EKSClusterConfigSpec) {
		on := true
		s.EBSCSIDriver = &on
		(*s.Tags)["cost"] = "42"
	})
	before := srv.Calls()
	var sequence []string
	until(t, r, clk, key, time.Minute, 6, func(c eksv1.EKSClusterConfig) bool {
		return c.Status.Phase == eksv1.PhaseActive && srv.Calls()["CreateAddon"] > before["CreateAddon"]
	})
	after := srv.Calls()
	for _, op := range []string{"TagResource", "CreateAddon"} {
		for range after[op] - before[op] {
			sequence = append(sequence, op)
		}
	}
	if !slices.Equal(sequence, []string{"TagResource", "CreateAddon"}) {
		t.Errorf("calls %v, want the tags first and the add-on last", sequence)
	}
	if a, ok := mustCluster(t, srv).Addons[eks.EBSCSIDriverAddon]; !ok || a.Status != "CREATING" && a.Status != "ACTIVE" {
		t.Errorf("add-on %+v", a)
	}
	for range 2 {
		if _, c := reconcile(t, r, key); c.Status.Phase != eksv1.PhaseActive || c.Status.FailureMessage != "" {
			t.Errorf("after the install: %+v", c.Status)
		}
	}
	editSpec(t, key, func(s *eksv1.EKSClusterConfigSpec) { off := false; s.EBSCSIDriver = &off })
	if _, c := reconcile(t, r, key); c.Status.Phase != eksv1.PhaseActive || c.Status.FailureMessage != "" {
		t.Errorf("ebsCSIDriver false: %+v", c.Status)
	}
	if calls := srv.Calls(); calls["CreateAddon"] != 1 || calls["DeleteAddon"] != 0 {
		t.Errorf("calls %v", calls)
	}
	if _, ok := mustCluster(t, srv).Addons[eks.EBSCSIDriverAddon]; !ok {
		t.Error("the add-on was removed")
	}
}
