// Command hosted measures the hosted-cluster controllers (`make bench`
// runs it after the virtual-cluster benchmark), for each cloud (EKS, AKS,
// GKE) in turn: N clusters (default 200, two node groups or pools each) exist in
// the cloud's emulator and are imported as Clusters into a real
// kube-apiserver; `clustersync manager`'s controllers (internal/manager, in
// process) manage them. It prints, per cloud:
//
//   - the time until all N are Active after their Clusters are created;
//   - one full refresh cycle: a fresh manager with every cluster due at once
//     (the operators settled on their objects' spec before the last one
//     stopped), from start to the last cluster's refresh read, and the
//     cloud API calls it made, per cluster, by operation;
//   - the steady state: cloud API calls per cluster per refresh period, by
//     operation, over several periods;
//   - one push per cluster (a tag edit): the calls of the operator's push
//     pass, of its passes after it, and of the management controller
//     meanwhile (CALLS/PUSH is their sum).
//
// Then one table with a row per cloud: the same figures side by side.
//
// Figures are printed, not asserted: this is a benchmark, not a test.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/config/crd"
	"github.com/clustersync/clustersync/internal/binaries"
	hostedclouds "github.com/clustersync/clustersync/internal/hosted/clouds"
	"github.com/clustersync/clustersync/internal/hosted/management"
	"github.com/clustersync/clustersync/internal/manager"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
)

func main() {
	var (
		n, workers, periods int
		refresh             time.Duration
		clouds              string
	)
	flag.IntVar(&n, "clusters", 200, "clusters to manage, per cloud")
	flag.StringVar(&clouds, "clouds", "eks,aks,gke", "the clouds to measure, in order")
	flag.IntVar(&workers, "workers", manager.DefaultWorkers, "concurrent reconciles per controller")
	flag.DurationVar(&refresh, "refresh", 20*time.Second, "upstream refresh period (--eks-refresh) for the steady-state measure")
	flag.IntVar(&periods, "periods", 3, "refresh periods the steady state is measured over")
	flag.Parse()
	ctrl.SetLogger(logr.Discard()) // controller-runtime's queues log through the global logger
	var results []result
	all := fleets()
	var keys []string
	for _, d := range hostedclouds.All() {
		if _, ok := all[d.Key]; !ok {
			fmt.Fprintf(os.Stderr, "bench: cloud %s of the table of clouds has no fleet in test/bench/hosted\n", d.Key)
			os.Exit(2)
		}
		keys = append(keys, d.Key)
	}
	for _, name := range strings.Split(clouds, ",") {
		f, ok := all[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "bench: -clouds: unknown cloud %q (%s)\n", name, strings.Join(keys, ", "))
			os.Exit(2)
		}
		r, err := run(f, n, workers, periods, refresh)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s: %v\n", name, err)
			os.Exit(1)
		}
		results = append(results, r)
	}
	printTable(os.Stdout, results, n, refresh)
}

// result is one cloud's figures: durations in seconds, calls per cluster
// (per refresh period for the steady state).
type result struct {
	cloud                                          string
	active, ready, cycle, push                     float64
	cycleCalls, steadyCalls, pushCalls, afterCalls float64
	mgmtPushCalls                                  float64
}

// printTable prints the clouds' figures side by side, one row per cloud.
func printTable(w io.Writer, results []result, n int, refresh time.Duration) {
	fmt.Fprintf(w, "\nhosted clusters, %d imported per cloud (refresh %s); durations in seconds, API calls per cluster:\n", n, refresh)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "CLOUD\tACTIVE s\tREADY s\tREFRESH CYCLE s\tCALLS/CYCLE\tCALLS/REFRESH (steady)\tPUSH s\tCALLS/PUSH PASS\tCALLS AFTER PUSH\tMGMT CALLS DURING PUSH\tCALLS/PUSH\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.2f\t%.2f\t%.2f\t%.1f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", r.cloud, r.active, r.ready, r.cycle, r.cycleCalls, r.steadyCalls,
			r.push, r.pushCalls, r.afterCalls, r.mgmtPushCalls, r.pushCalls+r.afterCalls+r.mgmtPushCalls)
	}
	_ = tw.Flush()
}

