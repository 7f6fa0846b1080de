package runner

import (
	"strings"
	"testing"

	"github.com/clustersync/clustersync/internal/virtual/config"
)

func TestUnsupported(t *testing.T) {
	if err := Unsupported(config.Default()); err != nil {
		t.Fatalf("defaults rejected: %v", err)
	}
	cfg, err := config.Parse([]byte(`
sync:
  toHost:
    ingresses: {enabled: true}
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
	err = Unsupported(cfg)
	if err == nil {
		t.Fatal("unsupported settings accepted")
	}
	for _, path := range []string{"sync.toHost.ingresses.enabled", "sync.toHost.secrets.translate",
		"sync.fromHost.storageClasses.enabled", "sync.fromHost.customResources[widgets.example.com]"} {
		if !strings.Contains(err.Error(), path+": not supported") {
			t.Errorf("error does not name %s:\n%v", path, err)
		}
	}
}
