package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
)

// devEKSSecret is the credentials Secret `clustersync dev eks` writes, in
// namespace clustersync-global-data; examples/hosted/eks-cluster.yaml
// names it.
const devEKSSecret = "aws-dev"

// newDevEKSCommand returns `clustersync dev eks`: the EKS emulator on
// loopback and a credentials Secret for it in the management cluster.
func newDevEKSCommand() *cobra.Command {
	var (
		dir, kubeconfig, addr, region string
		createDelay, updateDelay      time.Duration
	)
	cmd := &cobra.Command{
		Use:   "eks",
		Short: "Run an Amazon EKS emulator on loopback for trying hosted clusters without AWS",
		Long: `Run the EKS emulator clustersync's tests use (internal/hosted/eks/ekstest) on
--addr until interrupted, and write the credentials Secret
clustersync-global-data/` + devEKSSecret + ` (dummy keys) into the management cluster, so
that a Cluster whose spec.eksConfig.amazonCredentialSecret is
"clustersync-global-data:` + devEKSSecret + `" is managed against the emulator.
Clusters go CREATING → ACTIVE after --create-delay, updates finish after
--update-delay. The emulator keeps its state in memory only.

The management cluster is the one of --kubeconfig, else the local host cluster
of 'clustersync dev up'. Then, in another terminal:

  clustersync manager --kubeconfig K --eks-endpoint http://ADDR --eks-refresh 30 --eks-poll 5
  kubectl apply -f examples/hosted/eks-cluster.yaml

The emulated clusters have no Kubernetes API server behind their endpoint, so
their Connected condition stays False; everything else behaves as with EKS.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			kubeconfig, cfg, err := devManagementCluster(dir, kubeconfig)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := writeDevSecret(ctx, cfg, devEKSSecret, "clustersync-dev-eks",
				map[string]string{eks.AccessKeyField: "dev-access-key", eks.SecretKeyField: "dev-secret-key"}); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("--addr %s: %w", addr, err)
			}
			emu := ekstest.NewUnstarted(ekstest.Options{CreateDelay: createDelay, UpdateDelay: updateDelay, DeleteDelay: createDelay / 2, Region: region})
			url := "http://" + ln.Addr().String()
			fmt.Fprintf(out, "EKS emulator on %s (region %s); credentials Secret %s/%s written.\n\nRun the manager:\n\n  clustersync manager --kubeconfig %s --eks-endpoint %s --eks-refresh 30 --eks-poll 5\n\nCtrl-C stops the emulator (its clusters are forgotten).\n",
				url, region, eksv1.Namespace, devEKSSecret, shellQuote(kubeconfig), url)
			return serveEmulator(ctx, ln, emu.Handler())
		},
	}
	addDirFlag(cmd, &dir)
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the management cluster (default: the local host cluster of 'clustersync dev up')")
	f.StringVar(&addr, "addr", "127.0.0.1:4599", "address the emulator listens on")
	f.StringVar(&region, "region", ekstest.DefaultRegion, "the emulated region")
	f.DurationVar(&createDelay, "create-delay", 20*time.Second, "how long clusters and node groups stay CREATING")
	f.DurationVar(&updateDelay, "update-delay", 10*time.Second, "how long an update stays InProgress")
	return cmd
}

// devManagementCluster resolves the management cluster of an emulator's
// `clustersync dev` command: --kubeconfig, else the local host cluster of
// `clustersync dev up` in dir. It returns the kubeconfig path and its
// client configuration.
func devManagementCluster(dir, kubeconfig string) (string, *rest.Config, error) {
	if kubeconfig == "" {
		c, err := hostcluster.Open(hostDir(dir))
		if err != nil {
			return "", nil, fmt.Errorf("no --kubeconfig and no local host cluster (run 'clustersync dev up' first): %w", err)
		}
		kubeconfig = c.Kubeconfig
	}
	cfg, err := loadKubeconfig(kubeconfig)
	return kubeconfig, cfg, err
}

// writeDevSecret creates the credentials Secret name of an emulator's
// `clustersync dev` command (owner, e.g. "clustersync-dev-eks") with data,
// refusing to overwrite a Secret of that name it did not write.
func writeDevSecret(ctx context.Context, cfg *rest.Config, name, owner string, data map[string]string) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns := hostedv1.Namespace
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", ns, err)
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app.kubernetes.io/managed-by": owner}},
		StringData: data,
	}
	_, err = kube.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		old, gerr := kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if gerr != nil {
			return gerr
		}
		if old.Labels["app.kubernetes.io/managed-by"] != owner {
			return fmt.Errorf("secret %s/%s exists and was not written by %s; not overwriting it", ns, name, owner)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("secret %s/%s: %w", ns, name, err)
	}
	return nil
}

// serveEmulator serves handler on ln until ctx ends.
func serveEmulator(ctx context.Context, ln net.Listener, handler http.Handler) error {
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