// fleet is one cloud in the benchmark: its emulator, its Clusters and how
// its API calls are named.
type fleet interface {
	// cloud is the cloud's row in the table of clouds (its Name in
	// output, its Key for -clouds, its operator object's Kind).
	cloud() management.Descriptor
	// start makes the emulator, its API servers' endpoint and CA and token
	// being endpoint, ca and token, imports n clusters into it and writes
	// the credentials Secret with k; it returns the emulator's handler.
	start(ctx context.Context, k client.Client, n int, endpoint string, ca []byte, token string) (http.Handler, error)
	// cluster is the i-th Cluster, importing the i-th emulated cluster.
	cluster(i int) *mgmtv1.Cluster
	// operation names a request to the emulator and the cluster it is for;
	// operator is true for the operator's calls.
	operation(r *http.Request) (op, cluster string, operator bool)
	// refreshOp is the operation a refresh reads a cluster with; pushOp the
	// one a tag push writes with.
	refreshOp() string
	pushOp() string
	// options points the manager at the emulator's url.
	options(o *manager.Options, url string, refresh time.Duration)
	// pushTag sets tag pushed=1 in c's config; pushed reports whether it
	// is applied.
	pushTag(c *mgmtv1.Cluster)
	pushed(c *mgmtv1.Cluster) bool
}

// fleets are the clouds the benchmark measures, by Descriptor.Key: what
// -clouds names.
func fleets() map[string]fleet {
	m := map[string]fleet{}
	for _, f := range []fleet{&eksFleet{}, &aksFleet{}, &gkeFleet{}} {
		m[f.cloud().Key] = f
	}
	return m
}

// calls records every call the emulator serves, with its time.
type calls struct {
	mu  sync.Mutex
	log []call
}

type call struct {
	at      time.Time
	op      string
	cluster string
	// operator is true for the operator's calls, false for the
	// management controller's (told apart by the SDK's User-Agent).
	operator bool
}

// wrap records each request to h, named by f.
func (c *calls) wrap(f fleet, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op, cluster, operator := f.operation(r)
		c.mu.Lock()
		c.log = append(c.log, call{at: time.Now(), op: op, cluster: cluster, operator: operator})
		c.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// quiet waits until no call came for d (the reads a pass started are
// done), at most timeout.
func (c *calls) quiet(ctx context.Context, d, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, d/10, timeout, true, func(context.Context) (bool, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.log) == 0 || time.Since(c.log[len(c.log)-1].at) >= d, nil
	})
}

// since returns the calls at or after t.
func (c *calls) since(t time.Time) []call {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []call
	for _, x := range c.log {
		if !x.at.Before(t) {
			out = append(out, x)
		}
	}
	return out
}

func run(f fleet, n, workers, periods int, refresh time.Duration) (result, error) {
	r := result{cloud: f.cloud().Name}
	err := measure(f, n, workers, periods, refresh, &r)
	return r, err
}

