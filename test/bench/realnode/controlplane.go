package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
	"github.com/clustersync/clustersync/internal/virtual/deploy"
	"github.com/clustersync/clustersync/test/bench/internal/podstats"
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
// as the kubelet counts it (podstats.Read: the pod's and each container's
// working set) idle, idleAfter after ready, and after a load
// (loadConfigMaps ConfigMaps, loadServices Services and loadPods running
// pods, all synced), then deletes it.
func controlPlaneMemory(ctx context.Context, cli func(...string) (string, error), home string, idleAfter time.Duration) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	if _, err := cli("dev", "image", "--tag", "bench", "--latest=false", "--source", root); err != nil {
		return err
	}
	kubeconfig := filepath.Join(home, "bench-vc.yaml")
	start := time.Now()
	// Default values but the host namespace's ResourceQuota, whose default
	// counts (vCluster's: 20 Services, 20 pods, 100 ConfigMaps) are below
	// the load.
	if _, err := cli("virtual", "create", "bench", "--set", "controlPlane.statefulSet.image.tag=bench", "--set", "policies.resourceQuota.enabled=false",
		"--kubeconfig-out", kubeconfig); err != nil {
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
	time.Sleep(idleAfter)
	idle, err := podstats.Read(ctx, host, []*corev1.Pod{pod}, time.Now())
	if err != nil {
		return err
	}
	fmt.Printf("  control plane pod working set idle (%s after ready): %s\n", idleAfter, idle[0])

	start = time.Now()
	if err := load(ctx, virtual); err != nil {
		return err
	}
	var state string // what the host has, for the error
	err = wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := host.CoreV1().Pods("vc-bench").List(ctx, metav1.ListOptions{LabelSelector: "vcluster.loft.sh/managed-by=bench"})
		if err != nil {
			return false, nil // the last state stays what the error says
		}
		svcs, err := host.CoreV1().Services("vc-bench").List(ctx, metav1.ListOptions{LabelSelector: "vcluster.loft.sh/managed-by=bench"})
		if err != nil {
			return false, nil
		}
		running, waiting := 0, ""
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			} else if waiting == "" {
				waiting = "; " + deploy.DescribePod(&p)
			}
		}
		state = fmt.Sprintf("%d of %d pods Running, %d Services%s", running, len(pods.Items), len(svcs.Items), waiting)
		return running >= loadPods && len(svcs.Items) >= loadServices, nil
	})
	if err != nil {
		return fmt.Errorf("the load did not reach the host (%s): %w", state, err)
	}
	fmt.Printf("  load: %d ConfigMaps, %d Services, %d pods created; host copies in place and pods Running after %.1f s\n",
		loadConfigMaps, loadServices, loadPods, time.Since(start).Seconds())
	loaded, err := podstats.Read(ctx, host, []*corev1.Pod{pod}, time.Now())
	if err != nil {
		return err
	}
	fmt.Printf("  control plane pod working set after the load: %s\n", loaded[0])
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

// IdleAfter is how long after ready the idle memory is read by default
// (flag -idle-after): the start's work (caches, bootstrap, the first
// leader-election rounds) has settled.
const IdleAfter = 2 * time.Minute
