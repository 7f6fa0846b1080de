package manager_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
	"github.com/clustersync/clustersync/internal/hosted/management"
	"github.com/clustersync/clustersync/internal/manager"
	"github.com/clustersync/clustersync/internal/ports"
)

var env *hostedtest.Env

func TestMain(m *testing.M) {
	os.Exit(hostedtest.Main(m, &env))
}

// run starts a manager (as `clustersync manager` does) against the test
// API server and the emulator at endpoint; the returned function stops it
// and returns Run's error.
func run(t *testing.T, o manager.Options, started chan<- string, id string) func() error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	o.Config, o.Log = env.Config, logr.Discard()
	o.Started = func() { started <- id }
	done := make(chan error, 1)
	go func() {
		err := manager.Run(ctx, o)
		if err != nil && ctx.Err() == nil {
			t.Errorf("replica %s stopped: %v", id, err)
		}
		done <- err
	}()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// The whole hosted flow through the manager: a Cluster applied by a user
// is created in EKS, becomes Active with its conditions, a node group's
// size edited in spec is applied, and deleting the Cluster deletes the
// EKS cluster before the Cluster goes away.
func TestManagerCreatesUpdatesDeletes(t *testing.T) {
	hostedtest.Require(t, env)
	ctx := context.Background()
	srv := ekstest.New(ekstest.Options{CreateDelay: 300 * time.Millisecond, UpdateDelay: 300 * time.Millisecond, DeleteDelay: 300 * time.Millisecond, Region: "us-west-2"})
	t.Cleanup(srv.Close)
	started := make(chan string, 1)
	run(t, manager.Options{Clouds: map[string]management.CloudOptions{"eks": {Endpoint: srv.URL, Refresh: 2 * time.Second, Poll: 200 * time.Millisecond}}, InstallCRDs: true, LeaderElection: true}, started, "a")
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("the manager did not start within a minute")
	}
	k := env.Client
	if err := k.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "aws-flow", Namespace: eksv1.Namespace},
		StringData: map[string]string{eks.AccessKeyField: "a", eks.SecretKeyField: "b"}}); err != nil {
		t.Fatal(err)
	}
	v, pub, two := "1.33", true, int64(2)
	c := &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "flow"}, Spec: mgmtv1.ClusterSpec{DisplayName: "flow", EKSConfig: &eksv1.EKSClusterConfigSpec{
		DisplayName: "flow", Region: "us-west-2", AmazonCredentialSecret: eksv1.Namespace + ":aws-flow",
		KubernetesVersion: &v, PublicAccess: &pub,
		Subnets: &[]string{"subnet-1", "subnet-2"}, ServiceRole: ptr("arn:aws:iam::123456789012:role/eks-service"),
		NodeGroups: &[]eksv1.NodeGroup{{NodegroupName: "workers", DesiredSize: &two, MinSize: ptr(int64(1)), MaxSize: ptr(int64(4)),
			NodeRole: ptr("arn:aws:iam::123456789012:role/eks-node")}},
	}}}
	if err := k.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Name: "flow"}
	var got mgmtv1.Cluster
	waitFor(t, "cluster active with its node group", time.Minute, func(ctx context.Context) (bool, error) {
		if err := k.Get(ctx, key, &got); err != nil {
			return false, err
		}
		up := got.Status.EKSStatus
		return got.Status.Phase == mgmtv1.PhaseActive && up != nil && up.UpstreamSpec != nil && up.UpstreamSpec.NodeGroups != nil &&
			len(*up.UpstreamSpec.NodeGroups) == 1, nil
	})
	for typ, want := range map[string]metav1.ConditionStatus{
		mgmtv1.ConditionPending: "True", mgmtv1.ConditionProvisioned: "True", mgmtv1.ConditionUpdated: "True",
		mgmtv1.ConditionWaiting: "True", mgmtv1.ConditionConflict: "False",
	} {
		if cond := meta.FindStatusCondition(got.Status.Conditions, typ); cond == nil || cond.Status != want {
			t.Errorf("condition %s = %+v, want %s", typ, cond, want)
		}
	}
	if got.Status.Driver != mgmtv1.DriverEKS || got.Status.Version != "1.33" || got.Status.APIEndpoint == "" || got.Status.CACert == "" {
		t.Errorf("status driver %q version %q endpoint %q caCert set %v", got.Status.Driver, got.Status.Version, got.Status.APIEndpoint, got.Status.CACert != "")
	}
	if !slices.Contains(got.Finalizers, "management.clustersync.io/cleanup") {
		t.Errorf("finalizers %v: want the management finalizer", got.Finalizers)
	}

	// A node group's size edited in spec is applied in EKS.
	five := int64(5)
	waitFor(t, "edit applied", time.Minute, func(ctx context.Context) (bool, error) {
		var cur mgmtv1.Cluster
		if err := k.Get(ctx, key, &cur); err != nil {
			return false, err
		}
		if d := (*cur.Spec.EKSConfig.NodeGroups)[0].DesiredSize; d == nil || *d != five {
			(*cur.Spec.EKSConfig.NodeGroups)[0].DesiredSize = &five
			(*cur.Spec.EKSConfig.NodeGroups)[0].MaxSize = ptr(int64(6))
			if err := k.Update(ctx, &cur); err != nil && !apierrors.IsConflict(err) {
				return false, err
			}
			return false, nil
		}
		snap, ok := srv.Cluster("flow")
		return ok && snap.Nodegroups["workers"].DesiredSize == 5, nil
	})

	// Delete: the EKS cluster goes first, then the Cluster.
	if err := k.Delete(ctx, &got); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "cluster deleted", time.Minute, func(ctx context.Context) (bool, error) {
		err := k.Get(ctx, key, &got)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if _, ok := srv.Cluster("flow"); ok {
		t.Error("the Cluster is gone but the EKS cluster still exists")
	}
}

