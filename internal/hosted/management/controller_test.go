package management_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/access"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
	"github.com/clustersync/clustersync/internal/hosted/management"
)

var (
	env      *hostedtest.Env
	k        client.Client
	kube     kubernetes.Interface
	recorder events.EventRecorder
)

func TestMain(m *testing.M) {
	os.Exit(hostedtest.Main(m, &env))
}

// start prepares, once, what these tests need beyond the Env: the
// operator's namespace and an event recorder that knows Cluster.
var startOnce sync.Once

func start(t *testing.T) {
	hostedtest.Require(t, env)
	startOnce.Do(func() {
		k, kube = env.Client, env.Kube
		if err := k.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: eksv1.Namespace}}); err != nil {
			t.Fatal(err)
		}
		broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: kube.EventsV1()})
		broadcaster.StartRecordingToSink(make(chan struct{}))
		recorder = broadcaster.NewRecorder(env.Scheme, "clustersync-management")
	})
}

type world struct {
	srv  *ekstest.Server
	clk  *hostedtest.Clock
	mgmt *management.Reconciler[eksv1.EKSClusterConfigSpec, *eksv1.EKSClusterConfig]
	op   *engine.Operator[eksv1.EKSClusterConfigSpec, *eksv1.EKSClusterConfig]
	key  types.NamespacedName
}

// imported sets up an existing EKS cluster "name" registered as a Cluster
// whose config manages privateAccess and tags, and runs both controllers
// until the cluster is active and the applied spec recorded.
func imported(t *testing.T, name string) *world {
	t.Helper()
	f, pub := false, true
	return importedWith(t, ekstest.ClusterSpec{Name: name, Version: "1.31", EndpointPublicAccess: true, Tags: map[string]string{"team": "a"},
		Nodegroups: []ekstest.NodegroupSpec{{Name: "workers"}}},
		func(s *eksv1.EKSClusterConfigSpec) {
			s.PrivateAccess, s.PublicAccess, s.Tags = &f, &pub, &map[string]string{"team": "a"}
		}, nil)
}

// importedWith registers cluster and settles both controllers until the
// Cluster is active.
func importedWith(t *testing.T, cluster ekstest.ClusterSpec, edit func(*eksv1.EKSClusterConfigSpec), dial access.DialFunc) *world {
	t.Helper()
	w := register(t, cluster, edit, dial)
	w.settle(t)
	var got mgmtv1.Cluster
	if err := k.Get(context.Background(), w.key, &got); err != nil || got.Status.Phase != mgmtv1.PhaseActive || got.Status.EKSStatus.AppliedSpec == nil {
		t.Fatalf("not settled: %+v (%v)", got.Status, err)
	}
	return w
}

// register puts cluster into the emulator and registers it as an imported
// Cluster whose config edit sets the managed fields of; dial, when not
// nil, is the management controller's (tunnel detection). The emulated
// cluster's API server is env's, reached with a cluster-admin token of a
// namespace of the test's own (in place of an IAM token).
func register(t *testing.T, cluster ekstest.ClusterSpec, edit func(*eksv1.EKSClusterConfigSpec), dial access.DialFunc) *world {
	t.Helper()
	start(t)
	ctx := context.Background()
	name := cluster.Name
	if err := k.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "aws-" + name, Namespace: eksv1.Namespace},
		StringData: map[string]string{eks.AccessKeyField: "a", eks.SecretKeyField: "b"}}); err != nil {
		t.Fatal(err)
	}
	endpoint, ca := env.APIServer(t)
	adminNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "admin-" + name}}
	if err := k.Create(ctx, adminNS); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Delete(context.Background(), adminNS) })
	adminToken := env.AdminToken(t, adminNS.Name)
	clk := hostedtest.NewClock(time.Date(2026, 11, 22, 10, 55, 0, 0, time.UTC))
	srv := ekstest.New(ekstest.Options{Now: clk.Now, UpdateDelay: time.Minute, Region: "us-west-2",
		EndpointFor: func(string) string { return endpoint }, CertificateAuthorityFor: func(string) []byte { return ca }})
	t.Cleanup(srv.Close)
	if err := srv.ImportCluster(cluster); err != nil {
		t.Fatal(err)
	}
	config := &eksv1.EKSClusterConfigSpec{DisplayName: name, Region: "us-west-2", AmazonCredentialSecret: eksv1.Namespace + ":aws-" + name, Imported: true}
	if edit != nil {
		edit(config)
	}
	c := &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: mgmtv1.ClusterSpec{DisplayName: name, EKSConfig: config}}
	if err := k.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	factory := eks.NewClientsFactory(srv.URL)
	tokens := func(context.Context, string, map[string][]byte, string) (string, error) { return adminToken, nil }
	mgmt, op := management.Controllers(k, management.CloudOptions{Refresh: time.Second, Poll: time.Second}, eks.Traits(),
		&eks.Management{Client: k, NewClients: factory, Tokens: tokens, Dial: dial}, &eks.Provider{Client: k, NewClients: factory})
	mgmt.Events = recorder
	w := &world{srv: srv, clk: clk, key: types.NamespacedName{Name: name}, mgmt: mgmt, op: op}
	return w
}

