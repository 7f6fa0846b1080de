package scenarios_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	gkev1 "github.com/clustersync/clustersync/api/gke/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/gke"
	"github.com/clustersync/clustersync/internal/hosted/gke/gketest"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
)

const (
	project = "clustersync-test"
	zone    = "us-central1-a"
)

// gkeCloud is GKE in the scenario table; the "console" is the same GKE
// API spoken by the real client.
type gkeCloud struct {
	srv     *gketest.Server
	name    string
	console *gke.Clients
}

// startGKE registers an existing GKE cluster (imported) or creates one,
// zonal, with labels {team: a} and one pool, pool1.
func startGKE(t *testing.T, name string, imported bool) *world {
	return startGKEWith(t, name, imported, nil)
}

// startGKEWith is startGKE with the config edited before the Cluster is
// created.
func startGKEWith(t *testing.T, name string, imported bool, edit func(*gkev1.GKEClusterConfigSpec)) *world {
	start(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	secret := map[string]string{gke.AuthEncodedJSONField: `{"type": "service_account", "project_id": "` + project + `"}`}
	if err := k.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "google", Namespace: ns}, StringData: secret}); err != nil {
		t.Fatal(err)
	}
	endpoint, ca := env.APIServer(t)
	token := env.AdminToken(t, ns)
	clk := hostedtest.NewClock(time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC))
	srv := gketest.New(gketest.Options{Now: clk.Now, CreateDelay: 10 * time.Minute, UpdateDelay: time.Minute, DeleteDelay: time.Minute,
		EndpointFor: func(string) string { return strings.TrimPrefix(endpoint, "https://") }, CertificateAuthorityFor: func(string) []byte { return ca }})
	t.Cleanup(srv.Close)
	config := &gkev1.GKEClusterConfigSpec{ProjectID: project, Zone: zone, ClusterName: name, GoogleCredentialSecret: ns + ":google",
		Imported: imported, Labels: &map[string]string{"team": "a"}}
	if imported {
		if err := srv.ImportCluster(project, zone, &containerpb.Cluster{Name: name, InitialClusterVersion: "1.31", ResourceLabels: map[string]string{"team": "a"},
			NodePools: []*containerpb.NodePool{{Name: "pool1", InitialNodeCount: 2}}}); err != nil {
			t.Fatal(err)
		}
		config.NodePools = &[]gkev1.GKENodePoolConfig{{Name: "pool1"}}
	} else {
		config.KubernetesVersion = ptr.To("1.31")
		config.NodePools = &[]gkev1.GKENodePoolConfig{{Name: "pool1", InitialNodeCount: ptr.To(int64(2)), Config: &gkev1.GKENodeConfig{MachineType: "e2-standard-2"}}}
	}
	if edit != nil {
		edit(config)
	}
	if err := k.Create(ctx, &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: mgmtv1.ClusterSpec{DisplayName: name, GKEConfig: config}}); err != nil {
		t.Fatal(err)
	}
	factory := gke.NewClientsFactory(srv.URL, gke.StaticCredentials(token))
	console, err := gke.NewClientsFactory(srv.URL, gke.StaticCredentials("console"))(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mgmt, op := controllers(clk, gke.Traits(), &gke.Management{Client: k, NewClients: factory}, &gke.Provider{Client: k, NewClients: factory})
	return &world{cloud: &gkeCloud{srv: srv, name: name, console: console}, name: name, clk: clk,
		mgmt: mgmt, op: op}
}

func (g *gkeCloud) snapshot(t *testing.T) *containerpb.Cluster {
	t.Helper()
	cl, ok := g.srv.Cluster(project, zone, g.name)
	if !ok {
		t.Fatalf("GKE has no cluster %s", g.name)
	}
	return cl
}

// resource is the cluster's resource name, as the console names it.
func (g *gkeCloud) resource() string {
	return "projects/" + project + "/locations/" + zone + "/clusters/" + g.name
}

func (*gkeCloud) driver() string    { return mgmtv1.DriverGKE }
func (*gkeCloud) tagsField() string { return "labels" }

func (*gkeCloud) configTags(c *mgmtv1.Cluster) map[string]string {
	if c.Spec.GKEConfig.Labels == nil {
		return nil
	}
	return *c.Spec.GKEConfig.Labels
}

func (*gkeCloud) setConfigTags(c *mgmtv1.Cluster, tags map[string]string) {
	c.Spec.GKEConfig.Labels = &tags
}

func (*gkeCloud) configPools(c *mgmtv1.Cluster) []string {
	var out []string
	for _, p := range *c.Spec.GKEConfig.NodePools {
		out = append(out, p.Name)
	}
	return out
}

