package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/virtual/deploy"
	"github.com/clustersync/clustersync/test/bench/internal/podstats"
)

// subject is one column of the table: a virtual cluster's chart and
// values, installed as release name into its own host namespace.
type subject struct {
	// Title heads the column, e.g. "vCluster v0.36.1".
	Title string
	// Namespace is the host namespace it is installed into.
	Namespace string
	Chart     *chart.Chart
	Values    map[string]any
}

// release is the release and virtual cluster name of every subject.
const release = "bench"

// load is what each subject is measured with.
type load struct {
	// Secrets are synced for the throughput figure, created by Workers
	// clients at once.
	Secrets, Workers int
	// Replicas of the Deployment whose pods run on the real node.
	Replicas int
	// IdleAfter is how long after API ready the idle figures are read.
	IdleAfter time.Duration
	// Pause is the image of the tenant's pods.
	Pause string
}

// figures are one subject's results.
type figures struct {
	// APIReady and FirstPod are from the chart's install to the virtual
	// API server's /readyz answering ok, and to a first tenant pod Running.
	APIReady, FirstPod time.Duration
	// Idle and Loaded are the memory of the control plane pod and of the
	// pods it runs in the host for the tenant's kube-system (vCluster's
	// CoreDNS; none for clustersync, which runs CoreDNS in its pod).
	Idle, Loaded footprint
	// IdleCPU is the control plane pod's CPU use at idle, in cores.
	IdleCPU float64
	// SyncRate is Secrets synced per second (first create to the last
	// host copy); P50 and P99 of create → host copy.
	SyncRate float64
	P50, P99 time.Duration
	// CPUPerObject is the control plane pod's CPU per synced Secret, its
	// idle CPU over the same time taken off.
	CPUPerObject time.Duration
	// Deployment is from the Deployment's create to all replicas ready.
	Deployment time.Duration
}

// footprint is the memory of a control plane pod and of its system pods.
type footprint struct {
	ControlPlane podstats.Sample
	System       []podstats.Sample
}

// Total is the working set of the control plane pod and its system pods,
// in bytes.
func (f footprint) Total() uint64 {
	t := f.ControlPlane.WorkingSet
	for _, s := range f.System {
		t += s.WorkingSet
	}
	return t
}

// measure installs s on the host of kubeconfig, measures it with l, and
// uninstalls it (deleting its host namespace) before it returns.
func measure(ctx context.Context, kubeconfig string, host kubernetes.Interface, s subject, l load, log io.Writer) (f figures, err error) {
	h := deploy.NewHelm(kubeconfig, nil)
	if _, err := host.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.Namespace}}, metav1.CreateOptions{}); err != nil {
		return f, err
	}
	defer func() {
		if derr := uninstall(ctx, h, host, s.Namespace); derr != nil && err == nil {
			err = derr
		}
	}()
	start := time.Now()
	if _, err := h.InstallChart(ctx, s.Chart, release, s.Namespace, s.Values); err != nil {
		return f, err
	}
	virtual, err := apiReady(ctx, host, s.Namespace, 5*time.Minute)
	if err != nil {
		return f, err
	}
	f.APIReady = time.Since(start)
	ready := time.Now()
	fmt.Fprintf(log, "  %s: API ready after %.1f s (%s)\n", s.Title, f.APIReady.Seconds(), startup(ctx, host, s.Namespace, start))
	if err := runPod(ctx, virtual, l.Pause); err != nil {
		return f, err
	}
	f.FirstPod = time.Since(start)

	// Idle: the CPU over the second half of IdleAfter, the memory at its end.
	sleepUntil(ctx, ready.Add(l.IdleAfter/2))
	half, err := sample(ctx, host, s.Namespace, time.Now())
	if err != nil {
		return f, err
	}
	sleepUntil(ctx, ready.Add(l.IdleAfter))
	if f.Idle, err = sample(ctx, host, s.Namespace, time.Now()); err != nil {
		return f, err
	}
	f.IdleCPU = cores(half.ControlPlane, f.Idle.ControlPlane)
	fmt.Fprintf(log, "  %s: idle %s\n", s.Title, f.Idle.ControlPlane)

	created, seen, first, err := syncSecrets(ctx, host, virtual, s.Namespace, l)
	if err != nil {
		return f, err
	}
	last := latest(seen)
	after, err := sample(ctx, host, s.Namespace, last)
	if err != nil {
		return f, err
	}
	f.SyncRate = float64(l.Secrets) / last.Sub(first).Seconds()
	f.P50, f.P99 = percentiles(created, seen)
	busy := after.ControlPlane.CPU - f.Idle.ControlPlane.CPU
	idle := time.Duration(f.IdleCPU * float64(after.ControlPlane.CPUTime.Sub(f.Idle.ControlPlane.CPUTime)))
	f.CPUPerObject = (busy - idle) / time.Duration(l.Secrets)
	fmt.Fprintf(log, "  %s: %d Secrets synced, %.0f objects/s, p50 %s, p99 %s, CPU %.2f ms per object\n", s.Title, l.Secrets, f.SyncRate, f.P50, f.P99, float64(f.CPUPerObject)/float64(time.Millisecond))

	if f.Deployment, err = deployment(ctx, virtual, l); err != nil {
		return f, err
	}
	if f.Loaded, err = sample(ctx, host, s.Namespace, time.Now()); err != nil {
		return f, err
	}
	fmt.Fprintf(log, "  %s: %d replicas ready after %.1f s; loaded %s\n", s.Title, l.Replicas, f.Deployment.Seconds(), f.Loaded.ControlPlane)
	return f, nil
}

