package controller_test

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
	"github.com/clustersync/clustersync/internal/registered/controller"
	"github.com/clustersync/clustersync/internal/registered/server"
	"github.com/clustersync/clustersync/internal/registered/tunnel"
)

var env *hostedtest.Env

func TestMain(m *testing.M) { os.Exit(hostedtest.Main(m, &env)) }

// The registration token is issued with the Cluster, rotated a tenth of
// its TTL before it expires, and the previous one is kept for the grace
// period; until an agent connects the Cluster is Pending.
func TestTokenRotation(t *testing.T) {
	hostedtest.Require(t, env)
	ctx := context.Background()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: server.TokenNamespace}}); err != nil {
		t.Fatal(err)
	}
	ttl, grace := int64(3600), int64(600)
	c := &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "rotating"}, Spec: mgmtv1.ClusterSpec{DisplayName: "rotating",
		ImportedConfig: &mgmtv1.ImportedConfig{TokenTTLSeconds: &ttl, TokenGraceSeconds: &grace}}}
	if err := env.Client.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	r := &controller.Reconciler{Client: env.Client, Tunnel: tunnel.NewServer(nil, tunnel.ServerOptions{}), URL: "https://mgmt.example.com",
		Now: func() time.Time { return now }}
	reconcile := func() (ctrl.Result, mgmtv1.ClusterRegistrationToken) {
		t.Helper()
		res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: "rotating"}})
		if err != nil {
			t.Fatal(err)
		}
		var crt mgmtv1.ClusterRegistrationToken
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: server.TokenNamespace, Name: "rotating"}, &crt); err != nil {
			t.Fatal(err)
		}
		return res, crt
	}
	res, first := reconcile()
	if first.Status.Token == "" || !first.Status.ExpiresAt.Time.Equal(now.Add(time.Hour)) || first.Status.PreviousToken != "" {
		t.Fatalf("first token: %+v", first.Status)
	}
	if res.RequeueAfter > 54*time.Minute || res.RequeueAfter < time.Second {
		t.Errorf("requeue after %v, want by the rotation (54 min)", res.RequeueAfter)
	}
	var got mgmtv1.Cluster
	if err := env.Client.Get(ctx, types.NamespacedName{Name: "rotating"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != mgmtv1.PhasePending || !meta.IsStatusConditionPresentAndEqual(got.Status.Conditions, mgmtv1.ConditionPending, metav1.ConditionUnknown) {
		t.Errorf("phase %q, conditions %+v", got.Status.Phase, got.Status.Conditions)
	}

	now = now.Add(50 * time.Minute) // not due yet
	if _, same := reconcile(); same.Status.Token != first.Status.Token {
		t.Error("rotated before it was due")
	}
	now = now.Add(5 * time.Minute) // within the last tenth of the TTL
	_, second := reconcile()
	if second.Status.Token == first.Status.Token || second.Status.PreviousToken != first.Status.Token ||
		!second.Status.PreviousValidUntil.Time.Equal(now.Add(10*time.Minute)) || !second.Status.ExpiresAt.Time.Equal(now.Add(time.Hour)) {
		t.Errorf("after rotation: %+v", second.Status)
	}
	if second.Status.Command != "kubectl apply -f https://mgmt.example.com/v1/import/"+second.Status.Token+"_rotating.yaml" {
		t.Errorf("command %q", second.Status.Command)
	}
	if err := env.Client.Delete(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: "rotating"}}); err != nil {
		t.Fatal(err)
	}
	var crt mgmtv1.ClusterRegistrationToken
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: server.TokenNamespace, Name: "rotating"}, &crt); err == nil && crt.DeletionTimestamp == nil {
		t.Error("the token outlived its Cluster")
	}
}
