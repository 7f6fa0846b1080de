package main

import (
	"context"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	hostedv1 "github.com/clustersync/clustersync/api/hosted/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/aks"
	"github.com/clustersync/clustersync/internal/hosted/aks/akstest"
	"github.com/clustersync/clustersync/internal/hosted/management"
	"github.com/clustersync/clustersync/internal/manager"
)

// aksFleet is AKS in the benchmark: clusters bench-NNN in resource group
// bench with pools a (System) and b, whose admin kubeconfig carries the
// bench's token.
type aksFleet struct{}

const benchSubscription = "00000000-0000-0000-0000-0000000000be"

func (*aksFleet) cloud() management.Descriptor { return aks.Cloud() }
func (*aksFleet) refreshOp() string            { return "managedClusters.get" }
func (*aksFleet) pushOp() string               { return "managedClusters.updateTags" }

func (*aksFleet) start(ctx context.Context, k client.Client, n int, endpoint string, ca []byte, token string) (http.Handler, error) {
	emu := akstest.NewUnstarted(akstest.Options{EndpointFor: func(string) string { return endpoint },
		CertificateAuthorityFor: func(string) []byte { return ca }, TokenFor: func(string, string) string { return token }})
	for i := range n {
		if err := emu.ImportCluster(benchSubscription, "bench", akstest.ClusterSpec{Name: benchName(i), KubernetesVersion: "1.31",
			Tags: map[string]string{"team": "bench"}, Pools: []akstest.PoolSpec{{Name: "a", Mode: "System"}, {Name: "b", Mode: "User"}}}); err != nil {
			return nil, err
		}
	}
	if err := k.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "azure", Namespace: hostedv1.Namespace},
		StringData: map[string]string{aks.SubscriptionIDField: benchSubscription, aks.TenantIDField: "bench", aks.ClientIDField: "bench",
			aks.ClientSecretField: "bench"}}); err != nil {
		return nil, err
	}
	return emu.Handler(), nil
}

func (*aksFleet) cluster(i int) *mgmtv1.Cluster {
	return &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: benchName(i)}, Spec: mgmtv1.ClusterSpec{DisplayName: benchName(i), AKSConfig: &aksv1.AKSClusterConfigSpec{
		ResourceGroup: "bench", ResourceLocation: akstest.DefaultLocation, ClusterName: benchName(i),
		AzureCredentialSecret: hostedv1.Namespace + ":azure", Imported: true, Tags: &map[string]string{"team": "bench"},
	}}}
}

func (*aksFleet) options(o *manager.Options, url string, refresh time.Duration) {
	o.Clouds = map[string]management.CloudOptions{aks.Cloud().Key: {Endpoint: url, Refresh: refresh, Poll: time.Second}}
}

func (*aksFleet) pushTag(c *mgmtv1.Cluster) { (*c.Spec.AKSConfig.Tags)["pushed"] = "1" }

func (*aksFleet) pushed(c *mgmtv1.Cluster) bool {
	if c.Status.AKSStatus == nil {
		return false
	}
	a := c.Status.AKSStatus.AppliedSpec
	return a != nil && a.Tags != nil && (*a.Tags)["pushed"] == "1"
}

// operation names an ARM request as the emulator's Calls do
// ("managedClusters.get"); the operator's calls carry its application ID
// at the start of the User-Agent.
func (*aksFleet) operation(r *http.Request) (op, cluster string, operator bool) {
	operator = strings.HasPrefix(r.UserAgent(), management.OperatorAppID(aks.Cloud().Key))
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	kind := ""
	for i := 0; i+1 < len(parts); i++ {
		switch strings.ToLower(parts[i]) {
		case "managedclusters":
			kind, cluster = "managedClusters", parts[i+1]
		case "agentpools":
			kind = "agentPools"
		case "operations", "operationresults":
			return "operations.get", "", operator
		}
	}
	last := parts[len(parts)-1]
	switch {
	case kind == "":
		return r.Method + " " + r.URL.Path, "", operator
	case r.Method == http.MethodPost:
		return kind + "." + last, cluster, operator
	case r.Method == http.MethodGet && strings.EqualFold(last, "agentPools"):
		return "agentPools.list", cluster, operator
	case r.Method == http.MethodGet:
		return kind + ".get", cluster, operator
	case r.Method == http.MethodPatch:
		return kind + ".updateTags", cluster, operator
	case r.Method == http.MethodPut:
		return kind + ".createOrUpdate", cluster, operator
	case r.Method == http.MethodDelete:
		return kind + ".delete", cluster, operator
	}
	return kind + "." + r.Method, cluster, operator
}