// apiReady waits until the virtual API server of the release in namespace
// answers /readyz with ok through its host Service, with the tenant's
// kubeconfig (host Secret vc-bench), and returns a client of it. The error
// says what the control plane pod is doing.
func apiReady(ctx context.Context, host kubernetes.Interface, namespace string, timeout time.Duration) (kubernetes.Interface, error) {
	var virtual kubernetes.Interface
	var last error
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		server, err := deploy.ServiceServer(ctx, host, release, namespace)
		if err != nil {
			last = err
			return false, nil
		}
		kc, err := deploy.Kubeconfig(ctx, host, release, namespace, server)
		if err != nil {
			last = err
			return false, nil
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
		if err != nil {
			return false, err
		}
		// The serving certificate names localhost, not the Service's IP.
		cfg.TLSClientConfig.ServerName = "localhost"
		cfg.QPS, cfg.Burst, cfg.Timeout = 500, 1000, 10*time.Second
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return false, err
		}
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil || string(body) != "ok" {
			last = fmt.Errorf("/readyz: %s %v", body, err)
			return false, nil
		}
		virtual = cs
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("virtual API server of %s/%s not ready (%v; pod: %s): %w", namespace, release, last, podState(ctx, host, namespace), err)
	}
	return virtual, nil
}

// startup says when the control plane pod of namespace was scheduled,
// each of its containers started and the pod was ready, in seconds after
// start (the kubelet's times have whole seconds), for work on the start
// time.
func startup(ctx context.Context, host kubernetes.Interface, namespace string, start time.Time) string {
	p, err := controlPlanePod(ctx, host, namespace)
	if err != nil {
		return err.Error()
	}
	at := func(t metav1.Time) string { return fmt.Sprintf("%.0f", t.Sub(start).Seconds()) }
	condition := func(t corev1.PodConditionType) string {
		for _, c := range p.Status.Conditions {
			if c.Type == t && c.Status == corev1.ConditionTrue {
				return at(c.LastTransitionTime)
			}
		}
		return "-"
	}
	parts := []string{"scheduled " + condition(corev1.PodScheduled)}
	for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		switch {
		case cs.State.Running != nil:
			parts = append(parts, cs.Name+" started "+at(cs.State.Running.StartedAt))
		case cs.State.Terminated != nil:
			parts = append(parts, cs.Name+" "+at(cs.State.Terminated.StartedAt)+"-"+at(cs.State.Terminated.FinishedAt))
		}
	}
	parts = append(parts, "pod ready "+condition(corev1.PodReady))
	return "s after the install: " + strings.Join(parts, ", ")
}