// Two replicas: only the one holding the Lease reconciles and listens for
// registered clusters (the other refuses connections, so a Service with a
// readiness probe reaches the leader); when it stops, the other takes over.
func TestLeaderElection(t *testing.T) {
	hostedtest.Require(t, env)
	srv := ekstest.New(ekstest.Options{})
	t.Cleanup(srv.Close)
	started := make(chan string, 2)
	o := manager.Options{Clouds: map[string]management.CloudOptions{"eks": {Endpoint: srv.URL}}, LeaderElection: true, LeaderElectionID: "le-test", HealthAddr: ""}
	addrs := map[string]string{}
	for _, id := range []string{"a", "b"} {
		addrs[id] = fmt.Sprintf("127.0.0.1:%d", ports.ForTest(t, 1)[0])
	}
	listens := func(id string) bool {
		c, err := net.DialTimeout("tcp", addrs[id], time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	}
	replica := func(id string) manager.Options {
		r := o
		r.Registered.ServeAddr = addrs[id]
		return r
	}
	stopA := run(t, replica("a"), started, "a")
	var first string
	select {
	case first = <-started:
	case <-time.After(time.Minute):
		t.Fatal("no replica became leader within a minute")
	}
	stopB := run(t, replica("b"), started, "b")
	if first != "a" {
		t.Fatalf("leader %q, want a (b was not running yet)", first)
	}
	select {
	case id := <-started:
		t.Fatalf("replica %s started while a held the Lease", id)
	case <-time.After(3 * time.Second): // b must stay a follower; a bounded look, not a wait for success
	}
	waitFor(t, "the leader a listens for registered clusters", 30*time.Second, func(context.Context) (bool, error) { return listens("a"), nil })
	if listens("b") {
		t.Error("the follower b accepts connections for registered clusters")
	}
	if err := stopA(); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("replica a: %v", err)
	}
	select {
	case id := <-started:
		if id != "b" {
			t.Fatalf("leader %q after a stopped, want b", id)
		}
		waitFor(t, "the new leader b listens", 30*time.Second, func(context.Context) (bool, error) { return listens("b"), nil })
	case <-time.After(time.Minute):
		t.Fatal("b did not take over within a minute of a releasing the Lease")
	}
	_ = stopB()
}

func ptr[T any](v T) *T { return &v }
