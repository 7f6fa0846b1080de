package realnode

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/coreos/go-iptables/iptables"
)

// ServiceRejectChain is the node's own iptables chain (filter table; the
// FORWARD and OUTPUT chains jump to it first) that rejects packets to an
// address of the Service range that kube-proxy did not translate: a port
// no Service has, or an address no Service holds. kube-proxy's iptables
// mode leaves such packets to the machine's routes, and where the default
// route leads to a proxy that answers every connection (as in the sandboxes
// clustersync is developed in) a port a Service dropped still "connects";
// kube-proxy's nftables mode rejects them the same way, and so does every
// cluster whose nodes have no such proxy (the packet goes nowhere). The
// conformance specs that remove a Service port check that it stops
// answering.
const ServiceRejectChain = "CLUSTERSYNC-SERVICES"

// serviceRejectRules are the rules of ServiceRejectChain for Service range
// cidr: reject (ICMP port unreachable, which a TCP client sees as
// "connection refused") what is addressed to cidr and was not
// destination-NATed (kube-proxy's DNAT to an endpoint changes the
// destination and sets the conntrack state DNAT).
func serviceRejectRules(cidr netip.Prefix) [][]string {
	return [][]string{{
		"-d", cidr.Masked().String(), "-m", "conntrack", "!", "--ctstate", "DNAT",
		"-m", "comment", "--comment", "clustersync: no Service answers at this address and port",
		"-j", "REJECT", "--reject-with", "icmp-port-unreachable",
	}}
}

// serviceRejectJumps are the built-in chains that jump to
// ServiceRejectChain: FORWARD (pods' packets) and OUTPUT (the machine's).
func serviceRejectJumps() []string { return []string{"FORWARD", "OUTPUT"} }

// addServiceReject creates ServiceRejectChain with the rules for cidr and
// the jumps to it, replacing what an earlier node left.
func addServiceReject(cidr netip.Prefix) error {
	ipt, err := iptables.New(iptables.IPFamily(iptables.ProtocolIPv4))
	if err != nil {
		return fmt.Errorf("realnode: iptables: %w", err)
	}
	if err := ipt.ClearChain("filter", ServiceRejectChain); err != nil {
		return fmt.Errorf("realnode: chain %s: %w", ServiceRejectChain, err)
	}
	for _, r := range serviceRejectRules(cidr) {
		if err := ipt.Append("filter", ServiceRejectChain, r...); err != nil {
			return fmt.Errorf("realnode: chain %s: %w", ServiceRejectChain, err)
		}
	}
	for _, builtin := range serviceRejectJumps() {
		ok, err := ipt.Exists("filter", builtin, "-j", ServiceRejectChain)
		if err == nil && !ok {
			err = ipt.Insert("filter", builtin, 1, "-j", ServiceRejectChain)
		}
		if err != nil {
			return fmt.Errorf("realnode: jump from %s to %s: %w", builtin, ServiceRejectChain, err)
		}
	}
	return nil
}

// removeServiceReject removes the jumps to ServiceRejectChain and the
// chain; nothing to remove is not an error.
func removeServiceReject() error {
	ipt, err := iptables.New(iptables.IPFamily(iptables.ProtocolIPv4))
	if err != nil {
		return nil // no iptables: nothing was made
	}
	if ok, err := ipt.ChainExists("filter", ServiceRejectChain); err != nil || !ok {
		return err
	}
	var errs []error
	for _, builtin := range serviceRejectJumps() {
		if err := ipt.DeleteIfExists("filter", builtin, "-j", ServiceRejectChain); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(append(errs, deleteChains(ipt, "filter", []string{ServiceRejectChain})...)...)
}
