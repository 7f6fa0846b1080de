package akstest_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clustersync/clustersync/internal/hosted/hostedtest"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/clustersync/clustersync/internal/hosted/aks/akstest"
)

const sub = "00000000-1111-2222-3333-444444444444"

// fakeCred hands out a dummy token; the emulator accepts any.
type fakeCred struct{}

func (fakeCred) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "t", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

type env struct {
	srv      *akstest.Server
	clk      *hostedtest.Clock
	clusters *armcontainerservice.ManagedClustersClient
	pools    *armcontainerservice.AgentPoolsClient
	groups   *armresources.ResourceGroupsClient
}

func clientOptions(srv *akstest.Server) *arm.ClientOptions {
	return &arm.ClientOptions{
		ClientOptions: policy.ClientOptions{
			Cloud: cloud.Configuration{
				ActiveDirectoryAuthorityHost: "https://login.invalid/",
				Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
					cloud.ResourceManager: {Endpoint: srv.URL, Audience: "https://management.core.windows.net/"},
				},
			},
			InsecureAllowCredentialWithHTTP: true,
		},
		DisableRPRegistration: true,
	}
}

func setup(t *testing.T, opts akstest.Options) *env {
	t.Helper()
	clk := hostedtest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if opts.Now == nil {
		opts.Now = clk.Now
	}
	srv := akstest.New(opts)
	t.Cleanup(srv.Close)
	return newEnv(t, srv, clk, clientOptions(srv))
}

