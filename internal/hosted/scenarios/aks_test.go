package scenarios_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	azcloud "github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/aks"
	"github.com/clustersync/clustersync/internal/hosted/aks/akstest"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
)

const subscription = "00000000-0000-0000-0000-0000000000aa"

// aksCloud is AKS in the scenario table; the "portal" is the same ARM API
// spoken by the real SDK.
type aksCloud struct {
	srv      *akstest.Server
	name, rg string
	portal   *aks.Clients
}

// staticToken is an Azure AD credential that never asks Azure AD (the
// emulator accepts any bearer token).
type staticToken struct{}

func (staticToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "t", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func fakeCredential(map[string][]byte, azcloud.Configuration) (azcore.TokenCredential, error) {
	return staticToken{}, nil
}

// startAKS registers an existing AKS cluster (imported) or creates one,
// with tags {team: a} and one System pool, pool1.
func startAKS(t *testing.T, name string, imported bool) *world {
	start(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	secret := map[string]string{aks.SubscriptionIDField: subscription, aks.TenantIDField: "tenant", aks.ClientIDField: "client", aks.ClientSecretField: "secret"}
	if err := k.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "azure", Namespace: ns}, StringData: secret}); err != nil {
		t.Fatal(err)
	}
	endpoint, ca := env.APIServer(t)
	token := env.AdminToken(t, ns)
	clk := hostedtest.NewClock(time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC))
	srv := akstest.New(akstest.Options{Now: clk.Now, CreateDelay: 10 * time.Minute, UpdateDelay: time.Minute, DeleteDelay: time.Minute, RetryAfter: time.Millisecond,
		EndpointFor: func(string) string { return endpoint }, CertificateAuthorityFor: func(string) []byte { return ca },
		TokenFor: func(string, string) string { return token }})
	t.Cleanup(srv.Close)
	rg := "rg-" + name
	config := &aksv1.AKSClusterConfigSpec{ResourceGroup: rg, ResourceLocation: "eastus", ClusterName: name, AzureCredentialSecret: ns + ":azure",
		Imported: imported, Tags: &map[string]string{"team": "a"}}
	if imported {
		if err := srv.ImportCluster(subscription, rg, akstest.ClusterSpec{Name: name, KubernetesVersion: "1.31", Tags: map[string]string{"team": "a"},
			Pools: []akstest.PoolSpec{{Name: "pool1", Count: 2, Mode: "System"}}}); err != nil {
			t.Fatal(err)
		}
		config.NodePools = &[]aksv1.AKSNodePool{{Name: "pool1"}}
	} else {
		config.KubernetesVersion, config.DNSPrefix = to.Ptr("1.31"), to.Ptr(name)
		config.NodePools = &[]aksv1.AKSNodePool{{Name: "pool1", Count: to.Ptr(int32(2)), VMSize: to.Ptr("Standard_D2s_v3"), Mode: to.Ptr("System")}}
	}
	if err := k.Create(ctx, &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: mgmtv1.ClusterSpec{DisplayName: name, AKSConfig: config}}); err != nil {
		t.Fatal(err)
	}
	factory := aks.NewClientsFactory(srv.URL, fakeCredential)
	portal, err := factory(ctx, map[string][]byte{aks.SubscriptionIDField: []byte(subscription)})
	if err != nil {
		t.Fatal(err)
	}
	mgmt, op := controllers(clk, aks.Traits(), &aks.Management{Client: k, NewClients: factory}, &aks.Provider{Client: k, NewClients: factory})
	return &world{cloud: &aksCloud{srv: srv, name: name, rg: rg, portal: portal}, name: name, clk: clk,
		mgmt: mgmt, op: op}
}

func (a *aksCloud) snapshot(t *testing.T) akstest.ClusterSnapshot {
	t.Helper()
	s, ok := a.srv.Cluster(subscription, a.rg, a.name)
	if !ok {
		t.Fatalf("AKS has no cluster %s", a.name)
	}
	return s
}

func (*aksCloud) driver() string    { return mgmtv1.DriverAKS }
func (*aksCloud) tagsField() string { return "tags" }

func (*aksCloud) configTags(c *mgmtv1.Cluster) map[string]string {
	if c.Spec.AKSConfig.Tags == nil {
		return nil
	}
	return *c.Spec.AKSConfig.Tags
}