// measure runs one cloud's measures, printing each and recording it in r.
func measure(f fleet, n, workers, periods int, refresh time.Duration, r *result) error {
	bins := binaries.Default()
	if err := bins.Check(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "clustersync-bench-hosted-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	cp, err := controlplane.Start(ctx, controlplane.Options{Dir: dir, Name: "bench-hosted", ServiceCIDR: "10.96.0.0/16", Binaries: bins})
	if err != nil {
		return err
	}
	defer cp.Stop()
	if err := crd.Install(ctx, cp.Config); err != nil {
		return err
	}
	scheme, err := manager.Scheme()
	if err != nil {
		return err
	}
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS = -1
	k, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	if err := k.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hostedv1.Namespace}}); err != nil {
		return err
	}

	// Every emulated cluster's API server is the bench's own, reached with
	// a cluster-admin token (in place of an IAM token or the credentials
	// AKS issues), so that the management controller's access check (GET
	// /version, the stored service-account token) runs as against real
	// clusters.
	token, err := adminToken(ctx, k, cfg)
	if err != nil {
		return err
	}
	caCfg := rest.CopyConfig(cp.Config)
	if err := rest.LoadTLSFiles(caCfg); err != nil {
		return err
	}
	h, err := f.start(ctx, k, n, caCfg.Host, caCfg.CAData, token)
	if err != nil {
		return err
	}
	rec := &calls{}
	ts := httptest.NewServer(rec.wrap(f, h))
	defer ts.Close()
	fmt.Printf("hosted clusters: %d %s clusters (2 node groups or pools each) in the emulator, %d workers per controller, GOMAXPROCS %d\n",
		n, f.cloud().Name, workers, runtime.GOMAXPROCS(0))

	// 1. Import all N.
	start := time.Now()
	for i := range n {
		if err := k.Create(ctx, f.cluster(i)); err != nil {
			return err
		}
	}
	stop, err := startManager(f, cp.Config, ts.URL, workers, time.Hour)
	if err != nil {
		return err
	}
	if err := waitAll(ctx, k, n, 5*time.Minute, active); err != nil {
		stop()
		return err
	}
	r.active = time.Since(start).Seconds()
	fmt.Printf("  import: all %d Active %.1f s after their Clusters were created\n", n, r.active)
	if err := waitAll(ctx, k, n, 5*time.Minute, ready); err != nil {
		stop()
		return err
	}
	r.ready = time.Since(start).Seconds()
	fmt.Printf("  import: all %d Ready (API server reached, service-account token stored) %.1f s after their Clusters were created\n", n, r.ready)
	// The manager stops once every operator settled on its object's spec,
	// as a running manager is between edits.
	if err := waitSettled(ctx, k, f.cloud().Kind, n, 5*time.Minute); err != nil {
		stop()
		return err
	}
	stop()

	// 2. One full refresh cycle: a fresh manager finds every cluster due.
	t0 := time.Now()
	stop, err = startManager(f, cp.Config, ts.URL, workers, refresh)
	if err != nil {
		return err
	}
	defer stop()
	var last time.Time
	var cycle []call
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 5*time.Minute, true, func(context.Context) (bool, error) {
		cycle = rec.since(t0)
		seen := map[string]time.Time{}
		for _, c := range cycle {
			if c.op == f.refreshOp() {
				seen[c.cluster] = c.at
			}
		}
		if len(seen) < n {
			return false, nil
		}
		for _, at := range seen {
			if at.After(last) {
				last = at
			}
		}
		return true, nil
	}); err != nil {
		return fmt.Errorf("full refresh cycle: %w", err)
	}
	var first time.Time
	for _, c := range cycle {
		if first.IsZero() || c.at.Before(first) {
			first = c.at
		}
	}
	// The reads the last refreshes started end after their first call.
	if err := rec.quiet(ctx, time.Second, refresh/2); err != nil {
		return fmt.Errorf("full refresh cycle: calls go on: %w", err)
	}
	cycle = rec.since(t0)
	r.cycle, r.cycleCalls = last.Sub(first).Seconds(), float64(len(cycle))/float64(n)
	fmt.Printf("  full refresh cycle (all %d due at once, fresh manager): %.2f s from the first to the last cluster described, %.2f s from manager start\n",
		n, last.Sub(first).Seconds(), last.Sub(t0).Seconds())
	fmt.Printf("    %s calls in that cycle (the management controller's refresh, and the operators' passes at start; of which the operators': %d), per cluster: %s\n",
		f.cloud().Name, len(only(cycle, true)), perCluster(cycle, n, 1))

	// 3. Steady state: calls per cluster per refresh period.
	settle := last.Add(refresh / 2)
	time.Sleep(time.Until(settle)) // a measuring window, not a wait for a condition
	from := time.Now()
	time.Sleep(time.Duration(periods) * refresh)
	window := callsBetween(rec.since(from), from, time.Now())
	r.steadyCalls = float64(len(window)) / float64(n*periods)
	fmt.Printf("  steady state over %d refresh periods of %s: %s calls per cluster per refresh: %s (of which the operator's: %d)\n",
		periods, refresh, f.cloud().Name, perCluster(window, n, periods), len(only(window, true)))

	// 4. One push per cluster: a tag edited in every Cluster at once.
	from = time.Now()
	for i := range n {
		c := &mgmtv1.Cluster{}
		if err := k.Get(ctx, client.ObjectKey{Name: benchName(i)}, c); err != nil {
			return err
		}
		orig := c.DeepCopy()
		f.pushTag(c)
		if err := k.Patch(ctx, c, client.MergeFrom(orig)); err != nil {
			return err
		}
	}
	if err := waitAll(ctx, k, n, 5*time.Minute, func(c *mgmtv1.Cluster) bool { return active(c) && f.pushed(c) }); err != nil {
		return fmt.Errorf("push: %w", err)
	}
	r.push = time.Since(from).Seconds()
	// Calls the last passes started may still be on their way.
	if err := rec.quiet(ctx, time.Second, refresh/2); err != nil {
		return fmt.Errorf("push: calls go on: %w", err)
	}
	pushed := rec.since(from)
	fmt.Printf("  one push per cluster (a tag edit in all %d at once): all applied and Active %.1f s after the edits\n", n, r.push)
	var pass, after []call
	tagged := map[string]bool{}
	for _, c := range only(pushed, true) {
		switch {
		case tagged[c.cluster], c.cluster == "": // an operation's status (GKE's GetOperation) follows a write
			after = append(after, c)
		default:
			pass = append(pass, c)
		}
		if c.op == f.pushOp() {
			tagged[c.cluster] = true
		}
	}
	if len(tagged) != n {
		return fmt.Errorf("push: %d of %d clusters saw a %s", len(tagged), n, f.pushOp())
	}
	r.pushCalls, r.afterCalls = float64(len(pass))/float64(n), float64(len(after))/float64(n)
	fmt.Printf("    %s calls per cluster of the operator's push pass (its read and the write): %s\n", f.cloud().Name, perCluster(pass, n, 1))
	fmt.Printf("    %s calls per cluster of the operator's passes after it (the outcome settled, Active): %s\n", f.cloud().Name, perCluster(after, n, 1))
	r.mgmtPushCalls = float64(len(only(pushed, false))) / float64(n)
	fmt.Printf("    %s calls per cluster of the management controller meanwhile: %s\n", f.cloud().Name, perCluster(only(pushed, false), n, 1))
	return nil
}

