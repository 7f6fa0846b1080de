package controlplane

import (
	"cmp"
	"fmt"
	"strings"
)

// apiServerArgs are kube-apiserver's flags. The endpoint reconciler is off:
// the syncer owns the default/kubernetes Service, pointing it at the host.
func apiServerArgs(l Layout, o Options, p Ports, etcdServers string, etcdTLS EtcdTLS) []string {
	bind, advertise := cmp.Or(o.BindAddress, "127.0.0.1"), cmp.Or(o.AdvertiseAddress, "127.0.0.1")
	return []string{
		"--bind-address=" + bind,
		"--advertise-address=" + advertise,
		fmt.Sprintf("--secure-port=%d", p.APIServer),
		"--etcd-servers=" + etcdServers,
		"--etcd-cafile=" + etcdTLS.CAFile,
		"--etcd-certfile=" + etcdTLS.CertFile,
		"--etcd-keyfile=" + etcdTLS.KeyFile,
		"--etcd-prefix=" + etcdPrefix(o),
		"--tls-cert-file=" + l.PKI("apiserver.crt"),
		"--tls-private-key-file=" + l.PKI("apiserver.key"),
		"--client-ca-file=" + l.PKI("ca.crt"),
		"--service-account-key-file=" + l.PKI("sa.pub"),
		"--service-account-signing-key-file=" + l.PKI("sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--api-audiences=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=" + o.ServiceCIDR,
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		"--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
		"--event-ttl=1h",
		// Every node's kubelet is the syncer's kubelet proxy: at a real
		// node's InternalDNS address (its InternalIP is the host node's
		// own), at a fake node's InternalIP
		// (nodes.KubeletAddressTypes); its certificate is checked against
		// the CA.
		"--kubelet-client-certificate=" + l.PKI("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + l.PKI("apiserver-kubelet-client.key"),
		"--kubelet-certificate-authority=" + l.PKI("ca.crt"),
		"--kubelet-preferred-address-types=InternalDNS,InternalIP",
		// The aggregation layer, for the syncer's metrics API: requests go
		// on with the front-proxy client certificate, the caller in the
		// headers; aggregated APIs are dialled at their endpoints, not
		// through the Service's cluster IP.
		"--requestheader-client-ca-file=" + l.PKI("ca.crt"),
		"--requestheader-allowed-names=" + FrontProxyClientCommonName,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + l.PKI("front-proxy-client.crt"),
		"--proxy-client-key-file=" + l.PKI("front-proxy-client.key"),
		"--enable-aggregator-routing=true",
	}
}

// etcdPrefix is where the API server keeps its objects: the usual /registry
// in the embedded etcd, which belongs to this cluster alone, and
// /clustersync/NAME/registry in an external one, so several virtual clusters
// can share it.
func etcdPrefix(o Options) string {
	if o.Etcd != nil {
		return "/clustersync/" + o.Name + "/registry"
	}
	return "/registry"
}

// DisabledControllers are the kube-controller-manager controllers that act
// on nodes or volumes, which the host cluster owns. The PVC protection
// controller stays on: it removes the finalizer that lets a virtual PVC
// go. With the virtual scheduler (scheduler), the taint eviction
// controller runs too: the virtual cluster then places its pods by the
// taints of its node copies, which a tenant may change (a NoExecute taint
// on a copy evicts the virtual pods that do not tolerate it, as on a
// node); without it a copy's taints act only through the host's.
func DisabledControllers(scheduler bool) []string {
	out := []string{"node-ipam-controller", "node-lifecycle-controller"}
	if !scheduler {
		out = append(out, "taint-eviction-controller")
	}
	return append(out, "device-taint-eviction-controller",
		"persistentvolume-binder-controller", "persistentvolume-attach-detach-controller",
		"persistentvolume-expander-controller", "ttl-controller")
}

// controllerManagerArgs are kube-controller-manager's flags; it listens on
// bind ("" means 127.0.0.1), with the controllers DisabledControllers(scheduler) off.
func controllerManagerArgs(l Layout, p Ports, bind string, scheduler bool) []string {
	ctrls := "*"
	for _, c := range DisabledControllers(scheduler) {
		ctrls += ",-" + c
	}
	return append(componentArgs(l.ControllerManagerKubeconfig(), bind, p.ControllerManager),
		"--controllers="+ctrls,
		"--service-account-private-key-file="+l.PKI("sa.key"),
		"--root-ca-file="+l.PKI("ca.crt"),
		"--cluster-signing-cert-file="+l.PKI("ca.crt"),
		"--cluster-signing-key-file="+l.PKI("ca.key"),
		"--use-service-account-credentials=true",
		// Workloads react quickly: the defaults are tuned for big clusters.
		"--concurrent-deployment-syncs=10",
		"--concurrent-replicaset-syncs=10",
		"--kube-api-qps=200",
		"--kube-api-burst=400",
	)
}

// componentArgs are the flags kube-controller-manager and kube-scheduler
// share: kubeconfig kc for their API calls, authentication and
// authorization; listening on bind ("" means 127.0.0.1) at port; one
// instance (no leader election); no profiling.
func componentArgs(kc, bind string, port int) []string {
	return []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=" + cmp.Or(bind, "127.0.0.1"),
		fmt.Sprintf("--secure-port=%d", port),
		"--leader-elect=false",
		"--profiling=false",
	}
}

// schedulerArgs are kube-scheduler's flags (the virtual scheduler,
// controlPlane.advanced.virtualScheduler.enabled); it listens on bind (""
// means 127.0.0.1) and runs Kubernetes' default scheduling profile.
func schedulerArgs(l Layout, p Ports, bind string) []string {
	return componentArgs(l.SchedulerKubeconfig(), bind, p.Scheduler)
}

func joinURLs(urls []string) string { return strings.Join(urls, ",") }
