package aks

import (
	"context"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/access"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/management"
)

// Management is AKS's reader for the management controller
// (management.Reader): Azure read with the
// management side's own clients — one GET of the managed cluster per
// refresh, its pools included — and the cluster's API server reached with
// clustersync's service-account token once it has one, else with the
// administrator kubeconfig (listClusterAdminCredential).
type Management struct {
	// Client reads the credential and CA Secrets.
	Client client.Reader
	// NewClients makes the Azure clients from a credential Secret
	// (NewClientsFactory); required.
	NewClients ClientsFactory
}

var _ management.Reader[aksv1.AKSClusterConfigSpec, *aksv1.AKSClusterConfig] = (*Management)(nil)

// status returns status.aksStatus's upstreamSpec and appliedSpec
// (management.Traits.Status).
func status(c *mgmtv1.Cluster) (upstream, applied **aksv1.AKSClusterConfigSpec) {
	if c.Status.AKSStatus == nil {
		c.Status.AKSStatus = &mgmtv1.AKSStatus{}
	}
	return &c.Status.AKSStatus.UpstreamSpec, &c.Status.AKSStatus.AppliedSpec
}

// copyStatus copies what the operator recorded into status.aksStatus
// (management.Traits.CopyStatus).
func copyStatus(c *mgmtv1.Cluster, op *aksv1.AKSClusterConfig) {
	status(c)
	c.Status.AKSStatus.RBACEnabled = op.Status.RBACEnabled
}

// nodePools counts the pools (management.Traits.NodePools).
func nodePools(up aksv1.AKSClusterConfigSpec) int { return len(pools(up)) }

// Describe reads the managed cluster (one GET, pools included) and the
// endpoint and CA the operator keeps in its CA Secret (reading, as the
// operator's Observe does).
func (m *Management) Describe(ctx context.Context, config aksv1.AKSClusterConfigSpec, op *aksv1.AKSClusterConfig) (engine.Upstream[aksv1.AKSClusterConfigSpec], bool, error) {
	cs, err := LoadClients(ctx, m.Client, m.NewClients, config)
	if err != nil {
		return engine.Upstream[aksv1.AKSClusterConfigSpec]{}, false, err
	}
	out, err := cs.ManagedClusters.Get(ctx, config.ResourceGroup, config.ClusterName, nil)
	if notFound(err) {
		return engine.Upstream[aksv1.AKSClusterConfigSpec]{}, false, nil
	}
	if err != nil {
		return engine.Upstream[aksv1.AKSClusterConfigSpec]{}, false, fmt.Errorf("get cluster %s: %w", config.ClusterName, err)
	}
	up, err := reading(ctx, m.Client, config, op, &out.ManagedCluster)
	return up, err == nil, err
}

// reading is the whole upstream of managed cluster mc: its spec
// (UpstreamSpec), Kubernetes version, and the endpoint and CA of op's CA
// Secret (none before op exists or has one). The operator's passes
// (Observe) and the management controller's refresh (Describe) both read
// it, so that either's reading serves the other (engine.Readings).
func reading(ctx context.Context, k client.Reader, config aksv1.AKSClusterConfigSpec, op *aksv1.AKSClusterConfig, mc *armcontainerservice.ManagedCluster) (engine.Upstream[aksv1.AKSClusterConfigSpec], error) {
	up := engine.Upstream[aksv1.AKSClusterConfigSpec]{Spec: UpstreamSpec(config, mc)}
	if p := mc.Properties; p != nil {
		up.Version = ptr.Deref(p.CurrentKubernetesVersion, "")
	}
	if op == nil {
		return up, nil
	}
	var sec corev1.Secret
	err := k.Get(ctx, types.NamespacedName{Namespace: op.Namespace, Name: op.Name}, &sec)
	switch {
	case err == nil:
		up.Endpoint, up.CACert = string(sec.Data["endpoint"]), string(sec.Data["ca"])
	case !apierrors.IsNotFound(err):
		return up, err
	}
	return up, nil
}

// Connect returns a client configuration for the cluster's API server:
// clustersync's service-account token when the Cluster has one for this
// endpoint (no Azure call), else the administrator kubeconfig.
func (m *Management) Connect(ctx context.Context, c *mgmtv1.Cluster, config aksv1.AKSClusterConfigSpec, up engine.Upstream[aksv1.AKSClusterConfigSpec]) (*rest.Config, error) {
	key := types.NamespacedName{Namespace: hostedv1.Namespace, Name: management.SATokenSecretName(c.Name)}
	if creds, err := access.LoadToken(ctx, m.Client, key); err == nil && creds.Endpoint == up.Endpoint {
		return access.RESTConfig(creds.Endpoint, creds.CAData, access.StaticToken(creds.Token))
	}
	cs, err := LoadClients(ctx, m.Client, m.NewClients, config)
	if err != nil {
		return nil, err
	}
	cfg, err := adminKubeconfig(ctx, cs, config)
	if err != nil {
		return nil, &management.AccessError{Reason: management.ReasonUnauthorized, Err: err}
	}
	if len(cfg.CAData) == 0 && up.CACert != "" {
		if cfg.CAData, err = base64.StdEncoding.DecodeString(up.CACert); err != nil {
			return nil, fmt.Errorf("CA of %s: %w", config.ClusterName, err)
		}
	}
	return cfg, nil
}
