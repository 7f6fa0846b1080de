//go:build tools

// Package node pins the container runtime and CNI plugins of clustersync's
// local real node, built by `hack/build-binaries.sh node`: containerd 2.x
// (it answers the CRI RuntimeConfig call newer kubelets need) with its runc
// shim, and the bridge, host-local, loopback and portmap CNI plugins. runc
// itself comes from Debian's package (built here without libseccomp it
// refuses containerd's default seccomp profile; see docs/development.md).
package node

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containernetworking/plugins/plugins/ipam/host-local"
	_ "github.com/containernetworking/plugins/plugins/main/bridge"
	_ "github.com/containernetworking/plugins/plugins/main/loopback"
	_ "github.com/containernetworking/plugins/plugins/meta/portmap"
)
