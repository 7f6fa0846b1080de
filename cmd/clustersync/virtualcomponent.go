package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/controlplane"
	"github.com/clustersync/clustersync/internal/virtual/dns"
)

// newVirtualComponentCommand returns `clustersync virtual component`, the
// commands the containers of the control plane pod run
// (charts/virtual-cluster/templates/statefulset.yaml).
func newVirtualComponentCommand() *cobra.Command {
	var o struct{ name, namespace, dir, configFile string }
	cmd := &cobra.Command{
		Use:   "component",
		Short: "Run one part of a virtual cluster's control plane inside its host pod (used by the chart)",
		Long: `The containers of a virtual cluster's control plane pod (the StatefulSet of
charts/virtual-cluster) run these; the kubelet starts them all at once after
init and restarts each one that fails. Each waits for what it needs, polling
every 200 ms and saying every 10 s what it still waits for.

  init                     certificates (kept in host Secret NAME-certs), kubeconfigs,
                           host Secret vc-NAME with the tenant's kubeconfig
  etcd                     the embedded etcd (127.0.0.1:2379; /health on :2381)
  kube-apiserver           kube-apiserver on :8443 (replaces this process once the
                           embedded etcd answers /health)
  kube-controller-manager  kube-controller-manager on :10257 (replaces this process
                           once kube-apiserver answers /readyz)
  kube-scheduler           kube-scheduler on :10259 (likewise), with
                           controlPlane.advanced.virtualScheduler.enabled
  coredns                  the virtual cluster's DNS server (CoreDNS) on :1053 UDP and TCP;
                           names outside cluster.local go to the pod's /etc/resolv.conf;
                           /health on :8180, /ready on :8181, metrics on :9153; or
                           controlPlane.coredns.overwriteConfig, the Corefile of the user's;
                           once kube-apiserver answers /readyz

The host namespace is --namespace, else $POD_NAMESPACE; the pod IP is $POD_IP.
Each sets GOGC=25 (Go's collector at 1.25 times the live heap, not 2: about
80 MiB less for the pod) unless the environment sets GOGC
(controlPlane.statefulSet.env).`,
	}
	f := cmd.PersistentFlags()
	f.StringVar(&o.name, "name", "", "virtual cluster name (required)")
	f.StringVar(&o.namespace, "namespace", os.Getenv("POD_NAMESPACE"), "host namespace of the pod")
	f.StringVar(&o.dir, "data", "/data", "data folder: certificates, kubeconfigs, etcd's data")
	f.StringVar(&o.configFile, "config", "/etc/clustersync/config.yaml", "virtual cluster configuration (the chart's values)")
	_ = cmd.MarkPersistentFlagRequired("name")

	options := func() (controlplane.PodOptions, *config.Config, error) {
		cfg, err := config.Load(o.configFile)
		if err != nil {
			return controlplane.PodOptions{}, nil, err
		}
		po := podOptions(cfg, o.name, o.namespace, o.dir)
		if po.Namespace == "" {
			return po, nil, fmt.Errorf("--namespace (or $POD_NAMESPACE) is required")
		}
		if ext := cfg.ControlPlane.BackingStore.Etcd.External; ext.Enabled {
			po.Etcd = &controlplane.ExternalEtcd{Endpoints: []string{ext.Endpoint}, TLS: controlplane.EtcdTLS{
				CAFile: ext.TLS.CAFile, CertFile: ext.TLS.CertFile, KeyFile: ext.TLS.KeyFile,
			}}
		}
		return po, cfg, nil
	}
	// run is a component's command: fn gets the pod's options and the
	// configuration they come from.
	run := func(use, short string, fn func(*cobra.Command, controlplane.PodOptions, *config.Config) error) *cobra.Command {
		return &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs, RunE: func(cmd *cobra.Command, _ []string) error {
			controlplane.SetDefaultGOGC()
			po, cfg, err := options()
			if err != nil {
				return err
			}
			return fn(cmd, po, cfg)
		}}
	}
	cmd.AddCommand(
		run("init", "Prepare certificates and kubeconfigs; write host Secret vc-NAME", func(cmd *cobra.Command, po controlplane.PodOptions, _ *config.Config) error {
			cfg, err := rest.InClusterConfig()
			if err != nil {
				return err
			}
			host, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			if err := controlplane.InitPod(cmd.Context(), host, po); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "control plane of %s prepared in %s; tenant kubeconfig in host secret %s/%s\n",
				po.Name, po.Dir, po.Namespace, controlplane.KubeconfigSecretName(po.Name))
			return nil
		}),
		run("etcd", "Run the embedded etcd", func(_ *cobra.Command, po controlplane.PodOptions, _ *config.Config) error {
			if po.Etcd != nil {
				return fmt.Errorf("controlPlane.backingStore.etcd.external is enabled: the pod runs no etcd")
			}
			return controlplane.RunPodEtcd(ctrl.SetupSignalHandler(), po)
		}),
		run("kube-apiserver", "Run kube-apiserver (exec) once the embedded etcd is healthy", func(cmd *cobra.Command, po controlplane.PodOptions, _ *config.Config) error {
			args, err := controlplane.PodAPIServerArgs(po)
			if err != nil {
				return err
			}
			if err := controlplane.WaitForPodEtcd(cmd.Context(), po, sayTo(cmd.ErrOrStderr())); err != nil {
				return err
			}
			return execBinary("kube-apiserver", args)
		}),
		run("kube-controller-manager", "Run kube-controller-manager (exec) once kube-apiserver is ready", func(cmd *cobra.Command, po controlplane.PodOptions, _ *config.Config) error {
			if err := controlplane.WaitForPodAPIServer(cmd.Context(), po, sayTo(cmd.ErrOrStderr())); err != nil {
				return err
			}
			return execBinary("kube-controller-manager", controlplane.PodControllerManagerArgs(po))
		}),
		run("kube-scheduler", "Run kube-scheduler (exec), the virtual scheduler, once kube-apiserver is ready", func(cmd *cobra.Command, po controlplane.PodOptions, _ *config.Config) error {
			if err := controlplane.WaitForPodAPIServer(cmd.Context(), po, sayTo(cmd.ErrOrStderr())); err != nil {
				return err
			}
			return execBinary("kube-scheduler", controlplane.PodSchedulerArgs(po))
		}),
		run("coredns", "Run the virtual cluster's DNS server (CoreDNS) once kube-apiserver is ready", func(cmd *cobra.Command, po controlplane.PodOptions, cfg *config.Config) error {
			do := dns.Options{Kubeconfig: controlplane.Layout{Dir: po.Dir}.AdminKubeconfig(),
				ClusterDomain: cfg.Networking.Advanced.ClusterDomain, FallbackHostCluster: cfg.Networking.Advanced.FallbackHostCluster,
				NodeHostnames: cfg.Networking.Advanced.ProxyKubelets.ByHostname}
			corefile, err := dns.Corefile(do)
			if text := cfg.ControlPlane.CoreDNS.OverwriteConfig; text != "" {
				corefile, err = dns.UserCorefile(text, do)
				fmt.Fprintf(cmd.ErrOrStderr(), "Corefile of %s, as served:\n%s\n", dns.UserCorefileKey, corefile)
			}
			if err != nil {
				return err
			}
			ctx := ctrl.SetupSignalHandler()
			if err := controlplane.WaitForPodAPIServer(ctx, po, sayTo(cmd.ErrOrStderr())); err != nil {
				return err
			}
			return dns.Run(ctx, corefile)
		}),
	)
	return cmd
}

// podOptions are the options of the control plane of virtual cluster
// name in host namespace namespace, data folder dir, from its
// configuration cfg, as its containers (the components, the syncer) take
// them; the pod IP is $POD_IP.
func podOptions(cfg *config.Config, name, namespace, dir string) controlplane.PodOptions {
	po := controlplane.PodOptions{Name: name, Namespace: namespace, Dir: dir, PodIP: os.Getenv("POD_IP"),
		ExtraSANs: cfg.APIServerSANs(), VirtualScheduler: cfg.VirtualScheduler(), ExtraArgs: controlplane.ExtraArgsOf(cfg)}
	if cfg.ControlPlane.Ingress.Enabled {
		po.IngressHost = cfg.ControlPlane.Ingress.Host
	}
	return po
}

// execBinary replaces this process with name (found on PATH) and args, so
// that the container's process is the component itself and the kubelet
// sees its exit.
func execBinary(name string, args []string) error {
	path, err := exec.LookPath(name)
	if err != nil {
		return err
	}
	return syscall.Exec(path, append([]string{path}, args...), os.Environ())
}

// sayTo writes each message to w on a line of its own.
func sayTo(w io.Writer) func(string) {
	return func(msg string) { fmt.Fprintln(w, msg) }
}
