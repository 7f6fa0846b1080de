package eks_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
)

// scratchSpec is spec without subnets, service role and node role: all
// three are generated.
func scratchSpec(ns string) eksv1.EKSClusterConfigSpec {
	s := spec(ns)
	s.Subnets, s.ServiceRole = nil, nil
	(*s.NodeGroups)[0].NodeRole = nil
	return s
}

// until reconciles key, advancing the clock by step after each pass, until
// done holds; it fails after passes passes.
func until(t *testing.T, r *operator, clk *hostedtest.Clock, key types.NamespacedName, step time.Duration, passes int, done func(eksv1.EKSClusterConfig) bool) eksv1.EKSClusterConfig {
	t.Helper()
	var c eksv1.EKSClusterConfig
	for range passes {
		if _, c = reconcile(t, r, key); done(c) {
			return c
		}
		clk.Advance(step)
	}
	t.Fatalf("condition not reached after %d passes: %+v", passes, c.Status)
	return c
}

// Create from scratch, as Rancher's operator does: the VPC, service role
// and node role stacks are created together and waited for; the cluster
// is then created on the generated subnets with the generated role, the
// network status says "generated", and the node group gets the generated
// node role.
func TestCreateGeneratedNetworking(t *testing.T) {
	t.Parallel()
	ns, srv, clk, r := setup(t)
	key := types.NamespacedName{Namespace: ns, Name: "prod"}
	if err := k.Create(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}, Spec: scratchSpec(ns)}); err != nil {
		t.Fatal(err)
	}
	_, c := reconcile(t, r, key)
	vpcName, roleName, nodeName := eks.StackNames("prod")
	if c.Status.Phase != "" || c.Status.FailureMessage != "" || !slices.Contains(c.Finalizers, eks.Finalizer) {
		t.Fatalf("while the stacks are created: phase %q failure %q finalizers %v", c.Status.Phase, c.Status.FailureMessage, c.Finalizers)
	}
	if names := srv.StackNames(); !slices.Equal(names, []string{roleName, vpcName, nodeName}) {
		t.Fatalf("stacks %v", names)
	}
	vpc, _ := srv.Stack(vpcName)
	if vpc.Status != "CREATE_IN_PROGRESS" || vpc.Tags[eks.OwnerUIDTag] != string(c.UID) || !slices.Contains(vpc.Capabilities, "CAPABILITY_IAM") {
		t.Errorf("VPC stack %+v", vpc)
	}
	if calls := srv.Calls(); calls["CreateCluster"] != 0 || calls["CreateStack"] != 3 {
		t.Errorf("calls before the stacks are complete: %v", calls)
	}

	c = until(t, r, clk, key, time.Minute, 6, func(c eksv1.EKSClusterConfig) bool { return c.Status.Phase == eksv1.PhaseCreating })
	vpc, _ = srv.Stack(vpcName)
	role, _ := srv.Stack(roleName)
	node, _ := srv.Stack(nodeName)
	subnets := strings.Split(vpc.Outputs["SubnetIds"], ",")
	if c.Status.NetworkFieldsSource != eksv1.NetworkFieldsGenerated || c.Status.VirtualNetwork != vpc.Outputs["VpcId"] ||
		!slices.Equal(c.Status.Subnets, subnets) || len(subnets) != 3 || !slices.Equal(c.Status.SecurityGroups, []string{vpc.Outputs["SecurityGroups"]}) {
		t.Errorf("network status %+v, VPC outputs %v", c.Status, vpc.Outputs)
	}
	if c.Status.GeneratedNodeRole == "" || c.Status.GeneratedNodeRole != node.Outputs["NodeInstanceRole"] {
		t.Errorf("generated node role %q, stack outputs %v", c.Status.GeneratedNodeRole, node.Outputs)
	}
	snap, _ := srv.Cluster("prod")
	if snap.RoleARN != role.Outputs["RoleArn"] || !slices.Equal(snap.SubnetIDs, subnets) {
		t.Errorf("cluster role %s subnets %v; stacks %v %v", snap.RoleARN, snap.SubnetIDs, role.Outputs, vpc.Outputs)
	}

	c = until(t, r, clk, key, 5*time.Minute, 6, func(c eksv1.EKSClusterConfig) bool { return c.Status.Phase == eksv1.PhaseActive })
	if c.Status.NetworkFieldsSource != eksv1.NetworkFieldsGenerated || c.Status.VirtualNetwork != vpc.Outputs["VpcId"] {
		t.Errorf("active network status %+v", c.Status)
	}
	clk.Advance(11 * time.Minute) // node group ACTIVE
	until(t, r, clk, key, time.Minute, 3, func(c eksv1.EKSClusterConfig) bool {
		return c.Status.Phase == eksv1.PhaseActive && c.Status.FailureMessage == ""
	})
	snap, _ = srv.Cluster("prod")
	if ng := snap.Nodegroups["workers"]; snap.Status != "ACTIVE" || ng.Status != "ACTIVE" || ng.NodeRole != c.Status.GeneratedNodeRole || !slices.Equal(ng.Subnets, subnets) {
		t.Errorf("cluster %s node group %+v", snap.Status, snap.Nodegroups)
	}
	if calls := srv.Calls(); calls["CreateStack"] != 3 || calls["CreateCluster"] != 1 || calls["CreateNodegroup"] != 1 {
		t.Errorf("calls %v", calls)
	}
}

// A generated stack that fails is reported with CloudFormation's status
// and reason; the cluster is not created.
func TestCreateStackFailure(t *testing.T) {
	t.Parallel()
	ns, srv, clk, r := setup(t)
	key := types.NamespacedName{Namespace: ns, Name: "prod"}
	vpcName, _, _ := eks.StackNames("prod")
	srv.FailStackCreate(vpcName, "The following resource(s) failed to create: [Subnet03]. Rollback requested by user.")
	if err := k.Create(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}, Spec: scratchSpec(ns)}); err != nil {
		t.Fatal(err)
	}
	c := until(t, r, clk, key, time.Minute, 6, func(c eksv1.EKSClusterConfig) bool { return c.Status.FailureMessage != "" })
	if !strings.Contains(c.Status.FailureMessage, vpcName+" is ROLLBACK_COMPLETE") || !strings.Contains(c.Status.FailureMessage, "[Subnet03]") || c.Status.Phase != "" {
		t.Errorf("phase %q failure %q", c.Status.Phase, c.Status.FailureMessage)
	}
	if calls := srv.Calls(); calls["CreateCluster"] != 0 {
		t.Errorf("CreateCluster called after a failed stack: %v", calls)
	}
	// Deleting the config removes the stacks, the failed one included.
	if err := k.Delete(context.Background(), &c); err != nil {
		t.Fatal(err)
	}
	for pass := 0; pass < 10; pass++ {
		if _, err := r.Reconcile(context.Background(), reconcileRequest(key)); err != nil {
			t.Fatalf("delete pass %d: %v", pass, err)
		}
		if err := k.Get(context.Background(), key, &eksv1.EKSClusterConfig{}); apierrors.IsNotFound(err) {
			break
		}
		clk.Advance(time.Minute)
	}
	if err := k.Get(context.Background(), key, &eksv1.EKSClusterConfig{}); !apierrors.IsNotFound(err) {
		t.Errorf("config not deleted (%v)", err)
	}
	if names := srv.StackNames(); len(names) != 0 {
		t.Errorf("stacks left: %v", names)
	}
}
