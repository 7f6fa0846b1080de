package registration

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ImportPathPrefix is where the management server serves import
// manifests (Rancher's /v3/import/).
const ImportPathPrefix = "/v1/import/"

// ImportPath is the path of the import manifest of cluster for token:
// /v1/import/<token>_<cluster>.yaml.
func ImportPath(token, cluster string) string {
	return ImportPathPrefix + token + "_" + cluster + ".yaml"
}

// ParseImportPath splits an import manifest path into token and cluster,
// at the first '_' (cluster names, DNS-1123 subdomains, have none). Errors
// name the path and what is wrong with it.
func ParseImportPath(path string) (token, cluster string, err error) {
	rest, ok := strings.CutPrefix(path, ImportPathPrefix)
	if !ok {
		return "", "", fmt.Errorf("import path %q: want %s<token>_<cluster>.yaml", path, ImportPathPrefix)
	}
	rest, ok = strings.CutSuffix(rest, ".yaml")
	if !ok {
		return "", "", fmt.Errorf("import path %q: want a .yaml suffix", path)
	}
	token, cluster, ok = strings.Cut(rest, "_")
	if !ok || token == "" || cluster == "" {
		return "", "", fmt.Errorf("import path %q: want <token>_<cluster>", path)
	}
	if errs := validation.IsDNS1123Subdomain(cluster); len(errs) > 0 {
		return "", "", fmt.Errorf("import path %q: cluster name %q: %s", path, cluster, strings.Join(errs, "; "))
	}
	return token, cluster, nil
}
