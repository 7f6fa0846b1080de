// Command vcluster measures clustersync's virtual cluster and vCluster's
// side by side on one local host, in one run (`make bench-vcluster`, which
// `make bench` runs), and prints one table with both columns and the
// ratios of issue 37's targets. It asserts nothing.
//
// vCluster (default v0.36.1) is built here from the Go module proxy
// (peer.go): its syncer from cmd/vcluster, its chart from the module's
// chart/, its Kubernetes distro image with the Kubernetes binaries
// clustersync uses and kine (its default backing store, an embedded SQLite
// database), and the CoreDNS its syncer deploys. The images go to the local
// registry of `clustersync dev up`, and vCluster's chart is installed with
// its default values but for the image names; where the build differs from
// vCluster's release, the output says so and why.
//
// Each control plane is installed with Helm's Go SDK (its chart as the
// user installs it), measured, and removed before the other, on a fresh
// host (`dev up`, its real node) that has pulled both subjects' images
// (prePull): the figures are of starting, not of pulling.
// Both get the same vcluster.yaml overlay (benchValues): Secrets synced
// whether or not a pod uses them (sync.toHost.secrets.all, the load of the
// throughput figure) and no ResourceQuota or LimitRange in the host
// namespace (vCluster's default; clustersync's default quota of 20 pods is
// below the 100-replica Deployment). Figures:
//
//   - create → API ready: from the chart's install to the virtual API
//     server's /readyz answering ok through its host Service; → first pod:
//     to a tenant pod Running on the real node;
//   - memory as the kubelet counts it (working set of each pod's cgroup;
//     test/bench/internal/podstats), idle (-idle-after after API ready) and
//     loaded (after the Secrets and the Deployment), of the control plane
//     pod and of the pods it runs in the host for the tenant's
//     kube-system (vCluster's CoreDNS Deployment; clustersync runs CoreDNS
//     in its pod);
//   - sync throughput of -n Secrets created by 16 clients (objects/s, first
//     create to the last host copy seen by a host watch) and the p50/p99
//     of create → host copy;
//   - CPU per synced object: the control plane pod's CPU over the sync,
//     less its idle CPU over the same time, divided by -n (ms);
//   - a -replicas Deployment from create to all replicas ready.
//
// Usage: go run ./test/bench/vcluster [-clustersync bin/clustersync] [-vcluster v0.36.1] [-n 1000] [-replicas 100] [-idle-after 2m]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/strvals"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/registry"
	"github.com/clustersync/clustersync/internal/virtual/deploy"
	"github.com/clustersync/clustersync/test/bench/internal/devhost"
)

