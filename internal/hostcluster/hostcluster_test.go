package hostcluster_test

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/proc"
)

// testLog is an io.Writer that passes progress lines to t.Log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Helper()
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// requireBinaries is binaries.Require.
func requireBinaries(t *testing.T) binaries.Set { return binaries.Require(t) }

// deleteOnCleanup deletes whatever cluster is left in dir when the test ends.
func deleteOnCleanup(t *testing.T, dir string) {
	t.Cleanup(func() {
		c, err := hostcluster.Open(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		if err := c.Delete(context.Background()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
}

// poll calls f every 200 ms until it returns nil or timeout passes.
func poll(t *testing.T, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// componentPids reads the pid files kwokctl keeps for the cluster.
func componentPids(t *testing.T, c *hostcluster.Cluster) map[string]int {
	t.Helper()
	dir := filepath.Join(c.KwokDir(), "pids")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	pids := map[string]int{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		pids[strings.TrimSuffix(e.Name(), ".pid")] = pid
	}
	if len(pids) != 5 {
		t.Fatalf("pid files in %s: %v, want 5", dir, pids)
	}
	return pids
}

// running reports whether pid is a live (not zombie) process (Linux).
func running(pid int) bool { return proc.Running(pid) }

func dirExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func assertExited(t *testing.T, pids map[string]int) {
	t.Helper()
	poll(t, 10*time.Second, "component processes to exit", func() error {
		for name, pid := range pids {
			if running(pid) {
				return errors.New(name + " (pid " + strconv.Itoa(pid) + ") still runs")
			}
		}
		return nil
	})
}

func TestCreateEndToEnd(t *testing.T) {
	b := requireBinaries(t)
	dir := filepath.Join(t.TempDir(), "host")
	deleteOnCleanup(t, dir)
	ctx := t.Context()

	start := time.Now()
	c, err := hostcluster.Create(ctx, hostcluster.Options{Dir: dir, Nodes: 2, Binaries: b, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("created in %s", time.Since(start).Round(time.Millisecond))
	if c.Name != hostcluster.DefaultName || c.ServiceCIDR != hostcluster.DefaultServiceCIDR || c.Nodes != 2 {
		t.Errorf("cluster = %q %s %d nodes, want defaults and 2 nodes", c.Name, c.ServiceCIDR, c.Nodes)
	}
	if c.Kubeconfig != filepath.Join(dir, "kubeconfig.yaml") || !dirExists(c.Kubeconfig) {
		t.Errorf("kubeconfig %s missing", c.Kubeconfig)
	}
	if !strings.HasPrefix(c.Server(), "https://127.0.0.1:") {
		t.Errorf("server %q, want https://127.0.0.1:…", c.Server())
	}
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}

	// Two Ready nodes.
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := 0
	for _, n := range nodes.Items {
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	if len(nodes.Items) != 2 || ready != 2 {
		t.Fatalf("%d nodes, %d Ready; want 2 Ready", len(nodes.Items), ready)
	}
	if s := c.Status(ctx); !s.Running() || s.Nodes != 2 || s.ReadyNodes != 2 {
		t.Errorf("status = %+v, want running with 2 Ready nodes", s)
	}

	// A Deployment's pods get a node, an IP and Running from kwok.
	labels := map[string]string{"app": "web"}
	replicas := int32(2)
	_, err = cs.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	podStart := time.Now()
	poll(t, 60*time.Second, "2 Running pods", func() error {
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return err
		}
		var notReady []string
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" || p.Spec.NodeName == "" {
				notReady = append(notReady, p.Name+" "+string(p.Status.Phase)+" ip="+p.Status.PodIP+" node="+p.Spec.NodeName)
			}
		}
		if len(pods.Items) != 2 || len(notReady) > 0 {
			return errors.New(strconv.Itoa(len(pods.Items)) + " pods; not running: " + strings.Join(notReady, ", "))
		}
		return nil
	})
	t.Logf("pods Running after %s", time.Since(podStart).Round(time.Millisecond))

	// Services get cluster IPs from the configured range.
	svc, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{
			Selector: labels,
			Ports:    []corev1.ServicePort{{Port: 80}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, cidr, _ := net.ParseCIDR("10.96.0.0/16")
	if ip := net.ParseIP(svc.Spec.ClusterIP); ip == nil || !cidr.Contains(ip) {
		t.Errorf("service clusterIP %q not in %s", svc.Spec.ClusterIP, cidr)
	}

	// Create is idempotent.
	again, err := hostcluster.Create(ctx, hostcluster.Options{Dir: dir, Binaries: b, Log: testLog{t}})
	if err != nil {
		t.Fatalf("second Create: %v", err)
	}
	if again.Server() != c.Server() || again.Nodes != 2 {
		t.Errorf("second Create: server %s, %d nodes; want %s, 2", again.Server(), again.Nodes, c.Server())
	}
	if _, err := hostcluster.Create(ctx, hostcluster.Options{Dir: dir, Name: "other", Binaries: b}); err == nil || !strings.Contains(err.Error(), "clustersync-host") {
		t.Errorf("Create with another name: %v, want an error naming the existing cluster", err)
	}

	// ScaleNodes changes the node count and records it.
	if err := c.ScaleNodes(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if s := c.Status(ctx); s.Nodes != 3 || s.ReadyNodes != 3 {
		t.Errorf("after ScaleNodes(3): %d nodes, %d Ready", s.Nodes, s.ReadyNodes)
	}
	if err := c.ScaleNodes(ctx, 2); err != nil {
		t.Fatal(err)
	}

	// Stop, then Create starts it again with its objects.
	pids := componentPids(t, c)
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	assertExited(t, pids)
	if s := c.Status(ctx); s.Running() {
		t.Errorf("status after Stop = %+v, want not running", s)
	}
	restart := time.Now()
	again, err = hostcluster.Create(ctx, hostcluster.Options{Dir: dir, Binaries: b, Log: testLog{t}})
	if err != nil {
		t.Fatalf("Create of a stopped cluster: %v", err)
	}
	t.Logf("restarted in %s", time.Since(restart).Round(time.Millisecond))
	if again.Server() != c.Server() {
		t.Errorf("server after restart %s, want %s", again.Server(), c.Server())
	}
	if _, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{}); err != nil {
		t.Errorf("deployment after restart: %v", err)
	}

	// Open and Delete: the folder and the processes are gone.
	opened, err := hostcluster.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if opened.Name != c.Name || opened.Server() != c.Server() || opened.Nodes != 2 {
		t.Errorf("Open = %q %s %d nodes", opened.Name, opened.Server(), opened.Nodes)
	}
	pids = componentPids(t, opened)
	if err := opened.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s after Delete: %v, want it gone", dir, err)
	}
	assertExited(t, pids)
	if _, err := hostcluster.Open(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open after Delete: %v, want fs.ErrNotExist", err)
	}
}

// TestCreateConcurrent creates two clusters at once: kwokctl would give
// both the same ports without the lock Create takes.
func TestCreateConcurrent(t *testing.T) {
	b := requireBinaries(t)
	dirs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	clusters := make([]*hostcluster.Cluster, len(dirs))
	errs := make([]error, len(dirs))
	var wg sync.WaitGroup
	for i, dir := range dirs {
		deleteOnCleanup(t, dir)
		wg.Go(func() {
			clusters[i], errs[i] = hostcluster.Create(t.Context(), hostcluster.Options{
				Dir: dir, Name: "c" + strconv.Itoa(i), Nodes: 1, Binaries: b, Log: testLog{t},
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("cluster %d: %v", i, err)
		}
	}
	if clusters[0].Server() == clusters[1].Server() {
		t.Errorf("both clusters serve at %s", clusters[0].Server())
	}
	for _, c := range clusters {
		if s := c.Status(t.Context()); !s.Running() || s.ReadyNodes != 1 {
			t.Errorf("%s: %+v", c.Name, s)
		}
	}
}

// TestCreateComponentFails checks that a component that cannot start fails
// Create quickly, naming it and showing its log, and leaves nothing running.
func TestCreateComponentFails(t *testing.T) {
	b := requireBinaries(t)
	dir := filepath.Join(t.TempDir(), "host")
	deleteOnCleanup(t, dir)
	start := time.Now()
	_, err := hostcluster.Create(t.Context(), hostcluster.Options{
		Dir:       dir,
		Name:      "broken",
		Binaries:  b,
		ExtraArgs: []string{"kube-apiserver=no-such-flag=1"},
		Log:       testLog{t},
	})
	took := time.Since(start)
	if err == nil {
		t.Fatal("Create succeeded with a bad kube-apiserver flag")
	}
	t.Logf("error after %s:\n%v", took.Round(time.Millisecond), err)
	for _, want := range []string{"kwokctl create cluster --name broken", "kube-apiserver exited", "unknown flag: --no-such-flag"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q", want)
		}
	}
	if took > 30*time.Second {
		t.Errorf("Create took %s to fail", took)
	}
	if _, err := hostcluster.Open(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open after a failed Create: %v, want fs.ErrNotExist", err)
	}
	if dirExists(filepath.Join(dir, "kwok", "clusters", "broken")) {
		t.Errorf("failed cluster left in %s", dir)
	}
}

func TestCreateMissingBinary(t *testing.T) {
	b := binaries.Default()
	b.KubeAPIServer = filepath.Join(t.TempDir(), "no", "kube-apiserver")
	dir := filepath.Join(t.TempDir(), "host")
	_, err := hostcluster.Create(t.Context(), hostcluster.Options{Dir: dir, Binaries: b})
	if err == nil || !strings.Contains(err.Error(), b.KubeAPIServer) {
		t.Fatalf("error = %v, want one naming %s", err, b.KubeAPIServer)
	}
	if dirExists(dir) {
		t.Errorf("Create made %s although it failed at once", dir)
	}
}

// fakeKwokctl fails `create cluster` the way kwokctl reports a component
// that did not start: a JSON error line on stderr, a pid file whose process is
// gone and the component's log.
const fakeKwokctl = `#!/bin/sh
d="$KWOK_WORKDIR/clusters/fake"
case "$1" in
create)
	mkdir -p "$d/pids" "$d/logs"
	: > "$d/kwok.yaml"
	echo 'Error: unknown flag: --bogus' > "$d/logs/kube-apiserver.log"
	echo 999999999 > "$d/pids/kube-apiserver.pid"
	echo '{"time":"2026-01-01T00:00:00Z","level":"INFO","msg":"Cluster is creating","cluster":"fake"}' >&2
	echo '{"time":"2026-01-01T00:00:01Z","level":"ERROR","source":{"file":"x.go"},"msg":"Failed to start cluster","cluster":"fake","err":"boom","elapsed":{"nanosecond":1,"human":"1ns"}}' >&2
	exit 1 ;;
delete)
	rm -rf "$d"
	exit 0 ;;
esac
exit 2
`

func TestCreateKwokctlFailure(t *testing.T) {
	tmp := t.TempDir()
	fake := filepath.Join(tmp, "kwokctl")
	if err := os.WriteFile(fake, []byte(fakeKwokctl), 0o755); err != nil {
		t.Fatal(err)
	}
	b := binaries.Set{Etcd: fake, KubeAPIServer: fake, KubeControllerManager: fake, KubeScheduler: fake, Kwok: fake, Kwokctl: fake}
	dir := filepath.Join(tmp, "host")
	_, err := hostcluster.Create(t.Context(), hostcluster.Options{Dir: dir, Name: "fake", Binaries: b, Nodes: hostcluster.NoNodes})
	if err == nil {
		t.Fatal("Create succeeded with a failing kwokctl")
	}
	t.Logf("error:\n%v", err)
	for _, want := range []string{
		"kwokctl create cluster --name fake failed",
		"ERROR Failed to start cluster elapsed=1ns err=boom",
		"component kube-apiserver exited",
		"Error: unknown flag: --bogus",
		filepath.Join(dir, "kwokctl.log"),
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q", want)
		}
	}
	if dirExists(filepath.Join(dir, "host.json")) || dirExists(filepath.Join(dir, "kwok", "clusters", "fake")) {
		t.Error("failed Create left its cluster behind")
	}
	log, err := os.ReadFile(filepath.Join(dir, "kwokctl.log"))
	if err != nil || !strings.Contains(string(log), "create cluster --name fake") || !strings.Contains(string(log), "delete cluster --name fake") {
		t.Errorf("kwokctl.log = %q, %v; want the create and delete commands", log, err)
	}
}

func TestCreateInvalidOptions(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := binaries.Set{Etcd: fake, KubeAPIServer: fake, KubeControllerManager: fake, KubeScheduler: fake, Kwok: fake, Kwokctl: fake}
	for _, o := range []hostcluster.Options{
		{},
		{Dir: t.TempDir(), Binaries: b, Nodes: -2},
		{Dir: t.TempDir(), Binaries: b, ServiceCIDR: "10.96.0.0"},
	} {
		if _, err := hostcluster.Create(t.Context(), o); err == nil {
			t.Errorf("Create(%+v) succeeded", o)
		}
	}
}
