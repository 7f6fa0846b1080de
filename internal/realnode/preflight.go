package realnode

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/clustersync/clustersync/internal/binaries"
)

// Preflight returns, in one line, why a real node cannot run on this
// machine, or nil: it needs Linux, root (containerd, the bridge, iptables,
// mounts), the memory and cpu cgroup controllers, and the programs of
// bins (built and installed by `make binaries`).
func Preflight(bins binaries.NodeSet) error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("a real node needs Linux, this is %s", runtime.GOOS)
	}
	if os.Geteuid() != 0 {
		return errors.New("a real node needs root (containerd, the pod bridge, iptables and mounts), and this process runs as uid " + fmt.Sprint(os.Geteuid()))
	}
	if missing := missingControllers(); len(missing) > 0 {
		return fmt.Errorf("a real node needs the %s cgroup controllers, which this kernel does not mount", strings.Join(missing, ", "))
	}
	return bins.Check()
}

// missingControllers returns the cgroup controllers the kubelet needs
// (cpu, memory) that neither a cgroup v1 hierarchy nor cgroup v2 offers.
func missingControllers() []string {
	v2, _ := os.ReadFile("/sys/fs/cgroup/cgroup.controllers")
	var missing []string
	for _, c := range []string{"cpu", "memory"} {
		if _, err := os.Stat("/sys/fs/cgroup/" + c); err == nil {
			continue
		}
		if strings.Contains(" "+strings.TrimSpace(string(v2))+" ", " "+c+" ") {
			continue
		}
		missing = append(missing, c)
	}
	return missing
}

// createBridge creates the pod bridge (o.Bridge) with the node IP
// (first address of o.PodCIDR) and sets it up. The CNI bridge plugin
// reuses it; the kubelet and kube-proxy bind to its address.
func createBridge(o Options) error {
	attrs := netlink.NewLinkAttrs()
	attrs.Name = o.Bridge
	if err := netlink.LinkAdd(&netlink.Bridge{LinkAttrs: attrs}); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("realnode: create bridge %s: %w", o.Bridge, err)
	}
	link, err := netlink.LinkByName(o.Bridge)
	if err != nil {
		return fmt.Errorf("realnode: bridge %s: %w", o.Bridge, err)
	}
	if _, ok := link.(*netlink.Bridge); !ok {
		return fmt.Errorf("realnode: %s exists and is a %s, not a bridge", o.Bridge, link.Type())
	}
	ip := o.NodeIP().AsSlice()
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: ip, Mask: net.CIDRMask(o.PodCIDR.Bits(), 32)}}
	if err := netlink.AddrReplace(link, addr); err != nil {
		return fmt.Errorf("realnode: bridge %s address %s: %w", o.Bridge, addr.IPNet, err)
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return fmt.Errorf("realnode: bridge %s up: %w", o.Bridge, err)
	}
	return nil
}

// deleteBridge removes the pod bridge, if it exists and is a bridge.
func deleteBridge(name string) error {
	link, err := netlink.LinkByName(name)
	var notFound netlink.LinkNotFoundError
	if errors.As(err, &notFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("bridge %s: %w", name, err)
	}
	if _, ok := link.(*netlink.Bridge); !ok {
		return nil // not ours
	}
	if err := netlink.LinkDel(link); err != nil {
		return fmt.Errorf("delete bridge %s: %w", name, err)
	}
	return nil
}
