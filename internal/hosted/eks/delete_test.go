package eks_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
)

// Deleting a created cluster deletes its node groups, then the cluster,
// and only then lets the EKSClusterConfig go.
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
		for _, op := range []string{"DeleteNodegroup", "DeleteCluster"} {
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
	if fmt.Sprint(sequence) != "[DeleteNodegroup DeleteCluster]" {
		t.Errorf("calls = %v, want node group then cluster", sequence)
	}
	if _, ok := srv.Cluster("prod"); ok {
		t.Error("the EKS cluster still exists")
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