func main() {
	exe := flag.String("clustersync", "bin/clustersync", "clustersync binary")
	version := flag.String("vcluster", "v0.36.1", "vCluster release to build from the Go module proxy")
	var l load
	flag.IntVar(&l.Secrets, "n", 1000, "Secrets synced for the throughput figure")
	flag.IntVar(&l.Replicas, "replicas", 100, "replicas of the Deployment")
	flag.DurationVar(&l.IdleAfter, "idle-after", 2*time.Minute, "how long after API ready the idle figures are read")
	var sets []string
	flag.Func("clustersync-set", "a value of clustersync's chart, as helm --set takes it (repeatable): to measure a setting", func(v string) error {
		sets = append(sets, v)
		return nil
	})
	flag.Func("clustersync-set-string", "as -clustersync-set, the value a string, as helm --set-string takes it", func(v string) error {
		sets = append(sets, "string:"+v)
		return nil
	})
	only := flag.String("only", "", "measure only this one (clustersync or vcluster) and print no table: for work on one of them")
	flag.Parse()
	l.Workers = 16
	if err := run(context.Background(), *exe, *version, *only, sets, l); err != nil {
		fmt.Fprintln(os.Stderr, "bench-vcluster:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, exe, version, only string, sets []string, l load) error {
	exe, err := filepath.Abs(exe)
	if err != nil {
		return err
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	home, err := os.MkdirTemp("", "clustersync-bench-vcluster-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	run := devhost.CLI(ctx, exe, home)
	cli := func(args ...string) error { _, err := run(args...); return err }
	log := os.Stdout
	fmt.Fprintf(log, "clustersync and vCluster %s side by side on a local host (dev up, real node %s)\n", version, hostcluster.RealNodeName)
	if err := cli("dev", "up"); err != nil {
		return err
	}
	defer func() { _ = cli("dev", "down") }()
	// The local registry's state folder under the host's (dev up's layout).
	reg, ok := registry.Running(filepath.Join(home, "host", "registry"))
	if !ok {
		return errors.New("dev up left no local registry running")
	}
	kubeconfig := filepath.Join(home, "host", "kubeconfig.yaml")
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	host, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	l.Pause = images.Reference(images.DefaultRegistry, images.PauseRepository, hostcluster.RealNodePauseTag)

	fmt.Fprintln(log, "clustersync: image from this tree (dev image --tag bench)")
	if err := cli("dev", "image", "--tag", "bench", "--latest=false", "--source", root); err != nil {
		return err
	}
	csChart, err := deploy.Chart()
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "vCluster %s:\n", version)
	p, err := buildPeer(ctx, version, reg.Addr, log)
	if err != nil {
		return fmt.Errorf("vCluster %s could not be built here: %w", version, err)
	}
	pulls := append(p.Pulls, pulled{Image: images.Reference(images.DefaultRegistry, images.ClustersyncRepository, "bench"), Command: []string{"/clustersync", "version"}},
		pulled{Image: l.Pause})
	if err := prePull(ctx, host, pulls); err != nil {
		return err
	}
	csValues, err := values(append(benchSets(), append([]string{"controlPlane.statefulSet.image.tag=bench"}, sets...)...))
	if err != nil {
		return fmt.Errorf("-clustersync-set: %w", err)
	}
	vcValues, err := values(append(benchSets(), p.Sets...))
	if err != nil {
		return err
	}
	subjects := []subject{
		{Title: "clustersync", Namespace: "bench-clustersync", Chart: csChart, Values: csValues},
		{Title: "vCluster " + version, Namespace: "bench-vcluster", Chart: p.Chart, Values: vcValues},
	}
	var figs []figures
	for i, s := range subjects {
		if only != "" && only != []string{"clustersync", "vcluster"}[i] {
			continue
		}
		f, err := measure(ctx, kubeconfig, host, s, l, log)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Title, err)
		}
		figs = append(figs, f)
	}
	if only != "" {
		return nil
	}
	commit, _ := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	fmt.Fprintf(log, "\nSide by side (clustersync %s, vCluster %s; %d Secrets, %d replicas, idle read %s after API ready)\n",
		strings.TrimSpace(string(commit)), version, l.Secrets, l.Replicas, l.IdleAfter)
	printTable(log, rows(figs[0], figs[1], l), subjects[0].Title, subjects[1].Title)
	fmt.Fprintln(log, "\nvCluster as built here:")
	for _, n := range p.Notes {
		fmt.Fprintf(log, "  - %s\n", n)
	}
	return nil
}

// benchSets is the vcluster.yaml overlay both are installed with (see the
// package comment), as `helm --set` takes it.
func benchSets() []string {
	return []string{"sync.toHost.secrets.all=true", "policies.resourceQuota.enabled=false", "policies.limitRange.enabled=false"}
}

// values are chart values from sets in `helm --set` syntax, later ones
// winning; a set prefixed "string:" is taken as `--set-string` takes it.
// "null" deletes a chart default, as in Helm.
func values(sets []string) (map[string]any, error) {
	vals := map[string]any{}
	for _, set := range sets {
		parse := strvals.ParseInto
		if v, ok := strings.CutPrefix(set, "string:"); ok {
			set, parse = v, strvals.ParseIntoString
		}
		if err := parse(set, vals); err != nil {
			return nil, fmt.Errorf("%s: %w", set, err)
		}
	}
	return vals, nil
}

// pulled is an image to pull before measuring and a command that ends at
// once in it.
type pulled struct {
	Image   string
	Command []string
}

// prePull runs a pod with a container of each image (its command ending
// at once) on the real node until each has run, and deletes it, so that
// neither subject's figures include a pull: a platform team's nodes have
// the images after the first virtual cluster. Errors name an image that
// could not be pulled or started.
func prePull(ctx context.Context, host kubernetes.Interface, ps []pulled) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bench-pull"}, Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To[int64](0)}}
	for i, p := range ps {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: fmt.Sprintf("c%d", i), Image: p.Image, Command: p.Command})
	}
	if _, err := host.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return err
	}
	defer func() { _ = host.CoreV1().Pods("default").Delete(ctx, pod.Name, metav1.DeleteOptions{}) }()
	var state string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := host.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		state = deploy.DescribePod(p)
		ran := 0
		for _, c := range p.Status.ContainerStatuses {
			if w := c.State.Waiting; w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff" || w.Reason == "InvalidImageName") {
				return false, fmt.Errorf("pull %s: %s: %s", c.Image, w.Reason, w.Message)
			}
			if c.State.Terminated != nil || c.State.Running != nil {
				ran++
			}
		}
		return ran == len(ps), nil
	})
	if err != nil {
		return fmt.Errorf("pull the images on the real node (%s): %w", state, err)
	}
	return nil
}
