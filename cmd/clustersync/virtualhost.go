package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/yaml"

	"github.com/clustersync/clustersync/internal/hostcluster"
	"github.com/clustersync/clustersync/internal/images"
	"github.com/clustersync/clustersync/internal/registry"
	"github.com/clustersync/clustersync/internal/version"
	"github.com/clustersync/clustersync/internal/virtual/apps"
	"github.com/clustersync/clustersync/internal/virtual/config"
	"github.com/clustersync/clustersync/internal/virtual/deploy"
	"github.com/clustersync/clustersync/internal/virtual/instance"
)

// hostConn is what the virtual commands need of a host cluster.
type hostConn struct {
	kubeconfig string
	config     *rest.Config
	client     kubernetes.Interface
	dynamic    dynamic.Interface
	helm       *deploy.Helm
	// context is the kubeconfig's current context (for connect's context
	// names).
	context string
}

// connectHost opens the host of kubeconfig ("" = defaultHostKubeconfig).
func connectHost(kubeconfig string) (*hostConn, error) {
	if kubeconfig == "" {
		kubeconfig = defaultHostKubeconfig()
	}
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("host kubeconfig %s: %w", kubeconfig, err)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*raw, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("host kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.WarningHandlerWithContext = rest.NoWarnings{}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &hostConn{kubeconfig: kubeconfig, config: cfg, client: cs, dynamic: dyn,
		helm: deploy.NewHelm(kubeconfig, nil), context: cmp.Or(raw.CurrentContext, "host")}, nil
}

// localInstance returns the local-process virtual cluster name of this
// machine, or nil when there is none (or namespace names another host
// namespace than its own).
func localInstance(name, namespace string) *instance.Instance {
	i, err := instance.Load(stateHome(), name)
	if err != nil || (namespace != "" && namespace != i.HostNamespace) {
		return nil
	}
	return i
}

// hostNamespace is the host namespace of virtual cluster name: namespace,
// else the default (instance.DefaultHostNamespace).
func hostNamespace(name, namespace string) string {
	return cmp.Or(namespace, instance.DefaultHostNamespace(name))
}

