package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/images"
)

// The load of the control-plane memory figure: objects of one virtual
// namespace, and pods that really run on the real node.
const (
	loadConfigMaps = 500
	loadServices   = 100
	loadPods       = 30
)

// controlPlaneMemory installs virtual cluster "bench" with the chart on
// the running host of home (images built from this tree as tag bench),
// prints `virtual create`'s time and the memory of its control plane pod
// (the sum of the RSS of its processes, and each process's) idle and after
// a load (loadConfigMaps ConfigMaps, loadServices Services and loadPods
// running pods, all synced), then deletes it.
func controlPlaneMemory(ctx context.Context, cli func(...string) (string, error), home string) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	if _, err := cli("dev", "image", "--tag", "bench", "--latest=false", "--source", root); err != nil {
		return err
	}
	kubeconfig := filepath.Join(home, "bench-vc.yaml")
	start := time.Now()
	if _, err := cli("virtual", "create", "bench", "--set", "controlPlane.statefulSet.image.tag=bench", "--kubeconfig-out", kubeconfig); err != nil {
		return err
	}
	fmt.Printf("\nVirtual cluster in the host (chart), control plane pod vc-bench/bench-0\n")
	fmt.Printf("  virtual create -> ready and connected: %.1f s\n", time.Since(start).Seconds())
	defer func() { _, _ = cli("virtual", "delete", "bench") }()

	host, err := clientset(filepath.Join(home, "host", "kubeconfig.yaml"))
	if err != nil {
		return err
	}
	virtual, err := clientset(kubeconfig)
	if err != nil {
		return err
	}
	pod, err := host.CoreV1().Pods("vc-bench").Get(ctx, "bench-0", metav1.GetOptions{})
	if err != nil {
		return err
	}
	// Idle: once the start's work (caches, bootstrap) has settled.
	time.Sleep(20 * time.Second)
	idle, err := podRSS(string(pod.UID))
	if err != nil {
		return err
	}
	printRSS("idle", idle)

	start = time.Now()
	if err := load(ctx, virtual); err != nil {
		return err
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := host.CoreV1().Pods("vc-bench").List(ctx, metav1.ListOptions{LabelSelector: "vcluster.loft.sh/managed-by=bench"})
		if err != nil {
			return false, nil
		}
		svcs, err := host.CoreV1().Services("vc-bench").List(ctx, metav1.ListOptions{LabelSelector: "vcluster.loft.sh/managed-by=bench"})
		if err != nil {
			return false, nil
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running >= loadPods && len(svcs.Items) >= loadServices, nil
	})
	if err != nil {
		return fmt.Errorf("the load did not reach the host: %w", err)
	}
	fmt.Printf("  load: %d ConfigMaps, %d Services, %d pods created; host copies in place and pods Running after %.1f s\n",
		loadConfigMaps, loadServices, loadPods, time.Since(start).Seconds())
	loaded, err := podRSS(string(pod.UID))
	if err != nil {
		return err
	}
	printRSS("after the load", loaded)
	return nil
}

// load creates the objects of the load in virtual namespace "load".
func load(ctx context.Context, virtual kubernetes.Interface) error {
	if _, err := virtual.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "load"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := virtual.CoreV1().ServiceAccounts("load").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("namespace load has no default ServiceAccount: %w", err)
	}
	for i := range loadConfigMaps {
		if _, err := virtual.CoreV1().ConfigMaps("load").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)},
			Data: map[string]string{"key": strings.Repeat("x", 512)}}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for i := range loadServices {
		if _, err := virtual.CoreV1().Services("load").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%d", i)},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "load"}, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}},
			metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	pause := images.Reference(images.DefaultRegistry, images.PauseRepository, hostcluster.RealNodePauseTag)
	for i := range loadPods {
		if _, err := virtual.CoreV1().Pods("load").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i), Labels: map[string]string{"app": "load"}},
			Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](0), Containers: []corev1.Container{{Name: "pause", Image: pause}}}},
			metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

func clientset(kubeconfig string) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 200, 400
	return kubernetes.NewForConfig(cfg)
}

// podRSS returns the resident memory (KiB) of each process of the pod with
// uid on this machine, by name: the processes whose cgroup path names
// pod<uid> (the kubelet's cgroupfs layout).
func podRSS(uid string) (map[string]int64, error) {
	procs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, p := range procs {
		cg, err := os.ReadFile(filepath.Join(p, "cgroup"))
		if err != nil || !strings.Contains(string(cg), "pod"+uid) {
			continue
		}
		status, err := os.ReadFile(filepath.Join(p, "status"))
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil {
			continue
		}
		name := processName(strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00"))
		var rss int64
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				rss, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			}
		}
		out[name] += rss
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no process of pod %s on this machine", uid)
	}
	return out, nil
}

// processName names a process of the control plane pod by its command
// line: the program, or for clustersync its component (syncer, etcd,
// coredns, …).
func processName(argv []string) string {
	name := filepath.Base(argv[0])
	if name != "clustersync" || len(argv) < 2 {
		return name
	}
	if len(argv) >= 4 && argv[1] == "virtual" && argv[2] == "component" {
		return argv[3]
	}
	return argv[1]
}

// printRSS prints the sum and each process's RSS in MiB, largest first.
func printRSS(when string, rss map[string]int64) {
	var total int64
	names := make([]string, 0, len(rss))
	for n, v := range rss {
		total += v
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return rss[names[i]] > rss[names[j]] })
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.0f", n, float64(rss[n])/1024))
	}
	fmt.Printf("  control plane pod RSS %s: %.0f MiB (%s MiB)\n", when, float64(total)/1024, strings.Join(parts, ", "))
}
