package realnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/coreos/go-iptables/iptables"
	"github.com/moby/sys/mountinfo"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/clustersync/clustersync/internal/proc"
)

// Stop tears down the real node kept in dir and everything it made, in
// this order: the kubelet and kube-proxy stop (so nothing restarts pods);
// every pod sandbox is stopped and removed through containerd's CRI API,
// which runs the CNI plugins' DEL (pod veths, IP addresses, the bridge
// plugin's masquerade chains and portmap's chains go with it; containerd
// is started again for this when it is not running); containerd stops;
// any shim or container process still alive is killed; `kube-proxy
// --cleanup` removes kube-proxy's iptables chains, then the kubelet's own
// chains go (removeKubeletChains), the portmap plugin's top chains
// (removePortmapChains) and the node's ServiceRejectChain; every mount below dir
// (image snapshots, pod network namespaces, volumes) is unmounted; the
// /kubepods cgroups and the bridge are removed; then dir itself and the
// machine's claim. It goes on past a failed step and returns every
// failure. A dir without a node is not an error.
func Stop(ctx context.Context, dir string, log io.Writer) error {
	st, err := readState(dir)
	if errors.Is(err, fs.ErrNotExist) {
		release(dir)
		return nil
	}
	if err != nil {
		return err
	}
	o := st.Options
	var errs []error
	note := func(step string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", step, err))
		}
	}
	fmt.Fprintf(log, "Stopping real node %q…\n", o.NodeName)
	for _, name := range slices.Backward(components()) {
		if pid := st.PIDs[name]; name != Containerd && ours(pid, o.Dir) {
			note("stop "+name, proc.StopPID(ctx, name, pid, 15*time.Second))
		}
	}
	note("remove pod sandboxes", removeSandboxes(ctx, st, log))
	if pid := st.PIDs[Containerd]; ours(pid, o.Dir) {
		note("stop containerd", proc.StopPID(ctx, Containerd, pid, 15*time.Second))
	}
	// What is machine-wide is undone only by the node that claims the
	// machine (or when none does): never another host cluster's node.
	machine := ownsMachine(o.Dir)
	note("kill leftover processes", killLeftovers(o, machine))
	if st.Bins.KubeProxy != "" && machine {
		note("kube-proxy --cleanup", proxyCleanup(ctx, st))
	}
	if machine {
		note("remove the kubelet's iptables chains", removeKubeletChains())
		note("remove chain "+ServiceRejectChain, removeServiceReject())
		note("remove the portmap plugin's chains", removePortmapChains())
	}
	note("unmount", unmountBelow(o.Dir))
	if machine {
		note("remove cgroups", removeCgroups(ctx, "kubepods"))
		note("remove bridge", deleteBridge(o.Bridge))
	}
	if len(errs) == 0 {
		note("remove "+o.Dir, os.RemoveAll(o.Dir))
		release(o.Dir)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("realnode: tearing down %s: %w", o.Dir, err)
	}
	fmt.Fprintf(log, "Real node %q removed\n", o.NodeName)
	return nil
}

// removeSandboxes stops and removes every pod sandbox of the node's
// containerd through the CRI API. When containerd is not running but its
// state is there (a node that crashed), it is started for the purpose and
// stopped again, so that the CNI plugins undo what they did.
func removeSandboxes(ctx context.Context, st state, log io.Writer) error {
	o := st.Options
	if _, err := os.Stat(o.path("containerd", "root")); err != nil {
		return nil // containerd never ran
	}
	if !ours(st.PIDs[Containerd], o.Dir) {
		if st.Bins.Containerd == "" {
			return nil
		}
		fmt.Fprintf(log, "  starting containerd again to remove its pods\n")
		pid, err := proc.Detached{Name: Containerd, Exe: st.Bins.Containerd, Args: containerdArgs(o), Env: containerdEnv(st.Bins),
			LogFile: LogFile(o.Dir, Containerd), Ready: func() bool { return dialable(o.ContainerdSocket()) }, Timeout: 30 * time.Second}.Start(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = proc.StopPID(context.WithoutCancel(ctx), Containerd, pid, 15*time.Second) }()
	}
	conn, err := grpc.NewClient("unix://"+o.ContainerdSocket(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	list, err := rt.ListPodSandbox(cctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("list pod sandboxes: %w", err)
	}
	var errs []error
	for _, sb := range list.Items {
		if _, err := rt.StopPodSandbox(cctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("stop sandbox of pod %s/%s: %w", sb.Metadata.GetNamespace(), sb.Metadata.GetName(), err))
			continue
		}
		if _, err := rt.RemovePodSandbox(cctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("remove sandbox of pod %s/%s: %w", sb.Metadata.GetNamespace(), sb.Metadata.GetName(), err))
		}
	}
	if len(list.Items) > 0 {
		fmt.Fprintf(log, "  removed %d pod sandboxes\n", len(list.Items))
	}
	return errors.Join(errs...)
}

// killLeftovers kills (SIGKILL) the node's containerd shims still alive
// (their command line names its socket) and, when machine is true, every
// process in a /kubepods cgroup.
func killLeftovers(o Options, machine bool) error {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	sock := o.ContainerdSocket()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if len(args) > 0 && filepath.Base(args[0]) == "containerd-shim-runc-v2" && slices.Contains(args, sock) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if !machine {
		return nil
	}
	for _, root := range cgroupRoots() {
		_ = filepath.WalkDir(filepath.Join(root, "kubepods"), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			for _, pid := range cgroupProcs(path) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return nil
		})
	}
	return nil
}

// proxyCleanup runs `kube-proxy --cleanup`, which removes the iptables
// rules and chains kube-proxy made and exits.
func proxyCleanup(ctx context.Context, st state) error {
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(cctx, st.Bins.KubeProxy, "--cleanup", "--v=0").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, lastLine(string(out)))
	}
	return nil
}

