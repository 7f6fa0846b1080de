package gatewayapi

import (
	"embed"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// bundled holds the Gateway API CRDs the virtual cluster gets when the
// host does not serve them: those of kinds that never reach the host. They
// are the standard channel's files of the Go module sigs.k8s.io/gateway-api
// at the version go.mod names (config/crd/standard), copied by `go
// generate` (TestBundledCRDsAreTheModules checks they are).
//
//go:embed crds/*.yaml
var bundled embed.FS

//go:generate sh -c "cp \"$(go list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api)/config/crd/standard/gateway.networking.k8s.io_referencegrants.yaml\" crds/ && chmod 644 crds/*.yaml"

// BundledCRDs are the names of the bundled CRDs: ReferenceGrants, which
// the syncer reads in the virtual cluster only (they authorize the
// tenant's references there and are never copied to the host), so the
// host need not serve them.
func BundledCRDs() []string { return []string{"referencegrants." + Group} }

// BundledCRD returns the bundled CRD name (one of BundledCRDs), or false
// when there is none of that name.
func BundledCRD(name string) (*apiextensionsv1.CustomResourceDefinition, bool, error) {
	plural, group, _ := strings.Cut(name, ".")
	data, err := bundled.ReadFile("crds/" + group + "_" + plural + ".yaml")
	if err != nil {
		return nil, false, nil
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		return nil, false, fmt.Errorf("bundled CRD %s: %w", name, err)
	}
	return &crd, true, nil
}
