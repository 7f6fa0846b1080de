package main

import (
	"fmt"
	"os"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/manager"
	"github.com/clustersync/clustersync/internal/registered"
	"github.com/clustersync/clustersync/internal/registered/agent"
	"github.com/clustersync/clustersync/internal/registered/registration"
	"github.com/clustersync/clustersync/internal/version"
)

// newClusterImportCommand is `clustersync cluster import NAME`.
func newClusterImportCommand(kubeconfig *string) *cobra.Command {
	var (
		members []string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "import NAME",
		Short: "Register an existing cluster: create the Cluster and print the command that connects it",
		Long: `Create Cluster NAME as a registered cluster (spec.importedConfig), wait for the
management server to issue its registration token, and print the two
commands to run against the cluster to import, as Rancher does:

  kubectl apply -f https://<server>/v1/import/<token>_<NAME>.yaml
  curl --insecure -sfL https://<server>/v1/import/<token>_<NAME>.yaml | kubectl apply -f -

(the second for a server whose certificate kubectl does not trust). The
manifest installs the agent in namespace clustersync-system; the cluster
turns Active once it connects. Running import again for the same NAME
prints the commands again.

--member USER=ROLE grants a management-cluster identity a role in the
cluster (cluster-owner, cluster-member, read-only); group:NAME=ROLE and
sa:NAMESPACE:NAME=ROLE name a group or a service account.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var ms []mgmtv1.ClusterMember
			for _, v := range members {
				m, err := registered.ParseMember(v)
				if err != nil {
					return err
				}
				ms = append(ms, m)
			}
			cfg, err := loadKubeconfig(*kubeconfig)
			if err != nil {
				return err
			}
			scheme, err := manager.Scheme()
			if err != nil {
				return err
			}
			c, err := client.New(cfg, client.Options{Scheme: scheme})
			if err != nil {
				return err
			}
			crt, err := registered.Import(cmd.Context(), c, args[0], ms, timeout)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Cluster %s is Pending until its agent connects. Run against it:\n\n  %s\n\nor, if kubectl does not trust the server's certificate:\n\n  %s\n\nThe token expires at %s.\n",
				args[0], crt.Status.Command, crt.Status.InsecureCommand, crt.Status.ExpiresAt.Format(time.RFC3339))
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&members, "member", nil, "[user:|group:|sa:]NAME=ROLE, repeatable")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long to wait for the registration token")
	return cmd
}

// newAgentCommand is `clustersync agent`, run by the import manifest's
// Deployment in a registered cluster.
func newAgentCommand() *cobra.Command {
	var verbosity int
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Connect this cluster to the management server (run by the import manifest)",
		Long: `Keep a reverse tunnel from this cluster to the management server: check the
server's CA against CLUSTERSYNC_CA_CHECKSUM, then connect to CLUSTERSYNC_SERVER
and register cluster CLUSTERSYNC_CLUSTER with the token of Secret
clustersync-system/clustersync-agent-credentials (or CLUSTERSYNC_TOKEN),
reconnecting with backoff. Runs in the cluster (in-cluster configuration) or,
with --kubeconfig, from outside it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := agentConfig(cmd)
			if err != nil {
				return err
			}
			log := textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(verbosity)))
			ctrl.SetLogger(log)
			quietTunnelLogs(verbosity)
			return agent.Run(ctrl.SetupSignalHandler(), agent.Options{Config: cfg, ServerURL: os.Getenv(registration.EnvServer),
				CAChecksum: os.Getenv(registration.EnvCAChecksum), Cluster: os.Getenv(registration.EnvCluster),
				Token: os.Getenv(registration.EnvToken), Version: version.Version(), Log: log})
		},
	}
	cmd.PersistentFlags().String("kubeconfig", "", "kubeconfig of this cluster (default: in-cluster)")
	cmd.Flags().IntVarP(&verbosity, "v", "v", 1, "log verbosity")
	cmd.AddCommand(&cobra.Command{
		Use:   "cleanup",
		Short: "Remove clustersync's objects from this cluster (run by the disconnect Job)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := agentConfig(cmd)
			if err != nil {
				return err
			}
			kube, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			return agent.Cleanup(cmd.Context(), kube)
		},
	})
	return cmd
}

// agentConfig is the in-cluster configuration, or --kubeconfig's.
func agentConfig(cmd *cobra.Command) (*rest.Config, error) {
	path, _ := cmd.Flags().GetString("kubeconfig")
	if path == "" {
		if cfg, err := rest.InClusterConfig(); err == nil {
			return cfg, nil
		}
	}
	return loadKubeconfig(path)
}

// quietTunnelLogs keeps rancher/remotedialer's logrus output (a line per
// tunnel connection) to warnings unless -v is 4 or more.
func quietTunnelLogs(verbosity int) {
	if verbosity < 4 {
		logrus.SetLevel(logrus.WarnLevel)
	}
}
