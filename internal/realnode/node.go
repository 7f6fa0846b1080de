package realnode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clustersync/clustersync/internal/binaries"
	"github.com/clustersync/clustersync/internal/pki"
	"github.com/clustersync/clustersync/internal/proc"
)

// Join is the cluster a real node registers with.
type Join struct {
	// Server is the API server URL, e.g. https://127.0.0.1:20002.
	Server string
	// CACertFile and CAKeyFile are the cluster CA (PEM files). The node's
	// client certificates are signed with it (the kubelet as
	// system:node:NodeName in group system:nodes, kube-proxy as
	// system:kube-proxy), and the kubelet trusts it for the API server's
	// client certificate (Options.ClientCAFile defaults to it).
	CACertFile, CAKeyFile string
	// Admin is a client configuration that may read Nodes; Start waits
	// with it until the node is Ready.
	Admin *rest.Config
}

// Component names, as in errors, logs/NAME.log and node.json.
const (
	Containerd = "containerd"
	Kubelet    = "kubelet"
	KubeProxy  = "kube-proxy"
	// LocalPath (storage.go) and MetricsServer (metrics.go) are the
	// others.
)

// metricsServerBuilt tells whether bins has a metrics-server to run: the
// node runs without one (`make run-binaries` does not build it).
func metricsServerBuilt(bins binaries.NodeSet) bool {
	st, err := os.Stat(bins.MetricsServer)
	return err == nil && st.Mode()&0o111 != 0
}

// components are the node's components in start order.
func components() []string {
	return []string{Containerd, Kubelet, KubeProxy, LocalPath, MetricsServer}
}

// startTimeout bounds each component's readiness wait, and the wait for
// the Node to become Ready.
const startTimeout = 90 * time.Second

// state is Dir/node.json: what Stop needs to find and undo everything.
type state struct {
	Options Options `json:"options"`
	// Bins are the programs the node ran (kube-proxy's --cleanup and a
	// containerd restarted for the teardown use them).
	Bins binaries.NodeSet `json:"binaries"`
	// PIDs of the running components by name.
	PIDs map[string]int `json:"pids"`
}

func statePath(dir string) string { return filepath.Join(dir, "node.json") }

func readState(dir string) (state, error) {
	var st state
	data, err := os.ReadFile(statePath(dir))
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("realnode: %s: %w", statePath(dir), err)
	}
	return st, nil
}

func (st state) save() error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := statePath(st.Options.Dir) + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("realnode: %w", err)
	}
	return os.Rename(tmp, statePath(st.Options.Dir))
}

// LogFile is the log of a component (Containerd, Kubelet, KubeProxy) of the
// node in dir.
func LogFile(dir, component string) string { return filepath.Join(dir, "logs", component+".log") }

