//go:build tools

// Package tools pins rancher/local-path-provisioner, the local real node's
// storage provisioner (the default StorageClass of `clustersync dev up`);
// hack/build-binaries.sh builds it from this module.
package tools

import _ "github.com/rancher/local-path-provisioner"
