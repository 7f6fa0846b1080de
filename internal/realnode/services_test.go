package realnode

import (
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/coreos/go-iptables/iptables"
	"github.com/vishvananda/netns"
)

// The reject rule covers the whole Service range (masked), only packets
// kube-proxy did not translate, and answers with ICMP port unreachable.
func TestServiceRejectRules(t *testing.T) {
	for _, tt := range []struct{ cidr, want string }{
		{"10.96.0.0/16", "-d 10.96.0.0/16 -m conntrack ! --ctstate DNAT"},
		{"10.96.7.1/12", "-d 10.96.0.0/12 -m conntrack ! --ctstate DNAT"},
	} {
		rules := serviceRejectRules(netip.MustParsePrefix(tt.cidr))
		if len(rules) != 1 {
			t.Fatalf("%s: %d rules", tt.cidr, len(rules))
		}
		r := strings.Join(rules[0], " ")
		if !strings.HasPrefix(r, tt.want) || !strings.HasSuffix(r, "-j REJECT --reject-with icmp-port-unreachable") {
			t.Errorf("%s: %s", tt.cidr, r)
		}
	}
	if !slices.Equal(serviceRejectJumps(), []string{"FORWARD", "OUTPUT"}) {
		t.Errorf("jumps from %v", serviceRejectJumps())
	}
}

// removePortmapChains removes the portmap plugin's top chains and the
// jumps to them, leaving other rules of the built-in chains alone. It runs
// in a network namespace of its own (root), so that a real node running
// beside it keeps its chains.
func TestRemovePortmapChains(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs a network namespace of its own (root)")
	}
	// iptables runs as a child of this thread, in its namespace.
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	ns, err := netns.New()
	if err != nil {
		runtime.UnlockOSThread()
		t.Skip(err)
	}
	t.Cleanup(func() {
		_ = netns.Set(orig)
		_ = ns.Close()
		_ = orig.Close()
		runtime.UnlockOSThread()
	})
	ipt, err := iptables.New(iptables.IPFamily(iptables.ProtocolIPv4))
	if err != nil {
		t.Skip(err)
	}
	for _, c := range portmapChains() {
		if err := ipt.ClearChain("nat", c); err != nil {
			t.Fatal(err)
		}
	}
	keep := []string{"-d", "192.0.2.77/32", "-m", "comment", "--comment", "clustersync test: kept", "-j", "RETURN"}
	if err := ipt.Append("nat", "OUTPUT", keep...); err != nil {
		t.Fatal(err)
	}
	for _, r := range [][]string{
		{"PREROUTING", "-m", "addrtype", "--dst-type", "LOCAL", "-j", "CNI-HOSTPORT-DNAT"},
		{"OUTPUT", "-m", "addrtype", "--dst-type", "LOCAL", "-j", "CNI-HOSTPORT-DNAT"},
		{"POSTROUTING", "-m", "comment", "--comment", "CNI portfwd requiring masquerade", "-j", "CNI-HOSTPORT-MASQ"},
	} {
		if err := ipt.Append("nat", r[0], r[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	if err := removePortmapChains(); err != nil {
		t.Fatal(err)
	}
	for _, c := range portmapChains() {
		if ok, err := ipt.ChainExists("nat", c); err != nil || ok {
			t.Errorf("chain %s still there (%v)", c, err)
		}
	}
	if ok, err := ipt.Exists("nat", "OUTPUT", keep...); err != nil || !ok {
		t.Errorf("another rule of OUTPUT was removed (%v)", err)
	}
}
