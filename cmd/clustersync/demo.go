package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/examples/demo"
	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/kube"
	"github.com/clustersync/clustersync/internal/virtual/instance"
)

// demoName is the virtual cluster and namespace of the demo.
const demoName = "demo"

// newDemoCommand is `clustersync demo`, what `make run` runs: a local host
// with three fake nodes, virtual cluster "demo", examples/demo applied in it,
// and a table of each virtual object next to its host copy.
func newDemoCommand() *cobra.Command {
	var exit, keep bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the main job end to end: host cluster, virtual cluster demo, a workload synced between them",
		Long: `Start the local host cluster (3 fake nodes), create virtual cluster "demo", apply
examples/demo in it (a 3-replica nginx Deployment that mounts a ConfigMap and
reads a Secret, its Service, an unused Secret, a PersistentVolumeClaim), wait
until the 3 pods run, and print each virtual object next to its host object.

It then keeps running until Ctrl-C and stops what it started. With --exit it
does the same without waiting; --keep leaves everything running.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runDemo(ctx, cmd.OutOrStdout(), exit, keep)
		},
	}
	cmd.Flags().BoolVar(&exit, "exit", false, "exit once the demo is up instead of waiting for Ctrl-C (for scripts)")
	cmd.Flags().BoolVar(&keep, "keep", false, "leave the host and virtual cluster running on exit")
	return cmd
}

func runDemo(ctx context.Context, out io.Writer, exit, keep bool) (err error) {
	start := time.Now()
	step := func(format string, args ...any) {
		fmt.Fprintf(out, "[%5.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
	home := stateHome()
	exe, err := executable()
	if err != nil {
		return err
	}

	// 1. The host.
	_, hostErr := hostcluster.Open(defaultHostDir())
	hostStarted := hostErr != nil
	step("starting the local host cluster (3 fake nodes)")
	host, err := hostcluster.Create(ctx, hostcluster.Options{Dir: defaultHostDir(), Nodes: 3, Log: io.Discard})
	if err != nil {
		return err
	}
	step("host cluster ready: %s", host.Server())

	// 2. The virtual cluster.
	vc, loadErr := instance.Load(home, demoName)
	vcCreated := loadErr != nil
	if vcCreated {
		step("creating virtual cluster %s", demoName)
		vc, err = instance.Create(ctx, instance.CreateOptions{Home: home, Name: demoName, HostKubeconfig: host.Kubeconfig}, exe)
	} else {
		step("starting existing virtual cluster %s", demoName)
		err = vc.Start(ctx, exe)
	}
	if err != nil {
		return err
	}
	defer func() {
		if keep {
			return
		}
		stopCtx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		step("stopping what the demo started")
		var errs []error
		if vcCreated {
			errs = append(errs, vc.Delete(stopCtx))
		} else {
			errs = append(errs, vc.Stop(stopCtx))
		}
		if hostStarted {
			errs = append(errs, host.Delete(stopCtx))
		}
		err = errors.Join(err, errors.Join(errs...))
	}()
	step("virtual cluster %s running; host namespace %s", demoName, vc.HostNamespace)

	// 3. The workload.
	vcfg, err := clientcmd.BuildConfigFromFlags("", vc.Kubeconfig())
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
	step("applied examples/demo (%d objects) in the virtual cluster", len(objs))

	vclient, hclient, err := instanceClients(vc)
	if err != nil {
		return err
	}
	if err := waitRunning(ctx, vclient, demoName, "app=web", 3, 3*time.Minute); err != nil {
		return err
	}
	step("all 3 web pods are Running in the virtual cluster")

	if err := printNamespace(ctx, out, vc, vclient, hclient, demoName); err != nil {
		return err
	}
	fmt.Fprintf(out, `
Kubeconfigs:
  virtual cluster: %s
  host cluster:    %s

Try:
  kubectl --kubeconfig %s -n demo get pods,svc,secrets -o wide
  kubectl --kubeconfig %s -n %s get pods,svc,secrets -o wide
  kubectl --kubeconfig %s -n demo scale deployment web --replicas 5
`, vc.Kubeconfig(), host.Kubeconfig, vc.Kubeconfig(), host.Kubeconfig, vc.HostNamespace, vc.Kubeconfig())
	if exit {
		return nil
	}
	fmt.Fprintln(out, "\nRunning; press Ctrl-C to stop.")
	<-ctx.Done()
	return nil
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

// waitRunning polls until n pods matching selector in ns are Running.
func waitRunning(ctx context.Context, c client.Client, ns, selector string, n int, timeout time.Duration) error {
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
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				running++
			}
		}
		if running >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d pods %s in %s Running after %s", running, n, selector, ns, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
