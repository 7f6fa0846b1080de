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
    priorityClasses: {enabled: true}
    pods:
      enforceTolerations: ["=v:NoSchedule"]
    secrets:
      translate:
        - path: data.x
  fromHost:
    storageClasses: {enabled: true}
    customResources:
      widgets.example.com: {enabled: true}
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
	for _, path := range []string{"sync.toHost.priorityClasses.enabled", "sync.toHost.secrets.patches (translate)",
		"sync.fromHost.storageClasses.enabled", "sync.fromHost.customResources[widgets.example.com]"} {
		if !strings.Contains(err.Error(), path+": not supported") {
			t.Errorf("error does not name %s:\n%v", path, err)
		}
	}
}
