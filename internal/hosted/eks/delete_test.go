package eks_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
)

// Deleting a created cluster deletes its node groups, then the managed
// launch template and the cluster, and only then lets the EKSClusterConfig
// go.
func TestDeleteCreated(t *testing.T) {
	key, srv, clk, r := activeCluster(t)
	var c eksv1.EKSClusterConfig
	if err := k.Get(context.Background(), key, &c); err != nil || fmt.Sprint(c.Finalizers) != "["+eks.Finalizer+"]" {
		t.Fatalf("finalizers of a created cluster = %v (%v)", c.Finalizers, err)
	}
	if err := k.Delete(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}); err != nil {
		t.Fatal(err)
	}
	var sequence []string
	for pass := 0; pass < 10; pass++ {
		before := srv.Calls()
		if _, err := r.Reconcile(context.Background(), reconcileRequest(key)); err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
		after := srv.Calls()
		for _, op := range []string{"DeleteNodegroup", "DeleteLaunchTemplate", "DeleteCluster", "DeleteStack"} {
			for range after[op] - before[op] {
				sequence = append(sequence, op)
			}
		}
		if err := k.Get(context.Background(), key, &eksv1.EKSClusterConfig{}); apierrors.IsNotFound(err) {
			break
		}
		clk.Advance(6 * time.Minute)
	}
	if err := k.Get(context.Background(), key, &eksv1.EKSClusterConfig{}); !apierrors.IsNotFound(err) {
		t.Fatalf("config still there after deletion (%v)", err)
	}
	if fmt.Sprint(sequence) != "[DeleteNodegroup DeleteLaunchTemplate DeleteCluster]" {
		t.Errorf("calls = %v, want node group, launch template, cluster", sequence)
	}
	if _, ok := srv.Cluster("prod"); ok {
		t.Error("the EKS cluster still exists")
	}
	if names := srv.LaunchTemplateNames(); len(names) != 0 {
		t.Errorf("launch templates left: %v", names)
	}
}

// Deleting the config of an imported cluster makes no cloud call: the
// cluster is only disconnected.
func TestDeleteImportedDisconnects(t *testing.T) {
	ns, srv, _, r := setup(t)
	if err := srv.ImportCluster(ekstest.ClusterSpec{Name: "legacy", Version: "1.31"}); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: "legacy"}
	s := spec(ns)
	s.DisplayName, s.Imported = "legacy", true
	if err := k.Create(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}, Spec: s}); err != nil {
		t.Fatal(err)
	}
	if _, c := reconcile(t, r, key); len(c.Finalizers) != 0 {
		t.Fatalf("an imported cluster got finalizers %v", c.Finalizers)
	}
	srv.ResetCalls()
	if err := k.Delete(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(context.Background(), reconcileRequest(key)); err != nil {
		t.Fatal(err)
	}
	if err := k.Get(context.Background(), key, &eksv1.EKSClusterConfig{}); !apierrors.IsNotFound(err) {
		t.Errorf("imported config not deleted at once (%v)", err)
	}
	if calls := srv.Calls(); len(calls) != 0 {
		t.Errorf("cloud calls on disconnect: %v", calls)
	}
	if snap, ok := srv.Cluster("legacy"); !ok || snap.Status != "ACTIVE" {
		t.Errorf("imported cluster after disconnect: %+v %v", snap, ok)
	}

}

// Import: an existing cluster becomes active without any write; its nil
// fields stay unmanaged, so nothing is pushed until the user sets a field,
// and then only that field is.
func TestImport(t *testing.T) {
	ns, srv, _, r := setup(t)
	if err := srv.ImportCluster(ekstest.ClusterSpec{Name: "legacy", Version: "1.31", Tags: map[string]string{"owner": "ops"}}); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: "legacy"}
	s := eksv1.EKSClusterConfigSpec{DisplayName: "legacy", Region: "us-west-2", AmazonCredentialSecret: ns + ":aws", Imported: true}
	if err := k.Create(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}, Spec: s}); err != nil {
		t.Fatal(err)
	}
	srv.ResetCalls()
	for range 2 { // import, then an update pass
		if _, c := reconcile(t, r, key); c.Status.Phase != eksv1.PhaseActive || c.Status.FailureMessage != "" {
			t.Fatalf("phase %q failure %q", c.Status.Phase, c.Status.FailureMessage)
		}
	}
	if w := writes(map[string]int{}, srv.Calls()); len(w) != 0 {
		t.Errorf("import wrote %v", w)
	}
	editSpec(t, key, func(s *eksv1.EKSClusterConfigSpec) { s.Tags = &map[string]string{"owner": "ops", "cost": "42"} })
	srv.ResetCalls()
	reconcile(t, r, key)
	if w := writes(map[string]int{}, srv.Calls()); fmt.Sprint(w) != "[TagResource]" {
		t.Errorf("after setting tags: %v, want [TagResource]", w)
	}
	// A name that does not exist is refused, naming the field.
	s.DisplayName = "ghost"
	if err := k.Create(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: "ghost", Namespace: ns}, Spec: s}); err != nil {
		t.Fatal(err)
	}
	if _, c := reconcile(t, r, types.NamespacedName{Namespace: ns, Name: "ghost"}); c.Status.FailureMessage != "spec.displayName: no EKS cluster named ghost in us-west-2 to import" {
		t.Errorf("failure %q", c.Status.FailureMessage)
	}
}