// Start brings up the real node described by o on this machine and returns
// once its Node object is Ready: it checks the machine (Preflight), claims
// it (one real node per machine: ClaimFile), creates the bridge with the
// node IP, writes every configuration below o.Dir, and starts containerd,
// the kubelet and kube-proxy as detached processes (they outlive the
// caller; Stop ends them), then the storage provisioner with its default
// StorageClass (storage.go) and metrics-server with its APIService
// (metrics.go). Leftovers of an earlier node in o.Dir are torn
// down first. On failure everything Start made is torn down again and the
// error names the step, with the end of the failed component's log.
// Progress lines go to log.
func Start(ctx context.Context, o Options, bins binaries.NodeSet, j Join, log io.Writer) (err error) {
	begin := time.Now()
	if o.ClientCAFile == "" {
		o.ClientCAFile = j.CACertFile
	}
	if err := o.Validate(); err != nil {
		return err
	}
	if err := Preflight(bins); err != nil {
		return err
	}
	if _, err := os.Stat(statePath(o.Dir)); err == nil {
		fmt.Fprintf(log, "Tearing down the leftovers of an earlier real node in %s…\n", o.Dir)
		if err := Stop(ctx, o.Dir, log); err != nil {
			return err
		}
	}
	if err := claim(o.Dir); err != nil {
		return err
	}
	st := state{Options: o, Bins: bins, PIDs: map[string]int{}}
	defer func() {
		if err == nil {
			return
		}
		fmt.Fprintf(log, "The real node failed to start; tearing it down\n")
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if serr := Stop(sctx, o.Dir, log); serr != nil {
			err = fmt.Errorf("%w (and its teardown: %v)", err, serr)
		}
	}()
	for _, d := range []string{filepath.Join(o.Dir, "logs"), o.CNIConfDir(), filepath.Dir(o.KubeletConfigFile()), filepath.Dir(o.KubeProxyConfigFile())} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("realnode: %w", err)
		}
	}
	if err := st.save(); err != nil {
		return err
	}
	fmt.Fprintf(log, "Starting real node %q (bridge %s, node IP %s, pods %s)…\n", o.NodeName, o.Bridge, o.NodeIP(), o.PodCIDR)
	if err := createBridge(o); err != nil {
		return err
	}
	if o.ServiceCIDR.IsValid() {
		if err := addServiceReject(o.ServiceCIDR); err != nil {
			return err
		}
	}
	if err := writeFiles(o, j); err != nil {
		return err
	}
	type step struct {
		name  string
		exe   string
		args  []string
		env   []string
		ready func() bool
	}
	steps := []step{
		{Containerd, bins.Containerd, containerdArgs(o), containerdEnv(bins), func() bool { return dialable(o.ContainerdSocket()) }},
		{Kubelet, bins.Kubelet, []string{"--config", o.KubeletConfigFile(), "--kubeconfig", kubeletKubeconfig(o),
			"--hostname-override", o.NodeName, "--node-ip", o.NodeIP().String(),
			"--root-dir", o.path("kubelet", "root"), "--cert-dir", o.path("kubelet", "pki"), "--v=1"},
			nil, func() bool { return healthy(fmt.Sprintf("http://127.0.0.1:%d/healthz", o.KubeletHealthzPort)) }},
		{KubeProxy, bins.KubeProxy, []string{"--config", o.KubeProxyConfigFile(), "--v=1"},
			nil, func() bool { return healthy(fmt.Sprintf("http://127.0.0.1:%d/livez", o.ProxyHealthzPort)) }},
		{LocalPath, bins.LocalPathProvisioner, localPathArgs(o), nil, func() bool { return localPathStarted(o) }},
		{MetricsServer, bins.MetricsServer, metricsServerArgs(o, j.CACertFile), nil, func() bool { return metricsServerReady(o, j.CACertFile) }},
	}
	if err := ensureStorageObjects(ctx, j.Admin); err != nil {
		return err
	}
	caPEM, err := os.ReadFile(j.CACertFile)
	if err != nil {
		return fmt.Errorf("realnode: %w", err)
	}
	if metricsServerBuilt(bins) {
		if err := ensureMetricsObjects(ctx, j.Admin, o, caPEM); err != nil {
			return err
		}
	} else {
		// An APIService without a server behind it would break the API
		// discovery of every client; there is none, and kubectl top says so.
		steps = slices.DeleteFunc(steps, func(s step) bool { return s.name == MetricsServer })
		fmt.Fprintf(log, "  %s not built (%s; `make binaries` builds it): kubectl top does not work on this host\n", MetricsServer, bins.MetricsServer)
	}
	for _, s := range steps {
		t := time.Now()
		pid, err := proc.Detached{Name: s.name, Exe: s.exe, Args: s.args, Env: s.env, LogFile: LogFile(o.Dir, s.name),
			Ready: s.ready, Timeout: startTimeout}.Start(ctx)
		if err != nil {
			return fmt.Errorf("realnode: %w", err)
		}
		st.PIDs[s.name] = pid
		if err := st.save(); err != nil {
			return err
		}
		fmt.Fprintf(log, "  %s running (pid %d, %.1f s)\n", s.name, pid, time.Since(t).Seconds())
	}
	if err := waitNodeReady(ctx, j.Admin, o.NodeName); err != nil {
		return fmt.Errorf("realnode: node %s: %w; see %s", o.NodeName, err, LogFile(o.Dir, Kubelet))
	}
	fmt.Fprintf(log, "Real node %q Ready (%.1f s); default StorageClass %s, volumes in %s\n",
		o.NodeName, time.Since(begin).Seconds(), StorageClassName, o.VolumesDir())
	return nil
}