func (*gkeCloud) addConfigPool(c *mgmtv1.Cluster, name string) {
	*c.Spec.GKEConfig.NodePools = append(*c.Spec.GKEConfig.NodePools, gkev1.GKENodePoolConfig{Name: name, InitialNodeCount: ptr.To(int64(1)),
		Config: &gkev1.GKENodeConfig{MachineType: "e2-standard-2"}})
}

func (*gkeCloud) removeConfigPool(c *mgmtv1.Cluster, name string) {
	*c.Spec.GKEConfig.NodePools = slices.DeleteFunc(*c.Spec.GKEConfig.NodePools, func(p gkev1.GKENodePoolConfig) bool { return p.Name == name })
}

func (g *gkeCloud) cloudTags(t *testing.T) map[string]string {
	labels := g.snapshot(t).GetResourceLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	return labels
}

// setCloudTags changes the labels in the console: it reads the label
// fingerprint and sends it, as GKE requires; the operation ends as the
// clock moves.
func (g *gkeCloud) setCloudTags(t *testing.T, tags map[string]string) {
	ctx := context.Background()
	cl, err := g.console.Clusters.GetCluster(ctx, &containerpb.GetClusterRequest{Name: g.resource()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.console.Clusters.SetLabels(ctx, &containerpb.SetLabelsRequest{Name: g.resource(), ResourceLabels: maps.Clone(tags),
		LabelFingerprint: cl.GetLabelFingerprint()}); err != nil {
		t.Fatal(err)
	}
}

func (g *gkeCloud) cloudPools(t *testing.T) []string {
	var out []string
	for _, p := range g.snapshot(t).GetNodePools() {
		out = append(out, p.GetName())
	}
	slices.Sort(out)
	return out
}

func (g *gkeCloud) addCloudPool(t *testing.T, name string) {
	if _, err := g.console.Clusters.CreateNodePool(context.Background(), &containerpb.CreateNodePoolRequest{Parent: g.resource(),
		NodePool: &containerpb.NodePool{Name: name, InitialNodeCount: 1}}); err != nil {
		t.Fatal(err)
	}
}

func (g *gkeCloud) exists() bool { _, ok := g.srv.Cluster(project, zone, g.name); return ok }

func (g *gkeCloud) refuseTagPushes(n int) {
	g.srv.FailNext(gketest.MethodClustersSetResourceLabels, 400, "badRequest", "Label value 'z' is invalid for key 'team'.", n)
}

func (g *gkeCloud) throttleTagPushes(n int) {
	g.srv.FailNext(gketest.MethodClustersSetResourceLabels, 503, "backendError", "try again", n)
}

func (g *gkeCloud) writes() int {
	total := 0
	for op, n := range g.srv.Calls() {
		if verb := opVerb(op); verb != "get" && verb != "list" {
			total += n
		}
	}
	return total
}

// updatable: version one minor up, every add-on on, authorized networks,
// logging and monitoring off, network policy, a second zone, a
// maintenance window, labels, and pool1's version, node labels, taints
// and tags, size and management.
func (*gkeCloud) updatable(c *mgmtv1.Cluster) {
	s := c.Spec.GKEConfig
	s.KubernetesVersion = ptr.To("1.32")
	s.ClusterAddons = &gkev1.GKEClusterAddons{HTTPLoadBalancing: true, HorizontalPodAutoscaling: true, NetworkPolicyConfig: true}
	s.MasterAuthorizedNetworksConfig = &gkev1.GKEMasterAuthorizedNetworksConfig{Enabled: true, CidrBlocks: []gkev1.GKECidrBlock{{CidrBlock: "10.0.0.0/8", DisplayName: "office"}}}
	s.LoggingService, s.MonitoringService = ptr.To("none"), ptr.To("none")
	s.NetworkPolicyEnabled = ptr.To(true)
	s.Locations = &[]string{zone, "us-central1-b"}
	s.MaintenanceWindow = ptr.To("03:00")
	s.Labels = &map[string]string{"team": "a", "env": "prod"}
	p := &(*s.NodePools)[0]
	p.Version = ptr.To("1.32")
	p.InitialNodeCount = ptr.To(int64(3))
	p.Config = &gkev1.GKENodeConfig{Labels: map[string]string{"pool": "one"}, Tags: []string{"web"},
		Taints: []gkev1.GKENodeTaintConfig{{Key: "dedicated", Value: "infra", Effect: "NO_SCHEDULE"}}}
	p.Management = &gkev1.GKENodePoolManagement{AutoRepair: true, AutoUpgrade: false}
}
