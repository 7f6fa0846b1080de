// Package hostcluster runs the local "host" Kubernetes cluster that
// clustersync uses for development and integration tests. It drives kwok's own
// tooling, kwokctl, with its "binary" runtime: kwokctl starts etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and the
// kwok-controller as ordinary processes from the prebuilt binaries of package
// binaries and generates their TLS certificates; this package leases their
// ports from the machine's port registry (package ports) and adds a state folder, readiness checks with client-go and error messages that
// show the end of kwokctl's and the failed component's logs. The nodes are
// fake: kwok-controller plays their kubelets, so a pod the scheduler places on
// one is given that node, a pod IP and the Running phase within seconds, with
// no container runtime, which makes the cluster cheap enough for every test
// run.
//
// A cluster lives in one state folder, Options.Dir:
//
//	Dir/host.json         name, service CIDR, node count (read by Open)
//	Dir/kubeconfig.yaml   admin kubeconfig (export KUBECONFIG=...)
//	Dir/kwokctl.yaml      the kwokctl configuration it was created with
//	Dir/kwokctl.log       every kwokctl command run and its output
//	Dir/kwok/             KWOK_WORKDIR; kwokctl keeps the cluster in
//	                      Dir/kwok/clusters/NAME/{bin,etcd,logs,pids,pki,...}
//
// The paths in these files are absolute, so the folder cannot be moved.
package hostcluster
