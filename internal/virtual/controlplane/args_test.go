package controlplane

import (
	"slices"
	"strings"
	"testing"

	"github.com/clustersync/clustersync/internal/virtual/resources/nodes"
)

// The virtual API server reaches kubelets at the addresses the node syncer
// writes for the kubelet proxy, in the order it prefers them.
func TestKubeletAddressTypes(t *testing.T) {
	var types []string
	for _, a := range nodes.KubeletAddressTypes() {
		types = append(types, string(a))
	}
	want := "--kubelet-preferred-address-types=" + strings.Join(types, ",")
	if args := apiServerArgs(Layout{}, Options{}, Ports{}, "", EtcdTLS{}); !slices.Contains(args, want) {
		t.Errorf("kube-apiserver args lack %s", want)
	}
}
