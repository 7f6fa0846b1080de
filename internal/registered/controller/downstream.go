package controller

import (
	"context"
	"net/http"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/registered/tunnel"
)

// RequestTimeout bounds each request to a downstream API server.
const RequestTimeout = 15 * time.Second

// DownstreamConfig is a rest.Config for a registered cluster's API server
// reached through its tunnel (rt, tunnel.Server.Transport, whose
// connections are shared), as the agent's service account.
func DownstreamConfig(reg tunnel.Registration, rt http.RoundTripper) *rest.Config {
	return &rest.Config{
		Host:        reg.APIEndpoint,
		BearerToken: reg.Token,
		Transport:   rt,
		Timeout:     RequestTimeout,
		QPS:         -1,
	}
}

// Distribution reads the distribution from a server gitVersion: "k3s" for
// "+k3s", "rke2" for "+rke2", else "" (Rancher's detection,
// https://rancher.com/docs/rancher/v2.x/en/cluster-provisioning/imported-clusters/).
func Distribution(gitVersion string) string {
	switch {
	case strings.Contains(gitVersion, "+k3s"):
		return mgmtv1.DistributionK3s
	case strings.Contains(gitVersion, "+rke2"):
		return mgmtv1.DistributionRKE2
	}
	return ""
}

// probe is what one look at a connected cluster found.
type probe struct {
	version    string
	readyErr   error
	pingErr    error
	downstream kubernetes.Interface
}

// look pings the cluster (GET /version) and asks /readyz.
func look(ctx context.Context, cfg *rest.Config) probe {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return probe{pingErr: err}
	}
	p := probe{downstream: kube}
	v, err := kube.Discovery().ServerVersion()
	if err != nil {
		p.pingErr = err
		return p
	}
	p.version = v.GitVersion
	body, err := kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		p.readyErr = err
	} else if strings.TrimSpace(string(body)) != "ok" {
		p.readyErr = &readyzError{body: string(body)}
	}
	return p
}

type readyzError struct{ body string }

func (e *readyzError) Error() string { return "/readyz: " + e.body }
