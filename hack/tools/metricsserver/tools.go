//go:build tools

// Package tools pins kubernetes-sigs/metrics-server, the resource metrics
// API (metrics.k8s.io, `kubectl top`) of `clustersync dev up`'s host;
// hack/build-binaries.sh builds it from this module.
package tools

import _ "sigs.k8s.io/metrics-server/cmd/metrics-server/app"
