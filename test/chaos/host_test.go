package chaos

// The helpers below drive the CLI and the local real node as test/e2e's
// do (cli, cliErr, restConfig, devUpReal, requireRealNode, pushImages,
// criClient, containerPID, checkNothingLeft are copies of theirs, a few
// lines each, trimmed to what this package needs): the two packages share
// no test code, and moving these to a package of their own would mean
// editing test/e2e for a few dozen lines.

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

// cli runs clustersync with args and returns its combined output; it fails
// t when the command fails.
func cli(t *testing.T, args ...string) string {
	t.Helper()
	out, err := cliErr(args...)
	if err != nil {
		t.Fatalf("clustersync %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// cliErr runs clustersync with args in the tests' home, with no KUBECONFIG
// (every command that writes a context is given --kubeconfig-out).
func cliErr(args ...string) (string, error) {
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "CLUSTERSYNC_HOME="+home, "KUBECONFIG=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// restConfig is the client configuration of kubeconfig with the files it
// names read in (see test/e2e's restConfig), requests bounded by a
// timeout (the API servers of this test go away on purpose) and no
// client-side rate limit (the churn sets its own pace).
func restConfig(t *testing.T, kubeconfig string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := rest.LoadTLSFiles(cfg); err != nil {
		t.Fatal(err)
	}
	cfg.CAFile, cfg.CertFile, cfg.KeyFile = "", "", ""
	cfg.Timeout = 20 * time.Second
	cfg.QPS, cfg.Burst = -1, 0
	return cfg
}

func clientFor(t *testing.T, kubeconfig string) client.Client {
	t.Helper()
	c, err := client.New(restConfig(t, kubeconfig), client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// devUpReal runs `dev up` with the real node (skipping t without root or
// when the machine's real node belongs to another host cluster), has `dev
// down` run at the end of t and checks that it left nothing behind.
func devUpReal(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a real node needs root")
	}
	out := cli(t, "dev", "up")
	t.Cleanup(func() {
		if out, err := cliErr("dev", "down"); err != nil {
			t.Errorf("clustersync dev down: %v\n%s", err, out)
			return
		}
		checkNothingLeft(t)
	})
	if strings.Contains(out, "real node belongs to the host cluster in") {
		t.Skipf("this machine's real node is taken by another host cluster:\n%s", out)
	}
	if strings.Contains(out, "No real node") || strings.Contains(out, "did not start") {
		t.Fatalf("dev up ran no real node on this machine (root, Linux):\n%s", out)
	}
}

// pushImages builds clustersync's images from this source tree and pushes
// them to the local registry of the host as tag.
func pushImages(t *testing.T, tag string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cli(t, "dev", "image", "--tag", tag, "--latest=false", "--source", root)
	t.Logf("dev image: %.1f s", time.Since(start).Seconds())
}

// criClient talks CRI to the real node's containerd until t ends.
func criClient(t *testing.T) runtimeapi.RuntimeServiceClient {
	t.Helper()
	sock := filepath.Join(home, "host", "node", "containerd.sock")
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return runtimeapi.NewRuntimeServiceClient(conn)
}

// containerPID is the host process ID of the running container name of
// the pods of namespace ns on the real node, 0 when none runs.
func containerPID(ctx context.Context, rs runtimeapi.RuntimeServiceClient, ns, name string) (int, error) {
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

// checkNothingLeft fails t for anything of the tests' host still on the
// machine: a process whose command line names the tests' home, the bridge,
// a mount below home, an iptables chain of kube-proxy or the CNI plugins,
// the machine's real-node claim.
func checkNothingLeft(t *testing.T) {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), home) {
			t.Errorf("process %s left running: %s", e.Name(), strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	if _, err := netlink.LinkByName(hostcluster.RealNodeBridge); err == nil {
		t.Errorf("bridge %s left behind", hostcluster.RealNodeBridge)
	}
	if mounts, err := mountinfo.GetMounts(mountinfo.PrefixFilter(home)); err != nil || len(mounts) > 0 {
		t.Errorf("mounts left below %s: %d (%v)", home, len(mounts), err)
	}
	for _, table := range []string{"nat", "filter", "mangle"} {
		out, err := exec.Command("iptables-save", "-t", table).CombinedOutput()
		if err != nil {
			t.Errorf("iptables-save -t %s: %v\n%s", table, err, out)
			continue
		}
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, ":KUBE-") || strings.HasPrefix(l, ":CNI-") {
				t.Errorf("iptables chain left in table %s: %s", table, l)
			}
		}
	}
	if _, err := os.Stat(realnode.ClaimFile); err == nil {
		t.Errorf("%s left behind", realnode.ClaimFile)
	}
}
