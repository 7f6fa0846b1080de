package realnode

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
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
