package main

import (
	"context"
	"net/http"
	"strings"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/gke"
	"github.com/clustersync/clustersync/internal/hosted/gke/gketest"
	"github.com/clustersync/clustersync/internal/hosted/management"
	"github.com/clustersync/clustersync/internal/manager"
)

// gkeFleet is GKE in the benchmark: clusters bench-NNN in project
// clustersync-bench, zone us-central1-a, with pools a and b, whose API
// servers accept the bench's token (the manager's GKE credentials).
type gkeFleet struct{ token string }

const (
	benchProject = "clustersync-bench"
	benchZone    = "us-central1-a"
)

func (*gkeFleet) cloud() management.Descriptor { return gke.Cloud() }
func (*gkeFleet) refreshOp() string            { return gketest.MethodClustersGet }
func (*gkeFleet) pushOp() string               { return gketest.MethodClustersSetResourceLabels }

func (g *gkeFleet) start(ctx context.Context, k client.Client, n int, endpoint string, ca []byte, token string) (http.Handler, error) {
	g.token = token
	emu := gketest.NewUnstarted(gketest.Options{EndpointFor: func(string) string { return strings.TrimPrefix(endpoint, "https://") },
		CertificateAuthorityFor: func(string) []byte { return ca }})
	for i := range n {
		if err := emu.ImportCluster(benchProject, benchZone, &containerpb.Cluster{Name: benchName(i), InitialClusterVersion: "1.31",
			ResourceLabels: map[string]string{"team": "bench"},
			NodePools:      []*containerpb.NodePool{{Name: "a", InitialNodeCount: 1}, {Name: "b", InitialNodeCount: 1}}}); err != nil {
			return nil, err
		}
	}
	if err := k.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "google", Namespace: hostedv1.Namespace},
		StringData: map[string]string{gke.AuthEncodedJSONField: `{"type": "service_account", "project_id": "` + benchProject + `"}`}}); err != nil {
		return nil, err
	}
	return emu.Handler(), nil
}

func (*gkeFleet) cluster(i int) *mgmtv1.Cluster {
	return &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: benchName(i)}, Spec: mgmtv1.ClusterSpec{DisplayName: benchName(i), GKEConfig: &gkev1.GKEClusterConfigSpec{
		ProjectID: benchProject, Zone: benchZone, ClusterName: benchName(i), GoogleCredentialSecret: hostedv1.Namespace + ":google",
		Imported: true, Labels: &map[string]string{"team": "bench"},
	}}}
}

// options points the manager at the emulator; the clients send the
// bench's token, which the emulated clusters' API servers (the bench's)
// accept, as GKE's accept a Google token.
func (g *gkeFleet) options(o *manager.Options, url string, refresh time.Duration) {
	o.Clouds = map[string]management.CloudOptions{gke.Cloud().Key: {Endpoint: url, Refresh: refresh, Poll: time.Second,
		Credentials: gke.StaticCredentials(g.token)}}
}

func (*gkeFleet) pushTag(c *mgmtv1.Cluster) { (*c.Spec.GKEConfig.Labels)["pushed"] = "1" }

func (*gkeFleet) pushed(c *mgmtv1.Cluster) bool {
	if c.Status.GKEStatus == nil {
		return false
	}
	a := c.Status.GKEStatus.AppliedSpec
	return a != nil && a.Labels != nil && (*a.Labels)["pushed"] == "1"
}

// operation names a GKE request as the emulator's Calls do
// ("clusters.get"); the operator's calls carry its User-Agent.
func (*gkeFleet) operation(r *http.Request) (op, cluster string, operator bool) {
	operator = strings.Contains(r.UserAgent(), management.OperatorAppID(gke.Cloud().Key))
	path, verb, _ := strings.Cut(strings.Trim(r.URL.Path, "/"), ":")
	parts := strings.Split(path, "/")
	kind := ""
	for i := 0; i+1 < len(parts); i++ {
		switch parts[i] {
		case "clusters":
			kind, cluster = "clusters", parts[i+1]
		case "nodePools":
			kind = "nodePools"
		case "operations":
			return "operations.get", "", operator
		}
	}
	switch {
	case kind == "":
		return r.Method + " " + r.URL.Path, "", operator
	case verb != "":
		return kind + "." + verb, cluster, operator
	case r.Method == http.MethodGet:
		return kind + ".get", cluster, operator
	case r.Method == http.MethodPut:
		return kind + ".update", cluster, operator
	case r.Method == http.MethodDelete:
		return kind + ".delete", cluster, operator
	case r.Method == http.MethodPost:
		return kind + ".create", cluster, operator
	}
	return kind + "." + r.Method, cluster, operator
}
