package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/examples/demo"
	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/kube"
	"github.com/clustersync/clustersync/internal/virtual/deploy"
	"github.com/clustersync/clustersync/internal/virtual/instance"
)

// demoName is the virtual cluster and namespace of the demo.
const demoName = "demo"

// newDemoCommand is `clustersync demo`, what `make run` runs: the local
// host (a real node where this machine allows it), virtual cluster "demo",
// examples/demo applied in it, proof that its pods serve traffic, and a
// table of each virtual object next to its host copy.
func newDemoCommand() *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the main job end to end: host cluster, virtual cluster demo, a workload that serves real traffic",
		Long: `Start the local host cluster as ` + "`dev up`" + ` does (one real node, or kwok fake
nodes where it cannot run), build clustersync's images (the control plane and
the demo web server, examples/demo-app) and push them to the local registry,
create virtual cluster "demo" in host namespace vc-demo (the chart, as
` + "`virtual create`" + ` does; with fake nodes, as processes of this machine, --local) and
apply examples/demo in it: a 3-replica Deployment of that server, which
mounts a ConfigMap (its page) and a Secret (whose key names, never values, it
shows), its Service, an unused Secret, a PersistentVolumeClaim and a
RoleBinding that lets the namespace's pods read it.

On the real node it then proves, from pods of the virtual cluster whose
output it reads with kubectl logs through the virtual cluster, that
web.demo.svc.cluster.local resolves through the virtual cluster's DNS to the
virtual Service's IP, that a GET of that name returns the page, and that
https://kubernetes.default.svc lists the virtual pods to the pod's service
account; and this machine GETs each pod's IP. Every page must hold the
ConfigMap's content and the Secret's key name. Then it prints each virtual
object next to its host object, the commands to try, and where the time
went.

It serves the web dashboard of the host on --dashboard-addr (default
` + defaultDemoDashboard + `), signs in to it with the host's kubeconfig and checks
that virtual cluster demo's page shows its web pods next to their host
copies; sign in yourself by pasting that kubeconfig with its certificates
inline (the command is printed).

It keeps running until Ctrl-C and stops what it started. With --exit it
does the same without waiting; --keep leaves everything running.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.runtime != runtimeReal && o.runtime != runtimeFake {
				return fmt.Errorf("--runtime must be %q or %q, not %q", runtimeReal, runtimeFake, o.runtime)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// The demo prints its own progress; the clients' logs would
			// only interleave with it.
			ctrl.SetLogger(logr.Discard())
			return runDemo(ctx, cmd.OutOrStdout(), o)
		},
	}
	cmd.Flags().BoolVar(&o.exit, "exit", false, "exit once the demo is up instead of waiting for Ctrl-C (for scripts)")
	cmd.Flags().BoolVar(&o.keep, "keep", false, "leave the host and virtual cluster running on exit")
	cmd.Flags().StringVar(&o.runtime, "runtime", runtimeReal, "`kind` of host nodes, as for dev up: \"real\" or \"fake\"")
	cmd.Flags().StringVar(&o.source, "source", "", "the clustersync source tree, to build the images from (default the one that holds the current folder)")
	cmd.Flags().StringVar(&o.dashboardAddr, "dashboard-addr", defaultDemoDashboard, "`address` to serve the host's web dashboard on, as clustersync manager --dashboard-addr does (\"\" leaves it out)")
	return cmd
}

// demoOptions are the flags of `clustersync demo`.
type demoOptions struct {
	exit, keep      bool
	runtime, source string
	dashboardAddr   string
}

// demoTimer prints steps with the seconds since start and adds up where the
// time goes, by phase.
type demoTimer struct {
	out    io.Writer
	start  time.Time
	last   time.Time
	phases []string
	spent  map[string]time.Duration
}

func newDemoTimer(out io.Writer) *demoTimer {
	now := time.Now()
	return &demoTimer{out: out, start: now, last: now, spent: map[string]time.Duration{}}
}

// step prints a progress line.
func (t *demoTimer) step(format string, args ...any) {
	fmt.Fprintf(t.out, "[%5.1fs] %s\n", time.Since(t.start).Seconds(), fmt.Sprintf(format, args...))
}

// done books the time since the last done (or the start) to phase.
func (t *demoTimer) done(phase string) {
	now := time.Now()
	if _, ok := t.spent[phase]; !ok {
		t.phases = append(t.phases, phase)
	}
	t.spent[phase] += now.Sub(t.last)
	t.last = now
}

// summary is "host 8.1 s, images 2.0 s, …; total 31.4 s".
func (t *demoTimer) summary() string {
	parts := make([]string, 0, len(t.phases))
	for _, p := range t.phases {
		parts = append(parts, fmt.Sprintf("%s %.1f s", p, t.spent[p].Seconds()))
	}
	return fmt.Sprintf("%s; total %.1f s", strings.Join(parts, ", "), time.Since(t.start).Seconds())
}

func runDemo(ctx context.Context, out io.Writer, o demoOptions) (err error) {
	t := newDemoTimer(out)
	home := stateHome()
	exe, err := executable()
	if err != nil {
		return err
	}
	var cleanups []func(context.Context) error
	defer func() {
		if o.keep || len(cleanups) == 0 {
			return
		}
		stopCtx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		t.step("stopping what the demo started")
		for i := len(cleanups) - 1; i >= 0; i-- {
			err = errors.Join(err, cleanups[i](stopCtx))
		}
	}()

	// The dashboard's address first: a port in use is said at once.
	ln, err := listenDashboard(o.dashboardAddr)
	if err != nil {
		return err
	}
	if ln != nil {
		defer ln.Close()
	}

	// 1. The host.
	_, hostErr := hostcluster.Open(defaultHostDir())
	t.step("starting the local host cluster")
	h, err := upHost(ctx, out, upOptions{dir: defaultHostDir(), runtime: o.runtime, source: o.source, fakeNodes: -1, log: io.Discard})
	if hostErr != nil && h.cluster != nil {
		cleanups = append(cleanups, func(ctx context.Context) error { return deleteHost(ctx, h.cluster) })
	}
	if err != nil {
		return err
	}
	host := h.cluster
	if h.realNode {
		t.step("host cluster ready: %s, real node %s, registry %s", host.Server(), hostcluster.RealNodeName, h.registry)
	} else {
		t.step("host cluster ready: %s, kwok fake nodes only (%s): the pods will not really run", host.Server(), h.why)
	}
	t.done("host")

	// 2. The images: clustersync's (the control plane pod) and the demo's.
	if h.realNode {
		source, err := sourceTree(o.source)
		if err != nil {
			return err
		}
		if err := buildAndPushImages(ctx, io.Discard, source, h.registry, true, []string{"latest"}, defaultCABundle); err != nil {
			return err
		}
		t.step("built and pushed %s and %s", images.Reference(images.DefaultRegistry, images.ClustersyncRepository, "latest"),
			images.Reference(images.DefaultRegistry, images.DemoRepository, "latest"))
		t.done("images")
	}

	// 3. The virtual cluster: in the host (the chart) on the real node;
	// as processes of this machine (--local) with kwok's fake nodes, which
	// cannot run its pod.
	var vc demoCluster
	if h.realNode {
		vc, err = demoInHost(ctx, t, home, host, &cleanups)
	} else {
		vc, err = demoLocal(ctx, t, home, exe, host, &cleanups)
	}
	if err != nil {
		return err
	}
	t.step("virtual cluster %s running; host namespace %s", demoName, vc.hostNamespace)
	t.done("virtual cluster")

	// 4. The workload.
	vcfg, err := clientcmd.BuildConfigFromFlags("", vc.kubeconfig)
	if err != nil {
		return err
	}
	objs, err := demoManifests()
	if err != nil {
		return err
	}
	applier, err := kube.NewApplier(vcfg, "clustersync-demo")
	if err != nil {
		return err
	}
	if err := applier.Apply(ctx, objs); err != nil {
		return err
	}
	t.step("applied examples/demo (%d objects) in the virtual cluster", len(objs))
	vclient, err := client.New(vcfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return err
	}
	hclient, err := client.New(host.Config, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return err
	}
	if err := waitRunning(ctx, vclient, demoName, "app=web", 3, h.realNode, 3*time.Minute); err != nil {
		return err
	}
	if h.realNode {
		t.step("all 3 web pods are Running and Ready in the virtual cluster (containers started, readiness probes passed)")
	} else {
		t.step("all 3 web pods are Running in the virtual cluster")
	}
	t.done("workload")

	// 5. Traffic.
	if h.realNode {
		if err := proveTraffic(ctx, out, vc, vcfg, vclient, host); err != nil {
			return err
		}
		t.done("traffic checks")
	}

	// 6. The dashboard, checked as a user would reach it.
	var dashboardURL string
	if ln != nil {
		base, stopDashboard, err := serveDemoDashboard(ctx, host.Config, ln)
		if err != nil {
			return err
		}
		defer stopDashboard()
		dashboardURL = base
		if h.realNode {
			saw, err := checkDemoDashboard(ctx, base, host.Kubeconfig, vc.name, vc.hostNamespace, demoName, 3)
			if err != nil {
				return err
			}
			t.step("%s", saw)
		}
		t.done("dashboard")
	}

	if err := printNamespace(ctx, out, vc.name, vc.hostNamespace, vclient, hclient, demoName); err != nil {
		return err
	}
	fmt.Fprintf(out, `
