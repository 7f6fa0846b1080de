// Command bench measures the virtual-cluster syncer on real API servers
// (`make bench`). In one run it measures:
//
//   - the ceiling: one client (16 workers) creates N objects in a virtual
//     namespace, then the same N objects straight in a host namespace, with no
//     syncer running — the API work a sync cannot avoid;
//   - the sync: the same client creates N objects in the virtual cluster with
//     the syncer running, timed until all exist on the host (a host watch
//     records when each appears), giving objects/s, the ratio to the ceiling
//     and create-to-host latency percentiles;
//   - a paced run at a fixed rate (default 50 objects/s) for latency under
//     moderate load;
//   - the syncer's CPU per synced object and its idle and peak resident memory,
//     read from /proc with the syncer running as a process of its own
//     (`clustersync syncer`; the virtual cluster's embedded etcd lives in this
//     benchmark process, not in the syncer);
//   - the time until a 100-replica Deployment is all Running in the virtual
//     cluster.
//
// Figures are printed, not asserted: this is a benchmark, not a test.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/ports"
	"github.com/clustersync/clustersync/internal/proc"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	"github.com/clustersync/clustersync/internal/virtual/translate"
)

const vcName = "bench"

// metricsURL is the syncer's Prometheus endpoint, set by startSyncer.
var metricsURL string

