// Package harness is what the whole-system tests (test/e2e, test/chaos)
// share: the clustersync binary built from this tree and run in a
// CLUSTERSYNC_HOME of their own, clients of the clusters it starts, and the
// local real node seen over CRI and checked for leftovers.
package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/sys/mountinfo"
	"github.com/vishvananda/netlink"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/realnode"
)

// Home is a clustersync binary built for a test package (Exe) and the
// CLUSTERSYNC_HOME it runs in (Dir), never the developer's own.
type Home struct {
	Exe, Dir string
}

// Build makes a temporary folder named after prefix (e.g.
// "clustersync-e2e-"), builds cmd/clustersync into it and returns the
// folder and the Home below it. The build's output goes to stderr; an
// error names the step that failed.
func Build(prefix string) (dir string, h Home, err error) {
	dir, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", Home{}, err
	}
	h = Home{Exe: filepath.Join(dir, "clustersync"), Dir: filepath.Join(dir, "home")}
	// The flags of `make build` (static, -trimpath), so after it this is a link.
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-o", h.Exe, "github.com/clustersync/clustersync/cmd/clustersync")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return dir, Home{}, fmt.Errorf("build clustersync: %w", err)
	}
	return dir, h, nil
}

// Main is the TestMain of the whole-system test packages: it builds the
// binary into a temporary folder named after prefix (Build), gives use the
// Home, runs the package's tests, then stops whatever a failed test left
// running in that home, never the developer's own (its local virtual
// clusters, which `dev down` leaves, then the host: `dev down`), and
// removes the folder when the tests passed, else says where it is kept. It
// returns the exit code.
func Main(m *testing.M, prefix string, use func(Home)) int {
	dir, h, err := Build(prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	use(h)
	code := m.Run()
	if vcs, err := os.ReadDir(filepath.Join(h.Dir, "virtual")); err == nil {
		for _, vc := range vcs {
			_, _ = h.Run("virtual", "stop", vc.Name())
		}
	}
	_, _ = h.Run("dev", "down")
	if code == 0 {
		_ = os.RemoveAll(dir)
	} else {
		fmt.Fprintln(os.Stderr, "state and logs kept in", dir)
	}
	return code
}

// Run runs clustersync with args in h, with no KUBECONFIG, and returns its
// combined output.
func (h Home) Run(args ...string) (string, error) {
	cmd := exec.Command(h.Exe, args...)
	cmd.Env = append(os.Environ(), "CLUSTERSYNC_HOME="+h.Dir, "KUBECONFIG=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Output runs clustersync with args in h, as Run does, and returns its
// standard output and standard error apart, and its exit code (-1 when it
// did not exit).
func (h Home) Output(args ...string) (stdout, stderr string, code int) {
	cmd := exec.Command(h.Exe, args...)
	cmd.Env = append(os.Environ(), "CLUSTERSYNC_HOME="+h.Dir, "KUBECONFIG=")
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	_ = cmd.Run()
	code = -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	return o.String(), e.String(), code
}

// MustRun is Run, failing t (with the output) when the command fails.
func (h Home) MustRun(t testing.TB, args ...string) string {
	t.Helper()
	out, err := h.Run(args...)
	if err != nil {
		t.Fatalf("clustersync %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// RestConfig is the client configuration of kubeconfig, with the files it
// names (kwokctl's names its CA by path) read in: client-go keeps one
// transport per CA file path and reloads the file only now and then, so a
// host cluster made anew in the same folder by a later test would meet the
// earlier cluster's CA ("certificate signed by unknown authority").
func RestConfig(t testing.TB, kubeconfig string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := rest.LoadTLSFiles(cfg); err != nil {
		t.Fatal(err)
	}
	cfg.CAFile, cfg.CertFile, cfg.KeyFile = "", "", ""
	return cfg
}

// ClientFor is a controller-runtime client of cfg with client-go's scheme.
func ClientFor(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// RequireRealNode fails t when `dev up` (its output out) ran no real node
// on this machine, which can run one (root, Linux); it skips t when the
// machine's one real node belongs to another host cluster, e.g. a
// developer's own `dev up` beside `make test`.
func RequireRealNode(t testing.TB, out string) {
	t.Helper()
	if strings.Contains(out, "real node belongs to the host cluster in") {
		t.Skipf("this machine's real node is taken by another host cluster:\n%s", out)
	}
	if strings.Contains(out, "No real node") || strings.Contains(out, "did not start") {
		t.Fatalf("dev up ran no real node on this machine (root, Linux):\n%s", out)
	}
}

// PushImages builds clustersync's images from this source tree (two
// folders up from the test package) and pushes them to the local registry
// of h's host as tag (`dev image`); it fails t when that fails.
func (h Home) PushImages(t testing.TB, tag string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	h.MustRun(t, "dev", "image", "--tag", tag, "--latest=false", "--source", root)
	t.Logf("dev image: %.1f s", time.Since(start).Seconds())
}

// CRIClient talks CRI to the containerd of h's real node until t ends.
func (h Home) CRIClient(t testing.TB) runtimeapi.RuntimeServiceClient {
	t.Helper()
	sock := filepath.Join(h.Dir, "host", "node", "containerd.sock")
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return runtimeapi.NewRuntimeServiceClient(conn)
}

// ContainerPID is the host process ID of the running container name of
// the pods of namespace ns on the real node (asked over CRI rs), 0 when
// none runs.
func ContainerPID(ctx context.Context, rs runtimeapi.RuntimeServiceClient, ns, name string) (int, error) {
	resp, err := rs.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: map[string]string{"io.kubernetes.pod.namespace": ns, "io.kubernetes.container.name": name}}})
	if err != nil {
		return 0, fmt.Errorf("CRI ListContainers: %w", err)
	}
	for _, c := range resp.Containers {
		st, err := rs.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.Id, Verbose: true})
		if err != nil {
			continue
		}
		var info struct {
			Pid int `json:"pid"`
		}
		if json.Unmarshal([]byte(st.Info["info"]), &info) == nil && info.Pid > 0 {
			return info.Pid, nil
		}
	}
	return 0, nil
}

// CheckNothingLeft fails t for anything of h's host still on the machine:
// a process whose command line names h's folder, the real node's bridge, a
// mount below the folder, an iptables chain of kube-proxy, the CNI
// plugins or the node (realnode.ServiceRejectChain), the machine's
// real-node claim.
func (h Home) CheckNothingLeft(t testing.TB) {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), h.Dir) {
			t.Errorf("process %s left running: %s", e.Name(), strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	if _, err := netlink.LinkByName(hostcluster.RealNodeBridge); err == nil {
		t.Errorf("bridge %s left behind", hostcluster.RealNodeBridge)
	}
	if mounts, err := mountinfo.GetMounts(mountinfo.PrefixFilter(h.Dir)); err != nil || len(mounts) > 0 {
		t.Errorf("mounts left below %s: %d (%v)", h.Dir, len(mounts), err)
	}
	for _, table := range []string{"nat", "filter", "mangle"} {
		out, err := exec.Command("iptables-save", "-t", table).CombinedOutput()
		if err != nil {
			t.Errorf("iptables-save -t %s: %v\n%s", table, err, out)
			continue
		}
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, ":KUBE-") || strings.HasPrefix(l, ":CNI-") || strings.HasPrefix(l, ":"+realnode.ServiceRejectChain+" ") {
				t.Errorf("iptables chain left in table %s: %s", table, l)
			}
		}
	}
	if _, err := os.Stat(realnode.ClaimFile); err == nil {
		t.Errorf("%s left behind", realnode.ClaimFile)
	}
}