// settle runs the management controller and the operator in turn, letting
// EKS updates finish, until neither has anything left to do.
func (w *world) settle(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	opKey := types.NamespacedName{Namespace: eksv1.Namespace, Name: w.key.Name}
	for i := 0; i < 8; i++ {
		if _, err := w.mgmt.Reconcile(ctx, ctrl.Request{NamespacedName: w.key}); err != nil {
			t.Fatalf("management: %v", err)
		}
		if _, err := w.op.Reconcile(ctx, ctrl.Request{NamespacedName: opKey}); err != nil {
			t.Fatalf("operator: %v", err)
		}
		w.clk.Advance(2 * time.Minute)
	}
}

func (w *world) cluster(t *testing.T) mgmtv1.Cluster {
	t.Helper()
	var c mgmtv1.Cluster
	if err := k.Get(context.Background(), w.key, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func (w *world) editConfig(t *testing.T, edit func(*eksv1.EKSClusterConfigSpec)) {
	t.Helper()
	c := w.cluster(t)
	edit(c.Spec.EKSConfig)
	if err := k.Update(context.Background(), &c); err != nil {
		t.Fatal(err)
	}
}

// The reference's race (https://ranchermanager.docs.rancher.com/reference-guides/cluster-configuration/rancher-server-configuration/sync-clusters): the
// private endpoint is enabled in the EKS console at 11:01 and tags are
// edited in clustersync at 11:03, inside the refresh window. Rancher loses
// one of the two; clustersync keeps both, and reports the console change.
func TestRace1101And1103(t *testing.T) {
	w := imported(t, "race")
	w.clk.Set(time.Date(2026, 11, 22, 11, 1, 0, 0, time.UTC))
	if _, err := w.srv.ConsoleSetEndpointAccess("race", true, true); err != nil {
		t.Fatal(err)
	}
	w.clk.Advance(90 * time.Second) // the console update completes
	w.editConfig(t, func(s *eksv1.EKSClusterConfigSpec) {
		*s.Tags = map[string]string{"team": "a", "cost": "42"} // 11:03, in clustersync
	})
	before := w.srv.Calls()
	w.settle(t)
	after := w.srv.Calls()

	c := w.cluster(t)
	if !*c.Spec.EKSConfig.PrivateAccess || (*c.Spec.EKSConfig.Tags)["cost"] != "42" {
		t.Errorf("config after the race: privateAccess %v tags %v; both changes must be kept", *c.Spec.EKSConfig.PrivateAccess, *c.Spec.EKSConfig.Tags)
	}
	snap, _ := w.srv.Cluster("race")
	if !snap.EndpointPrivateAccess || snap.Tags["cost"] != "42" {
		t.Errorf("EKS after the race: private %v tags %v", snap.EndpointPrivateAccess, snap.Tags)
	}
	if n := after["UpdateClusterConfig"] - before["UpdateClusterConfig"]; n != 0 {
		t.Errorf("the console's endpoint change was pushed back %d times", n)
	}
	if n := after["TagResource"] - before["TagResource"]; n != 1 {
		t.Errorf("TagResource calls = %d, want 1", n)
	}
	if cond := meta.FindStatusCondition(c.Status.Conditions, mgmtv1.ConditionConflict); cond == nil || cond.Status != metav1.ConditionFalse {
		t.Errorf("Conflict condition = %+v", cond)
	}
	// The adoption is reported as an event naming the field and both values.
	deadline := time.Now().Add(10 * time.Second)
	for {
		list, err := kube.EventsV1().Events("").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range list.Items {
			if e.Reason == "OutsideChange" && e.Regarding.Name == "race" && strings.Contains(e.Note, "privateAccess changed outside clustersync from false to true") {
				found = true
			}
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no OutsideChange event for privateAccess among %d events", len(list.Items))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Both sides changed the same field since it was last applied: nothing is
// written, condition Conflict names the field, and both values stay visible
// (spec.eksConfig and status.eksStatus.upstreamSpec) until the user edits
// the config.
func TestConflict(t *testing.T) {
	w := imported(t, "clash")
	if err := w.srv.ConsoleSetTags(arnOf(t, w.srv, "clash"), map[string]string{"team": "console"}); err != nil {
		t.Fatal(err)
	}
	w.editConfig(t, func(s *eksv1.EKSClusterConfigSpec) { *s.Tags = map[string]string{"team": "clustersync"} })
	before := w.srv.Calls()
	w.settle(t)
	if n := w.srv.Calls()["TagResource"] - before["TagResource"]; n != 0 {
		t.Errorf("a conflicting field was written (%d TagResource calls)", n)
	}
	c := w.cluster(t)
	cond := meta.FindStatusCondition(c.Status.Conditions, mgmtv1.ConditionConflict)
	if cond == nil || cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, "tags") {
		t.Fatalf("Conflict condition = %+v", cond)
	}
	if (*c.Spec.EKSConfig.Tags)["team"] != "clustersync" || (*c.Status.EKSStatus.UpstreamSpec.Tags)["team"] != "console" {
		t.Errorf("both values must stay visible: config %v upstream %v", *c.Spec.EKSConfig.Tags, *c.Status.EKSStatus.UpstreamSpec.Tags)
	}
}

func arnOf(t *testing.T, srv *ekstest.Server, name string) string {
	t.Helper()
	snap, ok := srv.Cluster(name)
	if !ok {
		t.Fatalf("no cluster %s", name)
	}
	return snap.ARN
}
