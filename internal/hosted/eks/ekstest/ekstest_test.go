package ekstest_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type noBackoff struct{}

func (noBackoff) BackoffDelay(int, error) (time.Duration, error) { return 0, nil }

func setup(t *testing.T) (*ekstest.Server, *eks.Client, *fakeClock) {
	t.Helper()
	clk := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	srv := ekstest.New(ekstest.Options{
		CreateDelay: 10 * time.Minute,
		UpdateDelay: 5 * time.Minute,
		DeleteDelay: 3 * time.Minute,
		Now:         clk.Now,
		AccountID:   "111122223333",
		Region:      "eu-west-1",
	})
	t.Cleanup(srv.Close)
	cfg := aws.Config{
		Region:      "eu-west-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) { o.Backoff = noBackoff{} })
		},
	}
	client := eks.NewFromConfig(cfg, func(o *eks.Options) { o.BaseEndpoint = aws.String(srv.URL) })
	return srv, client, clk
}

func createInput(name string) *eks.CreateClusterInput {
	return &eks.CreateClusterInput{
		Name:    aws.String(name),
		Version: aws.String("1.31"),
		RoleArn: aws.String("arn:aws:iam::111122223333:role/eks"),
		ResourcesVpcConfig: &types.VpcConfigRequest{
			SubnetIds:            []string{"subnet-a", "subnet-b"},
			SecurityGroupIds:     []string{"sg-1"},
			EndpointPublicAccess: aws.Bool(true),
		},
		Logging:                 &types.Logging{ClusterLogging: []types.LogSetup{{Types: []types.LogType{types.LogTypeApi, types.LogTypeAudit}, Enabled: aws.Bool(true)}}},
		Tags:                    map[string]string{"team": "a"},
		KubernetesNetworkConfig: &types.KubernetesNetworkConfigRequest{IpFamily: types.IpFamilyIpv4},
	}
}

func TestClusterCreateDescribeListDelete(t *testing.T) {
	srv, client, clk := setup(t)
	ctx := context.Background()

	out, err := client.CreateCluster(ctx, createInput("alpha"))
	if err != nil {
		t.Fatal(err)
	}
	c := out.Cluster
	if c.Status != types.ClusterStatusCreating || aws.ToString(c.Arn) != "arn:aws:eks:eu-west-1:111122223333:cluster/alpha" {
		t.Fatalf("create: status %s arn %s", c.Status, aws.ToString(c.Arn))
	}
	if c.CreatedAt == nil || !c.CreatedAt.Equal(clk.Now()) {
		t.Fatalf("createdAt %v, want %v", c.CreatedAt, clk.Now())
	}
	if _, err := client.CreateCluster(ctx, createInput("alpha")); !isErr[*types.ResourceInUseException](err) {
		t.Fatalf("duplicate create: %v", err)
	}

	d, err := client.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("alpha")})
	if err != nil {
		t.Fatal(err)
	}
	if d.Cluster.Status != types.ClusterStatusCreating || d.Cluster.Endpoint != nil {
		t.Fatalf("still creating expected, got %s endpoint %v", d.Cluster.Status, d.Cluster.Endpoint)
	}
	clk.Advance(10 * time.Minute)
	d, err = client.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("alpha")})
	if err != nil {
		t.Fatal(err)
	}
	dc := d.Cluster
	if dc.Status != types.ClusterStatusActive || aws.ToString(dc.Endpoint) != "https://alpha.eks.local" {
		t.Fatalf("active: %s %v", dc.Status, aws.ToString(dc.Endpoint))
	}
	if dc.CertificateAuthority == nil || aws.ToString(dc.CertificateAuthority.Data) == "" {
		t.Fatal("no CA")
	}
	v := dc.ResourcesVpcConfig
	if aws.ToString(v.VpcId) == "" || aws.ToString(v.ClusterSecurityGroupId) == "" || !v.EndpointPublicAccess || v.EndpointPrivateAccess || len(v.SubnetIds) != 2 {
		t.Fatalf("vpc config: %+v", v)
	}
	if dc.Tags["team"] != "a" || aws.ToString(dc.Version) != "1.31" || aws.ToString(dc.PlatformVersion) == "" {
		t.Fatalf("cluster: %+v", dc)
	}
	if len(dc.Logging.ClusterLogging) != 2 || !aws.ToBool(dc.Logging.ClusterLogging[0].Enabled) || len(dc.Logging.ClusterLogging[0].Types) != 2 {
		t.Fatalf("logging: %+v", dc.Logging.ClusterLogging)
	}
	if dc.KubernetesNetworkConfig.IpFamily != types.IpFamilyIpv4 {
		t.Fatalf("ip family %s", dc.KubernetesNetworkConfig.IpFamily)
	}

	l, err := client.ListClusters(ctx, &eks.ListClustersInput{})
	if err != nil || len(l.Clusters) != 1 || l.Clusters[0] != "alpha" {
		t.Fatalf("list: %v %v", l, err)
	}

	del, err := client.DeleteCluster(ctx, &eks.DeleteClusterInput{Name: aws.String("alpha")})
	if err != nil || del.Cluster.Status != types.ClusterStatusDeleting {
		t.Fatalf("delete: %v", err)
	}
	clk.Advance(3 * time.Minute)
	_, err = client.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("alpha")})
	var nf *types.ResourceNotFoundException
	if !errors.As(err, &nf) {
		t.Fatalf("want ResourceNotFoundException, got %v", err)
	}
	if calls := srv.Calls(); calls["DescribeCluster"] != 3 || calls["CreateCluster"] != 2 {
		t.Fatalf("calls: %v", calls)
	}
}

func isErr[E error](err error) bool {
	var e E
	return errors.As(err, &e)
}
