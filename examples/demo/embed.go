// Package demo holds the manifests `make run` (clustersync demo) applies in
// virtual cluster "demo", embedded so the binary carries them.
package demo

import "embed"

// Manifests are the YAML files of this folder, applied in file-name order.
//
//go:embed *.yaml
var Manifests embed.FS