// podState describes the control plane pod of namespace (deploy.DescribePod).
func podState(ctx context.Context, host kubernetes.Interface, namespace string) string {
	p, err := controlPlanePod(ctx, host, namespace)
	if err != nil {
		return err.Error()
	}
	return deploy.DescribePod(p)
}

// controlPlanePod is the pod of the release's StatefulSet (both charts
// run the control plane as StatefulSet NAME with the default values here).
func controlPlanePod(ctx context.Context, host kubernetes.Interface, namespace string) (*corev1.Pod, error) {
	sts, err := host.AppsV1().StatefulSets(namespace).Get(ctx, release, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	sel, err := metav1.LabelSelectorAsSelector(sts.Spec.Selector)
	if err != nil {
		return nil, err
	}
	pods, err := host.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	if len(pods.Items) != 1 {
		return nil, fmt.Errorf("%d pods of StatefulSet %s/%s, want 1", len(pods.Items), namespace, release)
	}
	return &pods.Items[0], nil
}

// sample reads the footprint of the release in namespace: its control
// plane pod and the host pods of its virtual kube-system namespace
// (annotation vcluster.loft.sh/object-namespace, which both write), with
// figures taken after since.
func sample(ctx context.Context, host kubernetes.Interface, namespace string, since time.Time) (footprint, error) {
	cp, err := controlPlanePod(ctx, host, namespace)
	if err != nil {
		return footprint{}, err
	}
	pods := []*corev1.Pod{cp}
	synced, err := host.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "vcluster.loft.sh/managed-by=" + release})
	if err != nil {
		return footprint{}, err
	}
	for i := range synced.Items {
		if p := &synced.Items[i]; p.Annotations["vcluster.loft.sh/object-namespace"] == "kube-system" && p.Status.Phase == corev1.PodRunning {
			pods = append(pods, p)
		}
	}
	s, err := podstats.Read(ctx, host, pods, since)
	if err != nil {
		return footprint{}, err
	}
	return footprint{ControlPlane: s[0], System: s[1:]}, nil
}

// cores is the CPU used between samples a and b, in cores.
func cores(a, b podstats.Sample) float64 {
	d := b.CPUTime.Sub(a.CPUTime)
	if d <= 0 {
		return 0
	}
	return float64(b.CPU-a.CPU) / float64(d)
}

// runPod creates pod "first" of image in the virtual namespace default
// (once its ServiceAccount exists) and waits until it is Running.
func runPod(ctx context.Context, virtual kubernetes.Interface, image string) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "first"}, Spec: corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](0), Containers: []corev1.Container{{Name: "pause", Image: image}}}}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, last = virtual.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
		return last == nil || apierrors.IsAlreadyExists(last), nil // the default ServiceAccount may not exist yet
	})
	if err != nil {
		return fmt.Errorf("create the first pod: %v: %w", last, err)
	}
	var state string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := virtual.CoreV1().Pods("default").Get(ctx, "first", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		state = deploy.DescribePod(p)
		return p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		return fmt.Errorf("first pod not Running (%s): %w", state, err)
	}
	return nil
}

