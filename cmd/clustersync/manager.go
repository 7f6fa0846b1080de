package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/management"
	"github.com/clustersync/clustersync/internal/manager"
)

// newManagerCommand is `clustersync manager`: the management controllers
// and the clouds' operators against a management cluster.
func newManagerCommand() *cobra.Command {
	var (
		o             manager.Options
		kubeconfig    string
		refresh, poll int
		aksRefresh    int
		aksPoll       int
		gkeRefresh    int
		gkePoll       int
		verbosity     int
	)
	cmd := &cobra.Command{
		Use:   "manager",
		Short: "Run the management controllers (hosted clusters on EKS, AKS and GKE, registered clusters)",
		Long: `Run clustersync's management controllers against the management cluster of
--kubeconfig: for each Cluster with spec.eksConfig (Amazon EKS),
spec.aksConfig (Azure AKS) or spec.gkeConfig (Google GKE), the management
controller keeps the cloud's operator object (EKSClusterConfig,
AKSClusterConfig, GKEClusterConfig) in namespace clustersync-global-data,
refreshes the upstream spec every --eks-refresh (--aks-refresh,
--gke-refresh) seconds and syncs managed fields; the cloud's operator
creates, imports, updates and deletes the clusters.

With --eks-endpoint every AWS call goes to that URL instead of AWS, e.g. the
emulator of 'clustersync dev eks'. Without it, the AWS credentials come from
the Secret each cluster's spec.eksConfig.amazonCredentialSecret names.

With --aks-endpoint every Azure Resource Manager call goes to that URL, e.g.
the emulator of 'clustersync dev aks', and Azure AD is not asked for tokens.
Without it, the service principal comes from the Secret each cluster's
spec.aksConfig.azureCredentialSecret names (Rancher's keys
azurecredentialConfig-clientId, -clientSecret, -subscriptionId, -tenantId,
-environment).

With --gke-endpoint every GKE call goes to that URL, e.g. the emulator of
'clustersync dev gke', and Google's token service is not asked. Without it,
the service account's JSON key comes from the Secret each cluster's
spec.gkeConfig.googleCredentialSecret names (Rancher's key
googlecredentialConfig-authEncodedJson).

Several replicas may run: with --leader-elect (the default) one of them holds
the Lease clustersync-system/clustersync-manager and reconciles.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if refresh < 1 {
				return fmt.Errorf("--eks-refresh %d: want at least 1 second", refresh)
			}
			if poll < 1 {
				return fmt.Errorf("--eks-poll %d: want at least 1 second", poll)
			}
			if aksRefresh < 1 {
				return fmt.Errorf("--aks-refresh %d: want at least 1 second", aksRefresh)
			}
			if aksPoll < 1 {
				return fmt.Errorf("--aks-poll %d: want at least 1 second", aksPoll)
			}
			if gkeRefresh < 1 {
				return fmt.Errorf("--gke-refresh %d: want at least 1 second", gkeRefresh)
			}
			if gkePoll < 1 {
				return fmt.Errorf("--gke-poll %d: want at least 1 second", gkePoll)
			}
			cfg, err := loadKubeconfig(kubeconfig)
			if err != nil {
				return err
			}
			o.Config = cfg
			o.EKSRefresh = time.Duration(refresh) * time.Second
			o.EKSPoll = time.Duration(poll) * time.Second
			o.AKSRefresh = time.Duration(aksRefresh) * time.Second
			o.AKSPoll = time.Duration(aksPoll) * time.Second
			o.GKERefresh = time.Duration(gkeRefresh) * time.Second
			o.GKEPoll = time.Duration(gkePoll) * time.Second
			o.Log = textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(verbosity)))
			ctrl.SetLogger(o.Log)
			quietTunnelLogs(verbosity)
			ctx := ctrl.SetupSignalHandler()
			o.Started = func() {
				fmt.Fprintf(cmd.OutOrStdout(), "clustersync manager running (EKS refresh %ds, poll %ds; AKS refresh %ds, poll %ds; GKE refresh %ds, poll %ds)\n",
					refresh, poll, aksRefresh, aksPoll, gkeRefresh, gkePoll)
			}
			return manager.Run(ctx, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the management cluster (default: $KUBECONFIG, else ~/.kube/config, else in-cluster)")
	f.IntVar(&refresh, "eks-refresh", int(management.DefaultRefresh/time.Second), "seconds between refreshes of each EKS cluster's upstream spec (Rancher's eks-refresh)")
	f.IntVar(&poll, "eks-poll", int(eks.DefaultPoll/time.Second), "seconds between describes of an EKS cluster that is being created or updated")
	f.StringVar(&o.EKSEndpoint, "eks-endpoint", "", "send AWS calls to this URL instead of AWS (an emulator, e.g. from 'clustersync dev eks')")
	f.IntVar(&aksRefresh, "aks-refresh", int(management.DefaultRefresh/time.Second), "seconds between refreshes of each AKS cluster's upstream spec (Rancher's aks-refresh)")
	f.IntVar(&aksPoll, "aks-poll", int(engine.DefaultPoll/time.Second), "seconds between reads of an AKS cluster Azure is changing")
	f.StringVar(&o.AKSEndpoint, "aks-endpoint", "", "send Azure Resource Manager calls to this URL instead of Azure (an emulator, e.g. from 'clustersync dev aks'); Azure AD is not asked")
	f.IntVar(&gkeRefresh, "gke-refresh", int(management.DefaultRefresh/time.Second), "seconds between refreshes of each GKE cluster's upstream spec (Rancher's gke-refresh)")
	f.IntVar(&gkePoll, "gke-poll", int(engine.DefaultPoll/time.Second), "seconds between reads of a GKE cluster GKE is changing")
	f.StringVar(&o.GKEEndpoint, "gke-endpoint", "", "send GKE calls to this URL instead of container.googleapis.com (an emulator, e.g. from 'clustersync dev gke'); Google's token service is not asked")
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
	f.StringVar(&o.Registered.AgentImage, "agent-image", manager.DefaultAgentImage, "agent image in import manifests")
	f.IntVarP(&verbosity, "v", "v", 1, "log verbosity")
	return cmd
}
