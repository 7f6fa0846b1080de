package main

import (
	cryptotls "crypto/tls"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	"github.com/clustersync/clustersync/internal/hosted/aks"
	"github.com/clustersync/clustersync/internal/hosted/aks/akstest"
)

// devAKSSecret is the credentials Secret `clustersync dev aks` writes, in
// namespace clustersync-global-data; examples/hosted/aks-cluster.yaml
// names it.
const devAKSSecret = "azure-dev"

// devAKSSubscription is the subscription of that Secret.
const devAKSSubscription = "00000000-0000-0000-0000-0000000000de"

// newDevAKSCommand returns `clustersync dev aks`: the Azure Resource
// Manager emulator for AKS on loopback and a credentials Secret for it in
// the management cluster.
func newDevAKSCommand() *cobra.Command {
	var (
		dir, kubeconfig, addr, location string
		createDelay, updateDelay        time.Duration
		tls                             bool
	)
	cmd := &cobra.Command{
		Use:   "aks",
		Short: "Run an Azure Kubernetes Service emulator on loopback for trying hosted clusters without Azure",
		Long: `Run the Azure Resource Manager emulator clustersync's tests use
(internal/hosted/aks/akstest: resource groups, managed clusters, agent pools,
long-running operations, eTags, 409 while busy) on --addr until interrupted,
and write the credentials Secret clustersync-global-data/` + devAKSSecret + ` (dummy service
principal, subscription ` + devAKSSubscription + `) into the management cluster, so
that a Cluster whose spec.aksConfig.azureCredentialSecret is
"clustersync-global-data:` + devAKSSecret + `" is managed against the emulator. Clusters
go Creating → Succeeded after --create-delay, updates finish after
--update-delay. The emulator keeps its state in memory only; plain HTTP by
default, HTTPS with a printed CA with --tls.

The management cluster is the one of --kubeconfig, else the local host cluster
of 'clustersync dev up'. Then, in another terminal:

  clustersync manager --kubeconfig K --aks-endpoint http://ADDR --aks-refresh 30 --aks-poll 5
  kubectl apply -f examples/hosted/aks-cluster.yaml

With --aks-endpoint the manager sends the Secret's client secret as the bearer
token and never asks Azure AD. The emulated clusters have no Kubernetes API
server behind their endpoint, so their Connected condition stays False;
everything else behaves as with AKS.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			kubeconfig, cfg, err := devManagementCluster(dir, kubeconfig)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := writeDevSecret(ctx, cfg, devAKSSecret, "clustersync-dev-aks", map[string]string{
				aks.SubscriptionIDField: devAKSSubscription, aks.TenantIDField: "dev-tenant", aks.ClientIDField: "dev-client",
				aks.ClientSecretField: "dev-secret", aks.EnvironmentField: "AzurePublicCloud"}); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("--addr %s: %w", addr, err)
			}
			emu := akstest.NewUnstarted(akstest.Options{CreateDelay: createDelay, UpdateDelay: updateDelay, DeleteDelay: createDelay / 2,
				Location: location, TLS: tls})
			scheme, extra := "http", ""
			if tls {
				tlsCfg, err := emu.TLSConfig(ln.Addr().(*net.TCPAddr).IP.String())
				if err != nil {
					return err
				}
				ln = newTLSListener(ln, tlsCfg)
				scheme = "https"
				extra = fmt.Sprintf("\nIts CA (give it to the manager's trust store, e.g. SSL_CERT_FILE):\n\n%s", emu.CACertPEM())
			}
			url := scheme + "://" + ln.Addr().String()
			fmt.Fprintf(out, "AKS emulator on %s (location %s); credentials Secret %s/%s written.\n\nRun the manager:\n\n  clustersync manager --kubeconfig %s --aks-endpoint %s --aks-refresh 30 --aks-poll 5\n%s\nCtrl-C stops the emulator (its clusters are forgotten).\n",
				url, location, hostedv1.Namespace, devAKSSecret, shellQuote(kubeconfig), url, extra)
			return serveEmulator(ctx, ln, emu.Handler())
		},
	}
	addDirFlag(cmd, &dir)
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the management cluster (default: the local host cluster of 'clustersync dev up')")
	f.StringVar(&addr, "addr", "127.0.0.1:4600", "address the emulator listens on")
	f.StringVar(&location, "location", akstest.DefaultLocation, "the emulated region")
	f.DurationVar(&createDelay, "create-delay", 20*time.Second, "how long clusters and pools stay Creating")
	f.DurationVar(&updateDelay, "update-delay", 10*time.Second, "how long an update stays Updating")
	f.BoolVar(&tls, "tls", false, "serve HTTPS with a certificate of a CA the command prints")
	return cmd
}

// newTLSListener serves TLS with cfg on ln.
func newTLSListener(ln net.Listener, cfg *cryptotls.Config) net.Listener {
	return cryptotls.NewListener(ln, cfg)
}