func newVirtualCreateCommand() *cobra.Command {
	var o struct {
		namespace, hostKubeconfig, configFile, kubeconfigOut string
		files, sets                                          []string
		local, connect, dryRun, expose                       bool
		timeout                                              time.Duration
	}
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a virtual cluster in a host namespace: its own API server, synced into that namespace",
		Long: `Create a virtual cluster: a kube-apiserver, kube-controller-manager and etcd of
its own, and a syncer that copies the pods, services, endpoints, claims and
used secrets and config maps it creates into one namespace of the host cluster,
with vCluster's names and annotations.

By default the control plane runs in the host, as vCluster's does: the Helm
chart charts/virtual-cluster (embedded in this binary) is installed as release
NAME into host namespace -n (default vc-NAME, created if missing): a
StatefulSet NAME whose pod runs etcd, kube-apiserver, kube-controller-manager
(kube-scheduler too with controlPlane.advanced.virtualScheduler.enabled)
and the syncer, a Service NAME (443), a ServiceAccount with a Role in the
namespace and a ClusterRole that reads nodes, and a Secret vc-NAME holding the
tenant's kubeconfig. ` + "`helm install NAME charts/virtual-cluster -n NS -f FILE`" + ` gives
the same objects. etcd's data goes on a PersistentVolumeClaim when the host has
a default StorageClass, else in an emptyDir (lost with the pod); create says
which. The host must be able to pull clustersync's image
(controlPlane.statefulSet.image; ` + "`dev up`" + ` pushes it to the local host, and
create checks it is there before installing).

Values: -f FILE (the config file format: sync:, controlPlane:, syncer:; see
docs/configuration.md; a vcluster.yaml for vCluster 0.2x/0.3x works as it is)
and --set KEY=VALUE, as helm takes them. Unknown keys and wrong types are
refused with their path before anything is installed, and so is whatever the
control plane pod would refuse in the chart's values merged with them.
--dry-run stops there, with no host: it prints the note to standard error and
the objects create would install to standard output (as helm template does),
and exits 1 on a refusal — the check to run on a vcluster.yaml in CI.

While it waits (--timeout), create prints at once and then every 5 s which containers are
starting, and stops at once when the pod cannot start without a change (an
image its registry does not have, an init container that failed twice with
the same message), naming the container, its image or last log lines, and
the fix.

--expose makes the API server's Service a LoadBalancer (as vcluster create
--expose; controlPlane.service.spec.type NodePort or LoadBalancer, or
controlPlane.ingress, do it from the file); the API server's certificate
covers every address it is exposed at, also those that come later (a load
balancer's), and create prints them.

With experimental.deploy.vcluster in the values (docs/configuration.md), the
syncer then applies its manifests and charts in the virtual cluster; create
waits (within --timeout) until they are applied or first fail and says which
(the syncer keeps trying; ` + "`virtual status NAME`" + ` shows each release).

Once ready, create connects (--connect=false skips): it adds context
vcluster_NAME_NAMESPACE_HOSTCONTEXT to $KUBECONFIG (else ~/.kube/config), or to
--kubeconfig-out, and makes it current, with the first address this machine
reaches: the Service's cluster IP (a node of the host, or the local host of
` + "`dev up`" + `), else where it is exposed (load balancer, node port at a node's
address, ingress host); otherwise it says how to connect through a
port-forward.

--local runs the control plane as processes of this machine instead (the mode
of earlier versions, for hosts whose nodes cannot run it, such as kwok fake
nodes): state in $CLUSTERSYNC_HOME/virtual/NAME, the API server on 127.0.0.1.

The host is --host-kubeconfig, else $KUBECONFIG, else the local host of
` + "`clustersync dev up`" + `, else ~/.kube/config.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, out := args[0], cmd.OutOrStdout()
			if o.configFile != "" {
				o.files = append([]string{o.configFile}, o.files...)
			}
			if o.expose {
				o.sets = append(o.sets, exposeSet)
			}
			hostKubeconfig := o.hostKubeconfig
			if hostKubeconfig == "" {
				hostKubeconfig = defaultHostKubeconfig()
			}
			if err := instance.ValidateName(name); err != nil {
				return err
			}
			// Checked before any host is asked, so bad input fails fast.
			vals, cfg, err := deploy.Values(o.files, o.sets)
			if err != nil {
				return err
			}
			// What the syncer will apply, rendered by the same code.
			if _, err := cfg.DeployManifests(name, hostNamespace(name, o.namespace)); err != nil {
				return err
			}
			if o.dryRun {
				return dryRun(cmd, name, hostNamespace(name, o.namespace), vals, cfg)
			}
			if msg := cfg.NoEffectMessage(); msg != "" {
				fmt.Fprintln(out, "Note: "+msg)
			}
			start := time.Now()
			if o.local {
				return createLocal(cmd, name, o.namespace, hostKubeconfig, o.files, o.sets)
			}
			host, err := connectHost(hostKubeconfig)
			if err != nil {
				return err
			}
			wait, err := checkImages(cmd.Context(), out, host, cfg, o.timeout)
			if err != nil {
				return err
			}
			ns := hostNamespace(name, o.namespace)
			fmt.Fprintf(out, "Creating virtual cluster %s in host namespace %s (host kubeconfig %s)...\n", name, ns, hostKubeconfig)
			created, err := deploy.Create(cmd.Context(), host.client, host.helm, deploy.CreateOptions{
				Name: name, Namespace: ns, Values: vals, Config: cfg, Wait: wait,
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "Virtual cluster %s is running (%.1fs): StatefulSet %s/%s, tenant kubeconfig in host secret %s/vc-%s.\n",
				name, time.Since(start).Seconds(), ns, name, ns, name)
			if err := reportApps(cmd.Context(), out, host, name, ns, cfg, o.timeout-time.Since(start)); err != nil {
				return err
			}
			if created.Persistence == "volumeClaim" {
				fmt.Fprintf(out, "etcd's data is on PersistentVolumeClaim %s/data-%s.\n", ns, deploy.PodName(name))
			} else {
				fmt.Fprintln(out, "etcd's data is in an emptyDir and is lost with the pod: the host has no default StorageClass "+
					"(set controlPlane.statefulSet.persistence.volumeClaim.storageClass, or give the host one).")
			}
			servers, err := deploy.Servers(cmd.Context(), host.client, name, ns)
			if err != nil {
				return err
			}
			if err := printExposure(cmd.Context(), out, host, name, ns, servers); err != nil {
				return err
			}
			if !o.connect {
				fmt.Fprintf(out, "\nConnect with: clustersync virtual connect %s -n %s\n", name, ns)
				return nil
			}
			server := deploy.FirstReachable(cmd.Context(), servers, 10*time.Second)
			if server == "" {
				fmt.Fprintf(out, "\nThis machine reaches the API server at none of %s (the Service's cluster IP, the addresses it is exposed at). Connect through a port-forward:\n"+
					"  clustersync virtual connect %s -n %s\n", strings.Join(servers, ", "), name, ns)
				return nil
			}
			kc, err := deploy.Kubeconfig(cmd.Context(), host.client, name, ns, server)
			if err != nil {
				return err
			}
			return writeContext(out, host, kc, name, ns, server, o.kubeconfigOut)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.namespace, "namespace", "n", "", "host namespace (default vc-NAME; created if missing)")
	f.StringVar(&o.hostKubeconfig, "host-kubeconfig", "", "kubeconfig of the host cluster")
	f.StringArrayVarP(&o.files, "values", "f", nil, "values file: the configuration file format (repeatable; later files win)")
	f.StringVar(&o.configFile, "config", "", "configuration file (the same as -f)")
	f.StringArrayVar(&o.sets, "set", nil, "set a value, e.g. --set sync.toHost.ingresses.enabled=true (repeatable)")
	f.BoolVar(&o.local, "local", false, "run the control plane as processes of this machine instead of a StatefulSet of the host")
	f.BoolVar(&o.connect, "connect", true, "add a kube context for the virtual cluster and make it current")
	f.StringVar(&o.kubeconfigOut, "kubeconfig-out", "", "kubeconfig file connect writes the context to (default $KUBECONFIG, else ~/.kube/config)")
	f.DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long to wait for the control plane to become ready")
	f.BoolVar(&o.dryRun, "dry-run", false, "check the values as create does and print the objects it would install, without a host")
	f.BoolVar(&o.expose, "expose", false, "make the API server's Service a LoadBalancer (controlPlane.service.spec.type), as vcluster create --expose does")
	return cmd
}

// reportApps waits (at most timeout, at least 10 s) for the apps of
// experimental.deploy.vcluster, when cfg has any, and prints how they went:
// installed, failed (with the reason; the syncer tries again), or still
// being installed.
func reportApps(ctx context.Context, out io.Writer, host *hostConn, name, ns string, cfg *config.Config, timeout time.Duration) error {
	if !cfg.Experimental.Deploy.VCluster.HasApps() {
		return nil
	}
	start := time.Now()
	st, err := deploy.WaitApps(ctx, host.client, name, ns, max(timeout, 10*time.Second))
	if err != nil {
		return err
	}
	took := time.Since(start).Seconds()
	switch st.Phase {
	case apps.PhaseSuccess:
		fmt.Fprintf(out, "Apps of experimental.deploy.vcluster applied (%.1fs more): %s.\n", took, st.Summary())
	case apps.PhaseFailed:
		fmt.Fprintf(out, "Apps of experimental.deploy.vcluster: %s\nThe syncer tries again (1 s, doubling to a minute); `clustersync virtual status %s -n %s` follows it.\n", st.Summary(), name, ns)
	default:
		fmt.Fprintf(out, "Apps of experimental.deploy.vcluster are still being applied after %.1fs (%s); `clustersync virtual status %s -n %s` follows them.\n", took, st.Summary(), name, ns)
	}
	return nil
}

// printExposure says where clients outside the host reach the API server
// of virtual cluster name (servers beyond the first, the cluster IP), and,
// for a LoadBalancer Service still without an address, that the address
// will be covered when it comes.
func printExposure(ctx context.Context, out io.Writer, host *hostConn, name, ns string, servers []string) error {
	svc, err := host.client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if len(servers) > 1 {
		fmt.Fprintf(out, "The API server is exposed at %s (its certificate covers each).\n", strings.Join(servers[1:], ", "))
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer && len(svc.Status.LoadBalancer.Ingress) == 0 {
		fmt.Fprintf(out, "Service %s/%s is a LoadBalancer without an address yet (none of the host's load balancers has answered): "+
			"the API server's certificate covers its address once it has one, and `clustersync virtual connect %s -n %s` then uses it.\n",
			ns, name, name, ns)
	}
	return nil
}

// exposeSet is what --expose sets, after the files and --set: the API
// server's Service becomes a LoadBalancer.
const exposeSet = "controlPlane.service.spec.type=LoadBalancer"

// dryRun is `virtual create|upgrade --dry-run`: the values were checked
// as for a real run (deploy.Values); it prints the note to standard error
// and the objects the chart would install to standard output, so that the
// output can go to a file or to kubectl as it is.
func dryRun(cmd *cobra.Command, name, namespace string, vals map[string]any, cfg *config.Config) error {
	manifest, err := deploy.Template(name, namespace, vals)
	if err != nil {
		return err
	}
	if msg := cfg.NoEffectMessage(); msg != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "Note: "+msg)
	}
	_, err = fmt.Fprint(cmd.OutOrStdout(), manifest)
	return err
}

// createLocal is `virtual create --local`: the control plane as processes
// of this machine.
func createLocal(cmd *cobra.Command, name, namespace, hostKubeconfig string, files, sets []string) error {
	if len(sets) > 0 || len(files) > 1 {
		return errors.New("--local takes one configuration file (--config or -f) and no --set")
	}
	o := instance.CreateOptions{Name: name, Home: stateHome(), HostNamespace: namespace, HostKubeconfig: hostKubeconfig}
	if len(files) == 1 {
		o.ConfigFile = files[0]
	}
	exe, err := executable()
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "Creating virtual cluster %s on this machine (host kubeconfig %s)...\n", o.Name, o.HostKubeconfig)
	start := time.Now()
	i, err := instance.Create(cmd.Context(), o, exe)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Virtual cluster %s is running (%.1fs); its objects are synced to host namespace %s.\n",
		i.Name, time.Since(start).Seconds(), i.HostNamespace)
	fmt.Fprintf(out, "\nUse it:\n  export KUBECONFIG=%s\n  kubectl get namespaces\n", i.Kubeconfig())
	return nil
}

// writeContext adds the kube context of virtual cluster name at server to
// the kubeconfig file out ("" = $KUBECONFIG's first file, else
// ~/.kube/config) and makes it current.
func writeContext(w io.Writer, host *hostConn, kc []byte, name, namespace, server, out string) error {
	if out == "" {
		out = userKubeconfig()
	}
	contextName := deploy.ContextName(name, namespace, host.context)
	if err := deploy.MergeKubeconfig(out, kc, contextName); err != nil {
		return err
	}
	fmt.Fprintf(w, "Switched to context %s in %s (server %s).\n", contextName, out, server)
	return nil
}

// userKubeconfig is the kubeconfig file connect writes to by default: the
// first file of $KUBECONFIG, else ~/.kube/config.
func userKubeconfig() string {
	if files := filepath.SplitList(os.Getenv("KUBECONFIG")); len(files) > 0 && files[0] != "" {
		return files[0]
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".kube", "config")
}

func newVirtualListCommand() *cobra.Command {
	var namespace, hostKubeconfig, output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the virtual clusters of the host (and those run as processes of this machine)",
		Long: `List the virtual clusters installed in the host (every namespace, or -n), with
their status read from the control plane's StatefulSet and pod, and those run as
processes of this machine (` + "`virtual create --local`" + `), whose NAMESPACE column
is suffixed "(local)". -o json or -o yaml prints the same as a list of objects
(name, namespace, status, reason, version, chart, created, connected).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			host, err := connectHost(hostKubeconfig)
			if err != nil {
				return err
			}
			current := deploy.CurrentContext(userKubeconfig())
			infos, err := deploy.List(cmd.Context(), host.client, host.helm, namespace, func(name, ns string) bool {
				return current == deploy.ContextName(name, ns, host.context)
			})
			if err != nil {
				return err
			}
			locals, err := instance.List(stateHome())
			if err != nil {
				return err
			}
			for _, i := range locals {
				if namespace != "" && namespace != i.HostNamespace {
					continue
				}
				status := "Stopped"
				if st, ok := i.Status(); ok {
					status = "Pending"
					if st.Ready {
						status = deploy.StatusRunning
					}
				}
				infos = append(infos, deploy.Info{Name: i.Name, Namespace: i.HostNamespace + " (local)", Status: status, Version: version.Version(), Created: i.Created})
			}
			return printInfos(cmd.OutOrStdout(), infos, output)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&namespace, "namespace", "n", "", "host namespace (default: every namespace)")
	f.StringVar(&hostKubeconfig, "host-kubeconfig", "", "kubeconfig of the host cluster")
	f.StringVarP(&output, "output", "o", "", "output format: json or yaml (default a table)")
	return cmd
}

