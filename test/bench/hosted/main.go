// Command hosted measures the hosted-cluster controllers (`make bench`
// runs it after the virtual-cluster benchmark): N EKS clusters (default
// 200, two node groups each) exist in the EKS emulator and are imported as
// Clusters into a real kube-apiserver; `clustersync manager`'s controllers
// (internal/manager, in process) manage them. It prints:
//
//   - the time until all N are Active after their Clusters are created;
//   - one full refresh cycle: a fresh manager with every cluster due at once,
//     from start to the last cluster's DescribeCluster, and the EKS API
//     calls it made, per cluster, by operation;
//   - the steady state: EKS API calls per cluster per refresh period, by
//     operation, over several periods.
//
// Figures are printed, not asserted: this is a benchmark, not a test.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/config/crd"
	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
	"github.com/clustersync/clustersync/internal/manager"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
)

func main() {
	var (
		n, workers, periods int
		refresh             time.Duration
	)
	flag.IntVar(&n, "clusters", 200, "EKS clusters to manage")
	flag.IntVar(&workers, "workers", manager.DefaultWorkers, "concurrent reconciles per controller")
	flag.DurationVar(&refresh, "refresh", 20*time.Second, "upstream refresh period (--eks-refresh) for the steady-state measure")
	flag.IntVar(&periods, "periods", 3, "refresh periods the steady state is measured over")
	flag.Parse()
	ctrl.SetLogger(logr.Discard()) // controller-runtime's queues log through the global logger
	if err := run(n, workers, periods, refresh); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// calls records every EKS API call the emulator serves, with its time.
type calls struct {
	mu  sync.Mutex
	log []call
}

type call struct {
	at      time.Time
	op      string
	cluster string
	// operator is true for the EKS operator's calls, false for the
	// management controller's (told apart by the SDK's User-Agent).
	operator bool
}

// wrap records each request to h: operation and cluster from the REST path.
func (c *calls) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op, cluster := operation(r)
		operator := strings.Contains(r.UserAgent(), "app/"+manager.OperatorAppID)
		c.mu.Lock()
		c.log = append(c.log, call{at: time.Now(), op: op, cluster: cluster, operator: operator})
		c.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// operation names an EKS REST-JSON request by method and path shape.
func operation(r *http.Request) (op, cluster string) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) >= 2 && parts[0] == "clusters" {
		cluster = parts[1]
	}
	switch {
	case len(parts) == 2 && parts[0] == "clusters" && r.Method == http.MethodGet:
		return "DescribeCluster", cluster
	case len(parts) == 3 && parts[2] == "node-groups" && r.Method == http.MethodGet:
		return "ListNodegroups", cluster
	case len(parts) == 4 && parts[2] == "node-groups" && r.Method == http.MethodGet:
		return "DescribeNodegroup", cluster
	case len(parts) == 3 && parts[2] == "updates" && r.Method == http.MethodGet:
		return "ListUpdates", cluster
	case len(parts) == 4 && parts[2] == "updates":
		return "DescribeUpdate", cluster
	case len(parts) == 4 && parts[2] == "addons" && r.Method == http.MethodGet:
		return "DescribeAddon", cluster
	case parts[0] == "tags" && r.Method == http.MethodPost:
		return "TagResource", clusterOfARN(r.URL.EscapedPath())
	}
	return r.Method + " /" + strings.Join(parts[:min(len(parts), 3)], "/"), cluster
}