type options struct {
	n, workers, pacedN, replicas, nodes int
	pacedRate                           float64
	exe, dir                            string
	hostQPS                             float64
	hostBurst, syncerWorkers            int
	kinds                               string
	keep                                bool
	profile                             string
	breakdown                           bool
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 1000, "objects per kind (N)")
	flag.IntVar(&o.workers, "workers", 16, "client workers creating objects")
	flag.StringVar(&o.kinds, "kinds", "secrets,services", "kinds to measure, comma-separated: secrets, services")
	flag.IntVar(&o.pacedN, "paced-n", 500, "objects in the paced run (0 skips it)")
	flag.Float64Var(&o.pacedRate, "paced-rate", 50, "creation rate of the paced run, objects/s")
	flag.IntVar(&o.replicas, "replicas", 100, "replicas of the Deployment timed at the end (0 skips it)")
	flag.IntVar(&o.nodes, "nodes", 4, "fake host nodes")
	flag.Float64Var(&o.hostQPS, "host-qps", 0, "syncer host QPS (0: the configuration default)")
	flag.IntVar(&o.hostBurst, "host-burst", 0, "syncer host burst (0: the configuration default)")
	flag.IntVar(&o.syncerWorkers, "syncer-workers", 0, "syncer workers per kind (0: the configuration default)")
	flag.StringVar(&o.exe, "clustersync", "bin/clustersync", "clustersync binary (the syncer runs as its process)")
	flag.StringVar(&o.dir, "dir", "", "state folder (default: a temporary folder, removed afterwards)")
	flag.BoolVar(&o.keep, "keep", false, "keep the state folder")
	flag.BoolVar(&o.breakdown, "cpu-breakdown", false, "print the CPU time of every process of the run for each phase")
	flag.StringVar(&o.profile, "cpuprofile", "", "write a CPU profile of the syncer during the first sync run to this file")
	flag.Parse()
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	exe, err := filepath.Abs(o.exe)
	if err != nil {
		return err
	}
	if _, err := os.Stat(exe); err != nil {
		return fmt.Errorf("%s: %w (run `make build` first)", exe, err)
	}
	if o.dir == "" {
		if o.dir, err = os.MkdirTemp("", "clustersync-bench-"); err != nil {
			return err
		}
		if !o.keep {
			defer os.RemoveAll(o.dir)
		}
	}
	bins := binaries.Default()
	if err := bins.Check(); err != nil {
		return err
	}
	fmt.Printf("clustersync syncer benchmark: N=%d per kind, %d client workers, %d fake nodes\n", o.n, o.workers, o.nodes)

	host, err := hostcluster.Create(ctx, hostcluster.Options{Name: "cs-bench", Dir: filepath.Join(o.dir, "host"), Nodes: o.nodes, Binaries: bins})
	if err != nil {
		return err
	}
	defer host.Delete(context.Background()) //nolint:errcheck
	cp, err := controlplane.Start(ctx, controlplane.Options{Dir: filepath.Join(o.dir, "virtual"), Name: vcName, ServiceCIDR: host.ServiceCIDR, Binaries: bins})
	if err != nil {
		return err
	}
	defer cp.Stop()
	vk, hk := clientset(cp.Config), clientset(host.Config)
	hostNS := "vc-" + vcName
	if _, err := hk.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hostNS}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	kinds := strings.Split(o.kinds, ",")

	// (a) The ceiling, no syncer running.
	ceiling := map[string]float64{}
	for _, kind := range kinds {
		mk, err := maker(kind)
		if err != nil {
			return err
		}
		vns, hns := "ceiling-"+kind, "ceiling-host-"+kind
		for _, c := range []struct {
			k  kubernetes.Interface
			ns string
		}{{vk, vns}, {hk, hns}} {
			if err := createNamespace(ctx, c.k, c.ns); err != nil {
				return err
			}
		}
		before := processCPU(o.dir)
		tv := createAll(ctx, vk, vns, o.n, o.workers, mk, nil)
		th := createAll(ctx, hk, hns, o.n, o.workers, mk, nil)
		if o.breakdown {
			printBreakdown("ceiling "+kind, before, processCPU(o.dir), tv+th)
		}
		ceiling[kind] = float64(o.n) / (tv + th).Seconds()
		fmt.Printf("(a) ceiling %-8s virtual creates %6.0f/s, host creates %6.0f/s, both in sequence %6.0f objects/s\n",
			kind, float64(o.n)/tv.Seconds(), float64(o.n)/th.Seconds(), ceiling[kind])
		if kind == "secrets" {
			// For reference, not part of the ceiling: host creates of objects
			// carrying the labels and annotations every synced copy carries.
			sns := "shaped-host-" + kind
			if err := createNamespace(ctx, hk, sns); err != nil {
				return err
			}
			tr := translate.Translator{VCluster: vcName, HostNamespace: sns}
			ts := createAll(ctx, hk, sns, o.n, o.workers, shapedSecret(tr), nil)
			fmt.Printf("            %-8s (reference: host creates of objects shaped like synced copies %6.0f/s)\n", kind, float64(o.n)/ts.Seconds())
		}
		// The ceiling objects must not be synced later.
		if err := deleteNamespace(ctx, vk, vns); err != nil {
			return err
		}
	}

	// The syncer, as a process of its own, syncing every Secret.
	syncer, health, err := startSyncer(ctx, o, exe, cp, host, hostNS)
	if err != nil {
		return err
	}
	defer syncer.Stop(10 * time.Second)
	fmt.Printf("syncer ready, health on %s\n", health)
	idleCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	<-idleCtx.Done()
	cancel()
	idleRSS := rssKiB(syncer.PID(), "VmRSS")
	fmt.Printf("syncer pid %d idle RSS %.1f MiB\n", syncer.PID(), float64(idleRSS)/1024)

	// (b) The sync.
	tr := translate.Translator{VCluster: vcName, HostNamespace: hostNS}
	for _, kind := range kinds {
		mk, _ := maker(kind)
		ns := "sync-" + kind
		if err := createNamespace(ctx, vk, ns); err != nil {
			return err
		}
		seen := watchHost(ctx, host.Config, hostNS, kind)
		cpu0 := cpuMillis(syncer.PID())
		req0 := requests()
		before := processCPU(o.dir)
		if o.profile != "" && kind == kinds[0] {
			go saveProfile(o.profile, 8)
		}
		created := make([]time.Time, o.n)
		start := time.Now()
		createAll(ctx, vk, ns, o.n, o.workers, mk, created)
		lat, last, err := waitHost(seen, tr, ns, o.n, created, 5*time.Minute)
		if err != nil {
			return err
		}
		total := last.Sub(start)
		if o.breakdown {
			printBreakdown("sync "+kind, before, processCPU(o.dir), total)
		}
		cpu := cpuMillis(syncer.PID()) - cpu0
		rate := float64(o.n) / total.Seconds()
		fmt.Printf("(b) sync    %-8s %6.0f objects/s (ratio to ceiling %.2f), create-to-host p50 %s p90 %s p99 %s, syncer CPU %.2f ms/object\n",
			kind, rate, rate/ceiling[kind], pct(lat, 50), pct(lat, 90), pct(lat, 99), float64(cpu)/float64(o.n))
		fmt.Printf("            %-8s syncer API requests per object: %s\n", kind, perObject(requests(), req0, o.n))
	}

	// Paced run: latency at a moderate, steady rate.
	if o.pacedN > 0 {
		mk, _ := maker("secrets")
		ns := "paced"
		if err := createNamespace(ctx, vk, ns); err != nil {
			return err
		}
		seen := watchHost(ctx, host.Config, hostNS, "secrets")
		created := make([]time.Time, o.pacedN)
		createPaced(ctx, vk, ns, o.pacedN, o.pacedRate, mk, created)
		lat, _, err := waitHost(seen, tr, ns, o.pacedN, created, 5*time.Minute)
		if err != nil {
			return err
		}
		fmt.Printf("paced       secrets  %d at %.0f objects/s: create-to-host p50 %s p90 %s p99 %s\n",
			o.pacedN, o.pacedRate, pct(lat, 50), pct(lat, 90), pct(lat, 99))
	}

	// The Deployment.
	if o.replicas > 0 {
		d, err := timeDeployment(ctx, vk, o.replicas)
		if err != nil {
			return err
		}
		fmt.Printf("deployment  %d replicas all Running in the virtual cluster after %.1f s\n", o.replicas, d.Seconds())
	}
	fmt.Printf("syncer RSS  idle %.1f MiB, peak %.1f MiB (VmHWM, after all of the above)\n",
		float64(idleRSS)/1024, float64(rssKiB(syncer.PID(), "VmHWM"))/1024)
	return nil
}

