package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	"github.com/clustersync/clustersync/internal/hosted/gke"
	"github.com/clustersync/clustersync/internal/hosted/gke/gketest"
)

// devGKESecret is the credentials Secret `clustersync dev gke` writes, in
// namespace clustersync-global-data; examples/hosted/gke-cluster.yaml
// names it.
const devGKESecret = "google-dev"

// devGKEProject is the project of that Secret's service account (the
// emulator serves any project).
const devGKEProject = "clustersync-dev"

// newDevGKECommand returns `clustersync dev gke`: the GKE emulator on
// loopback and a credentials Secret for it in the management cluster.
func newDevGKECommand() *cobra.Command {
	var (
		dir, kubeconfig, addr                 string
		createDelay, updateDelay, deleteDelay time.Duration
	)
	cmd := &cobra.Command{
		Use:   "gke",
		Short: "Run a Google Kubernetes Engine emulator on loopback for trying hosted clusters without Google Cloud",
		Long: `Run the GKE emulator clustersync's tests use (internal/hosted/gke/gketest:
container.googleapis.com v1 REST for clusters, node pools and operations, one
operation at a time with 400 failedPrecondition, etags and label
fingerprints) on --addr until interrupted, and write the credentials Secret
clustersync-global-data/` + devGKESecret + ` (a dummy service-account key of project
` + devGKEProject + `) into the management cluster, so that a Cluster whose
spec.gkeConfig.googleCredentialSecret is "clustersync-global-data:` + devGKESecret + `"
is managed against the emulator. Operations go PENDING → RUNNING → DONE:
creations after --create-delay, updates after --update-delay, deletions after
--delete-delay. The emulator keeps its state in memory only; any client
without credentials acts as the Cloud Console.

The management cluster is the one of --kubeconfig, else the local host cluster
of 'clustersync dev up'. Then, in another terminal:

  clustersync manager --kubeconfig K --gke-endpoint http://ADDR --gke-refresh 30 --gke-poll 5
  kubectl apply -f examples/hosted/gke-cluster.yaml

With --gke-endpoint the manager sends a fixed bearer token and never asks
Google's token service. The emulated clusters have no Kubernetes API server
behind their endpoint, so their Connected condition stays False; everything
else behaves as with GKE.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			kubeconfig, cfg, err := devManagementCluster(dir, kubeconfig)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			key := fmt.Sprintf(`{"type": "service_account", "project_id": %q, "client_email": "clustersync@%s.iam.gserviceaccount.com"}`, devGKEProject, devGKEProject)
			if err := writeDevSecret(ctx, cfg, devGKESecret, "clustersync-dev-gke", map[string]string{gke.AuthEncodedJSONField: key}); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("--addr %s: %w", addr, err)
			}
			emu := gketest.NewUnstarted(gketest.Options{CreateDelay: createDelay, UpdateDelay: updateDelay, DeleteDelay: deleteDelay})
			url := "http://" + ln.Addr().String()
			fmt.Fprintf(out, "GKE emulator on %s (project %s, any location); credentials Secret %s/%s written.\n\nRun the manager:\n\n  clustersync manager --kubeconfig %s --gke-endpoint %s --gke-refresh 30 --gke-poll 5\n\nCtrl-C stops the emulator (its clusters are forgotten).\n",
				url, devGKEProject, hostedv1.Namespace, devGKESecret, shellQuote(kubeconfig), url)
			return serveEmulator(ctx, ln, emu.Handler())
		},
	}
	addDirFlag(cmd, &dir)
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the management cluster (default: the local host cluster of 'clustersync dev up')")
	f.StringVar(&addr, "addr", "127.0.0.1:4601", "address the emulator listens on")
	f.DurationVar(&createDelay, "create-delay", 20*time.Second, "how long clusters and pools stay PROVISIONING")
	f.DurationVar(&updateDelay, "update-delay", 10*time.Second, "how long an update operation runs")
	f.DurationVar(&deleteDelay, "delete-delay", 10*time.Second, "how long a deletion runs")
	return cmd
}
