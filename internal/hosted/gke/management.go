package gke

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/access"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/management"
)

// Management is GKE's reader for the management controller
// (management.Reader): GKE read with the
// management side's own client — one GetCluster per refresh, its pools
// included — and the cluster's API server reached with clustersync's
// service-account token once it has one, else with the credential's
// OAuth token (GKE's API servers accept Google tokens, as Rancher's
// gke-operator uses them).
type Management struct {
	// Client reads the credential and CA Secrets.
	Client client.Reader
	// NewClients makes the GKE client from a credential Secret
	// (NewClientsFactory); required.
	NewClients ClientsFactory
	// Dial opens connections for the private-endpoint check
	// (access.RequiresTunnel); nil means a net.Dialer.
	Dial access.DialFunc
	// DialTimeout bounds that check; 0 means access.EndpointDialTimeout
	// (30 seconds).
	DialTimeout time.Duration
}

var _ management.Reader[gkev1.GKEClusterConfigSpec, *gkev1.GKEClusterConfig] = (*Management)(nil)

// status returns status.gkeStatus's upstreamSpec and appliedSpec
// (management.Traits.Status).
func status(c *mgmtv1.Cluster) (upstream, applied **gkev1.GKEClusterConfigSpec) {
	if c.Status.GKEStatus == nil {
		c.Status.GKEStatus = &mgmtv1.GKEStatus{}
	}
	return &c.Status.GKEStatus.UpstreamSpec, &c.Status.GKEStatus.AppliedSpec
}

// copyStatus makes status.gkeStatus (management.Traits.CopyStatus): the
// operator keeps no cloud-side facts of its own.
func copyStatus(c *mgmtv1.Cluster, _ *gkev1.GKEClusterConfig) { status(c) }

// nodePools counts the pools (management.Traits.NodePools).
func nodePools(up gkev1.GKEClusterConfigSpec) int { return len(pools(up)) }

// Describe reads the cluster (one GetCluster, pools included): its
// upstream spec (UpstreamSpec, with op's applied spec), version, endpoint
// and CA.
func (m *Management) Describe(ctx context.Context, config gkev1.GKEClusterConfigSpec, op *gkev1.GKEClusterConfig) (engine.Upstream[gkev1.GKEClusterConfigSpec], bool, error) {
	var up engine.Upstream[gkev1.GKEClusterConfigSpec]
	gc, err := LoadClients(ctx, m.Client, m.NewClients, config)
	if err != nil {
		return up, false, err
	}
	cl, err := gc.Clusters.GetCluster(ctx, &containerpb.GetClusterRequest{Name: clusterName(config)})
	if notFound(err) {
		return up, false, nil
	}
	if err != nil {
		return up, false, fmt.Errorf("get cluster %s: %w", config.ClusterName, err)
	}
	var applied *gkev1.GKEClusterConfigSpec
	if op != nil {
		applied = op.Status.AppliedSpec
	}
	return reading(config, applied, cl), true, nil
}

// reading is the whole upstream of cluster cl: its spec (UpstreamSpec,
// versions at the precision of applied), Kubernetes version, endpoint and
// CA. The operator's passes (Observe) and the management controller's
// refresh (Describe) both read it, so that either's reading serves the
// other (engine.Readings).
func reading(config gkev1.GKEClusterConfigSpec, applied *gkev1.GKEClusterConfigSpec, cl *containerpb.Cluster) engine.Upstream[gkev1.GKEClusterConfigSpec] {
	return engine.Upstream[gkev1.GKEClusterConfigSpec]{Spec: UpstreamSpec(config, applied, cl), Version: cl.GetCurrentMasterVersion(),
		Endpoint: endpointURL(cl), CACert: cl.GetMasterAuth().GetClusterCaCertificate()}
}

// Connect returns a client configuration for the cluster's API server:
// clustersync's service-account token when the Cluster has one for this
// endpoint (no Google call), else the credential's OAuth token. For an
// API server with a private endpoint only, it first tells whether the
// management server reaches it at all (status.gkeStatus.privateRequiresTunnel).
func (m *Management) Connect(ctx context.Context, c *mgmtv1.Cluster, config gkev1.GKEClusterConfigSpec, up engine.Upstream[gkev1.GKEClusterConfigSpec]) (*rest.Config, error) {
	status(c)
	st := c.Status.GKEStatus
	if p := up.Spec.PrivateClusterConfig; p == nil || !p.EnablePrivateEndpoint {
		st.PrivateRequiresTunnel = nil
	} else {
		tunnel, err := management.PrivateEndpoint(ctx, m.Dial, m.DialTimeout, up.Endpoint, "status.gkeStatus.privateRequiresTunnel")
		if tunnel != nil {
			st.PrivateRequiresTunnel = tunnel // undetermined keeps the last answer
		}
		if err != nil {
			return nil, err
		}
	}
	key := types.NamespacedName{Namespace: hostedv1.Namespace, Name: management.SATokenSecretName(c.Name)}
	if creds, err := access.LoadToken(ctx, m.Client, key); err == nil && creds.Endpoint == up.Endpoint {
		return access.RESTConfig(creds.Endpoint, creds.CAData, access.StaticToken(creds.Token))
	}
	gc, err := LoadClients(ctx, m.Client, m.NewClients, config)
	if err != nil {
		return nil, err
	}
	return access.RESTConfig(up.Endpoint, []byte(up.CACert), func(ctx context.Context) (string, error) {
		tok, err := gc.Credentials.Token(ctx)
		if err != nil {
			return "", &management.AccessError{Reason: management.ReasonUnauthorized, Err: fmt.Errorf("token of the credential secret: %w", err)}
		}
		return tok.Value, nil
	})
}