// kubeletChains are the iptables chains the kubelet makes (by table), which
// `kube-proxy --cleanup` leaves: KUBE-FIREWALL (filter; INPUT and OUTPUT
// jump to it) drops outside packets to 127.0.0.0/8, the canaries tell the
// kubelet when someone flushed its tables. See the kubelet's
// pkg/kubelet/kubelet_network_linux.go,
// https://github.com/kubernetes/kubernetes/blob/v1.37.0/pkg/kubelet/kubelet_network_linux.go
func kubeletChains() map[string][]string {
	return map[string][]string{
		"filter": {"KUBE-FIREWALL", "KUBE-KUBELET-CANARY"},
		"nat":    {"KUBE-KUBELET-CANARY"},
		"mangle": {"KUBE-KUBELET-CANARY", "KUBE-IPTABLES-HINT"},
	}
}

// removeKubeletChains removes kubeletChains, and the jumps to
// KUBE-FIREWALL, for IPv4 and IPv6 (a family without iptables is skipped).
func removeKubeletChains() error {
	return eachIPFamily(func(ipt *iptables.IPTables) (errs []error) {
		// A jump to a chain that does not exist cannot be checked
		// (iptables -C exits 2, which is not "no such rule"): a kubelet
		// that never started made neither.
		if ok, err := ipt.ChainExists("filter", "KUBE-FIREWALL"); err == nil && ok {
			for _, builtin := range []string{"INPUT", "OUTPUT"} {
				if err := ipt.DeleteIfExists("filter", builtin, "-j", "KUBE-FIREWALL"); err != nil {
					errs = append(errs, err)
				}
			}
		}
		for table, chains := range kubeletChains() {
			errs = append(errs, deleteChains(ipt, table, chains)...)
		}
		return errs
	})
}

// eachIPFamily runs fn for the iptables of IPv4, then of IPv6 (a family
// without iptables is skipped), and returns every error fn returned.
func eachIPFamily(fn func(ipt *iptables.IPTables) []error) error {
	var errs []error
	for _, proto := range []iptables.Protocol{iptables.ProtocolIPv4, iptables.ProtocolIPv6} {
		ipt, err := iptables.New(iptables.IPFamily(proto))
		if err != nil {
			continue
		}
		errs = append(errs, fn(ipt)...)
	}
	return errors.Join(errs...)
}

// portmapChains are the nat chains the CNI portmap plugin makes for the
// host ports of every pod and keeps when the last such pod goes (its DEL
// removes only the pod's own chains).
func portmapChains() []string {
	return []string{"CNI-HOSTPORT-DNAT", "CNI-HOSTPORT-MASQ", "CNI-HOSTPORT-SETMARK"}
}

// removePortmapChains removes the jumps of the built-in nat chains to
// portmapChains, then the chains, for IPv4 and IPv6 (a family without
// iptables is skipped).
func removePortmapChains() error {
	return eachIPFamily(func(ipt *iptables.IPTables) (errs []error) {
		for _, builtin := range []string{"PREROUTING", "OUTPUT", "POSTROUTING"} {
			rules, err := ipt.List("nat", builtin)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			// rules[0] is the chain's policy; rule i is number i. From the
			// last, so that the numbers of those left do not move.
			for i := len(rules) - 1; i >= 1; i-- {
				if strings.Contains(rules[i], "-j CNI-HOSTPORT-") {
					if err := ipt.DeleteById("nat", builtin, i); err != nil {
						errs = append(errs, fmt.Errorf("nat %s rule %d: %w", builtin, i, err))
					}
				}
			}
		}
		return append(errs, deleteChains(ipt, "nat", portmapChains())...)
	})
}

// deleteChains clears and deletes each of chains that exists in table; a
// chain that is not there is skipped.
func deleteChains(ipt *iptables.IPTables, table string, chains []string) []error {
	var errs []error
	for _, chain := range chains {
		if ok, err := ipt.ChainExists(table, chain); err != nil || !ok {
			continue
		}
		if err := ipt.ClearAndDeleteChain(table, chain); err != nil {
			errs = append(errs, fmt.Errorf("%s chain %s: %w", table, chain, err))
		}
	}
	return errs
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// cgroupRoots are the mount points of the machine's cgroup hierarchies
// (each v1 controller, and v2).
func cgroupRoots() []string {
	mounts, err := mountinfo.GetMounts(func(i *mountinfo.Info) (skip, stop bool) {
		return i.FSType != "cgroup" && i.FSType != "cgroup2", false
	})
	if err != nil {
		return nil
	}
	var roots []string
	for _, m := range mounts {
		roots = append(roots, m.Mountpoint)
	}
	return roots
}

// cgroupProcs are the processes in the cgroup folder path.
func cgroupProcs(path string) []int {
	data, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for f := range strings.FieldsSeq(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// removeCgroups removes the cgroup name (e.g. "kubepods") and everything
// below it from every hierarchy, deepest first, waiting up to 30 s for
// killed processes to leave them.
func removeCgroups(ctx context.Context, name string) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		last = nil
		for _, root := range cgroupRoots() {
			var dirs []string
			_ = filepath.WalkDir(filepath.Join(root, name), func(path string, d fs.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					dirs = append(dirs, path)
				}
				return nil
			})
			for i := len(dirs) - 1; i >= 0; i-- {
				if err := os.Remove(dirs[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
					for _, pid := range cgroupProcs(dirs[i]) {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
					last = fmt.Errorf("%s: %w", dirs[i], err)
				}
			}
		}
		return last == nil, nil
	})
	if err != nil && last != nil {
		return last
	}
	return err
}
