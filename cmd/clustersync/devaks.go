package main

import (
	"context"
	cryptotls "crypto/tls"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	"github.com/clustersync/clustersync/internal/hosted/aks"
	"github.com/clustersync/clustersync/internal/hosted/aks/akstest"
)

// devAKSSecret is the credentials Secret `clustersync dev aks` writes, in
// namespace clustersync-global-data; examples/hosted/aks-cluster.yaml
// names it.
const devAKSSecret = "azure-dev"

// devAKSAdmin is the ServiceAccount (kube-system) and ClusterRoleBinding
// whose token `clustersync dev aks --endpoint-of-host` hands out as the
// emulated clusters' admin credential.
const devAKSAdmin = "clustersync-dev-aks-admin"

// devAKSSubscription is the subscription of that Secret.
const devAKSSubscription = "00000000-0000-0000-0000-0000000000de"

// newDevAKSCommand returns `clustersync dev aks`: the Azure Resource
// Manager emulator for AKS on loopback and a credentials Secret for it in
// the management cluster.
func newDevAKSCommand() *cobra.Command {
	var (
		dir, kubeconfig, addr, location string
		createDelay, updateDelay        time.Duration
		tls, endpointOfHost             bool
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
everything else behaves as with AKS.

--endpoint-of-host gives every emulated cluster a real API server: the
management cluster's own (the kubernetes Service's cluster IP, which this
machine and the real node's pods reach), with its CA, and as the admin
credential a 7-day token of ServiceAccount kube-system/` + devAKSAdmin + `
(cluster-admin; both removed when the emulator stops). The manager then
reaches the cluster, turns it Connected and installs the agent into it (as a
pod of the real node, 'clustersync dev up'); see docs/hosted.md, "The agent".`,
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
			opts := akstest.Options{CreateDelay: createDelay, UpdateDelay: updateDelay, DeleteDelay: createDelay / 2, Location: location, TLS: tls}
			if endpointOfHost {
				host, err := hostAsCluster(ctx, cfg, devAKSAdmin)
				if err != nil {
					return fmt.Errorf("--endpoint-of-host: %w", err)
				}
				defer host.remove()
				opts.EndpointFor = func(string) string { return host.endpoint }
				opts.CertificateAuthorityFor = func(string) []byte { return host.caPEM }
				opts.TokenFor = func(string, string) string { return host.token }
				fmt.Fprintf(out, "Every emulated cluster's API server is the management cluster's, %s (token of ServiceAccount kube-system/%s).\n", host.endpoint, devAKSAdmin)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("--addr %s: %w", addr, err)
			}
			emu := akstest.NewUnstarted(opts)
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
	f.BoolVar(&endpointOfHost, "endpoint-of-host", false, "report the management cluster's own API server (its kubernetes Service) as every emulated cluster's endpoint, with an admin token, so that the manager reaches it and installs the agent there")
	return cmd
}

// newTLSListener serves TLS with cfg on ln.
func newTLSListener(ln net.Listener, cfg *cryptotls.Config) net.Listener {
	return cryptotls.NewListener(ln, cfg)
}

// hostCluster is the management cluster playing an emulated cloud's
// cluster: its API server as the kubernetes Service's cluster IP, its CA
// (PEM) and an admin token.
type hostCluster struct {
	endpoint, token string
	caPEM           []byte
	remove          func()
}

// hostAsCluster makes the cluster of cfg play a cloud's cluster: it reads
// the kubernetes Service (default/kubernetes) and the cluster's CA
// (ConfigMap default/kube-root-ca.crt), and creates ServiceAccount
// kube-system/name bound to cluster-admin by ClusterRoleBinding name, with
// a 7-day token (TokenRequest). remove deletes both. Errors name the
// object that failed.
func hostAsCluster(ctx context.Context, cfg *rest.Config, name string) (*hostCluster, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	svc, err := kube.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("service default/kubernetes: %w", err)
	}
	if len(svc.Spec.Ports) == 0 || svc.Spec.ClusterIP == "" {
		return nil, fmt.Errorf("service default/kubernetes has no cluster IP and port")
	}
	ca, err := kube.CoreV1().ConfigMaps(metav1.NamespaceDefault).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("configmap default/kube-root-ca.crt (the cluster's CA, published by kube-controller-manager): %w", err)
	}
	labels := map[string]string{"app.kubernetes.io/managed-by": "clustersync-dev-aks"}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceSystem, Labels: labels}}
	if _, err := kube.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("serviceaccount %s/%s: %w", sa.Namespace, name, err)
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: sa.Namespace}}}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("clusterrolebinding %s: %w", name, err)
	}
	remove := func() {
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = kube.RbacV1().ClusterRoleBindings().Delete(dctx, name, metav1.DeleteOptions{})
		_ = kube.CoreV1().ServiceAccounts(sa.Namespace).Delete(dctx, name, metav1.DeleteOptions{})
	}
	tr, err := kube.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(7 * 24 * 3600))}}, metav1.CreateOptions{})
	if err != nil {
		remove()
		return nil, fmt.Errorf("token of serviceaccount %s/%s: %w", sa.Namespace, name, err)
	}
	endpoint := "https://" + net.JoinHostPort(svc.Spec.ClusterIP, fmt.Sprint(svc.Spec.Ports[0].Port))
	return &hostCluster{endpoint: endpoint, token: tr.Status.Token, caPEM: []byte(ca.Data["ca.crt"]), remove: remove}, nil
}
