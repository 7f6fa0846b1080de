package hostcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clustersync/clustersync/internal/proc"
)

// components are the processes kwokctl runs for a cluster created by this
// package, in kwokctl's names (logs/NAME.log, pids/NAME.pid).
func components() []string {
	return []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok-controller"}
}

// scaledNodeSelector selects the nodes `kwokctl scale node` made.
const scaledNodeSelector = "kwok.x-k8s.io/kwokctl-scale=node"

// pid returns the process ID in pids/NAME.pid, or 0.
func (c *Cluster) pid(component string) int {
	data, err := os.ReadFile(filepath.Join(c.KwokDir(), "pids", component+".pid"))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0
	}
	return pid
}

// pids returns the process IDs of the components that are alive.
func (c *Cluster) pids() []int {
	var pids []int
	for _, name := range components() {
		if pid := c.pid(name); pid > 0 && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// alive is proc.Running: a component that exited is a zombie until
// someone reaps it, which kwokctl never does while it runs.
func alive(pid int) bool { return proc.Running(pid) }

// deadComponents returns the components that have a pid file but no process.
func (c *Cluster) deadComponents() []string {
	var dead []string
	for _, name := range components() {
		if pid := c.pid(name); pid > 0 && !alive(pid) {
			dead = append(dead, name)
		}
	}
	return dead
}

// allRunning reports whether every component has a live process.
func (c *Cluster) allRunning() bool {
	for _, name := range components() {
		if !alive(c.pid(name)) {
			return false
		}
	}
	return true
}

// removeStalePids removes the pid files of components that are not running
// (left by a crash or a reboot), which kwokctl start would replace anyway,
// so that runUp does not take them for components that just exited.
func (c *Cluster) removeStalePids() {
	for _, name := range c.deadComponents() {
		_ = os.Remove(filepath.Join(c.KwokDir(), "pids", name+".pid"))
	}
}

// waitExited waits until none of pids is alive; kwokctl stop and delete
// send SIGKILL but do not wait.
func (c *Cluster) waitExited(ctx context.Context, pids []int) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(pollInterval / 4)
	defer tick.Stop()
	for {
		var left []string
		for _, pid := range pids {
			if alive(pid) {
				left = append(left, strconv.Itoa(pid))
			}
		}
		if len(left) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("hostcluster: processes %s of host cluster %q still running: %w", strings.Join(left, ", "), c.Name, ctx.Err())
		case <-tick.C:
		}
	}
}

// client returns a clientset for readiness checks, whose requests time out.
func (c *Cluster) client() (kubernetes.Interface, error) {
	if c.Config == nil {
		if err := c.loadConfig(); err != nil {
			return nil, err
		}
	}
	cfg := rest.CopyConfig(c.Config)
	cfg.Timeout = 5 * time.Second
	cfg.QPS, cfg.Burst = 50, 100
	return kubernetes.NewForConfig(cfg)
}

// apiReady returns nil when the API server answers /readyz with ok.
func (c *Cluster) apiReady(ctx context.Context) error {
	cs, err := c.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return err
	}
	if string(body) != "ok" {
		return fmt.Errorf("/readyz: %s", body)
	}
	return nil
}

// poll calls check every pollInterval until it reports done, a component
// exits or ctx ends; the error then shows the logs of the exited components
// or else of focus. check returns whether it is done and, if not, why.
func (c *Cluster) poll(ctx context.Context, what, focus string, check func(context.Context) (bool, string)) error {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if dead := c.deadComponents(); len(dead) > 0 {
			return c.failure("waiting for "+what, fmt.Errorf("%s exited", strings.Join(dead, ", ")), nil, "")
		}
		done, why := check(ctx)
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return c.failure("waiting for "+what, fmt.Errorf("%w; last: %s", withContext(ctx, ctx.Err()), why), nil, focus)
		case <-tick.C:
		}
	}
}

// waitAPI waits for /readyz.
func (c *Cluster) waitAPI(ctx context.Context) error {
	return c.poll(ctx, "the API server", "kube-apiserver", func(ctx context.Context) (bool, string) {
		if err := c.apiReady(ctx); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

// waitNodes waits until exactly n nodes made by kwokctl exist and are Ready.
func (c *Cluster) waitNodes(ctx context.Context, n int) error {
	cs, err := c.client()
	if err != nil {
		return err
	}
	return c.poll(ctx, fmt.Sprintf("%d Ready nodes", n), "kwok-controller", func(ctx context.Context) (bool, string) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: scaledNodeSelector})
		if err != nil {
			return false, err.Error()
		}
		ready := readyNodes(nodes.Items)
		return len(nodes.Items) == n && ready == n, fmt.Sprintf("%d nodes, %d Ready", len(nodes.Items), ready)
	})
}

func readyNodes(nodes []corev1.Node) int {
	ready := 0
	for _, n := range nodes {
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return ready
}

// waitDefaultServiceAccount waits for ServiceAccount default/default, which
// kube-controller-manager creates and without which no pod can be created in
// namespace default.
func (c *Cluster) waitDefaultServiceAccount(ctx context.Context) error {
	cs, err := c.client()
	if err != nil {
		return err
	}
	return c.poll(ctx, "ServiceAccount default/default", "kube-controller-manager", func(ctx context.Context) (bool, string) {
		if _, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}

// Status is a snapshot of a host cluster's health.
type Status struct {
	// Components tells for each component (etcd, kube-apiserver,
	// kube-controller-manager, kube-scheduler, kwok-controller) whether its
	// process runs.
	Components map[string]bool
	// APIReady is true when the API server answered /readyz with ok.
	APIReady bool
	// APIError is why APIReady is false, when the API server was asked.
	APIError error
	// Nodes and ReadyNodes count all nodes and the Ready ones (when
	// APIReady).
	Nodes, ReadyNodes int
}

// Running reports whether every component runs and the API server is ready.
func (s Status) Running() bool {
	for _, up := range s.Components {
		if !up {
			return false
		}
	}
	return len(s.Components) > 0 && s.APIReady
}

// Status checks the component processes and asks the API server for
// /readyz and the nodes, for a few seconds at most.
func (c *Cluster) Status(ctx context.Context) Status {
	s := Status{Components: map[string]bool{}}
	for _, name := range components() {
		s.Components[name] = alive(c.pid(name))
	}
	if !s.Components["kube-apiserver"] {
		return s
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if s.APIError = c.apiReady(ctx); s.APIError != nil {
		return s
	}
	s.APIReady = true
	cs, err := c.client()
	if err != nil {
		s.APIError = err
		return s
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		s.APIError = err
		return s
	}
	s.Nodes, s.ReadyNodes = len(nodes.Items), readyNodes(nodes.Items)
	return s
}
