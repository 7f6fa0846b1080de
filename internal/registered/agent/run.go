// Package agent is `clustersync agent`, which runs in a registered cluster:
// it keeps the reverse tunnel to the management server up (package
// tunnel), registering the cluster in the same step, and, as the cleanup
// Job, removes clustersync's objects when the cluster is disconnected.
package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clustersync/clustersync/internal/registered/registration"
	"github.com/clustersync/clustersync/internal/registered/tunnel"
)

// Options configure Run.
type Options struct {
	// Config reaches the cluster's API server as the agent's service
	// account (rest.InClusterConfig in a pod); its host, token and CA are
	// what the agent registers.
	Config *rest.Config
	// ServerURL is the management server's https URL (CLUSTERSYNC_SERVER).
	ServerURL string
	// CAChecksum is the SHA-256 hex of the server's CA
	// (CLUSTERSYNC_CA_CHECKSUM).
	CAChecksum string
	// Cluster is the Cluster's name on the management side
	// (CLUSTERSYNC_CLUSTER).
	Cluster string
	// Token is the registration token from the environment
	// (CLUSTERSYNC_TOKEN); the credentials Secret, read before each
	// connection, wins when it has one (a re-applied manifest updates it).
	Token string
	// Version is the agent's version.
	Version string
	// MinBackoff and MaxBackoff bound the reconnect backoff (defaults 1 s
	// and 30 s).
	MinBackoff, MaxBackoff time.Duration
	// Log receives connection events.
	Log logr.Logger
}

// Run keeps the agent connected until ctx ends (nil) or the server's CA or
// answer makes it pointless (tunnel.RunAgent's permanent errors). Errors
// also name a missing option.
func Run(ctx context.Context, o Options) error {
	for _, f := range []struct{ name, v string }{{"server URL (CLUSTERSYNC_SERVER)", o.ServerURL}, {"CA checksum (CLUSTERSYNC_CA_CHECKSUM)", o.CAChecksum}, {"cluster (CLUSTERSYNC_CLUSTER)", o.Cluster}} {
		if f.v == "" {
			return fmt.Errorf("agent: %s is required", f.name)
		}
	}
	if o.Config == nil {
		return errors.New("agent: no configuration for the cluster's API server")
	}
	kube, err := kubernetes.NewForConfig(o.Config)
	if err != nil {
		return err
	}
	return tunnel.RunAgent(ctx, tunnel.AgentOptions{
		ServerURL: o.ServerURL, CAChecksum: o.CAChecksum,
		Token:        func(ctx context.Context) (string, error) { return registrationToken(ctx, kube, o.Token) },
		Registration: func(ctx context.Context) (tunnel.Registration, error) { return describe(ctx, kube, o) },
		MinBackoff:   o.MinBackoff, MaxBackoff: o.MaxBackoff, Log: o.Log,
	})
}

// registrationToken reads the token of the credentials Secret, falling
// back to fallback when the Secret has none.
func registrationToken(ctx context.Context, kube kubernetes.Interface, fallback string) (string, error) {
	s, err := kube.CoreV1().Secrets(registration.AgentNamespace).Get(ctx, registration.CredentialsSecret, metav1.GetOptions{})
	if err == nil && len(s.Data["token"]) > 0 {
		return string(s.Data["token"]), nil
	}
	if fallback != "" {
		return fallback, nil
	}
	if err == nil {
		err = errors.New("no key token")
	}
	return "", fmt.Errorf("Secret %s/%s: %w", registration.AgentNamespace, registration.CredentialsSecret, err)
}

// describe is the cluster's registration: API address, the agent's
// service-account token and the CA (read again each time: kubelet rotates
// projected tokens), and the kube-system namespace's UID.
func describe(ctx context.Context, kube kubernetes.Interface, o Options) (tunnel.Registration, error) {
	ns, err := kube.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return tunnel.Registration{}, fmt.Errorf("read namespace kube-system: %w", err)
	}
	token, ca := o.Config.BearerToken, o.Config.CAData
	if o.Config.BearerTokenFile != "" {
		b, err := os.ReadFile(o.Config.BearerTokenFile)
		if err != nil {
			return tunnel.Registration{}, err
		}
		token = string(b)
	}
	if len(ca) == 0 && o.Config.CAFile != "" {
		if ca, err = os.ReadFile(o.Config.CAFile); err != nil {
			return tunnel.Registration{}, err
		}
	}
	return tunnel.Registration{Cluster: o.Cluster, APIEndpoint: o.Config.Host, Token: token, CACert: ca,
		KubeSystemUID: string(ns.UID), Version: o.Version}, nil
}