// Deleting a cluster created from scratch removes, in order, the node
// groups, the managed launch template, the cluster, then the generated
// stacks — node role, service role, VPC — each once the previous one is
// gone, the first only once the cluster is gone.
func TestDeleteGenerated(t *testing.T) {
	t.Parallel()
	ns, srv, clk, r := setup(t)
	key := types.NamespacedName{Namespace: ns, Name: "prod"}
	if err := k.Create(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}, Spec: scratchSpec(ns)}); err != nil {
		t.Fatal(err)
	}
	until(t, r, clk, key, 6*time.Minute, 10, func(c eksv1.EKSClusterConfig) bool {
		snap, ok := srv.Cluster("prod")
		return c.Status.Phase == eksv1.PhaseActive && ok && snap.Nodegroups["workers"].Status == ekstest.StatusActive
	})
	vpc, role, node := eks.StackNames("prod")
	if got := srv.StackNames(); len(got) != 3 || len(srv.LaunchTemplateNames()) != 1 {
		t.Fatalf("stacks %v templates %v", got, srv.LaunchTemplateNames())
	}
	if err := k.Delete(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}); err != nil {
		t.Fatal(err)
	}
	var sequence []string
	deleting := map[string]bool{}
	for pass := 0; pass < 20; pass++ {
		before := srv.Calls()
		if _, err := r.Reconcile(context.Background(), reconcileRequest(key)); err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
		after := srv.Calls()
		for _, op := range []string{"DeleteNodegroup", "DeleteLaunchTemplate", "DeleteCluster"} {
			for range after[op] - before[op] {
				sequence = append(sequence, op)
			}
		}
		order := []string{node, role, vpc}
		for i, name := range order {
			st, ok := srv.Stack(name)
			if deleting[name] || (ok && st.Status != "DELETE_IN_PROGRESS") {
				continue
			}
			deleting[name] = true
			sequence = append(sequence, "DeleteStack "+name)
			if _, exists := srv.Cluster("prod"); exists {
				t.Errorf("stack %s deleted while the cluster exists", name)
			}
			if i > 0 {
				if _, prev := srv.Stack(order[i-1]); prev {
					t.Errorf("stack %s deleted before %s was gone", name, order[i-1])
				}
			}
		}
		if err := k.Get(context.Background(), key, &eksv1.EKSClusterConfig{}); apierrors.IsNotFound(err) {
			break
		}
		clk.Advance(time.Minute)
	}
	if err := k.Get(context.Background(), key, &eksv1.EKSClusterConfig{}); !apierrors.IsNotFound(err) {
		t.Fatalf("config still there (%v)", err)
	}
	want := []string{"DeleteNodegroup", "DeleteLaunchTemplate", "DeleteCluster", "DeleteStack " + node, "DeleteStack " + role, "DeleteStack " + vpc}
	if !slices.Equal(sequence, want) {
		t.Errorf("sequence %v\nwant     %v", sequence, want)
	}
	if names, lts := srv.StackNames(), srv.LaunchTemplateNames(); len(names) != 0 || len(lts) != 0 {
		t.Errorf("left behind: stacks %v templates %v", names, lts)
	}
	if calls := srv.Calls(); calls["DeleteStack"] != 3 {
		t.Errorf("DeleteStack calls %d", calls["DeleteStack"])
	}
}

// A cluster someone else creates under the name after this config claimed
// it (its CreateCluster refused) is not this config's: deleting the config
// leaves it alone (its client request token is not the config's UID).
func TestDeleteLeavesSomeoneElsesCluster(t *testing.T) {
	ns, srv, _, r := setup(t)
	key := types.NamespacedName{Namespace: ns, Name: "taken"}
	s := spec(ns)
	s.DisplayName = "taken"
	if err := k.Create(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}, Spec: s}); err != nil {
		t.Fatal(err)
	}
	srv.FailNext("CreateCluster", "InvalidParameterException", 400, 1)
	if _, c := reconcile(t, r, key); len(c.Finalizers) == 0 || c.Status.FailureMessage == "" {
		t.Fatalf("finalizers %v, failure %q: want the name claimed and the refusal reported", c.Finalizers, c.Status.FailureMessage)
	}
	if err := srv.ImportCluster(ekstest.ClusterSpec{Name: "taken", Version: "1.31"}); err != nil {
		t.Fatal(err)
	}
	if err := k.Delete(context.Background(), &eksv1.EKSClusterConfig{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := r.Reconcile(context.Background(), reconcileRequest(key)); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Get(context.Background(), key, &eksv1.EKSClusterConfig{}); !apierrors.IsNotFound(err) {
		t.Errorf("config not deleted (%v)", err)
	}
	if snap, ok := srv.Cluster("taken"); !ok || snap.Status != "ACTIVE" {
		t.Errorf("someone else's cluster after the delete: %+v %v", snap, ok)
	}
}