// only returns the operator's calls (operator true) or the management
// controller's.
func only(cs []call, operator bool) []call {
	var out []call
	for _, c := range cs {
		if c.operator == operator {
			out = append(out, c)
		}
	}
	return out
}

func callsBetween(cs []call, from, to time.Time) []call {
	var out []call
	for _, c := range cs {
		if !c.at.Before(from) && !c.at.After(to) {
			out = append(out, c)
		}
	}
	return out
}

// perCluster formats the calls per cluster per period, total and by
// operation.
func perCluster(cs []call, n, periods int) string {
	by := map[string]int{}
	for _, c := range cs {
		by[c.op]++
	}
	ops := make([]string, 0, len(by))
	for op := range by {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	d := float64(n * periods)
	parts := []string{fmt.Sprintf("%.2f total", float64(len(cs))/d)}
	for _, op := range ops {
		parts = append(parts, fmt.Sprintf("%s %.2f", op, float64(by[op])/d))
	}
	return strings.Join(parts, ", ")
}

// startManager runs the controllers in process, as `clustersync manager`
// does (without leader election), until the returned function is called.
func startManager(f fleet, cfg *rest.Config, endpoint string, workers int, refresh time.Duration) (func(), error) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	done := make(chan error, 1)
	o := manager.Options{Config: cfg, Workers: workers, Log: logr.Discard(), Started: func() { close(started) }}
	f.options(&o, endpoint, refresh)
	go func() { done <- manager.Run(ctx, o) }()
	select {
	case <-started:
		return func() { cancel(); <-done }, nil
	case err := <-done:
		cancel()
		return nil, err
	case <-time.After(time.Minute):
		cancel()
		return nil, fmt.Errorf("manager not started within a minute")
	}
}

// adminToken makes ServiceAccount clustersync-global-data/bench-admin with
// cluster-admin and returns a one-hour token for it.
func adminToken(ctx context.Context, k client.Client, cfg *rest.Config) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bench-admin", Namespace: hostedv1.Namespace}}
	if err := k.Create(ctx, sa); err != nil {
		return "", err
	}
	if err := k.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bench-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}}); err != nil {
		return "", err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	tr, err := kube.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, sa.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return tr.Status.Token, nil
}

// waitAll waits until every one of the n Clusters satisfies ok.
func waitAll(ctx context.Context, k client.Client, n int, timeout time.Duration, ok func(*mgmtv1.Cluster) bool) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var list mgmtv1.ClusterList
		if err := k.List(ctx, &list); err != nil {
			return false, err
		}
		count := 0
		for i := range list.Items {
			if ok(&list.Items[i]) {
				count++
			}
		}
		return count == n, nil
	})
}

// waitSettled waits until n operator objects of kind are active with no
// push pending, their status.observedGeneration their generation.
func waitSettled(ctx context.Context, k client.Client, kind schema.GroupVersionKind, n int, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var list unstructured.UnstructuredList
		list.SetGroupVersionKind(kind.GroupVersion().WithKind(kind.Kind + "List"))
		if err := k.List(ctx, &list, client.InNamespace(hostedv1.Namespace)); err != nil {
			return false, err
		}
		count := 0
		for _, o := range list.Items {
			phase, _, _ := unstructured.NestedString(o.Object, "status", "phase")
			pending, _, _ := unstructured.NestedSlice(o.Object, "status", "pendingUpdates")
			observed, _, _ := unstructured.NestedInt64(o.Object, "status", "observedGeneration")
			if phase == hostedv1.PhaseActive && len(pending) == 0 && observed == o.GetGeneration() {
				count++
			}
		}
		return count == n, nil
	})
}

func active(c *mgmtv1.Cluster) bool { return c.Status.Phase == mgmtv1.PhaseActive }

func ready(c *mgmtv1.Cluster) bool {
	return meta.IsStatusConditionTrue(c.Status.Conditions, mgmtv1.ConditionReady)
}