// clusterOfARN returns the cluster name of the cluster ARN in a
// (path-escaped) /tags/<arn> path: arn:aws:eks:<region>:<account>:cluster/<name>.
func clusterOfARN(escapedPath string) string {
	arn, err := url.PathUnescape(strings.TrimPrefix(escapedPath, "/tags/"))
	if err != nil {
		return ""
	}
	_, name, _ := strings.Cut(arn, ":cluster/")
	return name
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

func run(n, workers, periods int, refresh time.Duration) error {
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
	if err := k.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: eksv1.Namespace}}); err != nil {
		return err
	}

	// Every emulated cluster's API server is the bench's own, reached with
	// a cluster-admin token in place of an IAM token, so that the
	// management controller's access check (GET /version, the stored
	// service-account token) runs as against real clusters.
	token, err := adminToken(ctx, k, cfg)
	if err != nil {
		return err
	}
	caCfg := rest.CopyConfig(cp.Config)
	if err := rest.LoadTLSFiles(caCfg); err != nil {
		return err
	}
	emu := ekstest.NewUnstarted(ekstest.Options{Region: "us-west-2",
		EndpointFor:             func(string) string { return caCfg.Host },
		CertificateAuthorityFor: func(string) []byte { return caCfg.CAData }})
	tokens := func(context.Context, string, map[string][]byte, string) (string, error) { return token, nil }
	rec := &calls{}
	ts := httptest.NewServer(rec.wrap(emu.Handler()))
	defer ts.Close()
	name := func(i int) string { return fmt.Sprintf("bench-%03d", i) }
	for i := range n {
		if err := emu.ImportCluster(ekstest.ClusterSpec{Name: name(i), Version: "1.32", EndpointPublicAccess: true,
			Tags:       map[string]string{"team": "bench"},
			Nodegroups: []ekstest.NodegroupSpec{{Name: "a"}, {Name: "b"}}}); err != nil {
			return err
		}
	}
	if err := k.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "aws", Namespace: eksv1.Namespace},
		StringData: map[string]string{eks.AccessKeyField: "bench", eks.SecretKeyField: "bench"}}); err != nil {
		return err
	}
	fmt.Printf("hosted clusters: %d EKS clusters (2 node groups each) in the emulator, %d workers per controller, GOMAXPROCS %d\n",
		n, workers, runtime.GOMAXPROCS(0))

	// 1. Import all N.
	start := time.Now()
	for i := range n {
		pub := true
		c := &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name(i)}, Spec: mgmtv1.ClusterSpec{DisplayName: name(i), EKSConfig: &eksv1.EKSClusterConfigSpec{
			DisplayName: name(i), Region: "us-west-2", AmazonCredentialSecret: eksv1.Namespace + ":aws", Imported: true,
			PublicAccess: &pub, Tags: &map[string]string{"team": "bench"},
		}}}
		if err := k.Create(ctx, c); err != nil {
			return err
		}
	}
	stop, err := startManager(cp.Config, ts.URL, tokens, workers, time.Hour)
	if err != nil {
		return err
	}
	if err := waitAll(ctx, k, n, 5*time.Minute, active); err != nil {
		stop()
		return err
	}
	fmt.Printf("  import: all %d Active %.1f s after their Clusters were created\n", n, time.Since(start).Seconds())
	if err := waitAll(ctx, k, n, 5*time.Minute, ready); err != nil {
		stop()
		return err
	}
	fmt.Printf("  import: all %d Ready (API server reached, service-account token stored) %.1f s after their Clusters were created\n", n, time.Since(start).Seconds())
	stop()

	// 2. One full refresh cycle: a fresh manager finds every cluster due.
	t0 := time.Now()
	stop, err = startManager(cp.Config, ts.URL, tokens, workers, refresh)
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
			if c.op == "DescribeCluster" {
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
	cycle = callsBetween(cycle, t0, last)
	fmt.Printf("  full refresh cycle (all %d due at once, fresh manager): %.2f s from the first to the last cluster described, %.2f s from manager start\n",
		n, last.Sub(first).Seconds(), last.Sub(t0).Seconds())
	fmt.Printf("    EKS calls in that cycle (management refresh + the operator's start-up check), per cluster: %s\n", perCluster(cycle, n, 1))

	// 3. Steady state: calls per cluster per refresh period.
	settle := last.Add(refresh / 2)
	time.Sleep(time.Until(settle)) // a measuring window, not a wait for a condition
	from := time.Now()
	time.Sleep(time.Duration(periods) * refresh)
	window := callsBetween(rec.since(from), from, time.Now())
	fmt.Printf("  steady state over %d refresh periods of %s: EKS calls per cluster per refresh: %s (of which the operator's: %d)\n",
		periods, refresh, perCluster(window, n, periods), len(only(window, true)))

	// 4. One push per cluster: a tag edited in every Cluster at once.
	from = time.Now()
	for i := range n {
		c := &mgmtv1.Cluster{}
		if err := k.Get(ctx, client.ObjectKey{Name: name(i)}, c); err != nil {
			return err
		}
		orig := c.DeepCopy()
		(*c.Spec.EKSConfig.Tags)["pushed"] = "1"
		if err := k.Patch(ctx, c, client.MergeFrom(orig)); err != nil {
			return err
		}
	}
	if err := waitAll(ctx, k, n, 5*time.Minute, func(c *mgmtv1.Cluster) bool {
		var a *eksv1.EKSClusterConfigSpec
		if c.Status.EKSStatus != nil {
			a = c.Status.EKSStatus.AppliedSpec
		}
		return active(c) && a != nil && a.Tags != nil && (*a.Tags)["pushed"] == "1"
	}); err != nil {
		return fmt.Errorf("push: %w", err)
	}
	pushed := rec.since(from)
	fmt.Printf("  one push per cluster (a tag edit in all %d at once): all applied and Active %.1f s after the edits\n", n, time.Since(from).Seconds())
	var pass, after []call
	tagged := map[string]bool{}
	for _, c := range only(pushed, true) {
		switch {
		case tagged[c.cluster]:
			after = append(after, c)
		default:
			pass = append(pass, c)
		}
		if c.op == "TagResource" {
			tagged[c.cluster] = true
		}
	}
	if len(tagged) != n {
		return fmt.Errorf("push: %d of %d clusters saw a TagResource", len(tagged), n)
	}
	fmt.Printf("    EKS calls per cluster of the operator's push pass (its describe and the write): %s\n", perCluster(pass, n, 1))
	fmt.Printf("    EKS calls per cluster of the operator's passes after it (the outcome settled, Active): %s\n", perCluster(after, n, 1))
	fmt.Printf("    EKS calls per cluster of the management controller meanwhile: %s\n", perCluster(only(pushed, false), n, 1))
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
func startManager(cfg *rest.Config, endpoint string, tokens eks.TokenFunc, workers int, refresh time.Duration) (func(), error) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- manager.Run(ctx, manager.Options{Config: cfg, EKSEndpoint: endpoint, EKSRefresh: refresh, EKSPoll: time.Second, Tokens: tokens,
			Workers: workers, Log: logr.Discard(), Started: func() { close(started) }})
	}()
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
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "bench-admin", Namespace: eksv1.Namespace}}
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

func active(c *mgmtv1.Cluster) bool { return c.Status.Phase == mgmtv1.PhaseActive }

func ready(c *mgmtv1.Cluster) bool {
	return meta.IsStatusConditionTrue(c.Status.Conditions, mgmtv1.ConditionReady)
}