// syncSecrets creates l.Secrets Secrets in virtual namespace "sync" with
// l.Workers clients and waits until each has its host copy in namespace.
// It returns when each create returned and when each host copy was seen
// (by virtual name), and when the first create began.
func syncSecrets(ctx context.Context, host, virtual kubernetes.Interface, namespace string, l load) (created, seen map[string]time.Time, first time.Time, err error) {
	if _, err := virtual.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "sync"}}, metav1.CreateOptions{}); err != nil {
		return nil, nil, first, err
	}
	seen = map[string]time.Time{}
	var mu sync.Mutex
	done := make(chan struct{})
	// An informer, not a bare watch: it lists again and resumes when the
	// host API server ends a watch, and a copy seen twice counts once.
	inf := cache.NewSharedIndexInformer(cache.NewFilteredListWatchFromClient(host.CoreV1().RESTClient(), "secrets", namespace,
		func(o *metav1.ListOptions) { o.LabelSelector = "vcluster.loft.sh/managed-by=" + release }), &corev1.Secret{}, 0, cache.Indexers{})
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		s, ok := obj.(*corev1.Secret)
		if !ok || s.Annotations["vcluster.loft.sh/object-namespace"] != "sync" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		n := s.Annotations["vcluster.loft.sh/object-name"]
		if _, dup := seen[n]; !dup {
			seen[n] = time.Now()
			if len(seen) == l.Secrets {
				close(done)
			}
		}
	}})
	if err != nil {
		return nil, nil, first, err
	}
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	go inf.RunWithContext(ictx)
	if !cache.WaitForCacheSync(ictx.Done(), inf.HasSynced) {
		return nil, nil, first, fmt.Errorf("host Secrets of %s: informer not synced", namespace)
	}

	created = make(map[string]time.Time, l.Secrets)
	names := make(chan string)
	var createErr error // the first create that failed
	var wg sync.WaitGroup
	first = time.Now()
	for range l.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range names {
				_, err := virtual.CoreV1().Secrets("sync").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: n},
					StringData: map[string]string{"key": "value-" + n}}, metav1.CreateOptions{})
				mu.Lock()
				if err != nil && createErr == nil {
					createErr = fmt.Errorf("create Secret sync/%s: %w", n, err)
				} else if err == nil {
					created[n] = time.Now()
				}
				mu.Unlock()
			}
		}()
	}
	for i := range l.Secrets {
		names <- fmt.Sprintf("s-%d", i)
	}
	close(names)
	wg.Wait()
	if createErr != nil {
		return nil, nil, first, createErr
	}
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		return nil, nil, first, fmt.Errorf("%d of %d Secrets have a host copy after 10 minutes", n, l.Secrets)
	case <-ctx.Done():
		return nil, nil, first, ctx.Err()
	}
	mu.Lock()
	defer mu.Unlock()
	return created, seen, first, nil
}

// latest is the latest of times.
func latest(times map[string]time.Time) time.Time {
	var t time.Time
	for _, v := range times {
		if v.After(t) {
			t = v
		}
	}
	return t
}

// percentiles are the 50th and 99th percentiles of seen − created over
// the names of created (nearest rank).
func percentiles(created, seen map[string]time.Time) (p50, p99 time.Duration) {
	d := make([]time.Duration, 0, len(created))
	for n, c := range created {
		d = append(d, max(seen[n].Sub(c), 0))
	}
	if len(d) == 0 {
		return 0, 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	rank := func(p float64) time.Duration { return d[max(0, int(math.Ceil(p*float64(len(d))))-1)] }
	return rank(0.50), rank(0.99)
}

// deployment creates a Deployment of l.Replicas pods of l.Pause in
// virtual namespace "sync" and returns the time until all are ready.
func deployment(ctx context.Context, virtual kubernetes.Interface, l load) (time.Duration, error) {
	labels := map[string]string{"app": "load"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "load"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To(int32(l.Replicas)), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](0), Containers: []corev1.Container{{Name: "pause", Image: l.Pause}}}}}}
	start := time.Now()
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, last = virtual.AppsV1().Deployments("sync").Create(ctx, d, metav1.CreateOptions{})
		return last == nil, nil // the namespace's default ServiceAccount may not exist yet
	})
	if err != nil {
		return 0, fmt.Errorf("create Deployment sync/load: %v: %w", last, err)
	}
	var ready int32
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := virtual.AppsV1().Deployments("sync").Get(ctx, "load", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		ready = got.Status.ReadyReplicas
		return ready == int32(l.Replicas), nil
	})
	if err != nil {
		return 0, fmt.Errorf("Deployment sync/load: %d of %d replicas ready: %w", ready, l.Replicas, err)
	}
	return time.Since(start), nil
}

// uninstall removes the release and deletes namespace, waiting until it is
// gone so that the next subject starts on an idle node.
func uninstall(ctx context.Context, h *deploy.Helm, host kubernetes.Interface, namespace string) error {
	_ = h.Uninstall(release, namespace, 2*time.Minute) // the namespace's deletion removes what is left
	err := host.CoreV1().Namespaces().Delete(ctx, namespace, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := host.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// sleepUntil sleeps until t or ctx is done.
func sleepUntil(ctx context.Context, t time.Time) {
	select {
	case <-time.After(time.Until(t)):
	case <-ctx.Done():
	}
}
