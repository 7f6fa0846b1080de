package scenarios_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/eks"
	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
)

// eksCloud is EKS in the scenario table.
type eksCloud struct {
	srv  *ekstest.Server
	name string
}

// noBackoff makes the SDK's retries immediate.
type noBackoff struct{}

func (noBackoff) BackoffDelay(int, error) (time.Duration, error) { return 0, nil }

// startEKS registers an existing EKS cluster (imported) or creates one,
// with tags {team: a} and one node group, pool1.
func startEKS(t *testing.T, name string, imported bool) *world {
	start(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	if err := k.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "aws", Namespace: ns},
		StringData: map[string]string{eks.AccessKeyField: "a", eks.SecretKeyField: "b"}}); err != nil {
		t.Fatal(err)
	}
	endpoint, ca := env.APIServer(t)
	token := env.AdminToken(t, ns)
	clk := hostedtest.NewClock(time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC))
	srv := ekstest.New(ekstest.Options{Now: clk.Now, CreateDelay: 10 * time.Minute, UpdateDelay: time.Minute, DeleteDelay: time.Minute,
		Region: "us-west-2", EndpointFor: func(string) string { return endpoint }, CertificateAuthorityFor: func(string) []byte { return ca }})
	t.Cleanup(srv.Close)
	p := func(s string) *string { return &s }
	n := func(i int64) *int64 { return &i }
	config := &eksv1.EKSClusterConfigSpec{DisplayName: name, Region: "us-west-2", AmazonCredentialSecret: ns + ":aws", Imported: imported,
		Tags: &map[string]string{"team": "a"}}
	if imported {
		if err := srv.ImportCluster(ekstest.ClusterSpec{Name: name, Version: "1.31", EndpointPublicAccess: true, Tags: map[string]string{"team": "a"},
			Nodegroups: []ekstest.NodegroupSpec{{Name: "pool1", MinSize: 1, MaxSize: 3, DesiredSize: 2}}}); err != nil {
			t.Fatal(err)
		}
		config.NodeGroups = &[]eksv1.NodeGroup{{NodegroupName: "pool1"}}
	} else {
		config.KubernetesVersion, config.ServiceRole = p("1.31"), p("arn:aws:iam::123456789012:role/eks")
		config.Subnets, config.PublicAccess = &[]string{"subnet-a", "subnet-b"}, func() *bool { b := true; return &b }()
		config.NodeGroups = &[]eksv1.NodeGroup{{NodegroupName: "pool1", DesiredSize: n(2), MinSize: n(1), MaxSize: n(3),
			InstanceType: p("t3.large"), NodeRole: p("arn:aws:iam::123456789012:role/nodes")}}
	}
	if err := k.Create(ctx, &mgmtv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: mgmtv1.ClusterSpec{DisplayName: name, EKSConfig: config}}); err != nil {
		t.Fatal(err)
	}
	quick := func(c *aws.Config) {
		c.Retryer = func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = 2; o.Backoff = noBackoff{} })
		}
	}
	factory := eks.NewClientsFactory(srv.URL, quick)
	tokens := func(context.Context, string, map[string][]byte, string) (string, error) { return token, nil }
	mgmt, op := controllers(clk, eks.Traits(), &eks.Management{Client: k, NewClients: factory, Tokens: tokens}, &eks.Provider{Client: k, NewClients: factory})
	return &world{cloud: &eksCloud{srv: srv, name: name}, name: name, clk: clk,
		mgmt: mgmt, op: op}
}

func (e *eksCloud) snapshot(t *testing.T) ekstest.ClusterSnapshot {
	t.Helper()
	s, ok := e.srv.Cluster(e.name)
	if !ok {
		t.Fatalf("EKS has no cluster %s", e.name)
	}
	return s
}

func (*eksCloud) driver() string    { return mgmtv1.DriverEKS }
func (*eksCloud) tagsField() string { return "tags" }

