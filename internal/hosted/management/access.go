package management

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/access"
	"github.com/clustersync/clustersync/internal/hosted/engine"
)

// SATokenWait bounds how long one pass waits for the cluster's token
// controller to write the service-account token; the next pass goes on.
const SATokenWait = 30 * time.Second

// AccessTimeout bounds each request to a managed cluster's API server.
const AccessTimeout = 15 * time.Second

// Reasons of condition Connected when the API server was not reached.
const (
	// ReasonTunnelRequired: the endpoint is private and the management
	// server cannot reach it (status.eksStatus.privateRequiresTunnel,
	// status.gkeStatus.privateRequiresTunnel).
	ReasonTunnelRequired = "TunnelRequired"
	// ReasonUnauthorized: the API server refused the credentials.
	ReasonUnauthorized = "Unauthorized"
	// ReasonUnreachable: any other failure to reach the API server.
	ReasonUnreachable = "Unreachable"
	// ReasonAgentConnected (Connected=True): the manager cannot reach the
	// API server itself but the cluster's agent dialed in and answers
	// through its tunnel.
	ReasonAgentConnected = "AgentConnected"
)

// AgentFresh is how recent the agent's last ping (status.agent.lastPing)
// must be for the cluster to count as connected through it: three of the
// agent's 15-second pings.
const AgentFresh = 45 * time.Second

// agentAnswers reports whether agent is connected and answered a ping
// within AgentFresh of now.
func agentAnswers(agent *mgmtv1.AgentStatus, now time.Time) bool {
	return agent != nil && agent.ConnectedSince != nil && agent.LastPing != nil && now.Sub(agent.LastPing.Time) < AgentFresh
}

// SATokenSecretName names the management-side Secret, in namespace
// clustersync-global-data, that keeps the service-account token of
// cluster (status.serviceAccountTokenSecret).
func SATokenSecretName(cluster string) string { return cluster + "-sa-token" }

// reach connects to the cluster's API server, as Rancher does after a
// cluster turns active: the Reader says how (Connect: for EKS an IAM token,
// after telling whether a private endpoint is reachable at all); then it
// makes sure the cluster has clustersync's service account and keeps its
// token in the Secret status.serviceAccountTokenSecret names, and counts
// the nodes when the cloud reports no node group (condition Waiting).
func (r *Reconciler[S, O]) reach(ctx context.Context, c *mgmtv1.Cluster, config S, up engine.Upstream[S]) *accessResult {
	if up.Endpoint == "" {
		return &accessResult{reason: ReasonUnreachable, err: fmt.Errorf("%s reports no API endpoint yet", r.Traits.Name)}
	}
	cfg, err := r.Reader.Connect(ctx, c, config, up)
	if err != nil {
		var ae *AccessError
		if errors.As(err, &ae) {
			return &accessResult{reason: ae.Reason, err: ae.Err}
		}
		return &accessResult{reason: ReasonUnreachable, err: err}
	}
	cfg.Timeout = AccessTimeout
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return &accessResult{reason: ReasonUnreachable, err: err}
	}
	if _, err := kube.Discovery().ServerVersion(); err != nil {
		return failed("GET /version", err)
	}
	if err := r.ensureSAToken(ctx, c, kube, up); err != nil {
		return failed("service-account token", err)
	}
	res := &accessResult{}
	if r.Traits.NodePools(up.Spec) == 0 {
		if res.nodes, err = access.CountNodes(ctx, kube); err != nil {
			return failed("count nodes", err)
		}
	}
	return res
}

// failed is the access result of an error while talking to the API
// server: Unauthorized when it refused the credentials, else Unreachable.
func failed(what string, err error) *accessResult {
	reason := ReasonUnreachable
	if apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) {
		reason = ReasonUnauthorized
	}
	return &accessResult{reason: reason, err: fmt.Errorf("%s: %w", what, err)}
}

// ensureSAToken keeps the cluster's service-account token in Secret
// clustersync-global-data/SATokenSecretName, owned by the Cluster, and
// names it in status.serviceAccountTokenSecret; it does nothing when that
// Secret already holds a token for the current endpoint.
func (r *Reconciler[S, O]) ensureSAToken(ctx context.Context, c *mgmtv1.Cluster, kube kubernetes.Interface, up engine.Upstream[S]) error {
	key := types.NamespacedName{Namespace: hostedv1.Namespace, Name: SATokenSecretName(c.Name)}
	if creds, err := access.LoadToken(ctx, r.Client, key); err == nil && creds.Endpoint == up.Endpoint {
		c.Status.ServiceAccountTokenSecret = key.Name
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, SATokenWait)
	defer cancel()
	token, err := access.EnsureServiceAccountToken(ctx, kube)
	if err != nil {
		return err
	}
	if err := access.StoreToken(ctx, r.Client, key, c, access.Credentials{Endpoint: up.Endpoint, CAData: []byte(up.CACert), Token: token}); err != nil {
		return err
	}
	c.Status.ServiceAccountTokenSecret = key.Name
	return nil
}

// PrivateEndpoint tells whether the management server reaches a private
// API endpoint (one without public access) directly, with
// access.RequiresTunnel (dial nil means a net.Dialer, timeout 0 means
// access.EndpointDialTimeout, 30 seconds). It returns the value to keep in
// the cloud's status field (field, e.g. "status.eksStatus.privateRequiresTunnel")
// and, when the endpoint cannot be used, an AccessError: ReasonTunnelRequired
// when it needs a tunnel, ReasonUnreachable while that cannot be told yet
// (retried).
func PrivateEndpoint(ctx context.Context, dial access.DialFunc, timeout time.Duration, endpoint, field string) (*bool, error) {
	if timeout <= 0 {
		timeout = access.EndpointDialTimeout
	}
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	tunnel, err := access.RequiresTunnel(ctx, dial, endpoint, timeout)
	if err != nil {
		return nil, &AccessError{Reason: ReasonUnreachable,
			Err: fmt.Errorf("private endpoint %s: cannot tell whether it needs a tunnel (retrying): %w", endpoint, err)}
	}
	if *tunnel {
		return tunnel, &AccessError{Reason: ReasonTunnelRequired,
			Err: fmt.Errorf("the API endpoint %s has no public access and the management server cannot reach it (DNS failure or timeout); %s is true", endpoint, field)}
	}
	return tunnel, nil
}
