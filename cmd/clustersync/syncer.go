package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	"github.com/clustersync/clustersync/internal/virtual/dns"
	"github.com/clustersync/clustersync/internal/virtual/mtls"
	"github.com/clustersync/clustersync/internal/virtual/resources/services"
	"github.com/clustersync/clustersync/internal/virtual/runner"
)

// newSyncerCommand is `clustersync syncer`: the syncer of one virtual
// cluster as a process of its own. `clustersync virtual serve` runs it; it
// can also run by hand against any virtual and host API servers.
func newSyncerCommand() *cobra.Command {
	var o struct {
		name, hostNamespace, virtualKubeconfig, hostKubeconfig, configFile, stateDir, healthAddr, metricsAddr string
		controlPlaneDir                                                                                       string
		dnsSelector, kubeletAddr, kubeletCert, kubeletKey, kubeletClientCA                                    string
		metricsAPIAddr, metricsAPIIP, metricsAPICert, metricsAPIKey, metricsAPIClientCA                       string
		verbosity, dnsPort                                                                                    int
	}
	cmd := &cobra.Command{
		Use:   "syncer",
		Short: "Run the syncer of a virtual cluster (normally started by `virtual create`)",
		Long: `Run the syncer of a virtual cluster: it copies what the tenant creates to the
host namespace and the host's status back. It first waits for the virtual API
server (--virtual-kubeconfig) to answer /readyz, saying every 10 s what it
still waits for; in the chart's control plane pod it starts beside
kube-apiserver.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			controlplane.SetDefaultGOGC()
			cfg := config.Default()
			if o.configFile != "" {
				var err error
				if cfg, err = config.Load(o.configFile); err != nil {
					return err
				}
			}
			vcfg, err := clientcmd.BuildConfigFromFlags("", o.virtualKubeconfig)
			if err != nil {
				return fmt.Errorf("--virtual-kubeconfig: %w", err)
			}
			// Without --host-kubeconfig the syncer runs in the host, in the
			// host namespace it syncs to (the chart's control plane pod).
			inHost := o.hostKubeconfig == ""
			hcfg, err := clientcmd.BuildConfigFromFlags("", o.hostKubeconfig)
			if err != nil {
				return fmt.Errorf("--host-kubeconfig: %w", err)
			}
			var dnsBackend *services.DNSBackend
			if o.dnsSelector != "" {
				sel, err := labels.ConvertSelectorToLabelsMap(o.dnsSelector)
				if err != nil {
					return fmt.Errorf("--dns-selector %q: %w", o.dnsSelector, err)
				}
				if o.dnsPort < 1 || o.dnsPort > 65535 {
					return fmt.Errorf("--dns-port %d must be between 1 and 65535", o.dnsPort)
				}
				dnsBackend = &services.DNSBackend{Selector: sel, Port: int32(o.dnsPort)}
			}
			var kubelet *runner.KubeletOptions
			if o.kubeletAddr != "" {
				if o.kubeletCert == "" || o.kubeletKey == "" || o.kubeletClientCA == "" {
					return fmt.Errorf("--kubelet-addr needs --kubelet-cert, --kubelet-key and --kubelet-client-ca")
				}
				kubelet = &runner.KubeletOptions{Addr: o.kubeletAddr, TLS: mtls.Files{
					CertFile: o.kubeletCert, KeyFile: o.kubeletKey, ClientCAFile: o.kubeletClientCA}}
			}
			var metricsAPI *runner.MetricsAPIOptions
			if o.metricsAPIAddr != "" {
				if o.metricsAPIIP == "" || o.metricsAPICert == "" || o.metricsAPIKey == "" || o.metricsAPIClientCA == "" {
					return fmt.Errorf("--metrics-api-addr needs --metrics-api-ip, --metrics-api-cert, --metrics-api-key and --metrics-api-client-ca")
				}
				metricsAPI = &runner.MetricsAPIOptions{Addr: o.metricsAPIAddr, IP: o.metricsAPIIP, TLS: mtls.Files{
					CertFile: o.metricsAPICert, KeyFile: o.metricsAPIKey, ClientCAFile: o.metricsAPIClientCA}}
			}
			var pod *controlplane.PodOptions
			if o.controlPlaneDir != "" {
				po := podOptions(cfg, o.name, o.hostNamespace, o.controlPlaneDir)
				pod = &po
			}
			log := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(o.verbosity)))
			ctrl.SetLogger(log)
			return runner.Run(ctrl.SetupSignalHandler(), runner.Options{
				Name: o.name, HostNamespace: o.hostNamespace, Virtual: vcfg, Host: hcfg, Config: cfg,
				StateDir: o.stateDir, HealthAddr: o.healthAddr, MetricsAddr: o.metricsAddr, Log: log,
				HostNamespaceExists: inHost, DNS: dnsBackend, Kubelet: kubelet, MetricsAPI: metricsAPI, Pod: pod,
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.name, "name", "", "virtual cluster name (required)")
	f.StringVar(&o.hostNamespace, "host-namespace", "", "host namespace the objects are synced to (required)")
	f.StringVar(&o.virtualKubeconfig, "virtual-kubeconfig", "", "kubeconfig of the virtual cluster (required)")
	f.StringVar(&o.hostKubeconfig, "host-kubeconfig", "", "kubeconfig of the host cluster (default: the pod's service account, when it runs in the host namespace)")
	f.StringVar(&o.configFile, "config", "", "virtual cluster configuration file (default: every default)")
	f.StringVar(&o.stateDir, "state-dir", "", "folder for the mapping store (default: in memory)")
	f.StringVar(&o.controlPlaneDir, "control-plane-dir", "", "data folder of the pod control plane the syncer runs in (the chart's: /data): the syncer keeps its API server's certificate covering the addresses of its host Service (a load balancer's, the nodes' for node ports) and writes the exportKubeConfig Secrets")
	f.StringVar(&o.healthAddr, "health-addr", "", "address serving /healthz and /readyz, e.g. 127.0.0.1:8081")
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "address serving Prometheus metrics on /metrics, e.g. 127.0.0.1:8080")
	f.StringVar(&o.dnsSelector, "dns-selector", "", "labels (k=v,k2=v2) of the host pod serving the virtual cluster's DNS; the host copy of kube-system/kube-dns selects it (default: none, the Service selects the tenant's own DNS pods)")
	f.IntVar(&o.dnsPort, "dns-port", dns.Port, "that pod's DNS port (UDP and TCP), which the Service's port 53 leads to")
	f.StringVar(&o.kubeletAddr, "kubelet-addr", "", "serve the fake nodes' kubelet API here (logs, exec, attach, port-forward through the host), e.g. 127.0.0.1:10250; fake nodes name this IP and port (default: none)")
	f.StringVar(&o.kubeletCert, "kubelet-cert", "", "serving certificate of --kubelet-addr (PEM)")
	f.StringVar(&o.kubeletKey, "kubelet-key", "", "its key (PEM)")
	f.StringVar(&o.kubeletClientCA, "kubelet-client-ca", "", "CA of the virtual API server's kubelet client certificate (PEM)")
	f.StringVar(&o.metricsAPIAddr, "metrics-api-addr", "", "serve the virtual cluster's metrics.k8s.io API (kubectl top) here, from the host's metrics API, e.g. :9444; registered as APIService v1beta1.metrics.k8s.io (default: none)")
	f.StringVar(&o.metricsAPIIP, "metrics-api-ip", "", "the IP the virtual API server reaches --metrics-api-addr at (the control plane pod's IP; not loopback)")
	f.StringVar(&o.metricsAPICert, "metrics-api-cert", "", "serving certificate of --metrics-api-addr, for metrics-server.kube-system.svc (PEM)")
	f.StringVar(&o.metricsAPIKey, "metrics-api-key", "", "its key (PEM)")
	f.StringVar(&o.metricsAPIClientCA, "metrics-api-client-ca", "", "CA of the virtual API server's front-proxy client certificate, which also signed --metrics-api-cert (PEM)")
	f.IntVarP(&o.verbosity, "v", "v", 1, "log verbosity")
	for _, n := range []string{"name", "host-namespace", "virtual-kubeconfig"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}
