package runner

import (
	"strings"
	"testing"

	"github.com/clustersync/clustersync/internal/virtual/config"
)

func TestCheckConfig(t *testing.T) {
	if err := CheckConfig(config.Default()); err != nil {
		t.Fatalf("defaults rejected: %v", err)
	}
	realNodes, err := config.Parse([]byte(`
sync:
  fromHost:
    nodes:
      enabled: true
      syncBackChanges: true
      clearImageStatus: true
      selector: {all: true, labels: {pool: tenants}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckConfig(realNodes); err != nil {
		t.Errorf("real nodes rejected: %v", err)
	}
	cfg, err := config.Parse([]byte(`
sync:
  toHost:
    customResources:
      widgets.example.com:
        enabled: true
        patches:
          - path: spec.x
    pods:
      enforceTolerations: ["=v:NoSchedule"]
    secrets:
      translate:
        - path: data.x
    configMaps:
      patches:
        - path: data..x
          expression: value
        - path: data.y
          expression: "value +"
  fromHost:
    customResources:
      widgets.example.com: {enabled: true}
      Gadgets: {enabled: true}
      things.example.com: {enabled: true, scope: Namespaced, mappings: {byName: {"a/*": "b/x"}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	err = CheckConfig(cfg)
	if err == nil {
		t.Fatal("unsupported settings accepted")
	}
	if !strings.Contains(err.Error(), "sync.toHost.pods.enforceTolerations[0]") {
		t.Errorf("error does not name the bad toleration:\n%v", err)
	}
	for _, want := range []string{
		"sync.toHost.secrets.patches[0]: needs exactly one of expression/reverseExpression, reference and labels",
		"sync.toHost.configMaps.patches[0].path",
		"sync.toHost.configMaps.patches[1].expression: does not compile",
		"sync.toHost.customResources[widgets.example.com].patches[0]: needs exactly one of",
		`sync.fromHost.customResources[Gadgets]: "Gadgets" is not <plural>.<group>`,
		`sync.fromHost.customResources[things.example.com].mappings.byName: "a/*": "b/x": a whole namespace maps to a whole namespace`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "not supported") {
		t.Errorf("a key is refused as not supported, but Unsupported() is empty:\n%v", err)
	}
}

// The storage kinds read from the host take true, false and "auto"
// ("auto": off, no virtual scheduler).
func TestCheckConfigStorageFromHost(t *testing.T) {
	for _, value := range []string{"true", "false", "auto"} {
		cfg, err := config.Parse([]byte(`
sync:
  fromHost:
    storageClasses: {enabled: ` + value + `}
    csiNodes: {enabled: ` + value + `}
    csiDrivers: {enabled: ` + value + `}
    csiStorageCapacities: {enabled: ` + value + `}
`))
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckConfig(cfg); err != nil {
			t.Errorf("storage kinds from the host = %s: %v", value, err)
		}
	}
}

// controlPlane.distro.k8s.*.extraArgs: a flag the control plane owns, or
// something that is not a flag, is refused naming the entry.
func TestCheckConfigExtraArgs(t *testing.T) {
	cfg, err := config.Parse([]byte(`
controlPlane:
  distro:
    k8s:
      apiServer: {extraArgs: [--oidc-issuer-url=https://issuer.example.com, --etcd-servers=https://x:2379]}
      scheduler: {extraArgs: [v=4]}
`))
	if err != nil {
		t.Fatal(err)
	}
	err = CheckConfig(cfg)
	for _, want := range []string{"controlPlane.distro.k8s.apiServer.extraArgs[1]: --etcd-servers is set by clustersync's control plane",
		`controlPlane.distro.k8s.scheduler.extraArgs[0]: "v=4" is not a flag`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckConfig: %v\nwant %s", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "oidc") {
		t.Errorf("an OIDC flag refused: %v", err)
	}
}