func clientset(cfg *rest.Config) kubernetes.Interface {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 5000, 10000
	cfg.WarningHandlerWithContext = rest.NoWarnings{}
	return kubernetes.NewForConfigOrDie(cfg)
}

// startSyncer runs `clustersync syncer` with every Secret synced.
func startSyncer(ctx context.Context, o options, exe string, cp *controlplane.ControlPlane, host *hostcluster.Cluster, hostNS string) (*proc.Process, string, error) {
	cfg := "sync:\n  toHost:\n    secrets:\n      all: true\n"
	if o.hostQPS > 0 || o.hostBurst > 0 || o.syncerWorkers > 0 {
		cfg += "syncer:\n"
		if o.syncerWorkers > 0 {
			cfg += fmt.Sprintf("  workers: %d\n", o.syncerWorkers)
		}
		if o.hostQPS > 0 {
			cfg += fmt.Sprintf("  hostQPS: %g\n", o.hostQPS)
		}
		if o.hostBurst > 0 {
			cfg += fmt.Sprintf("  hostBurst: %d\n", o.hostBurst)
		}
	}
	cfgFile := filepath.Join(o.dir, "config.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		return nil, "", err
	}
	owner, err := filepath.Abs(o.dir)
	if err != nil {
		return nil, "", err
	}
	leased, err := ports.Default().Ensure(ctx, owner, 2)
	if err != nil {
		return nil, "", err
	}
	health := fmt.Sprintf("127.0.0.1:%d", leased[0])
	metricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", leased[1])
	stateDir := filepath.Join(o.dir, "syncer")
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, "", err
	}
	p, err := proc.Start("syncer", exe, []string{"syncer", "--name", vcName, "--host-namespace", hostNS,
		"--virtual-kubeconfig", cp.Layout.AdminKubeconfig(), "--host-kubeconfig", host.Kubeconfig,
		"--config", cfgFile, "--state-dir", stateDir, "--health-addr", health, "--metrics-addr", strings.TrimSuffix(strings.TrimPrefix(metricsURL, "http://"), "/metrics")}, filepath.Join(o.dir, "syncer.log"), nil)
	if err != nil {
		return nil, "", err
	}
	err = p.WaitReady(ctx, time.Minute, func(ctx context.Context) error {
		return proc.HTTPOK(ctx, nil, "http://"+health+"/readyz")
	})
	return p, health, err
}

// maker returns a constructor for object i of kind.
func maker(kind string) (func(ctx context.Context, k kubernetes.Interface, ns string, i int) error, error) {
	switch kind {
	case "secrets":
		return func(ctx context.Context, k kubernetes.Interface, ns string, i int) error {
			_, err := k.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: objName(i)},
				Data: map[string][]byte{"value": []byte(strconv.Itoa(i))}}, metav1.CreateOptions{})
			return err
		}, nil
	case "services":
		return func(ctx context.Context, k kubernetes.Interface, ns string, i int) error {
			_, err := k.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: objName(i)},
				Spec: corev1.ServiceSpec{Selector: map[string]string{"app": objName(i)},
					Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}, metav1.CreateOptions{})
			return err
		}, nil
	}
	return nil, fmt.Errorf("unknown kind %q (want secrets or services)", kind)
}

