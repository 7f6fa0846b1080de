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

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/access"
	"github.com/clustersync/clustersync/internal/hosted/eks"
)

// TokenFunc returns a bearer token for the Kubernetes API of EKS cluster
// clusterName in region, signed with the credential Secret's data (secret).
type TokenFunc func(ctx context.Context, region string, secret map[string][]byte, clusterName string) (string, error)

// SATokenWait bounds how long one pass waits for the cluster's token
// controller to write the service-account token; the next pass goes on.
const SATokenWait = 30 * time.Second

// AccessTimeout bounds each request to a managed cluster's API server.
const AccessTimeout = 15 * time.Second

// Reasons of condition Connected when the API server was not reached.
const (
	// ReasonTunnelRequired: the endpoint is private and the management
	// server cannot reach it (status.eksStatus.privateRequiresTunnel).
	ReasonTunnelRequired = "TunnelRequired"
	// ReasonUnauthorized: the API server refused the credentials.
	ReasonUnauthorized = "Unauthorized"
	// ReasonUnreachable: any other failure to reach the API server.
	ReasonUnreachable = "Unreachable"
)

// SATokenSecretName names the management-side Secret, in namespace
// clustersync-global-data, that keeps the service-account token of
// cluster (status.serviceAccountTokenSecret).
func SATokenSecretName(cluster string) string { return cluster + "-sa-token" }

func (r *Reconciler) tokens() TokenFunc {
	if r.Tokens != nil {
		return r.Tokens
	}
	return func(ctx context.Context, region string, secret map[string][]byte, name string) (string, error) {
		return eks.IAMToken(ctx, region, secret, name, "")
	}
}

func (r *Reconciler) dial() eks.DialFunc {
	if r.Dial != nil {
		return r.Dial
	}
	return (&net.Dialer{}).DialContext
}

// reach connects to the cluster's API server, as Rancher does after a
// cluster turns active (Rancher's EKS driver, https://github.com/rancher/eks-operator): for an
// endpoint without public access it first tells whether the management
// server reaches it at all (eks.RequiresTunnel, kept in
// status.eksStatus.privateRequiresTunnel); then it authenticates with an
// IAM token, makes sure the cluster has clustersync's service account and
// keeps its token in the Secret status.serviceAccountTokenSecret names, and
// counts the nodes when EKS reports no node group (condition Waiting).
func (r *Reconciler) reach(ctx context.Context, c *mgmtv1.Cluster, config *eksv1.EKSClusterConfigSpec, up upstreamState) *accessResult {
	st := c.Status.EKSStatus
	if up.endpoint == "" {
		return &accessResult{reason: ReasonUnreachable, err: errors.New("EKS reports no API endpoint yet")}
	}
	if up.spec.PublicAccess != nil && !*up.spec.PublicAccess {
		timeout := r.DialTimeout
		if timeout <= 0 {
			timeout = eks.EndpointDialTimeout
		}
		tunnel, err := eks.RequiresTunnel(ctx, r.dial(), up.endpoint, timeout)
		if err != nil {
			return &accessResult{reason: ReasonUnreachable, err: fmt.Errorf("private endpoint %s: cannot tell whether it needs a tunnel (retrying): %w", up.endpoint, err)}
		}
		st.PrivateRequiresTunnel = tunnel
		if *tunnel {
			return &accessResult{reason: ReasonTunnelRequired, err: fmt.Errorf("the API endpoint %s has no public access and the management server cannot reach it (DNS failure or timeout); status.eksStatus.privateRequiresTunnel is true", up.endpoint)}
		}
	} else {
		st.PrivateRequiresTunnel = nil
	}

	secret, tokens := up.secret, r.tokens()
	cfg, err := access.RESTConfig(up.endpoint, []byte(up.caCert), func(ctx context.Context) (string, error) {
		return tokens(ctx, config.Region, secret, config.DisplayName)
	})
	if err != nil {
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
	if up.spec.NodeGroups == nil || len(*up.spec.NodeGroups) == 0 {
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
func (r *Reconciler) ensureSAToken(ctx context.Context, c *mgmtv1.Cluster, kube kubernetes.Interface, up upstreamState) error {
	key := types.NamespacedName{Namespace: eksv1.Namespace, Name: SATokenSecretName(c.Name)}
	if creds, err := access.LoadToken(ctx, r.Client, key); err == nil && creds.Endpoint == up.endpoint {
		c.Status.ServiceAccountTokenSecret = key.Name
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, SATokenWait)
	defer cancel()
	token, err := access.EnsureServiceAccountToken(ctx, kube)
	if err != nil {
		return err
	}
	if err := access.StoreToken(ctx, r.Client, key, c, access.Credentials{Endpoint: up.endpoint, CAData: []byte(up.caCert), Token: token}); err != nil {
		return err
	}
	c.Status.ServiceAccountTokenSecret = key.Name
	return nil
}
