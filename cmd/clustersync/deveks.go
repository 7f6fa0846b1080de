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
			if kubeconfig == "" {
				c, err := hostcluster.Open(hostDir(dir))
				if err != nil {
					return fmt.Errorf("no --kubeconfig and no local host cluster (run 'clustersync dev up' first): %w", err)
				}
				kubeconfig = c.Kubeconfig
			}
			cfg, err := loadKubeconfig(kubeconfig)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := writeDevEKSSecret(ctx, cfg); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("--addr %s: %w", addr, err)
			}
			emu := ekstest.NewUnstarted(ekstest.Options{CreateDelay: createDelay, UpdateDelay: updateDelay, DeleteDelay: createDelay / 2, Region: region})
			srv := &http.Server{Handler: emu.Handler(), ReadHeaderTimeout: 10 * time.Second}
			url := "http://" + ln.Addr().String()
			fmt.Fprintf(out, "EKS emulator on %s (region %s); credentials Secret %s/%s written.\n\nRun the manager:\n\n  clustersync manager --kubeconfig %s --eks-endpoint %s --eks-refresh 30 --eks-poll 5\n\nCtrl-C stops the emulator (its clusters are forgotten).\n",
				url, region, eksv1.Namespace, devEKSSecret, shellQuote(kubeconfig), url)
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

// writeDevEKSSecret creates or updates the emulator's credentials Secret,
// refusing to overwrite a Secret of that name that it did not write.
func writeDevEKSSecret(ctx context.Context, cfg *rest.Config) error {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: eksv1.Namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", eksv1.Namespace, err)
	}
	const owner = "clustersync-dev-eks"
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: devEKSSecret, Namespace: eksv1.Namespace, Labels: map[string]string{"app.kubernetes.io/managed-by": owner}},
		StringData: map[string]string{eks.AccessKeyField: "dev-access-key", eks.SecretKeyField: "dev-secret-key"},
	}
	_, err = kube.CoreV1().Secrets(eksv1.Namespace).Create(ctx, s, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		old, gerr := kube.CoreV1().Secrets(eksv1.Namespace).Get(ctx, devEKSSecret, metav1.GetOptions{})
		if gerr != nil {
			return gerr
		}
		if old.Labels["app.kubernetes.io/managed-by"] != owner {
			return fmt.Errorf("secret %s/%s exists and was not written by 'clustersync dev eks'; not overwriting it", eksv1.Namespace, devEKSSecret)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("secret %s/%s: %w", eksv1.Namespace, devEKSSecret, err)
	}
	return nil
}
