//go:build tools

// Package kube pins the Kubernetes commands built by hack/build-binaries.sh,
// and kwok's: in one module, kwok compiles against the same Kubernetes
// libraries as the control plane, so its build reuses their compiled
// packages (seconds instead of minutes).
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "sigs.k8s.io/kwok/cmd/kwok"
	_ "sigs.k8s.io/kwok/cmd/kwokctl"
)