func newEnv(t *testing.T, srv *akstest.Server, clk *hostedtest.Clock, opts *arm.ClientOptions) *env {
	t.Helper()
	factory, err := armcontainerservice.NewClientFactory(sub, fakeCred{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := armresources.NewResourceGroupsClient(sub, fakeCred{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &env{srv: srv, clk: clk, clusters: factory.NewManagedClustersClient(), pools: factory.NewAgentPoolsClient(), groups: groups}
}

// pollOpts polls at most once a second; the Retry-After-Ms of the emulator
// makes it much faster.
func pollOpts() *runtime.PollUntilDoneOptions {
	return &runtime.PollUntilDoneOptions{Frequency: time.Second}
}

func (e *env) group(t *testing.T, name string) {
	t.Helper()
	if _, err := e.groups.CreateOrUpdate(context.Background(), name, armresources.ResourceGroup{Location: to.Ptr("westeurope")}, nil); err != nil {
		t.Fatal(err)
	}
}

func clusterParams(version string) armcontainerservice.ManagedCluster {
	return armcontainerservice.ManagedCluster{
		Location: to.Ptr("westeurope"),
		Tags:     map[string]*string{"team": to.Ptr("a")},
		Identity: &armcontainerservice.ManagedClusterIdentity{Type: to.Ptr(armcontainerservice.ResourceIdentityTypeSystemAssigned)},
		Properties: &armcontainerservice.ManagedClusterProperties{
			KubernetesVersion: to.Ptr(version),
			DNSPrefix:         to.Ptr("alpha"),
			AgentPoolProfiles: []*armcontainerservice.ManagedClusterAgentPoolProfile{
				{Name: to.Ptr("system"), Count: to.Ptr[int32](2), VMSize: to.Ptr("Standard_D4s_v5"), Mode: to.Ptr(armcontainerservice.AgentPoolModeSystem)},
				{Name: to.Ptr("work"), Count: to.Ptr[int32](1), VMSize: to.Ptr("Standard_D8s_v5"), AvailabilityZones: []*string{to.Ptr("1"), to.Ptr("2")},
					NodeLabels: map[string]*string{"tier": to.Ptr("batch")}},
			},
		},
	}
}

func respErr(t *testing.T, err error) *azcore.ResponseError {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want *azcore.ResponseError, got %v", err)
	}
	return re
}

func wantErr(t *testing.T, err error, status int, code string) *azcore.ResponseError {
	t.Helper()
	re := respErr(t, err)
	if re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("want %d %s, got %d %s: %v", status, code, re.StatusCode, re.ErrorCode, err)
	}
	return re
}

func TestCreateClusterWithTwoPools(t *testing.T) {
	e := setup(t, akstest.Options{CreateDelay: 10 * time.Minute})
	ctx := context.Background()
	e.group(t, "rg1")

	poller, err := e.clusters.BeginCreateOrUpdate(ctx, "rg1", "alpha", clusterParams("1.30"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := poller.Poll(ctx); err != nil || poller.Done() {
		t.Fatalf("first poll: done %v err %v", poller.Done(), err)
	}
	got, err := e.clusters.Get(ctx, "rg1", "alpha", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := *got.Properties.ProvisioningState; s != "Creating" {
		t.Fatalf("provisioningState %s while creating", s)
	}
	e.clk.Advance(10 * time.Minute)
	res, err := poller.PollUntilDone(ctx, pollOpts())
	if err != nil {
		t.Fatal(err)
	}
	p := res.Properties
	if *p.ProvisioningState != "Succeeded" || *p.CurrentKubernetesVersion != "1.30.2" || *p.KubernetesVersion != "1.30" {
		t.Fatalf("after create: %s %s %s", *p.ProvisioningState, *p.KubernetesVersion, *p.CurrentKubernetesVersion)
	}
	if *res.ID != "/subscriptions/"+sub+"/resourcegroups/rg1/providers/Microsoft.ContainerService/managedClusters/alpha" || *res.Location != "westeurope" || res.ETag == nil {
		t.Fatalf("id %s location %s etag %v", *res.ID, *res.Location, res.ETag)
	}
	if !strings.HasPrefix(*p.Fqdn, "alpha-") || !strings.HasSuffix(*p.Fqdn, ".hcp.westeurope.azmk8s.io") || *p.NodeResourceGroup != "MC_rg1_alpha_westeurope" {
		t.Fatalf("fqdn %s nodeResourceGroup %s", *p.Fqdn, *p.NodeResourceGroup)
	}
	n := p.NetworkProfile
	if *n.NetworkPlugin != "kubenet" || *n.LoadBalancerSKU != "standard" || *n.OutboundType != "loadBalancer" || *n.ServiceCidr != "10.0.0.0/16" {
		t.Fatalf("network profile %+v", n)
	}
	if res.Identity.PrincipalID == nil || *p.ServicePrincipalProfile.ClientID != "msi" || *p.PowerState.Code != "Running" {
		t.Fatalf("identity %+v sp %+v", res.Identity, p.ServicePrincipalProfile)
	}
	if len(p.AgentPoolProfiles) != 2 {
		t.Fatalf("%d pools", len(p.AgentPoolProfiles))
	}
	sys, work := p.AgentPoolProfiles[0], p.AgentPoolProfiles[1]
	if *sys.Name != "system" || *sys.Count != 2 || *sys.Mode != "System" || *sys.OSDiskSizeGB != 128 || *sys.MaxPods != 110 || *sys.OSType != "Linux" ||
		*sys.OrchestratorVersion != "1.30" || *sys.CurrentOrchestratorVersion != "1.30.2" || *sys.ProvisioningState != "Succeeded" {
		t.Fatalf("system pool %+v", sys)
	}
	if *work.Mode != "User" || *work.VMSize != "Standard_D8s_v5" || len(work.AvailabilityZones) != 2 || *work.NodeLabels["tier"] != "batch" || *work.UpgradeSettings.MaxSurge != "10%" {
		t.Fatalf("work pool %+v", work)
	}

	var names []string
	pager := e.pools.NewListPager("rg1", "alpha", nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ap := range page.Value {
			names = append(names, *ap.Name)
			if *ap.Type != "Microsoft.ContainerService/managedClusters/agentPools" || *ap.Properties.ProvisioningState != "Succeeded" {
				t.Fatalf("agent pool %+v", ap)
			}
		}
	}
	if strings.Join(names, ",") != "system,work" {
		t.Fatalf("agent pools %v", names)
	}
	ap, err := e.pools.Get(ctx, "rg1", "alpha", "work", nil)
	if err != nil {
		t.Fatal(err)
	}
	if *ap.Properties.Count != 1 || *ap.Properties.ETag != *work.ETag {
		t.Fatalf("agent pool get %+v", ap.Properties)
	}

	var listed int
	cpager := e.clusters.NewListByResourceGroupPager("rg1", nil)
	for cpager.More() {
		page, err := cpager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		listed += len(page.Value)
	}
	if listed != 1 {
		t.Fatalf("listed %d clusters", listed)
	}

	// A second create of the same name is an update; an absent group is 404.
	if _, err := e.clusters.BeginCreateOrUpdate(ctx, "nope", "alpha", clusterParams("1.30"), nil); err == nil {
		t.Fatal("create in a missing resource group succeeded")
	} else {
		wantErr(t, err, http.StatusNotFound, "ResourceGroupNotFound")
	}
	_, err = e.clusters.Get(ctx, "rg1", "beta", nil)
	re := wantErr(t, err, http.StatusNotFound, "ResourceNotFound")
	if !strings.Contains(re.Error(), "The Resource 'Microsoft.ContainerService/managedClusters/beta' under resource group 'rg1' was not found.") {
		t.Fatalf("message: %v", re)
	}
	snap, ok := e.srv.Cluster(sub, "RG1", "Alpha")
	if !ok || snap.ProvisioningState != "Succeeded" || len(snap.Pools) != 2 || snap.Pools[1].Count != 1 || snap.Tags["team"] != "a" {
		t.Fatalf("snapshot %+v", snap)
	}
	calls := e.srv.Calls()
	if calls["managedClusters.createOrUpdate"] != 2 || calls["operations.get"] < 2 || calls["agentPools.list"] != 1 {
		t.Fatalf("calls %v", calls)
	}
}

func TestBusyWhileUpdating(t *testing.T) {
	e := setup(t, akstest.Options{UpdateDelay: 5 * time.Minute, CreateDelay: 5 * time.Minute})
	ctx := context.Background()
	if err := e.srv.ImportCluster(sub, "rg", akstest.ClusterSpec{Name: "c1", Tags: map[string]string{"env": "dev"}}); err != nil {
		t.Fatal(err)
	}
	cur, err := e.clusters.Get(ctx, "rg", "c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	mc := cur.ManagedCluster
	mc.Tags["env"] = to.Ptr("prod")
	poller, err := e.clusters.BeginCreateOrUpdate(ctx, "rg", "c1", mc, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.clusters.BeginCreateOrUpdate(ctx, "rg", "c1", mc, nil)
	re := wantErr(t, err, http.StatusConflict, "OperationNotAllowed")
	if !strings.Contains(re.Error(), "Another operation (Updating) is in progress") {
		t.Fatalf("message: %v", re)
	}
	_, err = e.pools.BeginDelete(ctx, "rg", "c1", "nodepool1", nil)
	wantErr(t, err, http.StatusConflict, "OperationNotAllowed")
	_, err = e.clusters.BeginUpdateTags(ctx, "rg", "c1", armcontainerservice.TagsObject{}, nil)
	wantErr(t, err, http.StatusConflict, "OperationNotAllowed")

	// Meanwhile GET shows the old values with the running state.
	mid, err := e.clusters.Get(ctx, "rg", "c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if *mid.Properties.ProvisioningState != "Updating" || *mid.Tags["env"] != "dev" {
		t.Fatalf("during update: %s env=%s", *mid.Properties.ProvisioningState, *mid.Tags["env"])
	}
	e.clk.Advance(5 * time.Minute)
	res, err := poller.PollUntilDone(ctx, pollOpts())
	if err != nil {
		t.Fatal(err)
	}
	if *res.Properties.ProvisioningState != "Succeeded" || *res.Tags["env"] != "prod" {
		t.Fatalf("after update: %s env=%s", *res.Properties.ProvisioningState, *res.Tags["env"])
	}

	// A pool operation blocks the cluster with the agent pool message.
	pp, err := e.pools.BeginCreateOrUpdate(ctx, "rg", "c1", "extra", armcontainerservice.AgentPool{Properties: &armcontainerservice.ManagedClusterAgentPoolProfileProperties{Count: to.Ptr[int32](1)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.clusters.BeginCreateOrUpdate(ctx, "rg", "c1", res.ManagedCluster, nil)
	re = wantErr(t, err, http.StatusConflict, "OperationNotAllowed")
	if !strings.Contains(re.Error(), "Another agentpool operation (extra - Creating) is in progress") {
		t.Fatalf("message: %v", re)
	}
	e.clk.Advance(5 * time.Minute)
	if _, err := pp.PollUntilDone(ctx, pollOpts()); err != nil {
		t.Fatal(err)
	}
}

func TestETags(t *testing.T) {
	e := setup(t, akstest.Options{})
	ctx := context.Background()
	if err := e.srv.ImportCluster(sub, "rg", akstest.ClusterSpec{Name: "c1"}); err != nil {
		t.Fatal(err)
	}
	cur, err := e.clusters.Get(ctx, "rg", "c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	mc := cur.ManagedCluster
	_, err = e.clusters.BeginCreateOrUpdate(ctx, "rg", "c1", mc, &armcontainerservice.ManagedClustersClientBeginCreateOrUpdateOptions{IfMatch: to.Ptr(`"stale"`)})
	wantErr(t, err, http.StatusPreconditionFailed, "PreconditionFailed")
	_, err = e.clusters.BeginCreateOrUpdate(ctx, "rg", "c1", mc, &armcontainerservice.ManagedClustersClientBeginCreateOrUpdateOptions{IfNoneMatch: to.Ptr("*")})
	wantErr(t, err, http.StatusPreconditionFailed, "PreconditionFailed")
	_, err = e.clusters.BeginDelete(ctx, "rg", "c1", &armcontainerservice.ManagedClustersClientBeginDeleteOptions{IfMatch: to.Ptr("stale")})
	wantErr(t, err, http.StatusPreconditionFailed, "PreconditionFailed")

	poller, err := e.clusters.BeginCreateOrUpdate(ctx, "rg", "c1", mc, &armcontainerservice.ManagedClustersClientBeginCreateOrUpdateOptions{IfMatch: cur.ETag})
	if err != nil {
		t.Fatal(err)
	}
	res, err := poller.PollUntilDone(ctx, pollOpts())
	if err != nil {
		t.Fatal(err)
	}
	if *res.ETag == *cur.ETag {
		t.Fatal("eTag unchanged after an update")
	}
	// The old eTag is now stale; "*" matches any existing cluster.
	_, err = e.clusters.BeginCreateOrUpdate(ctx, "rg", "c1", mc, &armcontainerservice.ManagedClustersClientBeginCreateOrUpdateOptions{IfMatch: cur.ETag})
	wantErr(t, err, http.StatusPreconditionFailed, "PreconditionFailed")
	poller, err = e.clusters.BeginCreateOrUpdate(ctx, "rg", "c1", mc, &armcontainerservice.ManagedClustersClientBeginCreateOrUpdateOptions{IfMatch: to.Ptr("*")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := poller.PollUntilDone(ctx, pollOpts()); err != nil {
		t.Fatal(err)
	}
	// Agent pools have their own eTags.
	ap, err := e.pools.Get(ctx, "rg", "c1", "nodepool1", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.pools.BeginCreateOrUpdate(ctx, "rg", "c1", "nodepool1", ap.AgentPool, &armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions{IfMatch: to.Ptr("nope")})
	wantErr(t, err, http.StatusPreconditionFailed, "PreconditionFailed")
	pp, err := e.pools.BeginCreateOrUpdate(ctx, "rg", "c1", "nodepool1", ap.AgentPool, &armcontainerservice.AgentPoolsClientBeginCreateOrUpdateOptions{IfMatch: ap.Properties.ETag})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pp.PollUntilDone(ctx, pollOpts()); err != nil {
		t.Fatal(err)
	}
}

func TestUpdateTagsAndPolicy(t *testing.T) {
	e := setup(t, akstest.Options{})
	ctx := context.Background()
	if err := e.srv.ImportCluster(sub, "rg", akstest.ClusterSpec{Name: "c1", Tags: map[string]string{"a": "1"}}); err != nil {
		t.Fatal(err)
	}
	e.srv.SetPolicyTags(map[string]string{"costcenter": "42"})
	poller, err := e.clusters.BeginUpdateTags(ctx, "rg", "c1", armcontainerservice.TagsObject{Tags: map[string]*string{"env": to.Ptr("dev")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := poller.PollUntilDone(ctx, pollOpts())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tags) != 2 || *res.Tags["env"] != "dev" || *res.Tags["costcenter"] != "42" {
		t.Fatalf("tags %v", res.Tags)
	}
	// Removing the policy tag does not stick.
	poller, err = e.clusters.BeginUpdateTags(ctx, "rg", "c1", armcontainerservice.TagsObject{Tags: map[string]*string{"env": to.Ptr("dev")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err = poller.PollUntilDone(ctx, pollOpts()); err != nil {
		t.Fatal(err)
	}
	snap, _ := e.srv.Cluster(sub, "rg", "c1")
	if snap.Tags["costcenter"] != "42" || snap.Tags["a"] != "" {
		t.Fatalf("tags %v", snap.Tags)
	}
	if c := e.srv.Calls(); c["managedClusters.updateTags"] != 2 {
		t.Fatalf("calls %v", c)
	}
}

func TestAgentPoolLifecycle(t *testing.T) {
	e := setup(t, akstest.Options{CreateDelay: time.Minute, UpdateDelay: time.Minute, DeleteDelay: time.Minute})
	ctx := context.Background()
	if err := e.srv.ImportCluster(sub, "rg", akstest.ClusterSpec{Name: "c1", KubernetesVersion: "1.31"}); err != nil {
		t.Fatal(err)
	}
	pp, err := e.pools.BeginCreateOrUpdate(ctx, "rg", "c1", "np2", armcontainerservice.AgentPool{Properties: &armcontainerservice.ManagedClusterAgentPoolProfileProperties{
		Count: to.Ptr[int32](2), VMSize: to.Ptr("Standard_D2s_v5"),
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := e.srv.Cluster(sub, "rg", "c1")
	if p, _ := snap.Pool("np2"); p.ProvisioningState != "Creating" || snap.ProvisioningState != "Succeeded" {
		t.Fatalf("pool %+v cluster %s", p, snap.ProvisioningState)
	}
	e.clk.Advance(time.Minute)
	created, err := pp.PollUntilDone(ctx, pollOpts())
	if err != nil {
		t.Fatal(err)
	}
	if *created.Properties.Mode != "User" || *created.Properties.OrchestratorVersion != "1.31" || *created.Properties.Count != 2 {
		t.Fatalf("created %+v", created.Properties)
	}

	// Scale: Scaling until UpdateDelay, applied at the end.
	ap := created.AgentPool
	ap.Properties.Count = to.Ptr[int32](3)
	pp, err = e.pools.BeginCreateOrUpdate(ctx, "rg", "c1", "np2", ap, nil)
	if err != nil {
		t.Fatal(err)
	}
	mid, err := e.pools.Get(ctx, "rg", "c1", "np2", nil)
	if err != nil {
		t.Fatal(err)
	}
	if *mid.Properties.ProvisioningState != "Scaling" || *mid.Properties.Count != 2 {
		t.Fatalf("while scaling: %s count %d", *mid.Properties.ProvisioningState, *mid.Properties.Count)
	}
	e.clk.Advance(time.Minute)
	if _, err := pp.PollUntilDone(ctx, pollOpts()); err != nil {
		t.Fatal(err)
	}
	cl, err := e.clusters.Get(ctx, "rg", "c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := cl.Properties.AgentPoolProfiles[1]; *n.Name != "np2" || *n.Count != 3 {
		t.Fatalf("cluster view of np2: %s %d", *n.Name, *n.Count)
	}

	// Immutable properties.
	ap.Properties.VMSize = to.Ptr("Standard_D16s_v5")
	_, err = e.pools.BeginCreateOrUpdate(ctx, "rg", "c1", "np2", ap, nil)
	re := wantErr(t, err, http.StatusBadRequest, "PropertyChangeNotAllowed")
	if !strings.Contains(re.Error(), "vmSize") {
		t.Fatalf("message: %v", re)
	}
	// Autoscaling needs bounds.
	_, err = e.pools.BeginCreateOrUpdate(ctx, "rg", "c1", "np3", armcontainerservice.AgentPool{Properties: &armcontainerservice.ManagedClusterAgentPoolProfileProperties{
		EnableAutoScaling: to.Ptr(true),
	}}, nil)
	wantErr(t, err, http.StatusBadRequest, "InvalidParameter")
	// The last System pool cannot go.
	_, err = e.pools.BeginDelete(ctx, "rg", "c1", "nodepool1", nil)
	wantErr(t, err, http.StatusBadRequest, "OperationNotAllowed")

	dp, err := e.pools.BeginDelete(ctx, "rg", "c1", "np2", nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := e.pools.Get(ctx, "rg", "c1", "np2", nil); *p.Properties.ProvisioningState != "Deleting" {
		t.Fatalf("while deleting: %s", *p.Properties.ProvisioningState)
	}
	e.clk.Advance(time.Minute)
	if _, err := dp.PollUntilDone(ctx, pollOpts()); err != nil {
		t.Fatal(err)
	}
	_, err = e.pools.Get(ctx, "rg", "c1", "np2", nil)
	wantErr(t, err, http.StatusNotFound, "NotFound")
	// Deleting an absent pool is a 204, done at once.
	dp, err = e.pools.BeginDelete(ctx, "rg", "c1", "np2", nil)
	if err != nil || !dp.Done() {
		t.Fatalf("delete absent: %v", err)
	}
}

func TestDeleteCluster(t *testing.T) {
	e := setup(t, akstest.Options{DeleteDelay: time.Minute})
	ctx := context.Background()
	if err := e.srv.ImportCluster(sub, "rg", akstest.ClusterSpec{Name: "c1"}); err != nil {
		t.Fatal(err)
	}
	poller, err := e.clusters.BeginDelete(ctx, "rg", "c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if snap, _ := e.srv.Cluster(sub, "rg", "c1"); snap.ProvisioningState != "Deleting" || snap.Pools[0].ProvisioningState != "Deleting" {
		t.Fatalf("while deleting: %+v", snap)
	}
	// Repeating the delete joins the running operation.
	again, err := e.clusters.BeginDelete(ctx, "rg", "c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(time.Minute)
	if _, err := poller.PollUntilDone(ctx, pollOpts()); err != nil {
		t.Fatal(err)
	}
	if _, err := again.PollUntilDone(ctx, pollOpts()); err != nil {
		t.Fatal(err)
	}
	_, err = e.clusters.Get(ctx, "rg", "c1", nil)
	wantErr(t, err, http.StatusNotFound, "ResourceNotFound")
	poller, err = e.clusters.BeginDelete(ctx, "rg", "c1", nil)
	if err != nil || !poller.Done() {
		t.Fatalf("delete absent: %v", err)
	}
}

func TestClusterValidation(t *testing.T) {
	e := setup(t, akstest.Options{})
	ctx := context.Background()
	e.group(t, "rg")
	poller, err := e.clusters.BeginCreateOrUpdate(ctx, "rg", "c1", clusterParams("1.31"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := poller.PollUntilDone(ctx, pollOpts())
	if err != nil {
		t.Fatal(err)
	}
	put := func(mutate func(mc *armcontainerservice.ManagedCluster)) error {
		mc := clusterParams("1.31")
		mutate(&mc)
		p, err := e.clusters.BeginCreateOrUpdate(ctx, "rg", "c1", mc, nil)
		if err != nil {
			return err
		}
		_, err = p.PollUntilDone(ctx, pollOpts())
		return err
	}
	err = put(func(mc *armcontainerservice.ManagedCluster) { mc.Properties.KubernetesVersion = to.Ptr("1.30") })
	re := wantErr(t, err, http.StatusBadRequest, "OperationNotAllowed")
	if !strings.Contains(re.Error(), "Downgrading Kubernetes version 1.31 to 1.30 is not allowed.") {
		t.Fatalf("message: %v", re)
	}
	err = put(func(mc *armcontainerservice.ManagedCluster) { mc.Properties.KubernetesVersion = to.Ptr("1.33") })
	wantErr(t, err, http.StatusBadRequest, "OperationNotAllowed")
	err = put(func(mc *armcontainerservice.ManagedCluster) {
		mc.Properties.NetworkProfile = &armcontainerservice.NetworkProfile{PodCidr: to.Ptr("10.200.0.0/16")}
	})
	re = wantErr(t, err, http.StatusBadRequest, "PropertyChangeNotAllowed")
	if !strings.Contains(re.Error(), "networkProfile.podCidr") {
		t.Fatalf("message: %v", re)
	}
	err = put(func(mc *armcontainerservice.ManagedCluster) { mc.Properties.DNSPrefix = to.Ptr("other") })
	wantErr(t, err, http.StatusBadRequest, "PropertyChangeNotAllowed")
	err = put(func(mc *armcontainerservice.ManagedCluster) {
		mc.Properties.AgentPoolProfiles[1].VMSize = to.Ptr("Standard_D2s_v5")
	})
	wantErr(t, err, http.StatusBadRequest, "PropertyChangeNotAllowed")
	err = put(func(mc *armcontainerservice.ManagedCluster) {
		mc.Properties.AgentPoolProfiles[0].OrchestratorVersion = to.Ptr("1.31")
	})
	wantErr(t, err, http.StatusBadRequest, "NotAllAgentPoolOrchestratorVersionSpecifiedAndUnchanged")
	err = put(func(mc *armcontainerservice.ManagedCluster) {
		mc.Properties.AgentPoolProfiles = append(mc.Properties.AgentPoolProfiles, &armcontainerservice.ManagedClusterAgentPoolProfile{
			Name: to.Ptr("auto"), EnableAutoScaling: to.Ptr(true)})
	})
	wantErr(t, err, http.StatusBadRequest, "InvalidParameter")
	err = put(func(mc *armcontainerservice.ManagedCluster) {
		mc.Properties.AgentPoolProfiles[0].Mode = to.Ptr(armcontainerservice.AgentPoolModeUser)
	})
	wantErr(t, err, http.StatusBadRequest, "OperationNotAllowed")

	// An upgrade of one minor moves the pools whose version is not given.
	mc := clusterParams("1.32")
	p, err := e.clusters.BeginCreateOrUpdate(ctx, "rg", "c1", mc, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.PollUntilDone(ctx, pollOpts())
	if err != nil {
		t.Fatal(err)
	}
	if *res.Properties.CurrentKubernetesVersion != "1.32.2" || *res.Properties.AgentPoolProfiles[1].OrchestratorVersion != "1.32" {
		t.Fatalf("after upgrade: %s, pool %s", *res.Properties.CurrentKubernetesVersion, *res.Properties.AgentPoolProfiles[1].OrchestratorVersion)
	}
	if *cur.ETag == *res.ETag {
		t.Fatal("eTag unchanged")
	}
	// Pools absent from a PUT are kept.
	mc = clusterParams("1.32")
	mc.Properties.AgentPoolProfiles = mc.Properties.AgentPoolProfiles[:1]
	p, err = e.clusters.BeginCreateOrUpdate(ctx, "rg", "c1", mc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err = p.PollUntilDone(ctx, pollOpts()); err != nil {
		t.Fatal(err)
	}
	if len(res.Properties.AgentPoolProfiles) != 2 {
		t.Fatalf("%d pools after a PUT naming one", len(res.Properties.AgentPoolProfiles))
	}
}

func TestUpgradeStates(t *testing.T) {
	e := setup(t, akstest.Options{UpdateDelay: time.Minute})
	ctx := context.Background()
	if err := e.srv.ImportCluster(sub, "rg", akstest.ClusterSpec{Name: "c1", KubernetesVersion: "1.30",
		Pools: []akstest.PoolSpec{{Name: "sys", Count: 1}, {Name: "user", Count: 2}}}); err != nil {
		t.Fatal(err)
	}
	cur, err := e.clusters.Get(ctx, "rg", "c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	mc := cur.ManagedCluster
	mc.Properties.KubernetesVersion = to.Ptr("1.31")
	for _, p := range mc.Properties.AgentPoolProfiles {
		p.OrchestratorVersion = nil
	}
	p, err := e.clusters.BeginCreateOrUpdate(ctx, "rg", "c1", mc, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := e.srv.Cluster(sub, "rg", "c1")
	if snap.ProvisioningState != "Upgrading" || snap.Pools[0].ProvisioningState != "Upgrading" || snap.KubernetesVersion != "1.30" {
		t.Fatalf("while upgrading: %s %s %s", snap.ProvisioningState, snap.Pools[0].ProvisioningState, snap.KubernetesVersion)
	}
	e.clk.Advance(time.Minute)
	if _, err := p.PollUntilDone(ctx, pollOpts()); err != nil {
		t.Fatal(err)
	}
	// Only a count change: Scaling.
	cur, _ = e.clusters.Get(ctx, "rg", "c1", nil)
	mc = cur.ManagedCluster
	mc.Properties.AgentPoolProfiles[1].Count = to.Ptr[int32](4)
	if p, err = e.clusters.BeginCreateOrUpdate(ctx, "rg", "c1", mc, nil); err != nil {
		t.Fatal(err)
	}
	snap, _ = e.srv.Cluster(sub, "rg", "c1")
	if snap.ProvisioningState != "Scaling" || snap.Pools[1].ProvisioningState != "Scaling" || snap.Pools[0].ProvisioningState != "Succeeded" || snap.Pools[1].Count != 2 {
		t.Fatalf("while scaling: %+v", snap)
	}
	e.clk.Advance(time.Minute)
	if _, err := p.PollUntilDone(ctx, pollOpts()); err != nil {
		t.Fatal(err)
	}
	snap, _ = e.srv.Cluster(sub, "rg", "c1")
	if snap.ProvisioningState != "Succeeded" || snap.Pools[1].Count != 4 || snap.Pools[1].OrchestratorVersion != "1.31" {
		t.Fatalf("after scaling: %+v", snap)
	}
}

func TestAutoscale(t *testing.T) {
	e := setup(t, akstest.Options{})
	ctx := context.Background()
	if err := e.srv.ImportCluster(sub, "rg", akstest.ClusterSpec{Name: "c1", Pools: []akstest.PoolSpec{
		{Name: "sys"}, {Name: "auto", EnableAutoScaling: true, MinCount: 1, MaxCount: 5},
	}}); err != nil {
		t.Fatal(err)
	}
	before, _ := e.srv.Cluster(sub, "rg", "c1")
	if n, err := e.srv.Autoscale(sub, "rg", "c1", "auto", 4); err != nil || n != 4 {
		t.Fatalf("autoscale: %d %v", n, err)
	}
	after, _ := e.srv.Cluster(sub, "rg", "c1")
	if p, _ := after.Pool("auto"); p.Count != 4 || after.ETag == before.ETag || after.ProvisioningState != "Succeeded" {
		t.Fatalf("after autoscale: %+v", after)
	}
	// A PUT does not override the autoscaler's count.
	ap, err := e.pools.Get(ctx, "rg", "c1", "auto", nil)
	if err != nil {
		t.Fatal(err)
	}
	ap.Properties.Count = to.Ptr[int32](1)
	ap.Properties.MaxCount = to.Ptr[int32](3)
	p, err := e.pools.BeginCreateOrUpdate(ctx, "rg", "c1", "auto", ap.AgentPool, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.PollUntilDone(ctx, pollOpts())
	if err != nil {
		t.Fatal(err)
	}
	if *res.Properties.Count != 3 {
		t.Fatalf("count %d after lowering maxCount to 3", *res.Properties.Count)
	}
	if n, _ := e.srv.Autoscale(sub, "rg", "c1", "auto", 10); n != 3 {
		t.Fatalf("clamped to %d", n)
	}
	if _, err := e.srv.Autoscale(sub, "rg", "c1", "sys", 2); err == nil {
		t.Fatal("autoscaled a pool without autoscaler")
	}
}

func TestCredentials(t *testing.T) {
	e := setup(t, akstest.Options{EndpointFor: func(name string) string { return "https://" + name + ".example:6443" }})
	ctx := context.Background()
	if err := e.srv.ImportCluster(sub, "rg", akstest.ClusterSpec{Name: "c1"}); err != nil {
		t.Fatal(err)
	}
	res, err := e.clusters.ListClusterAdminCredentials(ctx, "rg", "c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Kubeconfigs) != 1 || *res.Kubeconfigs[0].Name != "clusterAdmin" {
		t.Fatalf("kubeconfigs %+v", res.Kubeconfigs)
	}
	cfg, err := clientcmd.Load(res.Kubeconfigs[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	ctxName := cfg.CurrentContext
	kctx := cfg.Contexts[ctxName]
	if ctxName != "c1-admin" || kctx == nil {
		t.Fatalf("context %q", ctxName)
	}
	cl, user := cfg.Clusters[kctx.Cluster], cfg.AuthInfos[kctx.AuthInfo]
	if cl.Server != "https://c1.example:6443" || !bytes.Equal(cl.CertificateAuthorityData, e.srv.CACertPEM()) {
		t.Fatalf("cluster %s ca %q", cl.Server, cl.CertificateAuthorityData)
	}
	if user.Token != "clusterAdmin-c1" {
		t.Fatalf("token %q", user.Token)
	}
	if e.srv.Calls()["managedClusters.listClusterAdminCredential"] != 1 {
		t.Fatalf("calls %v", e.srv.Calls())
	}

	// The default endpoint is the cluster's FQDN.
	e2 := setup(t, akstest.Options{})
	if err := e2.srv.ImportCluster(sub, "rg", akstest.ClusterSpec{Name: "c2", DNSPrefix: "dp", Location: "West US 2"}); err != nil {
		t.Fatal(err)
	}
	res, err = e2.clusters.ListClusterAdminCredentials(ctx, "rg", "c2", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err = clientcmd.Load(res.Kubeconfigs[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := e2.srv.Cluster(sub, "rg", "c2")
	if s := cfg.Clusters["c2"].Server; s != "https://"+snap.FQDN+":443" || !strings.HasPrefix(snap.FQDN, "dp-") || !strings.HasSuffix(snap.FQDN, ".hcp.westus2.azmk8s.io") {
		t.Fatalf("server %s fqdn %s", s, snap.FQDN)
	}
}

func TestResourceGroups(t *testing.T) {
	e := setup(t, akstest.Options{DeleteDelay: time.Minute})
	ctx := context.Background()
	ex, err := e.groups.CheckExistence(ctx, "rg", nil)
	if err != nil || ex.Success {
		t.Fatalf("exists before create: %v %v", ex.Success, err)
	}
	rg, err := e.groups.CreateOrUpdate(ctx, "rg", armresources.ResourceGroup{Location: to.Ptr("East US"), Tags: map[string]*string{"k": to.Ptr("v")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if *rg.Location != "eastus" || *rg.ID != "/subscriptions/"+sub+"/resourceGroups/rg" || *rg.Properties.ProvisioningState != "Succeeded" {
		t.Fatalf("group %+v", rg)
	}
	if ex, err = e.groups.CheckExistence(ctx, "RG", nil); err != nil || !ex.Success {
		t.Fatalf("exists after create: %v %v", ex.Success, err)
	}
	_, err = e.groups.CreateOrUpdate(ctx, "rg", armresources.ResourceGroup{Location: to.Ptr("westus")}, nil)
	wantErr(t, err, http.StatusConflict, "InvalidResourceGroupLocation")
	_, err = e.groups.Get(ctx, "other", nil)
	wantErr(t, err, http.StatusNotFound, "ResourceGroupNotFound")

	if err := e.srv.ImportCluster(sub, "rg", akstest.ClusterSpec{Name: "c1"}); err != nil {
		t.Fatal(err)
	}
	poller, err := e.groups.BeginDelete(ctx, "rg", nil)
	if err != nil {
		t.Fatal(err)
	}
	if snap, _ := e.srv.Cluster(sub, "rg", "c1"); snap.ProvisioningState != "Deleting" {
		t.Fatalf("cluster in a deleting group: %s", snap.ProvisioningState)
	}
	_, err = e.clusters.BeginCreateOrUpdate(ctx, "rg", "c2", clusterParams("1.31"), nil)
	wantErr(t, err, http.StatusConflict, "ResourceGroupBeingDeleted")
	e.clk.Advance(time.Minute)
	if _, err := poller.PollUntilDone(ctx, pollOpts()); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.srv.Cluster(sub, "rg", "c1"); ok {
		t.Fatal("cluster survived its group")
	}
	if _, ok := e.srv.ResourceGroup(sub, "rg"); ok {
		t.Fatal("group survived")
	}
	c := e.srv.Calls()
	if c["resourceGroups.checkExistence"] != 2 || c["resourceGroups.createOrUpdate"] != 2 || c["resourceGroups.delete"] != 1 || c["operationResults.get"] < 1 {
		t.Fatalf("calls %v", c)
	}
}

func TestInjectedFaults(t *testing.T) {
	e := setup(t, akstest.Options{})
	ctx := context.Background()
	if err := e.srv.ImportCluster(sub, "rg", akstest.ClusterSpec{Name: "c1"}); err != nil {
		t.Fatal(err)
	}
	e.srv.FailNext("managedClusters.get", http.StatusInternalServerError, "InternalServerError", "", 2)
	if _, err := e.clusters.Get(ctx, "rg", "c1", nil); err != nil {
		t.Fatalf("two 500s are retried: %v", err)
	}
	if n := e.srv.Calls()["managedClusters.get"]; n != 3 {
		t.Fatalf("%d calls, want 3", n)
	}
	e.srv.ResetCalls()
	e.srv.FailNext("managedClusters.get", http.StatusServiceUnavailable, "ServiceUnavailable", "", 10)
	_, err := e.clusters.Get(ctx, "rg", "c1", nil)
	wantErr(t, err, http.StatusServiceUnavailable, "ServiceUnavailable")
	if n := e.srv.Calls()["managedClusters.get"]; n != 4 {
		t.Fatalf("%d calls, want 4 (1 + 3 retries)", n)
	}
	e.srv.FailNext("managedClusters.get", 0, "", "", 0)
	e.srv.ResetCalls()
	e.srv.FailNext("managedClusters.createOrUpdate", http.StatusBadRequest, "InvalidParameter", "nope", 1)
	_, err = e.clusters.BeginCreateOrUpdate(ctx, "rg", "c1", clusterParams("1.31"), nil)
	wantErr(t, err, http.StatusBadRequest, "InvalidParameter")
	if n := e.srv.Calls()["managedClusters.createOrUpdate"]; n != 1 {
		t.Fatalf("%d calls, want 1", n)
	}
	e.srv.FailNext("managedClusters.get", http.StatusTooManyRequests, "SubscriptionRequestsThrottled", "", 1)
	if _, err := e.clusters.Get(ctx, "rg", "c1", nil); err != nil {
		t.Fatalf("429 is retried: %v", err)
	}
}

func TestFailedOperation(t *testing.T) {
	e := setup(t, akstest.Options{})
	ctx := context.Background()
	e.group(t, "rg")
	e.srv.FailOperations(1, "QuotaExceeded", "Operation could not be completed as it results in exceeding approved standardDSv2Family Cores quota.")
	poller, err := e.clusters.BeginCreateOrUpdate(ctx, "rg", "c1", clusterParams("1.31"), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = poller.PollUntilDone(ctx, pollOpts())
	re := respErr(t, err)
	if re.ErrorCode != "QuotaExceeded" || !strings.Contains(re.Error(), "standardDSv2Family") {
		t.Fatalf("error %v", err)
	}
	snap, _ := e.srv.Cluster(sub, "rg", "c1")
	if snap.ProvisioningState != "Failed" {
		t.Fatalf("state %s", snap.ProvisioningState)
	}
	// A failed cluster takes a new PUT, which reconciles it.
	poller, err = e.clusters.BeginCreateOrUpdate(ctx, "rg", "c1", clusterParams("1.31"), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := poller.PollUntilDone(ctx, pollOpts())
	if err != nil {
		t.Fatal(err)
	}
	if *res.Properties.ProvisioningState != "Succeeded" {
		t.Fatalf("state %s", *res.Properties.ProvisioningState)
	}
	// A failed update is not applied.
	e.srv.FailOperations(1, "InternalOperationError", "boom")
	tp, err := e.clusters.BeginUpdateTags(ctx, "rg", "c1", armcontainerservice.TagsObject{Tags: map[string]*string{"x": to.Ptr("y")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tp.PollUntilDone(ctx, pollOpts())
	if re := respErr(t, err); re.ErrorCode != "InternalOperationError" {
		t.Fatalf("error %v", err)
	}
	snap, _ = e.srv.Cluster(sub, "rg", "c1")
	if snap.Tags["x"] != "" || snap.Tags["team"] != "a" || snap.ProvisioningState != "Failed" {
		t.Fatalf("after failed updateTags: %+v", snap)
	}
}

func TestWire(t *testing.T) {
	e := setup(t, akstest.Options{})
	if err := e.srv.ImportCluster(sub, "rg", akstest.ClusterSpec{Name: "c1"}); err != nil {
		t.Fatal(err)
	}
	do := func(method, path, auth string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, e.srv.URL+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	base := "/subscriptions/" + sub + "/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c1"
	if r := do("GET", base+"?api-version=2025-02-01", ""); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %d", r.StatusCode)
	}
	if r := do("GET", base, "Bearer x"); r.StatusCode != http.StatusBadRequest {
		t.Fatalf("no api-version: %d", r.StatusCode)
	}
	lower := "/SUBSCRIPTIONS/" + sub + "/resourcegroups/RG/PROVIDERS/microsoft.containerservice/MANAGEDCLUSTERS/C1?api-version=2025-02-01"
	if r := do("GET", lower, "Bearer x"); r.StatusCode != http.StatusOK || r.Header.Get("ETag") == "" {
		t.Fatalf("case-insensitive path: %d", r.StatusCode)
	}
	if r := do("GET", "/subscriptions/"+sub+"/nothing?api-version=1", "Bearer x"); r.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown path: %d", r.StatusCode)
	}
}

func TestTLSAndUnstarted(t *testing.T) {
	srv := akstest.NewTLS(akstest.Options{})
	t.Cleanup(srv.Close)
	if !strings.HasPrefix(srv.URL, "https://") {
		t.Fatalf("URL %s", srv.URL)
	}
	opts := clientOptions(srv)
	opts.Transport = srv.Client()
	opts.InsecureAllowCredentialWithHTTP = false
	e := newEnv(t, srv, nil, opts)
	if _, err := e.groups.CreateOrUpdate(context.Background(), "rg", armresources.ResourceGroup{Location: to.Ptr("eastus")}, nil); err != nil {
		t.Fatal(err)
	}

	u := akstest.NewUnstarted(akstest.Options{})
	if u.URL != "" {
		t.Fatal("unstarted server has a URL")
	}
	if err := u.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(u.Close)
	e2 := newEnv(t, u, nil, clientOptions(u))
	ex, err := e2.groups.CheckExistence(context.Background(), "rg", nil)
	if err != nil || ex.Success {
		t.Fatalf("check existence: %v %v", ex.Success, err)
	}
}
