package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/managed"
	"github.com/clustersync/clustersync/internal/hosted/management"
	"github.com/clustersync/clustersync/internal/manager"
	"github.com/clustersync/clustersync/internal/registered/controller"
	"github.com/clustersync/clustersync/internal/registered/kubetoken"
	"github.com/clustersync/clustersync/internal/registered/server"
)

// newClusterCommand is `clustersync cluster`: the Clusters of a management
// cluster.
func newClusterCommand() *cobra.Command {
	var kubeconfig string
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Inspect the clusters a management cluster manages and answer their conflicts",
		Args:  cobra.NoArgs,
	}
	cmd.PersistentFlags().StringVar(&kubeconfig, "kubeconfig", "",
		"kubeconfig of the management cluster (default: $KUBECONFIG, else ~/.kube/config)")
	cmd.AddCommand(newClusterShowCommand(&kubeconfig), newClusterImportCommand(&kubeconfig), newClusterResolveCommand(&kubeconfig),
		newClusterKubeconfigCommand(&kubeconfig))
	return cmd
}

// newClusterShowCommand is `clustersync cluster show NAME`.
func newClusterShowCommand(kubeconfig *string) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Print a cluster's effective desired state: each field, whether it is managed, and its config, upstream, applied and effective values",
		Long: `Print the effective desired state of Cluster NAME: upstream spec (what the
cloud reports) with every managed field (non-nil in spec.eksConfig,
spec.aksConfig or spec.gkeConfig) laid over it. The columns are the same for
every cloud. One row per field, node groups (pools) per node
group and field, with the value
last applied (agreed between clustersync and the cloud). DRIFT marks a
managed field whose config value differs from upstream: a change not applied
yet, or a change made outside clustersync and not yet adopted.

When the cluster's API endpoint is private and the manager cannot install
the agent (condition AgentConnected, reason RegistrationRequired), the
registration command to run from inside the cluster's network is printed
above the table.

-o json prints the same rows as a JSON list, with Kubernetes' lowerCamel
keys: {"path", "managed", "config", "upstream", "applied", "effective",
"drift"}; config, upstream, applied and effective are the field's JSON value,
left out when unset.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "table" && output != "json" {
				return fmt.Errorf("--output %q: want table or json", output)
			}
			k, err := managementClient(*kubeconfig)
			if err != nil {
				return err
			}
			var c mgmtv1.Cluster
			if err := k.Get(cmd.Context(), types.NamespacedName{Name: args[0]}, &c); err != nil {
				return fmt.Errorf("cluster %s: %w", args[0], err)
			}
			rows, ok := manager.EffectiveRows(&c)
			if !ok {
				return fmt.Errorf("cluster %s has no spec.eksConfig, spec.aksConfig or spec.gkeConfig; only hosted clusters have an effective state to show", c.Name)
			}
			if output == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(jsonRows(rows))
			}
			var reg *mgmtv1.ClusterRegistrationToken
			if controller.RegistrationRequired(&c) {
				reg = &mgmtv1.ClusterRegistrationToken{}
				if err := k.Get(cmd.Context(), types.NamespacedName{Namespace: server.TokenNamespace, Name: c.Name}, reg); err != nil {
					return fmt.Errorf("cluster %s: its registration command: %w", c.Name, err)
				}
			}
			return printCluster(cmd.OutOrStdout(), &c, rows, reg)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	return cmd
}

// newClusterKubeconfigCommand is `clustersync cluster kubeconfig NAME`.
func newClusterKubeconfigCommand(kubeconfig *string) *cobra.Command {
	var ttl time.Duration
	var serverURL, out string
	cmd := &cobra.Command{
		Use:   "kubeconfig NAME",
		Short: "Get a kubeconfig for cluster NAME through the manager's proxy, with a short-lived token of your own identity",
		Long: `Get a kubeconfig for Cluster NAME, as Rancher's "Download KubeConfig" gives