// containerdArgs and containerdEnv start the node's containerd (Start, and
// Stop's teardown of a crashed node): its configuration, and its shim on
// PATH, where containerd looks for it.
func containerdArgs(o Options) []string { return []string{"--config", o.ContainerdConfigFile()} }
func containerdEnv(bins binaries.NodeSet) []string {
	return []string{"PATH=" + filepath.Dir(bins.Shim) + ":" + os.Getenv("PATH")}
}

// kubeletKubeconfig and proxyKubeconfig are the components' kubeconfigs.
func kubeletKubeconfig(o Options) string { return o.path("kubelet", "kubeconfig.yaml") }
func proxyKubeconfig(o Options) string   { return o.path("kube-proxy", "kubeconfig.yaml") }

// writeFiles writes the node's configuration files and its client
// certificates' kubeconfigs.
func writeFiles(o Options, j Join) error {
	ca, err := pki.LoadCA(j.CACertFile, j.CAKeyFile)
	if err != nil {
		return fmt.Errorf("realnode: cluster CA: %w", err)
	}
	files := map[string][]byte{}
	for _, k := range []struct {
		path string
		req  pki.Request
	}{
		{kubeletKubeconfig(o), pki.Request{CommonName: "system:node:" + o.NodeName, Organization: []string{"system:nodes"}, Client: true}},
		{proxyKubeconfig(o), pki.Request{CommonName: "system:kube-proxy", Client: true}},
		// The provisioner binds volumes cluster-wide (PersistentVolumes,
		// claims, nodes, its helper pods): a development host's admin.
		{localPathKubeconfig(o), pki.Request{CommonName: "clustersync:local-path-provisioner", Organization: []string{"system:masters"}, Client: true}},
		// metrics-server reads pods and nodes, the kubelets' metrics
		// (nodes/metrics) and delegates authentication and authorization
		// (token and access reviews): a development host's admin too.
		{metricsServerKubeconfig(o), pki.Request{CommonName: "clustersync:metrics-server", Organization: []string{"system:masters"}, Client: true}},
	} {
		cert, key, err := ca.Issue(k.req)
		if err != nil {
			return fmt.Errorf("realnode: %w", err)
		}
		if err := pki.WriteKubeconfig(pki.Kubeconfig("local", j.Server, ca.CertPEM(), cert, key), k.path); err != nil {
			return fmt.Errorf("realnode: %s: %w", k.path, err)
		}
	}
	// Serving certificates of the cluster CA, which metrics-server (for
	// the kubelet's) and the API server (for metrics-server's, through the
	// APIService's CA bundle) verify.
	for _, s := range []struct {
		cert, key string
		req       pki.Request
	}{
		{o.KubeletServingCertFile(), o.KubeletServingKeyFile(), pki.Request{CommonName: o.NodeName, DNSNames: []string{o.NodeName},
			IPs: []net.IP{net.IP(o.NodeIP().AsSlice())}, Server: true}},
		{o.metricsFile("serving.crt"), o.metricsFile("serving.key"), pki.Request{CommonName: MetricsServerService + "." + MetricsServerNamespace + ".svc",
			DNSNames: []string{MetricsServerService + "." + MetricsServerNamespace + ".svc"}, IPs: []net.IP{net.IP(o.NodeIP().AsSlice())}, Server: true}},
	} {
		cert, key, err := ca.Issue(s.req)
		if err != nil {
			return fmt.Errorf("realnode: %w", err)
		}
		files[s.cert], files[s.key] = cert, key
	}
	var errs []error
	render := func(path string, f func() ([]byte, error)) {
		data, err := f()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			return
		}
		files[path] = data
	}
	render(o.ContainerdConfigFile(), func() ([]byte, error) { return ContainerdConfig(o) })
	for _, h := range o.RegistryHosts() {
		render(o.HostsFile(h), func() ([]byte, error) { return HostsTOML(o) })
	}
	render(filepath.Join(o.CNIConfDir(), "10-clustersync.conflist"), func() ([]byte, error) { return CNIConfig(o) })
	render(o.KubeletConfigFile(), func() ([]byte, error) { return KubeletConfig(o) })
	render(o.KubeProxyConfigFile(), func() ([]byte, error) { return KubeProxyConfig(o, proxyKubeconfig(o)) })
	render(o.localPathFile("config.json"), func() ([]byte, error) { return LocalPathConfig(o) })
	render(o.ResolvConfFile(), func() ([]byte, error) { return os.ReadFile("/etc/resolv.conf") })
	render(o.localPathFile("helperPod.yaml"), func() ([]byte, error) { return LocalPathHelperPod(o) })
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("realnode: %w", err)
	}
	if err := pki.WriteFiles(files); err != nil {
		return fmt.Errorf("realnode: %w", err)
	}
	return nil
}