func printInfos(out io.Writer, infos []deploy.Info, format string) error {
	switch format {
	case "json":
		data, err := json.MarshalIndent(infos, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", data)
		return err
	case "yaml":
		data, err := yaml.Marshal(infos)
		if err != nil {
			return err
		}
		_, err = out.Write(data)
		return err
	case "":
	default:
		return fmt.Errorf("--output %q: want json or yaml", format)
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tNAMESPACE\tSTATUS\tVERSION\tCONNECTED\tAGE")
	for _, in := range infos {
		status := in.Status
		if in.Reason != "" && in.Status != deploy.StatusPending {
			status += " (" + in.Reason + ")"
		}
		connected := ""
		if in.Connected {
			connected = "True"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", in.Name, in.Namespace, status, in.Version, connected, time.Since(in.Created).Round(time.Second))
	}
	return w.Flush()
}

func newVirtualDeleteCommand() *cobra.Command {
	var namespace, hostKubeconfig string
	var deleteNamespace bool
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a virtual cluster and every host object it created, and nothing else",
		Long: `Delete virtual cluster NAME of host namespace -n (default vc-NAME): uninstall
its release (control plane, Services, RBAC, config), then delete every host
object it made (synced copies, Secrets vc-NAME and NAME-certs, the data claim;
all labelled vcluster.loft.sh/managed-by=NAME) and wait until they are gone.
--delete-namespace also deletes the host namespace, only if create made it.

A virtual cluster run as processes of this machine (create --local) is
stopped, its host objects deleted, and its state folder removed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, out := args[0], cmd.OutOrStdout()
			if i := localInstance(name, namespace); i != nil {
				if err := i.Delete(cmd.Context()); err != nil {
					return err
				}
				fmt.Fprintf(out, "Virtual cluster %s deleted, with its objects in host namespace %s.\n", i.Name, i.HostNamespace)
				return nil
			}
			host, err := connectHost(hostKubeconfig)
			if err != nil {
				return err
			}
			ns := hostNamespace(name, namespace)
			note, err := deploy.Delete(cmd.Context(), host.client, host.dynamic, host.helm, deploy.DeleteOptions{
				Name: name, Namespace: ns, DeleteNamespace: deleteNamespace, Timeout: 3 * time.Minute,
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "Virtual cluster %s deleted, with its objects in host namespace %s.\n", name, ns)
			if note != "" {
				fmt.Fprintln(out, note)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&namespace, "namespace", "n", "", "host namespace (default vc-NAME)")
	f.StringVar(&hostKubeconfig, "host-kubeconfig", "", "kubeconfig of the host cluster")
	f.BoolVar(&deleteNamespace, "delete-namespace", false, "also delete the host namespace, if create made it")
	return cmd
}

func newVirtualConnectCommand() *cobra.Command {
	var o struct {
		namespace, hostKubeconfig, server, kubeconfigOut string
		print                                            bool
		localPort                                        int
		serviceAccount                                   deploy.ServiceAccountOptions
		tokenSeconds                                     int
	}
	cmd := &cobra.Command{
		Use:   "connect NAME [-- COMMAND [ARGS...]]",
		Short: "Connect to a virtual cluster: a kube context, a port-forward, or a command run against it",
		Long: `Connect to virtual cluster NAME of host namespace -n (default vc-NAME), as
` + "`vcluster connect`" + ` does. The server is --server, else the first address this
machine reaches of the Service's cluster IP (a node of the host, the local host
of ` + "`dev up`" + `) and the addresses it is exposed at (load balancer, node port
at a node's address, ingress host), else a port-forward to the control plane
pod (127.0.0.1:--local-port, default a free port), which runs until Ctrl-C.

  connect NAME               add context vcluster_NAME_NAMESPACE_HOSTCONTEXT to
                             $KUBECONFIG (else ~/.kube/config) or --kubeconfig-out,
                             and make it current
  connect NAME --print       print the kubeconfig instead
  connect NAME -- CMD ARGS   run CMD with KUBECONFIG set to the virtual cluster,
                             then stop the port-forward; exits with CMD's status

With --service-account [NAMESPACE/]NAME (namespace default kube-system) the
kubeconfig authenticates with a token of that service account of the virtual
cluster instead of the admin client certificate, so that an owner can hand out
scoped access, as ` + "`vcluster connect --service-account`" + ` does: --cluster-role ROLE
creates the account when it is missing and binds it to ROLE (ClusterRoleBinding
vcluster-sa-NAME-NAMESPACE), --token-expiration SECONDS sets the token's life
(default 10 years; the API server may shorten it).

For a virtual cluster run as processes of this machine (create --local),
--print prints its kubeconfig and -o FILE writes it.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, command := args[0], args[1:]
			if (o.serviceAccount.ClusterRole != "" || o.tokenSeconds != 0) && o.serviceAccount.Ref == "" {
				return errors.New("--cluster-role and --token-expiration go with --service-account")
			}
			if o.tokenSeconds < 0 {
				return fmt.Errorf("--token-expiration %d: want a number of seconds above 0", o.tokenSeconds)
			}
			o.serviceAccount.Expiration = time.Duration(o.tokenSeconds) * time.Second
			if o.serviceAccount.Ref != "" {
				if _, _, err := deploy.ParseServiceAccount(o.serviceAccount.Ref); err != nil {
					return err
				}
			}
			if i := localInstance(name, o.namespace); i != nil {
				return connectLocal(cmd, i, o.print, o.kubeconfigOut, o.serviceAccount)
			}
			host, err := connectHost(o.hostKubeconfig)
			if err != nil {
				return fmt.Errorf("virtual cluster %q not found on this machine, and no host to look in: %w", name, err)
			}
			ctx, stop := context.WithCancel(ctrl.SetupSignalHandler())
			defer stop()
			ns := hostNamespace(name, o.namespace)
			if _, err := host.helm.Get(name, ns); err != nil {
				return err
			}
			server, forwarding := o.server, false
			if server == "" {
				servers, err := deploy.Servers(ctx, host.client, name, ns)
				if err != nil {
					return err
				}
				if o.localPort == 0 {
					server = deploy.FirstReachable(ctx, servers, 2*time.Second)
				}
				if server == "" {
					port, _, err := deploy.Forward(ctx, host.config, name, ns, o.localPort, cmd.ErrOrStderr())
					if err != nil {
						return err
					}
					server, forwarding = deploy.LocalServer(port), true
				}
			}
			out := cmd.OutOrStdout()
			kc, err := deploy.Kubeconfig(ctx, host.client, name, ns, server)
			if err != nil {
				return err
			}
			if o.serviceAccount.Ref != "" {
				// Notes go to stderr: --print's stdout is the kubeconfig.
				if kc, err = serviceAccountKubeconfig(ctx, cmd.ErrOrStderr(), kc, o.serviceAccount); err != nil {
					return err
				}
			}
			switch {
			case len(command) > 0:
				return runWithKubeconfig(ctx, cmd, kc, command)
			case o.print:
				if _, err := out.Write(kc); err != nil {
					return err
				}
			default:
				if err := writeContext(out, host, kc, name, ns, server, o.kubeconfigOut); err != nil {
					return err
				}
			}
			if forwarding {
				fmt.Fprintf(cmd.ErrOrStderr(), "Forwarding %s to %s/%s; press Ctrl-C to stop.\n", server, ns, deploy.PodName(name))
				<-ctx.Done()
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.namespace, "namespace", "n", "", "host namespace (default vc-NAME)")
	f.StringVar(&o.hostKubeconfig, "host-kubeconfig", "", "kubeconfig of the host cluster")
	f.StringVar(&o.server, "server", "", "API server URL to write instead of the Service's or a port-forward's")
	f.StringVar(&o.kubeconfigOut, "kubeconfig-out", "", "kubeconfig file to add the context to (default $KUBECONFIG, else ~/.kube/config)")
	f.BoolVar(&o.print, "print", false, "print the kubeconfig instead of adding a context")
	f.IntVar(&o.localPort, "local-port", 0, "local port of the port-forward (setting it forces a port-forward)")
	f.StringVarP(&o.kubeconfigOut, "output", "o", "", "same as --kubeconfig-out")
	f.StringVar(&o.serviceAccount.Ref, "service-account", "", "authenticate with a token of this service account of the virtual cluster, [NAMESPACE/]NAME (namespace default kube-system), instead of the admin certificate")
	f.StringVar(&o.serviceAccount.ClusterRole, "cluster-role", "", "with --service-account: create the account when missing and bind it to this ClusterRole")
	f.IntVar(&o.tokenSeconds, "token-expiration", 0, "with --service-account: the token's life in seconds (default 10 years)")
	return cmd
}

// serviceAccountKubeconfig is kc with a token of service account o.Ref of
// the virtual cluster kc reaches (deploy.ServiceAccountKubeconfig).
func serviceAccountKubeconfig(ctx context.Context, notes io.Writer, kc []byte, o deploy.ServiceAccountOptions) ([]byte, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		return nil, err
	}
	virtual, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return deploy.ServiceAccountKubeconfig(ctx, notes, virtual, kc, o)
}

// connectLocal is connect for a virtual cluster run as processes of this
// machine: --print prints its kubeconfig, out writes it to a file, else the
// kubeconfig's path is printed as an export line. With sa.Ref the
// kubeconfig holds that service account's token, and is printed or
// written (it is in no file to point at).
func connectLocal(cmd *cobra.Command, i *instance.Instance, print bool, out string, sa deploy.ServiceAccountOptions) error {
	if _, ok := i.Status(); !ok {
		fmt.Fprintln(cmd.ErrOrStderr(), "note: "+stoppedHint(i.Name))
	}
	data, err := os.ReadFile(i.Kubeconfig())
	if err != nil {
		return err
	}
	if sa.Ref != "" {
		if !print && out == "" {
			return fmt.Errorf("--service-account on virtual cluster %s of this machine: add --print, or -o FILE", i.Name)
		}
		if data, err = serviceAccountKubeconfig(cmd.Context(), cmd.ErrOrStderr(), data, sa); err != nil {
			return err
		}
	}
	switch {
	case print:
		_, err = cmd.OutOrStdout().Write(data)
		return err
	case out != "":
		if err := os.WriteFile(out, data, 0o600); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "kubeconfig of %s written to %s\n", i.Name, out)
		return nil
	default:
		fmt.Fprintf(cmd.OutOrStdout(), "export KUBECONFIG=%s\n", i.Kubeconfig())
		return nil
	}
}

// runWithKubeconfig runs command with KUBECONFIG pointing to a temporary
// file holding kc, and returns its exit status as an error.
func runWithKubeconfig(ctx context.Context, cmd *cobra.Command, kc []byte, command []string) error {
	f, err := os.CreateTemp("", "clustersync-kubeconfig-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(kc); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	c := exec.CommandContext(ctx, command[0], command[1:]...)
	c.Env = append(os.Environ(), "KUBECONFIG="+f.Name())
	c.Stdin, c.Stdout, c.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	if err := c.Run(); err != nil {
		return fmt.Errorf("%s: %w", command[0], err)
	}
	return nil
}

// hostVerbCommand is `virtual VERB NAME [-n NS]` on a virtual cluster of
// the host: act runs with the host and the namespace and returns the
// message to print.
func hostVerbCommand(use, short, long string, act func(ctx context.Context, out io.Writer, host *hostConn, name, namespace string) (string, error)) *cobra.Command {
	var namespace, hostKubeconfig string
	cmd := &cobra.Command{
		Use: use, Short: short, Long: long,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			host, err := connectHost(hostKubeconfig)
			if err != nil {
				return err
			}
			ns := hostNamespace(args[0], namespace)
			if _, err := host.helm.Get(args[0], ns); err != nil {
				return err
			}
			msg, err := act(cmd.Context(), cmd.OutOrStdout(), host, args[0], ns)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), msg)
			return nil
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "host namespace (default vc-NAME)")
	cmd.Flags().StringVar(&hostKubeconfig, "host-kubeconfig", "", "kubeconfig of the host cluster")
	return cmd
}