func (*eksCloud) configTags(c *mgmtv1.Cluster) map[string]string {
	if c.Spec.EKSConfig.Tags == nil {
		return nil
	}
	return *c.Spec.EKSConfig.Tags
}

func (*eksCloud) setConfigTags(c *mgmtv1.Cluster, tags map[string]string) {
	c.Spec.EKSConfig.Tags = &tags
}

func (*eksCloud) configPools(c *mgmtv1.Cluster) []string {
	var out []string
	for _, ng := range *c.Spec.EKSConfig.NodeGroups {
		out = append(out, ng.NodegroupName)
	}
	return out
}

func (*eksCloud) addConfigPool(c *mgmtv1.Cluster, name string) {
	p := func(s string) *string { return &s }
	n := func(i int64) *int64 { return &i }
	*c.Spec.EKSConfig.NodeGroups = append(*c.Spec.EKSConfig.NodeGroups, eksv1.NodeGroup{NodegroupName: name, DesiredSize: n(1), MinSize: n(1), MaxSize: n(2),
		InstanceType: p("t3.large"), NodeRole: p("arn:aws:iam::123456789012:role/nodes")})
}

func (*eksCloud) removeConfigPool(c *mgmtv1.Cluster, name string) {
	*c.Spec.EKSConfig.NodeGroups = slices.DeleteFunc(*c.Spec.EKSConfig.NodeGroups, func(ng eksv1.NodeGroup) bool { return ng.NodegroupName == name })
}

func (e *eksCloud) cloudTags(t *testing.T) map[string]string { return e.snapshot(t).Tags }

func (e *eksCloud) setCloudTags(t *testing.T, tags map[string]string) {
	if err := e.srv.ConsoleSetTags(e.snapshot(t).ARN, tags); err != nil {
		t.Fatal(err)
	}
}

func (e *eksCloud) cloudPools(t *testing.T) []string {
	return slices.Sorted(maps.Keys(e.snapshot(t).Nodegroups))
}

func (e *eksCloud) addCloudPool(t *testing.T, name string) {
	if err := e.srv.ConsoleCreateNodegroup(e.name, ekstest.NodegroupSpec{Name: name, MinSize: 1, MaxSize: 1, DesiredSize: 1}); err != nil {
		t.Fatal(err)
	}
}

func (e *eksCloud) exists() bool { _, ok := e.srv.Cluster(e.name); return ok }

func (e *eksCloud) refuseTagPushes(n int) {
	e.srv.FailNext("TagResource", "InvalidParameterException", 400, n)
}

func (e *eksCloud) throttleTagPushes(n int) {
	e.srv.FailNext("TagResource", "ThrottlingException", 400, n)
}

func (e *eksCloud) writes() int {
	total := 0
	for op, n := range e.srv.Calls() {
		if !slices.Contains([]string{"DescribeCluster", "ListNodegroups", "DescribeNodegroup", "ListUpdates", "DescribeUpdate", "ListAddons", "DescribeAddon", "ListTagsForResource"}, op) {
			total += n
		}
	}
	return total
}

// updatable: version one minor up, endpoint access, public access sources,
// logging, tags, and pool1's scaling and labels.
func (*eksCloud) updatable(c *mgmtv1.Cluster) {
	s := c.Spec.EKSConfig
	p := func(v string) *string { return &v }
	b := func(v bool) *bool { return &v }
	n := func(i int64) *int64 { return &i }
	s.KubernetesVersion = p("1.32")
	s.PublicAccess, s.PrivateAccess = b(true), b(true)
	s.PublicAccessSources = &[]string{"10.0.0.0/8"}
	s.LoggingTypes = &[]string{"api", "audit"}
	s.Tags = &map[string]string{"team": "a", "env": "prod"}
	ng := &(*s.NodeGroups)[0]
	ng.DesiredSize, ng.MinSize, ng.MaxSize = n(3), n(1), n(5)
	ng.Labels = &map[string]string{"pool": "one"}
}