one: its server is the manager's proxy https://MANAGER/k8s/clusters/NAME and
its credential a token the manager issues to you, valid for --ttl (default 8h,
at most 720h). The cluster sees you as you are on the management cluster
(your user name and groups), with the role your membership gives you
(spec.members: owner, member, read-only); a user who is not a
member is refused. The token is checked on every request: removing you from
the members, or deleting the token's Secret, ends its use before it expires.

The manager is asked with your kubeconfig's credential of the management
cluster (a token, an exec plugin or a client certificate), at the URL and CA
it publishes in ConfigMap kube-public/clustersync-manager, or at --server.
The kubeconfig is printed, or written to -o FILE (mode 0600); its expiry goes
to standard error.

  clustersync cluster kubeconfig edge --ttl 1h -o edge.yaml
  kubectl --kubeconfig edge.yaml get pods -A`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := kubetoken.TTL(ttl); err != nil {
				return fmt.Errorf("--%w", err) // the same rule as the manager's
			}
			cfg, err := loadKubeconfig(*kubeconfig)
			if err != nil {
				return err
			}
			kube, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			info, err := server.ReadInfo(cmd.Context(), kube)
			switch {
			case err != nil && serverURL == "":
				return fmt.Errorf("%w (--server)", err)
			case serverURL != "":
				info.URL = serverURL
			}
			kc, expires, err := kubetoken.Request(cmd.Context(), cfg, info.URL, info.CAPEM, args[0], ttl)
			if err != nil {
				return err
			}
			if out == "" {
				_, err = cmd.OutOrStdout().Write(kc)
			} else {
				err = os.WriteFile(out, kc, 0o600)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "The kubeconfig of cluster %s (server %s) is valid until %s.\n", args[0], server.ClusterProxyURL(info.URL, args[0]), expires.Format(time.RFC3339))
			return nil
		},
	}
	cmd.Flags().DurationVar(&ttl, "ttl", 0, "how long the token is valid, e.g. 1h (default 8h, at most 720h)")
	cmd.Flags().StringVar(&serverURL, "server", "", "the manager's https URL (default: the one in ConfigMap kube-public/clustersync-manager)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the kubeconfig to this file (mode 0600) instead of printing it")
	return cmd
}

// newClusterResolveCommand is `clustersync cluster resolve NAME PATH
// --keep|--take`.
func newClusterResolveCommand(kubeconfig *string) *cobra.Command {
	var keep, take bool
	cmd := &cobra.Command{
		Use:   "resolve NAME PATH --keep|--take",
		Short: "Answer a conflict of a hosted cluster: keep your value (pushed to the cloud) or take the cloud's",
		Long: `Answer the conflict on field PATH of Cluster NAME (a path as status.conflicts
and the Conflict condition name it: tags, nodeGroups[workers].desiredSize).
A conflict is a field changed both in spec and in the cloud since they last
agreed; nothing is written until it is answered.

--keep  keeps your value: adds PATH with the conflict's values to the
        Cluster's annotation clustersync.io/keep-config, as
          kubectl annotate cluster NAME --overwrite clustersync.io/keep-config='{"PATH":{"config":CONFIG,"upstream":UPSTREAM}}'
        would (the other paths of the annotation are kept). spec is not
        changed; the operator pushes your value over the cloud's and the
        management controller removes the entry once the conflict is gone.
        Refused when the field was edited since the conflict was recorded:
        that edit is already the answer.
--take  takes the cloud's value: sets spec.<cloud>Config.PATH to the
        upstream value the conflict recorded, as kubectl edit would (the
        dashboard's "Take the cloud's value"); nothing is written to the
        cloud.

The Cluster is read (its status.conflicts) and patched with your
kubeconfig's identity, with an optimistic lock: a Cluster changed since it
was read is not written; run again. Get and patch on the Cluster are all
the RBAC it needs. It prints the values of the conflict answered.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if keep == take {
				return errors.New("give one of --keep (push your value) and --take (take the cloud's value)")
			}
			a := management.Take
			if keep {
				a = management.Keep
			}
			k, err := managementClient(*kubeconfig)
			if err != nil {
				return err
			}
			cf, err := management.Resolve(cmd.Context(), k, manager.Hosted, args[0], args[1], a)
			if err != nil {
				return err
			}
			if keep {
				fmt.Fprintf(cmd.OutOrStdout(), "cluster %s: %s: keeping your value %s over the cloud's %s (annotation %s); it is pushed at the operator's next pass\n",
					args[0], cf.Path, cf.Config, cf.Upstream, engine.KeepAnnotation)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cluster %s: %s: took the cloud's value %s (yours was %s) into spec\n", args[0], cf.Path, cf.Upstream, cf.Config)
			return nil
		},
	}
	cmd.Flags().BoolVar(&keep, "keep", false, "keep your value: push it over the cloud's (writes annotation "+engine.KeepAnnotation+")")
	cmd.Flags().BoolVar(&take, "take", false, "take the cloud's value: set the field in spec to it")
	return cmd
}

// managementClient is a client of the management cluster of kubeconfig.
func managementClient(kubeconfig string) (client.Client, error) {
	cfg, err := loadKubeconfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	scheme, err := manager.Scheme()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// jsonRow is one row of `cluster show -o json`: a managed.Row with
// Kubernetes' lowerCamel keys and the values as JSON values (omitted when
// unset).
type jsonRow struct {
	Path      string          `json:"path"`
	Managed   bool            `json:"managed"`
	Config    json.RawMessage `json:"config,omitempty"`
	Upstream  json.RawMessage `json:"upstream,omitempty"`
	Applied   json.RawMessage `json:"applied,omitempty"`
	Effective json.RawMessage `json:"effective,omitempty"`
	Drift     bool            `json:"drift"`
}

// jsonRows returns rows as `cluster show -o json` prints them.
func jsonRows(rows []managed.Row) []jsonRow {
	raw := func(v string) json.RawMessage {
		if v == "" {
			return nil
		}
		return json.RawMessage(v)
	}
	out := make([]jsonRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, jsonRow{Path: r.Path, Managed: r.Managed, Config: raw(r.Config), Upstream: raw(r.Upstream),
			Applied: raw(r.Applied), Effective: raw(r.Effective), Drift: r.Drift})
	}
	return out
}

// printCluster writes the header (name, driver, phase, version, the
// conditions that are not as they should be, and the registration
// commands of reg when it is not nil) and the rows as a table.
func printCluster(w io.Writer, c *mgmtv1.Cluster, rows []managed.Row, reg *mgmtv1.ClusterRegistrationToken) error {
	fmt.Fprintf(w, "Cluster %s (%s) driver %s, phase %s, version %s\n", c.Name, c.Spec.DisplayName,
		orDash(c.Status.Driver), orDash(c.Status.Phase), orDash(c.Status.Version))
	if cond := meta.FindStatusCondition(c.Status.Conditions, mgmtv1.ConditionConflict); cond != nil && cond.Status == "True" {
		fmt.Fprintf(w, "CONFLICT: %s\n", cond.Message)
	}
	for _, cond := range c.Status.Conditions {
		if cond.Status != "True" && cond.Type != mgmtv1.ConditionConflict && cond.Message != "" {
			fmt.Fprintf(w, "%s=%s: %s\n", cond.Type, cond.Status, cond.Message)
		}
	}
	if reg != nil && reg.Status.Command != "" {
		fmt.Fprintf(w, "\nThe API endpoint is private: run one of these from inside the cluster's network, with a kubeconfig of it (cluster-admin):\n  %s\n", reg.Status.Command)
		fmt.Fprintf(w, "When the manager's certificate is self-signed:\n  %s\n", reg.Status.InsecureCommand)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FIELD\tMANAGED\tCONFIG\tUPSTREAM\tAPPLIED\tEFFECTIVE\tDRIFT")
	for _, r := range rows {
		m, d := "no", ""
		if r.Managed {
			m = "yes"
		}
		if r.Drift {
			d = "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Path, m, orDash(r.Config), orDash(r.Upstream), orDash(r.Applied), orDash(r.Effective), d)
	}
	return tw.Flush()
}