func newVirtualPauseCommand() *cobra.Command {
	return hostVerbCommand("pause NAME", "Pause a virtual cluster: stop its control plane and remove its pods from the host",
		`Pause virtual cluster NAME of host namespace -n (default vc-NAME), as
`+"`vcluster pause`"+` does: its control plane StatefulSet is scaled to zero (etcd's
claim is kept) and the tenant's host pods are deleted; the other host copies
and every virtual object stay. `+"`virtual resume`"+` brings it back.`,
		func(ctx context.Context, _ io.Writer, host *hostConn, name, ns string) (string, error) {
			if err := deploy.Pause(ctx, host.client, name, ns, 3*time.Minute); err != nil {
				return "", err
			}
			return fmt.Sprintf("Virtual cluster %s is paused; its host pods are gone. Resume with: clustersync virtual resume %s -n %s", name, name, ns), nil
		})
}

func newVirtualResumeCommand() *cobra.Command {
	return hostVerbCommand("resume NAME", "Resume a paused virtual cluster",
		`Resume virtual cluster NAME of host namespace -n (default vc-NAME): its control
plane StatefulSet gets its replica back, and once it is ready the syncer makes
the host pods anew from the virtual state. Pods owned by a controller
(Deployment, StatefulSet, Job…) come back; a bare pod whose host copy was
removed by pause is deleted in the virtual cluster, as in vCluster.`,
		func(ctx context.Context, out io.Writer, host *hostConn, name, ns string) (string, error) {
			start := time.Now()
			wait := waitOptions(out, localRegistry(host), 5*time.Minute)
			fmt.Fprintf(out, "Resuming virtual cluster %s in host namespace %s...\n", name, ns)
			if err := deploy.Resume(ctx, host.client, name, ns, wait); err != nil {
				return "", err
			}
			return fmt.Sprintf("Virtual cluster %s is running again (%.1fs).", name, time.Since(start).Seconds()), nil
		})
}