// dialable reports whether a unix socket accepts connections.
func dialable(socket string) bool {
	c, err := net.DialTimeout("unix", socket, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// healthy reports whether url answers 200.
func healthy(url string) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// waitNodeReady waits until Node name has condition Ready=True.
func waitNodeReady(ctx context.Context, cfg *rest.Config, name string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, startTimeout, true, func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				last = fmt.Sprintf("Ready=%s (%s: %s)", c.Status, c.Reason, c.Message)
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		last = "no Ready condition yet"
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("not Ready within %s: %s", startTimeout, last)
	}
	return nil
}

// ClaimFile marks the machine's one real node; it holds the node's state
// folder. One node per machine, because what a node programs is
// machine-wide: kube-proxy's iptables chains (KUBE-*, which a second
// kube-proxy would rewrite), the kubelet's /kubepods cgroups and ports
// 10248-10256.
const ClaimFile = "/run/clustersync/real-node"

// claim takes ClaimFile for dir. It fails, naming the owner, when the
// file names another folder whose node still runs; a stale claim is taken
// over.
func claim(dir string) error {
	data, err := os.ReadFile(ClaimFile)
	switch {
	case err == nil:
		owner := strings.TrimSpace(string(data))
		if owner != dir && Running(owner) {
			return fmt.Errorf("realnode: this machine's real node belongs to the host cluster in %s (one real node per machine; %s)", filepath.Dir(owner), ClaimFile)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("realnode: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(ClaimFile), 0o755); err != nil {
		return fmt.Errorf("realnode: %w", err)
	}
	return os.WriteFile(ClaimFile, []byte(dir+"\n"), 0o644)
}

// ownsMachine reports whether the node in dir may undo machine-wide state:
// ClaimFile names dir, or no node claims the machine.
func ownsMachine(dir string) bool {
	data, err := os.ReadFile(ClaimFile)
	return errors.Is(err, fs.ErrNotExist) || (err == nil && strings.TrimSpace(string(data)) == dir)
}

// release removes ClaimFile when it names dir.
func release(dir string) {
	if data, err := os.ReadFile(ClaimFile); err == nil && strings.TrimSpace(string(data)) == dir {
		_ = os.Remove(ClaimFile)
	}
}

// Running reports whether a node runs from dir: any of its components is
// alive.
func Running(dir string) bool {
	st, err := readState(dir)
	if err != nil {
		return false
	}
	for _, pid := range st.PIDs {
		if ours(pid, st.Options.Dir) {
			return true
		}
	}
	return false
}

// Status is a real node's processes as Status reads them.
type Status struct {
	// Options the node was started with.
	Options Options
	// Components maps each component to whether its process is alive.
	Components map[string]bool
}

// ReadStatus returns the status of the node in dir; an error wrapping
// fs.ErrNotExist means there is none.
func ReadStatus(dir string) (Status, error) {
	st, err := readState(dir)
	if err != nil {
		return Status{}, err
	}
	s := Status{Options: st.Options, Components: map[string]bool{}}
	for _, name := range components() {
		if name == MetricsServer && st.PIDs[name] == 0 {
			continue // not built, not started (Start)
		}
		s.Components[name] = ours(st.PIDs[name], st.Options.Dir)
	}
	return s, nil
}

// ours reports whether pid is alive and is the node's component: its
// command line names a file below dir (so a reused PID is never taken for
// it).
func ours(pid int, dir string) bool {
	if pid <= 0 || !proc.Alive(pid) {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && strings.Contains(string(cmdline), dir+string(filepath.Separator))
}
