// Package instance manages the virtual clusters of this machine. Each lives
// in a state folder, $CLUSTERSYNC_HOME/virtual/NAME (CLUSTERSYNC_HOME
// defaults to ~/.clustersync):
//
//	instance.json      name, host namespace, host kubeconfig, service range
//	config.yaml        the virtual cluster's configuration (package config)
//	controlplane/      certificates, etcd data, ports, kubeconfig.yaml (the tenant's)
//	syncer/            the mapping store
//	logs/              serve.log (the supervisor) and syncer.log
//	controlplane/logs/ etcd.log, kube-apiserver.log, kube-controller-manager.log
//	serve.json         written by the running supervisor: PIDs and readiness
//
// A running virtual cluster is one detached supervisor process
// (`clustersync virtual serve`), which holds the embedded etcd, runs
// kube-apiserver and kube-controller-manager, and runs the syncer as a
// process of its own (`clustersync syncer`), restarting it if it dies.
package instance