// newVirtualUpgradeCommand is `clustersync virtual upgrade`: a new
// configuration for an installed virtual cluster (helm upgrade).
func newVirtualUpgradeCommand() *cobra.Command {
	var o struct {
		namespace, hostKubeconfig string
		files, sets               []string
		timeout                   time.Duration
		dryRun, expose            bool
	}
	cmd := &cobra.Command{
		Use:   "upgrade NAME",
		Short: "Change the configuration of a virtual cluster installed in a host (helm upgrade)",
		Long: `Change the configuration of virtual cluster NAME of host namespace -n (default
vc-NAME): ` + "`helm upgrade`" + ` of its release with the embedded chart and the values of
-f FILE and --set KEY=VALUE, checked as create checks them. The new values
replace the old ones entirely (what they leave out takes the chart's
default), as ` + "`helm upgrade`" + ` without --reuse-values does: give the whole
configuration. The control plane pod is replaced (its data stays on its
claim) and upgrade waits until the new one is ready and answers at the
Service's address (when this machine reaches it). --dry-run only checks
the values and prints the objects upgrade would install (no host is asked). At its start the syncer
deletes the host copies of the kinds the new configuration switches off;
upgrade deletes the host Services of networking.replicateServices.toHost
entries the new values drop. The syncer applies what changed in
experimental.deploy.vcluster (changed manifests and chart entries, releases
and objects dropped removed); upgrade waits for it as create does.

Virtual clusters made with --local are not upgraded: edit
$CLUSTERSYNC_HOME/virtual/NAME/config.yaml, then virtual stop and start.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, out := args[0], cmd.OutOrStdout()
			if o.expose {
				o.sets = append(o.sets, exposeSet)
			}
			vals, cfg, err := deploy.Values(o.files, o.sets)
			if err != nil {
				return err
			}
			// What the syncer will apply, rendered by the same code.
			if _, err := cfg.DeployManifests(name, hostNamespace(name, o.namespace)); err != nil {
				return err
			}
			if o.dryRun {
				return dryRun(cmd, name, hostNamespace(name, o.namespace), vals, cfg)
			}
			if msg := cfg.NoEffectMessage(); msg != "" {
				fmt.Fprintln(out, "Note: "+msg)
			}
			hostKubeconfig := o.hostKubeconfig
			if hostKubeconfig == "" {
				hostKubeconfig = defaultHostKubeconfig()
			}
			host, err := connectHost(hostKubeconfig)
			if err != nil {
				return err
			}
			wait, err := checkImages(cmd.Context(), out, host, cfg, o.timeout)
			if err != nil {
				return err
			}
			ns := hostNamespace(name, o.namespace)
			start := time.Now()
			fmt.Fprintf(out, "Upgrading virtual cluster %s in host namespace %s...\n", name, ns)
			if err := deploy.Upgrade(cmd.Context(), host.client, host.helm, deploy.UpgradeOptions{
				Name: name, Namespace: ns, Values: vals, Config: cfg, Wait: wait,
			}); err != nil {
				return err
			}
			// The new pod is ready; kube-proxy leads the Service to it a
			// moment later. Return once it answers there (when this machine
			// reaches the Service at all), so that the next kubectl does.
			if servers, err := deploy.Servers(cmd.Context(), host.client, name, ns); err == nil {
				deploy.FirstReachable(cmd.Context(), servers, 10*time.Second)
			}
			fmt.Fprintf(out, "Virtual cluster %s runs with the new configuration (%.1fs).\n", name, time.Since(start).Seconds())
			return reportApps(cmd.Context(), out, host, name, ns, cfg, o.timeout-time.Since(start))
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.namespace, "namespace", "n", "", "host namespace (default vc-NAME)")
	f.StringVar(&o.hostKubeconfig, "host-kubeconfig", "", "kubeconfig of the host cluster")
	f.StringArrayVarP(&o.files, "values", "f", nil, "values file: the configuration file format (repeatable; later files win)")
	f.StringArrayVar(&o.sets, "set", nil, "set a value, e.g. --set sync.toHost.ingresses.enabled=true (repeatable)")
	f.DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long to wait for the new control plane to become ready")
	f.BoolVar(&o.dryRun, "dry-run", false, "check the values as upgrade does and print the objects it would install, without a host")
	f.BoolVar(&o.expose, "expose", false, "make the API server's Service a LoadBalancer (controlPlane.service.spec.type)")
	return cmd
}

// localRegistry returns the address (host:port) of the local registry of
// `clustersync dev up` when host is that local host (the same API server)
// and the registry runs, else "". Its real node pulls the images named
// ghcr.io/… from that registry.
func localRegistry(host *hostConn) string {
	c, err := hostcluster.Open(defaultHostDir())
	if err != nil || c.Server() == "" || c.Server() != host.config.Host {
		return ""
	}
	st, ok := registry.Running(registryDir(c.Dir))
	if !ok {
		return ""
	}
	return st.Addr
}

// localImageFix is the advice for an image the local host's registry lacks.
const localImageFix = "build and push clustersync's images to the local host's registry with `make image` " +
	"(tags latest and this version; `clustersync dev image --tag TAG` for another tag)"

// waitOptions are the WaitOptions of create, upgrade and resume: progress
// lines to out at once and every 5 s, within timeout; with the local host's registry
// (reg, "" when the host is another) the fix for a missing image is
// localImageFix.
func waitOptions(out io.Writer, reg string, timeout time.Duration) deploy.WaitOptions {
	w := deploy.WaitOptions{Timeout: timeout, Progress: out, ProgressEvery: 5 * time.Second}
	if reg != "" {
		w.ImageFix = localImageFix
	}
	return w
}

// checkImages checks, before anything is installed on the local host of
// `dev up`, that its registry holds the images cfg runs: the control plane
// image (missing: an error with the command that pushes it) and, when
// StatefulSet pods get the rewrite-hosts init container, its image
// (missing: a note, since only those pods need it). On another host it
// checks nothing (the wait stops early on an image that does not exist).
// It returns the WaitOptions for the wait that follows (waitOptions).
func checkImages(ctx context.Context, out io.Writer, host *hostConn, cfg *config.Config, timeout time.Duration) (deploy.WaitOptions, error) {
	reg := localRegistry(host)
	w := waitOptions(out, reg, timeout)
	if reg == "" {
		return w, nil
	}
	cp, err := deploy.ControlPlaneImage(cfg)
	if err != nil {
		return w, err
	}
	if ok, err := inLocalRegistry(ctx, reg, cp); err != nil {
		return w, err
	} else if !ok {
		return w, fmt.Errorf("the control plane image %s is not in the local host's registry (http://%s), from which its node pulls ghcr.io images: %s",
			cp, reg, localImageFix)
	}
	if rh := cfg.Sync.ToHost.Pods.RewriteHosts; rh.Enabled {
		img := cfg.RewriteHostsImage()
		if ok, err := inLocalRegistry(ctx, reg, img); err == nil && !ok {
			fmt.Fprintf(out, "Note: the rewrite-hosts image %s (sync.toHost.pods.rewriteHosts.initContainer.image) is not in the local host's registry: "+
				"StatefulSet pods will not start until it is there (`clustersync dev up` pushes the default one).\n", img)
		}
	}
	return w, nil
}

// inLocalRegistry tells whether image, when it is a ghcr.io image, is in
// the local registry reg under its repository and tag; other images are not
// the local registry's to judge (true).
func inLocalRegistry(ctx context.Context, reg, image string) (bool, error) {
	ref, err := name.ParseReference(image)
	if err != nil {
		return false, fmt.Errorf("image %q: %w", image, err)
	}
	if ref.Context().RegistryStr() != images.DefaultRegistry {
		return true, nil
	}
	ok, err := images.Exists(ctx, reg, ref.Context().RepositoryStr(), ref.Identifier(), true)
	if err != nil {
		return false, fmt.Errorf("local registry %s: %w", reg, err)
	}
	return ok, nil
}