func (*aksCloud) setConfigTags(c *mgmtv1.Cluster, tags map[string]string) {
	c.Spec.AKSConfig.Tags = &tags
}

func (*aksCloud) configPools(c *mgmtv1.Cluster) []string {
	var out []string
	for _, p := range *c.Spec.AKSConfig.NodePools {
		out = append(out, p.Name)
	}
	return out
}

func (*aksCloud) addConfigPool(c *mgmtv1.Cluster, name string) {
	*c.Spec.AKSConfig.NodePools = append(*c.Spec.AKSConfig.NodePools, aksv1.AKSNodePool{Name: name, Count: to.Ptr(int32(1)),
		VMSize: to.Ptr("Standard_D2s_v3"), Mode: to.Ptr("User")})
}

func (*aksCloud) removeConfigPool(c *mgmtv1.Cluster, name string) {
	*c.Spec.AKSConfig.NodePools = slices.DeleteFunc(*c.Spec.AKSConfig.NodePools, func(p aksv1.AKSNodePool) bool { return p.Name == name })
}

func (a *aksCloud) cloudTags(t *testing.T) map[string]string { return a.snapshot(t).Tags }

// setCloudTags changes the tags through ARM, as the portal does; the
// operation ends as the clock moves.
func (a *aksCloud) setCloudTags(t *testing.T, tags map[string]string) {
	if _, err := a.portal.ManagedClusters.BeginUpdateTags(context.Background(), a.rg, a.name, armcontainerservice.TagsObject{Tags: ptrMap(tags)}, nil); err != nil {
		t.Fatal(err)
	}
}

func (a *aksCloud) cloudPools(t *testing.T) []string {
	var out []string
	for _, p := range a.snapshot(t).Pools {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

func (a *aksCloud) addCloudPool(t *testing.T, name string) {
	body := armcontainerservice.AgentPool{Properties: &armcontainerservice.ManagedClusterAgentPoolProfileProperties{Count: to.Ptr(int32(1)),
		Mode: to.Ptr(armcontainerservice.AgentPoolModeUser)}}
	if _, err := a.portal.AgentPools.BeginCreateOrUpdate(context.Background(), a.rg, a.name, name, body, nil); err != nil {
		t.Fatal(err)
	}
}

func (a *aksCloud) exists() bool { _, ok := a.srv.Cluster(subscription, a.rg, a.name); return ok }

func (a *aksCloud) refuseTagPushes(n int) {
	a.srv.FailNext("managedClusters.updateTags", 400, "InvalidParameter", "Tag name 'bad' is not allowed.", n)
}

func (a *aksCloud) throttleTagPushes(n int) {
	a.srv.FailNext("managedClusters.updateTags", 503, "ServiceUnavailable", "try again", n)
}

func (a *aksCloud) writes() int {
	total := 0
	for op, n := range a.srv.Calls() {
		if slices.Contains([]string{"createOrUpdate", "updateTags", "delete"}, opVerb(op)) {
			total += n
		}
	}
	return total
}

// opVerb is the verb of an emulator operation name ("managedClusters.get"
// → "get").
func opVerb(op string) string {
	for i := len(op) - 1; i >= 0; i-- {
		if op[i] == '.' {
			return op[i+1:]
		}
	}
	return op
}

func ptrMap(m map[string]string) map[string]*string {
	out := map[string]*string{}
	for k, v := range m {
		out[k] = to.Ptr(v)
	}
	return out
}

// updatable: version one minor up, authorized ranges, the HTTP routing
// add-on, tags, and pool1's count, labels, taints, surge and version.
func (*aksCloud) updatable(c *mgmtv1.Cluster) {
	s := c.Spec.AKSConfig
	s.KubernetesVersion = to.Ptr("1.32")
	s.AuthorizedIPRanges = &[]string{"10.0.0.0/8"}
	s.HTTPApplicationRouting = to.Ptr(true)
	s.Tags = &map[string]string{"team": "a", "env": "prod"}
	p := &(*s.NodePools)[0]
	p.Count = to.Ptr(int32(3))
	p.NodeLabels = &map[string]string{"pool": "one"}
	p.NodeTaints = &[]string{"dedicated=infra:NoSchedule"}
	p.MaxSurge = to.Ptr("33%")
	p.OrchestratorVersion = to.Ptr("1.32")
}
