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

// The taint eviction controller runs only with the virtual scheduler; the
// node and volume controllers of the host never run.
func TestControllerManagerControllers(t *testing.T) {
	controllers := func(scheduler bool) []string {
		for _, a := range controllerManagerArgs(Layout{}, Ports{}, "", scheduler) {
			if v, ok := strings.CutPrefix(a, "--controllers="); ok {
				return strings.Split(v, ",")
			}
		}
		t.Fatal("no --controllers")
		return nil
	}
	without, with := controllers(false), controllers(true)
	if !slices.Contains(without, "-taint-eviction-controller") {
		t.Errorf("without the virtual scheduler: %s, want taint-eviction-controller off", without)
	}
	if slices.Contains(with, "-taint-eviction-controller") {
		t.Errorf("with the virtual scheduler: %s, want taint-eviction-controller on", with)
	}
	for _, c := range []string{"-node-lifecycle-controller", "-persistentvolume-binder-controller", "-device-taint-eviction-controller"} {
		if !slices.Contains(with, c) || !slices.Contains(without, c) {
			t.Errorf("%s is on: %s / %s", c, without, with)
		}
	}
}
