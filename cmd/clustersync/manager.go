package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/mitchellh/go-wordwrap"
	"github.com/spf13/cobra"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clustersync/clustersync/internal/hosted/clouds"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/management"
	"github.com/clustersync/clustersync/internal/manager"
)

// newManagerCommand is `clustersync manager`: the management controllers
// and the clouds' operators against a management cluster.
func newManagerCommand() *cobra.Command {
	var (
		o          manager.Options
		kubeconfig string
		verbosity  int
	)
	table := clouds.All()
	// Per cloud (the table of clouds, internal/hosted/clouds): its
	// endpoint, and its refresh and poll periods in seconds.
	endpoints := make([]string, len(table))
	refresh := make([]int, len(table))
	poll := make([]int, len(table))
	cmd := &cobra.Command{
		Use:   "manager",
		Short: "Run the management controllers (hosted clusters on " + cloudNames(table, " and ", func(d management.Descriptor) string { return d.Name }) + ", registered clusters)",
		Long:  managerLong(table),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Clouds = map[string]management.CloudOptions{}
			var periods []string
			for i, d := range table {
				for _, p := range []struct {
					flag    string
					seconds int
				}{{d.Key + "-refresh", refresh[i]}, {d.Key + "-poll", poll[i]}} {
					if p.seconds < 1 {
						return fmt.Errorf("--%s %d: want at least 1 second", p.flag, p.seconds)
					}
				}
				o.Clouds[d.Key] = management.CloudOptions{Endpoint: endpoints[i],
					Refresh: time.Duration(refresh[i]) * time.Second, Poll: time.Duration(poll[i]) * time.Second}
				periods = append(periods, fmt.Sprintf("%s refresh %ds, poll %ds", d.Name, refresh[i], poll[i]))
			}
			cfg, err := loadKubeconfig(kubeconfig)
			if err != nil {
				return err
			}
			o.Config = cfg
			o.Log = textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(verbosity)))
			ctrl.SetLogger(o.Log)
			quietTunnelLogs(verbosity)
			ctx := ctrl.SetupSignalHandler()
			o.Started = func() {
				fmt.Fprintf(cmd.OutOrStdout(), "clustersync manager running (%s)\n", strings.Join(periods, "; "))
			}
			return manager.Run(ctx, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the management cluster (default: $KUBECONFIG, else ~/.kube/config, else in-cluster)")
	for i, d := range table {
		f.IntVar(&refresh[i], d.Key+"-refresh", int(management.DefaultRefresh/time.Second), d.RefreshHelp())
		f.IntVar(&poll[i], d.Key+"-poll", int(engine.DefaultPoll/time.Second), d.PollHelp())
		f.StringVar(&endpoints[i], d.Key+"-endpoint", "", d.Endpoint)
	}
	f.StringVar(&o.DashboardAddr, "dashboard-addr", "", "address serving the web dashboard, e.g. 127.0.0.1:8090 (\"\" turns it off); users sign in with their own bearer token or kubeconfig")
	f.StringVar(&o.DashboardTLSCert, "dashboard-tls-cert", "", "the dashboard's serving certificate chain, PEM (with --dashboard-tls-key: HTTPS and Secure cookies)")
	f.StringVar(&o.DashboardTLSKey, "dashboard-tls-key", "", "the dashboard's serving key, PEM")
	f.BoolVar(&o.InstallCRDs, "install-crds", true, "create or update the CRDs before starting")
	f.BoolVar(&o.LeaderElection, "leader-elect", true, "hold a Lease so only one replica reconciles")
	f.StringVar(&o.LeaderElectionNamespace, "leader-elect-namespace", manager.DefaultLeaderElectionNamespace, "namespace of the leader-election Lease and of the dashboard's sessions (one Secret a signed-in user)")
	f.IntVar(&o.Workers, "workers", manager.DefaultWorkers, "objects each controller reconciles at once")
	f.StringVar(&o.HealthAddr, "health-addr", "", "address serving /healthz and /readyz, e.g. 127.0.0.1:8081")
	f.StringVar(&o.MetricsAddr, "metrics-addr", "", "address serving Prometheus metrics on /metrics, e.g. 127.0.0.1:8080")
	f.StringVar(&o.Registered.ServeAddr, "serve-addr", ":8443", "HTTPS address of registered clusters: import manifests, agent tunnels, the /k8s/clusters proxy (\"\" turns registered clusters off)")
	f.StringVar(&o.Registered.ExternalURL, "external-url", "", "https URL agents and users reach the server at (default https://<serve-addr>)")
	f.StringVar(&o.Registered.TLSCertFile, "tls-cert", "", "serving certificate chain, PEM (default: a self-signed CA kept in Secret clustersync-system/clustersync-serving-ca)")
	f.StringVar(&o.Registered.TLSKeyFile, "tls-key", "", "serving key, PEM")
	f.StringVar(&o.Registered.TLSCAFile, "tls-ca", "", "CA agents trust with --tls-cert (default: the chain's last certificate)")
	f.StringVar(&o.Registered.AgentImage, "agent-image", manager.DefaultAgentImage(), "agent image in import manifests")
	f.IntVarP(&verbosity, "v", "v", 1, "log verbosity")
	return cmd
}

// managerLong is the manager's --help text, a paragraph per cloud of table.
func managerLong(table []management.Descriptor) string {
	paras := []string{"Run clustersync's management controllers against the management cluster of --kubeconfig: for each Cluster with " +
		cloudNames(table, " or ", func(d management.Descriptor) string { return "spec." + d.ConfigField + " (" + d.Product + ")" }) +
		", the management controller keeps the cloud's operator object in namespace clustersync-global-data, " +
		"refreshes the upstream spec every --<cloud>-refresh seconds and syncs managed fields; " +
		"the cloud's operator creates, imports, updates and deletes the clusters."}
	for _, d := range table {
		paras = append(paras, fmt.Sprintf("--%s-endpoint: %s. Without it, %s.", d.Key, d.Endpoint, d.Credentials))
	}
	paras = append(paras, "Several replicas may run: with --leader-elect (the default) one of them holds "+
		"the Lease clustersync-system/clustersync-manager and reconciles.")
	for i, p := range paras {
		paras[i] = wordwrap.WrapString(p, 78)
	}
	return strings.Join(paras, "\n\n")
}

// cloudNames joins name of each cloud of table: "A, B and C" with last " and ".
func cloudNames(table []management.Descriptor, last string, name func(management.Descriptor) string) string {
	var names []string
	for _, d := range table {
		names = append(names, name(d))
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + last + names[len(names)-1]
}