func objName(i int) string { return fmt.Sprintf("obj-%05d", i) }

// shapedSecret makes Secret i as the syncer's host copy of it looks: the
// translated name and vCluster's bookkeeping labels and annotations.
func shapedSecret(tr translate.Translator) func(context.Context, kubernetes.Interface, string, int) error {
	return func(ctx context.Context, k kubernetes.Interface, ns string, i int) error {
		name := tr.HostName(objName(i), "sync-secrets")
		ann := tr.BookkeepingAnnotations(translate.VirtualRef{Kind: "/v1, Kind=Secret", Name: objName(i), Namespace: "sync-secrets",
			UID: "0a1b2c3d-0000-4000-8000-000000000000"}, name)
		_, err := k.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: tr.HostLabels(nil, "sync-secrets"), Annotations: ann},
			Data: map[string][]byte{"value": []byte(strconv.Itoa(i))}}, metav1.CreateOptions{})
		return err
	}
}

// createAll creates n objects with workers goroutines and returns the
// elapsed time; created[i], when given, records when object i's create returned.
func createAll(ctx context.Context, k kubernetes.Interface, ns string, n, workers int,
	mk func(context.Context, kubernetes.Interface, string, int) error, created []time.Time) time.Duration {
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				for mk(ctx, k, ns, i) != nil { // retried: a benchmark object must exist
					time.Sleep(50 * time.Millisecond)
				}
				if created != nil {
					created[i] = time.Now()
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// createPaced creates n objects at rate objects/s from one goroutine per tick.
func createPaced(ctx context.Context, k kubernetes.Interface, ns string, n int, rate float64,
	mk func(context.Context, kubernetes.Interface, string, int) error, created []time.Time) {
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	for i := range n {
		<-tick.C
		wg.Add(1)
		go func() {
			defer wg.Done()
			for mk(ctx, k, ns, i) != nil {
				time.Sleep(50 * time.Millisecond)
			}
			created[i] = time.Now()
		}()
	}
	wg.Wait()
}

// watchHost records when each object of kind first appears in the host
// namespace. It watches metadata only, in protobuf — the encoding the host
// controller-manager's garbage collector already watches in — so that the
// observer costs the measured system as little as possible.
func watchHost(ctx context.Context, hostCfg *rest.Config, ns, kind string) *sync.Map {
	seen := &sync.Map{}
	cfg := metadata.ConfigFor(hostCfg)
	mc := metadata.NewForConfigOrDie(cfg)
	gvr := corev1.SchemeGroupVersion.WithResource(kind)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return mc.Resource(gvr).Namespace(ns).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return mc.Resource(gvr).Namespace(ns).Watch(ctx, o)
		},
	}
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw, ObjectType: &metav1.PartialObjectMetadata{},
		Handler: cache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
			seen.LoadOrStore(o.(metav1.Object).GetName(), time.Now())
		}},
	})
	go ctrl.RunWithContext(ctx)
	return seen
}

// waitHost waits until the host copies of objects 0..n-1 of virtual
// namespace ns have been seen; it returns each one's create-to-host latency
// and when the last appeared.
func waitHost(seen *sync.Map, tr translate.Translator, ns string, n int, created []time.Time, timeout time.Duration) ([]time.Duration, time.Time, error) {
	deadline := time.Now().Add(timeout)
	lat := make([]time.Duration, 0, n)
	var last time.Time
	for i := 0; i < n; {
		v, ok := seen.Load(tr.HostName(objName(i), ns))
		if !ok || created[i].IsZero() {
			if time.Now().After(deadline) {
				return nil, last, fmt.Errorf("%s/%s not on the host after %s (%d of %d there)", ns, objName(i), timeout, i, n)
			}
			time.Sleep(20 * time.Millisecond)
			continue
		}
		t := v.(time.Time)
		lat = append(lat, max(t.Sub(created[i]), 0))
		if t.After(last) {
			last = t
		}
		i++
	}
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	return lat, last, nil
}

func pct(sorted []time.Duration, p int) string {
	if len(sorted) == 0 {
		return "-"
	}
	i := (len(sorted)*p + 99) / 100
	i = min(max(i-1, 0), len(sorted)-1)
	return sorted[i].Round(time.Millisecond).String()
}

