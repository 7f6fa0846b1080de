package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/clustersync/clustersync/internal/virtual/resources/volumesnapshots"
)

// InstallCRDs creates crds on the API server of cfg (one that exists is
// kept) and waits, up to timeout each, until it is Established. It fails t
// on any error.
func InstallCRDs(t testing.TB, cfg *rest.Config, timeout time.Duration, crds ...*apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, crd := range crds {
		if err := c.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		Eventually(t, timeout, func() error {
			var got apiextensionsv1.CustomResourceDefinition
			if err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, &got); err != nil {
				return err
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
			return fmt.Errorf("CRD %s not established", crd.Name)
		})
	}
}

// SnapshotCRDs returns the CSI snapshot CRDs (volumesnapshots.CRDs) as the
// external-snapshotter client module ships them (client/config/crd, found
// with `go list -m`), as a host with CSI snapshots has them.
func SnapshotCRDs(t testing.TB) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	return ModuleCRDs(t, "github.com/kubernetes-csi/external-snapshotter/client/v8", "config/crd", volumesnapshots.CRDs()...)
}

// GatewayCRDs returns the Gateway API's CRDs of the Go module
// sigs.k8s.io/gateway-api (the version go.mod names; standard channel)
// named by names, e.g. "gateways.gateway.networking.k8s.io".
func GatewayCRDs(t testing.TB, names ...string) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	return ModuleCRDs(t, "sigs.k8s.io/gateway-api", "config/crd/standard", names...)
}

// ModuleCRDs reads the CRDs names (<plural>.<group>) from the files
// <dir>/<group>_<plural>.yaml of Go module module, as go.mod names it.
func ModuleCRDs(t testing.TB, module, dir string, names ...string) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		t.Fatalf("find the module %s: %v", module, err)
	}
	root := filepath.Join(strings.TrimSpace(string(out)), filepath.FromSlash(dir))
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, name := range names {
		plural, group, _ := strings.Cut(name, ".")
		data, err := os.ReadFile(filepath.Join(root, group+"_"+plural+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatal(err)
		}
		crds = append(crds, &crd)
	}
	return crds
}

// ServiceMonitorCRD returns a CRD of the Prometheus Operator's
// monitoring.coreos.com/v1 ServiceMonitor, its spec schema left open: what
// a host with the Prometheus Operator serves, as far as the chart's
// controlPlane.serviceMonitor needs.
func ServiceMonitorCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "servicemonitors.monitoring.coreos.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "monitoring.coreos.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "servicemonitors", Singular: "servicemonitor", Kind: "ServiceMonitor", ListKind: "ServiceMonitorList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", XPreserveUnknownFields: ptr.To(true)}}}}}}},
	}
}
