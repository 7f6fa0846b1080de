//go:build tools

// Package controllergen pins the controller-gen built by
// hack/build-binaries.sh, which `make generate` runs to write the deepcopy
// functions of api/ and the CRDs in config/crd/.
package controllergen

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