func timeDeployment(ctx context.Context, vk kubernetes.Interface, replicas int) (time.Duration, error) {
	ns := "deploy"
	if err := createNamespace(ctx, vk, ns); err != nil {
		return 0, err
	}
	labels := map[string]string{"app": "load"}
	start := time.Now()
	_, err := vk.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "load"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(replicas)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx:1.27"}}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return 0, err
	}
	deadline := start.Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		pods, err := vk.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=load"})
		if err != nil {
			return 0, err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		if running == replicas {
			return time.Since(start), nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return 0, fmt.Errorf("deployment not Running after 5m")
}

func createNamespace(ctx context.Context, k kubernetes.Interface, ns string) error {
	_, err := k.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	// Objects can be created once the namespace's default service account
	// exists (pods need it); wait for it.
	for range 300 {
		if _, err := k.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("namespace %s: no default service account after 30s", ns)
}

func deleteNamespace(ctx context.Context, k kubernetes.Interface, ns string) error {
	if err := k.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		return err
	}
	for range 1200 {
		if _, err := k.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("namespace %s not gone after 2m", ns)
}

// cpuMillis is the user+system CPU time of process pid in milliseconds,
// from /proc/PID/stat (clock ticks of 10 ms, the Linux USER_HZ of 100).
func cpuMillis(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return (utime + stime) * 10
}

// rssKiB reads a memory field (VmRSS, VmHWM) of /proc/PID/status in KiB.
func rssKiB(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, field+":") {
			v, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return v
		}
	}
	return 0
}

// requests reads the syncer's REST client request counters by host, method
// and code from its Prometheus endpoint.
func requests() map[string]float64 {
	out := map[string]float64{}
	resp, err := http.Get(metricsURL) //nolint:gosec,noctx // loopback, our own child process
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(data), "\n") {
		var name string
		switch {
		case strings.HasPrefix(line, "rest_client_requests_total{"):
			name = "rest_client_requests_total"
		case strings.HasPrefix(line, "controller_runtime_reconcile_total{"):
			name = "controller_runtime_reconcile_total"
		default:
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, _ := strconv.ParseFloat(line[i+1:], 64)
		out[strings.TrimPrefix(line[:i], name)] = v
	}
	return out
}

// perObject renders the request counters that grew between before and after, per object.
func perObject(after, before map[string]float64, n int) string {
	var parts []string
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			parts = append(parts, fmt.Sprintf("%s %.2f", k, d/float64(n)))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// saveProfile writes a CPU profile of the syncer over seconds to file.
func saveProfile(file string, seconds int) {
	resp, err := http.Get(fmt.Sprintf("%s?seconds=%d", strings.Replace(metricsURL, "/metrics", "/debug/pprof/profile", 1), seconds)) //nolint:gosec,noctx
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
		return
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if err := os.WriteFile(file, data, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
	}
}

// processCPU maps each process of this run (its command line mentions the
// state folder dir, or it is this process) to its CPU time in ms.
func processCPU(dir string) map[string]int64 {
	out := map[string]int64{"bench (client, virtual etcd, observer)": cpuMillis(os.Getpid())}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !strings.Contains(string(cmd), dir) {
			continue
		}
		args := strings.Split(string(cmd), "\x00")
		name := filepath.Base(args[0])
		switch {
		case strings.Contains(string(cmd), filepath.Join(dir, "virtual")):
			name = "virtual " + name
		case strings.Contains(string(cmd), filepath.Join(dir, "host")):
			name = "host " + name
		}
		if len(args) > 1 && args[1] == "syncer" {
			name = "syncer"
		}
		out[name] += cpuMillis(pid)
	}
	return out
}

func printBreakdown(phase string, before, after map[string]int64, wall time.Duration) {
	var names []string
	var total int64
	for k := range after {
		names = append(names, k)
		total += after[k] - before[k]
	}
	sort.Strings(names)
	fmt.Printf("  cpu %-16s wall %.2fs, all processes %.2f CPU-s (%.0f%% of 2 cores):", phase, wall.Seconds(), float64(total)/1000, float64(total)/10/wall.Seconds()/2)
	for _, k := range names {
		if d := after[k] - before[k]; d > 0 {
			fmt.Printf(" %s %.2fs;", k, float64(d)/1000)
		}
	}
	fmt.Println()
}
