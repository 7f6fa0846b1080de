package gatewayapi

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The bundled CRDs are the module's, as go.mod names its version: a
// changed version needs `go generate ./internal/virtual/resources/gatewayapi`.
func TestBundledCRDsAreTheModules(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatalf("find the module sigs.k8s.io/gateway-api: %v", err)
	}
	for _, name := range BundledCRDs() {
		crd, ok, err := BundledCRD(name)
		if err != nil || !ok || crd.Name != name {
			t.Fatalf("BundledCRD(%s) = %v, %v, %v", name, crd, ok, err)
		}
		plural, group, _ := strings.Cut(name, ".")
		want, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard", group+"_"+plural+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := bundled.ReadFile("crds/" + group + "_" + plural + ".yaml")
		if !bytes.Equal(got, want) {
			t.Errorf("crds/%s_%s.yaml is not the module's: run go generate ./internal/virtual/resources/gatewayapi", group, plural)
		}
	}
	if _, ok, _ := BundledCRD("gateways." + Group); ok {
		t.Error("gateways are bundled: the host must serve them (they are copied there)")
	}
}
