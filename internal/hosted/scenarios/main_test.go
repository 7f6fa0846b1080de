package scenarios_test

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
	"github.com/clustersync/clustersync/internal/hosted/management"
)

var (
	env      *hostedtest.Env
	k        client.Client
	kube     kubernetes.Interface
	recorder events.EventRecorder
	once     sync.Once
)

func TestMain(m *testing.M) {
	os.Exit(hostedtest.Main(m, &env))
}

// start prepares, once, what the scenarios need beyond the Env: a client
// without client-go's rate limit, the operator namespace and an event
// recorder that knows Cluster.
func start(t *testing.T) {
	t.Helper()
	hostedtest.Require(t, env)
	once.Do(func() {
		cfg := rest.CopyConfig(env.Config)
		cfg.QPS, cfg.Burst = 1000, 1000
		c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
		if err != nil {
			panic(err)
		}
		k, kube = c, env.Kube
		if err := k.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hostedv1.Namespace}}); err != nil {
			panic(err)
		}
		broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: kube.EventsV1()})
		broadcaster.StartRecordingToSink(make(chan struct{}))
		recorder = broadcaster.NewRecorder(env.Scheme, "clustersync-management")
	})
}

// world is one Cluster of one provider: the two controllers, the
// emulator's clock, and the adapter's view of the cloud.
type world struct {
	cloud cloud
	name  string
	clk   *hostedtest.Clock
	mgmt  reconcile.Reconciler
	op    reconcile.Reconciler
	// errs are the errors the controllers returned (retried by
	// controller-runtime in a manager).
	errs []error
}

// controllers returns a world's two controllers of one cloud, as the
// manager makes them (management.Controllers), refreshing and polling
// every second of the world's clock.
func controllers[S any, O engine.Object[S]](clk *hostedtest.Clock, t management.Traits[S, O], reader management.Reader[S, O], provider engine.Provider[S, O]) (mgmt, op reconcile.Reconciler) {
	m, o := management.Controllers(k, management.CloudOptions{Refresh: time.Second, Poll: time.Second}, t, reader, provider)
	m.Events, m.Now, o.Now = recorder, clk.Now, clk.Now
	return m, o
}

func (w *world) key() types.NamespacedName { return types.NamespacedName{Name: w.name} }
func (w *world) opKey() types.NamespacedName {
	return types.NamespacedName{Namespace: hostedv1.Namespace, Name: w.name}
}

// settle runs the management controller and the operator in turn,
// letting the cloud's operations finish (the clock moves 2 minutes a
// round), for rounds rounds.
func (w *world) settle(t *testing.T, rounds int) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < rounds; i++ {
		if _, err := w.mgmt.Reconcile(ctx, ctrl.Request{NamespacedName: w.key()}); err != nil {
			w.errs = append(w.errs, err)
		}
		if _, err := w.op.Reconcile(ctx, ctrl.Request{NamespacedName: w.opKey()}); err != nil {
			w.errs = append(w.errs, err)
		}
		w.clk.Advance(2 * time.Minute)
	}
}

func (w *world) cluster(t *testing.T) *mgmtv1.Cluster {
	t.Helper()
	var c mgmtv1.Cluster
	if err := k.Get(context.Background(), w.key(), &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// edit changes the Cluster's config as a user would (a retried update).
func (w *world) edit(t *testing.T, change func(c *mgmtv1.Cluster)) {
	t.Helper()
	for i := 0; ; i++ {
		c := w.cluster(t)
		change(c)
		err := k.Update(context.Background(), c)
		if err == nil {
			return
		}
		if i == 5 {
			t.Fatal(err)
		}
	}
}

func condition(c *mgmtv1.Cluster, typ string) *metav1.Condition {
	return meta.FindStatusCondition(c.Status.Conditions, typ)
}

// outsideChanges returns the notes of the OutsideChange events of the
// world's Cluster, sorted (hostedtest.EventNotes).
func (w *world) outsideChanges(t *testing.T) []string {
	t.Helper()
	notes := hostedtest.EventNotes(t, kube, recorder, w.cluster(t), "OutsideChange")
	slices.Sort(notes)
	return notes
}

func reqFor(key types.NamespacedName) ctrl.Request { return ctrl.Request{NamespacedName: key} }