Kubeconfigs:
  virtual cluster: %[1]s
  host cluster:    %[2]s

Try:
  kubectl --kubeconfig %[1]s -n demo get pods,svc,secrets -o wide
  kubectl --kubeconfig %[2]s -n %[3]s get pods,svc,secrets -o wide
  kubectl --kubeconfig %[1]s -n demo scale deployment web --replicas 5
`, vc.kubeconfig, host.Kubeconfig, vc.hostNamespace)
	if h.realNode {
		fmt.Fprintf(out, `  kubectl --kubeconfig %[1]s -n demo logs deployment/web
  kubectl --kubeconfig %[1]s -n demo exec deployment/web -- /demo-app lookup web
  KUBECONFIG=%[2]s clustersync virtual connect demo -n %[3]s -- kubectl get pods -A
`, vc.kubeconfig, host.Kubeconfig, vc.hostNamespace)
	}
	if dashboardURL != "" {
		fmt.Fprintf(out, `
Dashboard: %s
  sign in by pasting the host's kubeconfig: kubectl --kubeconfig %s config view --raw --minify --flatten
`, dashboardURL, host.Kubeconfig)
		if !h.realNode {
			fmt.Fprintln(out, "  (a --local virtual cluster runs as processes of this machine, so it is not listed there)")
		}
	}
	fmt.Fprintf(out, "\nWhere the time went: %s\n", t.summary())
	if o.exit {
		return nil
	}
	fmt.Fprintln(out, "\nRunning; press Ctrl-C to stop.")
	<-ctx.Done()
	return nil
}

// demoCluster is the demo's virtual cluster, whichever way it runs.
type demoCluster struct {
	name, hostNamespace string
	// kubeconfig is the tenant's kubeconfig file.
	kubeconfig string
}

// demoInHost installs virtual cluster demo into the host with the chart
// (as `virtual create demo` does), or waits for the one an earlier
// `--keep` run left, and writes its kubeconfig, with the API server's
// Service address, to home/demo-kubeconfig.yaml. Uninstalling it, and
// removing that file, is added to cleanups when this run installed it.
func demoInHost(ctx context.Context, t *demoTimer, home string, host *hostcluster.Cluster, cleanups *[]func(context.Context) error) (demoCluster, error) {
	vc := demoCluster{name: demoName, hostNamespace: instance.DefaultHostNamespace(demoName), kubeconfig: filepath.Join(home, "demo-kubeconfig.yaml")}
	hc, err := connectHost(host.Kubeconfig)
	if err != nil {
		return vc, err
	}
	if _, err := hc.helm.Get(vc.name, vc.hostNamespace); err == nil {
		t.step("virtual cluster %s exists in host namespace %s; waiting until it is ready", vc.name, vc.hostNamespace)
		if err := deploy.WaitReady(ctx, hc.client, vc.name, vc.hostNamespace, deploy.WaitOptions{Timeout: 5 * time.Minute, ImageFix: localImageFix}); err != nil {
			return vc, err
		}
	} else {
		t.step("creating virtual cluster %s in host namespace %s (charts/virtual-cluster)", vc.name, vc.hostNamespace)
		vals, cfg, err := deploy.Values(nil, nil)
		if err != nil {
			return vc, err
		}
		*cleanups = append(*cleanups, func(ctx context.Context) error {
			_, err := deploy.Delete(ctx, hc.client, hc.dynamic, hc.helm, deploy.DeleteOptions{
				Name: vc.name, Namespace: vc.hostNamespace, DeleteNamespace: true, Timeout: 2 * time.Minute})
			return errors.Join(err, os.Remove(vc.kubeconfig))
		})
		if _, err := deploy.Create(ctx, hc.client, hc.helm, deploy.CreateOptions{
			Name: vc.name, Namespace: vc.hostNamespace, Values: vals, Config: cfg, Wait: deploy.WaitOptions{Timeout: 5 * time.Minute, ImageFix: localImageFix}}); err != nil {
			return vc, err
		}
	}
	servers, err := deploy.Servers(ctx, hc.client, vc.name, vc.hostNamespace)
	if err != nil {
		return vc, err
	}
	server := deploy.FirstReachable(ctx, servers, 30*time.Second)
	if server == "" {
		return vc, fmt.Errorf("this machine reaches the virtual API server at none of %v (its Service's cluster IP, the addresses it is exposed at)", servers)
	}
	kc, err := deploy.Kubeconfig(ctx, hc.client, vc.name, vc.hostNamespace, server)
	if err != nil {
		return vc, err
	}
	return vc, os.WriteFile(vc.kubeconfig, kc, 0o600)
}

// demoLocal creates virtual cluster demo as processes of this machine
// (`virtual create --local`), or starts the one an earlier run left.
func demoLocal(ctx context.Context, t *demoTimer, home, exe string, host *hostcluster.Cluster, cleanups *[]func(context.Context) error) (demoCluster, error) {
	i, loadErr := instance.Load(home, demoName)
	var err error
	if loadErr != nil {
		t.step("creating virtual cluster %s (--local)", demoName)
		i, err = instance.Create(ctx, instance.CreateOptions{Home: home, Name: demoName, HostKubeconfig: host.Kubeconfig}, exe)
		if i != nil {
			*cleanups = append(*cleanups, i.Delete)
		}
	} else {
		t.step("starting existing virtual cluster %s", demoName)
		err = i.Start(ctx, exe)
		*cleanups = append(*cleanups, i.Stop)
	}
	if err != nil {
		return demoCluster{}, err
	}
	return demoCluster{name: i.Name, hostNamespace: i.HostNamespace, kubeconfig: i.Kubeconfig()}, nil
}

// demoManifests decodes the embedded examples/demo files in name order.
func demoManifests() ([]*unstructured.Unstructured, error) {
	names, err := fs.Glob(demo.Manifests, "*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var objs []*unstructured.Unstructured
	for _, n := range names {
		data, err := demo.Manifests.ReadFile(n)
		if err != nil {
			return nil, err
		}
		o, err := kube.DecodeYAML(data)
		if err != nil {
			return nil, fmt.Errorf("examples/demo/%s: %w", n, err)
		}
		objs = append(objs, o...)
	}
	return objs, nil
}

// waitRunning polls until n pods matching selector in ns are Running, and
// Ready when ready is true.
func waitRunning(ctx context.Context, c client.Client, ns, selector string, n int, ready bool, timeout time.Duration) error {
	sel, err := labels.Parse(selector)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for {
		var list corev1.PodList
		if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return err
		}
		running := 0
		for _, p := range list.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && (!ready || podReady(&p)) {
				running++
			}
		}
		if running >= n {
			return nil
		}
		if time.Now().After(deadline) {
			what := "Running"
			if ready {
				what = "Running and Ready"
			}
			return fmt.Errorf("%d of %d pods %s in %s %s after %s", running, n, selector, ns, what, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// podReady reports whether p has condition Ready=True.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
