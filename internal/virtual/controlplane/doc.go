// Package controlplane runs the control plane of one virtual cluster on the
// local machine: etcd (embedded in the calling process through
// go.etcd.io/etcd/server/v3/embed, or an external etcd by URL), and real
// kube-apiserver and kube-controller-manager processes. All state — the
// certificates, the etcd data, the chosen ports and the logs — lives in one
// folder, so a stopped control plane starts again with its objects and its
// address unchanged.
//
// The virtual cluster has no scheduler and no nodes of its own: pods are
// scheduled by the host cluster, and the syncer binds them to fake nodes.
// The controllers that would act on nodes or volumes are therefore off, as
// in vCluster.
package controlplane
