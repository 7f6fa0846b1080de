package ekstest_test

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
)

type noBackoff struct{}

func (noBackoff) BackoffDelay(int, error) (time.Duration, error) { return 0, nil }

func setup(t *testing.T) (*ekstest.Server, *eks.Client, *hostedtest.Clock) {
	t.Helper()
	clk := hostedtest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
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

func describe(t *testing.T, client *eks.Client, name string) *types.Cluster {
	t.Helper()
	d, err := client.DescribeCluster(context.Background(), &eks.DescribeClusterInput{Name: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	return d.Cluster
}

func describeNG(t *testing.T, client *eks.Client, cluster, ng string) *types.Nodegroup {
	t.Helper()
	d, err := client.DescribeNodegroup(context.Background(), &eks.DescribeNodegroupInput{ClusterName: aws.String(cluster), NodegroupName: aws.String(ng)})
	if err != nil {
		t.Fatal(err)
	}
	return d.Nodegroup
}

func TestLifecycle(t *testing.T) {
	srv, client, clk := setup(t)
	ctx := context.Background()
	if _, err := client.CreateCluster(ctx, createInput("prod")); err != nil {
		t.Fatal(err)
	}

	// Node groups need an ACTIVE cluster.
	ngIn := &eks.CreateNodegroupInput{
		ClusterName:   aws.String("prod"),
		NodegroupName: aws.String("workers"),
		NodeRole:      aws.String("arn:aws:iam::111122223333:role/node"),
		Subnets:       []string{"subnet-a"},
		ScalingConfig: &types.NodegroupScalingConfig{MinSize: aws.Int32(1), MaxSize: aws.Int32(5), DesiredSize: aws.Int32(2)},
		InstanceTypes: []string{"m5.large"},
		CapacityType:  types.CapacityTypesSpot,
		Labels:        map[string]string{"role": "worker", "old": "x"},
		Tags:          map[string]string{"ng": "1"},
		RemoteAccess:  &types.RemoteAccessConfig{Ec2SshKey: aws.String("key")},
	}
	if _, err := client.CreateNodegroup(ctx, ngIn); !isErr[*types.InvalidRequestException](err) {
		t.Fatalf("nodegroup on CREATING cluster: %v", err)
	}
	clk.Advance(10 * time.Minute)
	ngOut, err := client.CreateNodegroup(ctx, ngIn)
	if err != nil {
		t.Fatal(err)
	}
	if ngOut.Nodegroup.Status != types.NodegroupStatusCreating || ngOut.Nodegroup.CapacityType != types.CapacityTypesSpot {
		t.Fatalf("nodegroup: %+v", ngOut.Nodegroup)
	}
	if arn := aws.ToString(ngOut.Nodegroup.NodegroupArn); !strings.HasPrefix(arn, "arn:aws:eks:eu-west-1:111122223333:nodegroup/prod/workers/") {
		t.Fatalf("nodegroup arn %s", arn)
	}
	clk.Advance(10 * time.Minute)
	ng := describeNG(t, client, "prod", "workers")
	if ng.Status != types.NodegroupStatusActive || aws.ToString(ng.Version) != "1.31" || aws.ToInt32(ng.ScalingConfig.DesiredSize) != 2 {
		t.Fatalf("nodegroup active: %+v", ng)
	}

	// Cluster config update: InProgress, cluster UPDATING, second update refused.
	up, err := client.UpdateClusterConfig(ctx, &eks.UpdateClusterConfigInput{
		Name:               aws.String("prod"),
		ResourcesVpcConfig: &types.VpcConfigRequest{EndpointPrivateAccess: aws.Bool(true), EndpointPublicAccess: aws.Bool(false)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if up.Update.Status != types.UpdateStatusInProgress || up.Update.Type != types.UpdateTypeEndpointAccessUpdate || len(up.Update.Params) == 0 || up.Update.CreatedAt == nil {
		t.Fatalf("update: %+v", up.Update)
	}
	if c := describe(t, client, "prod"); c.Status != types.ClusterStatusUpdating || !c.ResourcesVpcConfig.EndpointPublicAccess {
		t.Fatalf("during update: %s public=%v", c.Status, c.ResourcesVpcConfig.EndpointPublicAccess)
	}
	_, err = client.UpdateClusterConfig(ctx, &eks.UpdateClusterConfigInput{
		Name:    aws.String("prod"),
		Logging: &types.Logging{ClusterLogging: []types.LogSetup{{Types: []types.LogType{types.LogTypeScheduler}, Enabled: aws.Bool(true)}}},
	})
	var inUse *types.ResourceInUseException
	if !errors.As(err, &inUse) {
		t.Fatalf("second update: %v", err)
	}
	clk.Advance(5 * time.Minute)
	du, err := client.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: aws.String("prod"), UpdateId: up.Update.Id})
	if err != nil || du.Update.Status != types.UpdateStatusSuccessful {
		t.Fatalf("describe update: %v %+v", err, du)
	}
	c := describe(t, client, "prod")
	if c.Status != types.ClusterStatusActive || c.ResourcesVpcConfig.EndpointPublicAccess || !c.ResourcesVpcConfig.EndpointPrivateAccess {
		t.Fatalf("after update: %s %+v", c.Status, c.ResourcesVpcConfig)
	}
	// No-op update is refused like EKS does.
	_, err = client.UpdateClusterConfig(ctx, &eks.UpdateClusterConfigInput{
		Name:               aws.String("prod"),
		ResourcesVpcConfig: &types.VpcConfigRequest{EndpointPrivateAccess: aws.Bool(true), EndpointPublicAccess: aws.Bool(false)},
	})
	if !isErr[*types.InvalidParameterException](err) {
		t.Fatalf("no-op update: %v", err)
	}

	// Version upgrades: two minors refused, one minor OK.
	if _, err := client.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: aws.String("prod"), Version: aws.String("1.33")}); !isErr[*types.InvalidParameterException](err) {
		t.Fatalf("two-minor upgrade: %v", err)
	}
	vu, err := client.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: aws.String("prod"), Version: aws.String("1.32")})
	if err != nil || vu.Update.Type != types.UpdateTypeVersionUpdate {
		t.Fatalf("upgrade: %v", err)
	}
	if v := aws.ToString(describe(t, client, "prod").Version); v != "1.31" {
		t.Fatalf("version changed before the update finished: %s", v)
	}
	clk.Advance(5 * time.Minute)
	if c := describe(t, client, "prod"); aws.ToString(c.Version) != "1.32" || c.Status != types.ClusterStatusActive {
		t.Fatalf("after upgrade: %s %s", aws.ToString(c.Version), c.Status)
	}
	lu, err := client.ListUpdates(ctx, &eks.ListUpdatesInput{Name: aws.String("prod")})
	if err != nil || len(lu.UpdateIds) != 2 {
		t.Fatalf("list updates: %v %v", err, lu)
	}

	// Node group config update: scaling + labels.
	nu, err := client.UpdateNodegroupConfig(ctx, &eks.UpdateNodegroupConfigInput{
		ClusterName:   aws.String("prod"),
		NodegroupName: aws.String("workers"),
		ScalingConfig: &types.NodegroupScalingConfig{DesiredSize: aws.Int32(4), MaxSize: aws.Int32(6)},
		Labels:        &types.UpdateLabelsPayload{AddOrUpdateLabels: map[string]string{"tier": "gold"}, RemoveLabels: []string{"old"}},
	})
	if err != nil || nu.Update.Type != types.UpdateTypeConfigUpdate {
		t.Fatalf("nodegroup update: %v", err)
	}
	if ng := describeNG(t, client, "prod", "workers"); ng.Status != types.NodegroupStatusUpdating || aws.ToInt32(ng.ScalingConfig.DesiredSize) != 2 {
		t.Fatalf("nodegroup during update: %s", ng.Status)
	}
	if _, err := client.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: aws.String("prod"), UpdateId: nu.Update.Id, NodegroupName: aws.String("workers")}); err != nil {
		t.Fatal(err)
	}
	if lu, err := client.ListUpdates(ctx, &eks.ListUpdatesInput{Name: aws.String("prod"), NodegroupName: aws.String("workers")}); err != nil || len(lu.UpdateIds) != 1 {
		t.Fatalf("nodegroup updates: %v %v", err, lu)
	}
	clk.Advance(5 * time.Minute)
	ng = describeNG(t, client, "prod", "workers")
	if ng.Status != types.NodegroupStatusActive || aws.ToInt32(ng.ScalingConfig.DesiredSize) != 4 || aws.ToInt32(ng.ScalingConfig.MaxSize) != 6 ||
		ng.Labels["tier"] != "gold" || ng.Labels["role"] != "worker" || ng.Labels["old"] != "" {
		t.Fatalf("nodegroup after update: %s %+v %v", ng.Status, ng.ScalingConfig, ng.Labels)
	}
	vng, err := client.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: aws.String("prod"), NodegroupName: aws.String("workers")})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(5 * time.Minute)
	if ng := describeNG(t, client, "prod", "workers"); aws.ToString(ng.Version) != "1.32" || vng.Update.Type != types.UpdateTypeVersionUpdate {
		t.Fatalf("nodegroup version: %s", aws.ToString(ng.Version))
	}

	// Tags.
	arn := c.Arn
	if _, err := client.TagResource(ctx, &eks.TagResourceInput{ResourceArn: arn, Tags: map[string]string{"env": "prod", "x": "y"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.UntagResource(ctx, &eks.UntagResourceInput{ResourceArn: arn, TagKeys: []string{"x", "team"}}); err != nil {
		t.Fatal(err)
	}
	tags, err := client.ListTagsForResource(ctx, &eks.ListTagsForResourceInput{ResourceArn: arn})
	if err != nil || len(tags.Tags) != 1 || tags.Tags["env"] != "prod" {
		t.Fatalf("tags: %v %v", err, tags)
	}
	if _, err := client.ListTagsForResource(ctx, &eks.ListTagsForResourceInput{ResourceArn: aws.String("arn:aws:eks:eu-west-1:111122223333:cluster/nope")}); !isErr[*types.NotFoundException](err) {
		t.Fatalf("tags of unknown arn: %v", err)
	}

	// Add-ons.
	ad, err := client.CreateAddon(ctx, &eks.CreateAddonInput{ClusterName: aws.String("prod"), AddonName: aws.String("aws-ebs-csi-driver"), ServiceAccountRoleArn: aws.String("arn:aws:iam::111122223333:role/ebs")})
	if err != nil || ad.Addon.Status != types.AddonStatusCreating {
		t.Fatalf("addon: %v", err)
	}
	clk.Advance(10 * time.Minute)
	da, err := client.DescribeAddon(ctx, &eks.DescribeAddonInput{ClusterName: aws.String("prod"), AddonName: aws.String("aws-ebs-csi-driver")})
	if err != nil || da.Addon.Status != types.AddonStatusActive || aws.ToString(da.Addon.ServiceAccountRoleArn) == "" {
		t.Fatalf("describe addon: %v %+v", err, da)
	}
	la, err := client.ListAddons(ctx, &eks.ListAddonsInput{ClusterName: aws.String("prod")})
	if err != nil || len(la.Addons) != 1 {
		t.Fatalf("list addons: %v", err)
	}

	// Deleting a cluster with node groups is refused; delete the node group first.
	if _, err := client.DeleteCluster(ctx, &eks.DeleteClusterInput{Name: aws.String("prod")}); !isErr[*types.ResourceInUseException](err) {
		t.Fatalf("delete cluster with nodegroups: %v", err)
	}
	dn, err := client.DeleteNodegroup(ctx, &eks.DeleteNodegroupInput{ClusterName: aws.String("prod"), NodegroupName: aws.String("workers")})
	if err != nil || dn.Nodegroup.Status != types.NodegroupStatusDeleting {
		t.Fatalf("delete nodegroup: %v", err)
	}
	if ng := describeNG(t, client, "prod", "workers"); ng.Status != types.NodegroupStatusDeleting {
		t.Fatalf("nodegroup: %s", ng.Status)
	}
	clk.Advance(3 * time.Minute)
	if _, err := client.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String("prod"), NodegroupName: aws.String("workers")}); !isErr[*types.ResourceNotFoundException](err) {
		t.Fatalf("deleted nodegroup: %v", err)
	}
	if _, err := client.DeleteCluster(ctx, &eks.DeleteClusterInput{Name: aws.String("prod")}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(3 * time.Minute)
	_, err = client.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("prod")})
	var nf *types.ResourceNotFoundException
	if !errors.As(err, &nf) {
		t.Fatalf("deleted cluster: %v", err)
	}
	if _, ok := srv.Cluster("prod"); ok {
		t.Fatal("snapshot of deleted cluster")
	}
}

func TestListClustersPagination(t *testing.T) {
	srv, client, _ := setup(t)
	ctx := context.Background()
	for i := range 7 {
		if err := srv.ImportCluster(ekstest.ClusterSpec{Name: fmt.Sprintf("c%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	p := eks.NewListClustersPaginator(client, &eks.ListClustersInput{MaxResults: aws.Int32(3)})
	pages := 0
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		names = append(names, out.Clusters...)
	}
	if pages != 3 || len(names) != 7 || names[0] != "c0" || names[6] != "c6" {
		t.Fatalf("pages %d names %v", pages, names)
	}
	if _, err := client.ListClusters(ctx, &eks.ListClustersInput{NextToken: aws.String("garbage!")}); !isErr[*types.InvalidParameterException](err) {
		t.Fatalf("bad token: %v", err)
	}
}

func TestFailNextThrottling(t *testing.T) {
	srv, client, _ := setup(t)
	ctx := context.Background()
	if err := srv.ImportCluster(ekstest.ClusterSpec{Name: "a"}); err != nil {
		t.Fatal(err)
	}
	in := &eks.UpdateClusterConfigInput{Name: aws.String("a"), ResourcesVpcConfig: &types.VpcConfigRequest{EndpointPrivateAccess: aws.Bool(true)}}

	// Without SDK retries the throttling error surfaces as the typed error.
	srv.FailNext("UpdateClusterConfig", "ThrottlingException", 429, 1)
	_, err := client.UpdateClusterConfig(ctx, in, func(o *eks.Options) { o.Retryer = aws.NopRetryer{} })
	var thr *types.ThrottlingException
	if !errors.As(err, &thr) {
		t.Fatalf("want ThrottlingException, got %v", err)
	}
	// With retries, two throttles then success; the SDK reuses the
	// clientRequestToken so only one update is created.
	srv.FailNext("UpdateClusterConfig", "ThrottlingException", 429, 2)
	out, err := client.UpdateClusterConfig(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Calls()["UpdateClusterConfig"]; got != 4 {
		t.Fatalf("calls = %d, want 4", got)
	}
	snap, _ := srv.Cluster("a")
	if len(snap.Updates) != 1 || snap.Updates[0].ID != aws.ToString(out.Update.Id) {
		t.Fatalf("updates: %+v", snap.Updates)
	}
}

func TestConsole(t *testing.T) {
	srv, client, clk := setup(t)
	ctx := context.Background()
	err := srv.ImportCluster(ekstest.ClusterSpec{
		Name: "legacy", Version: "1.30", Tags: map[string]string{"owner": "ops"},
		Nodegroups: []ekstest.NodegroupSpec{{Name: "ng1", MinSize: 1, MaxSize: 4, DesiredSize: 2, Labels: map[string]string{"a": "b"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := describe(t, client, "legacy")
	if c.Status != types.ClusterStatusActive || aws.ToString(c.Version) != "1.30" {
		t.Fatalf("imported: %s %s", c.Status, aws.ToString(c.Version))
	}
	ca, err := base64.StdEncoding.DecodeString(aws.ToString(c.CertificateAuthority.Data))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(ca)
	if block == nil {
		t.Fatal("CA is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil || !cert.IsCA || string(ca) != string(srv.CACertPEM()) {
		t.Fatalf("CA: %v", err)
	}
	if ng := describeNG(t, client, "legacy", "ng1"); ng.Status != types.NodegroupStatusActive || ng.Labels["a"] != "b" {
		t.Fatalf("imported nodegroup: %+v", ng)
	}

	if _, err := srv.ConsoleSetEndpointAccess("legacy", true, true); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.ConsoleUpgrade("legacy", "1.31"); !isAPIErr(err, "ResourceInUseException") {
		t.Fatalf("console upgrade during update: %v", err)
	}
	clk.Advance(5 * time.Minute)
	if c := describe(t, client, "legacy"); !c.ResourcesVpcConfig.EndpointPrivateAccess || c.Status != types.ClusterStatusActive {
		t.Fatalf("console endpoint: %+v", c.ResourcesVpcConfig)
	}
	if _, err := srv.ConsoleUpgrade("legacy", "1.31"); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.ConsoleScaleNodegroup("legacy", "ng1", 3); err != nil {
		t.Fatal(err)
	}
	if err := srv.ConsoleSetTags(aws.ToString(c.Arn), map[string]string{"owner": "someone-else"}); err != nil {
		t.Fatal(err)
	}
	if err := srv.ConsoleCreateNodegroup("legacy", ekstest.NodegroupSpec{Name: "manual"}); !isAPIErr(err, "InvalidRequestException") {
		t.Fatalf("console nodegroup on UPDATING cluster: %v", err)
	}
	clk.Advance(5 * time.Minute)
	c = describe(t, client, "legacy")
	if aws.ToString(c.Version) != "1.31" || c.Tags["owner"] != "someone-else" {
		t.Fatalf("console upgrade/tags: %s %v", aws.ToString(c.Version), c.Tags)
	}
	if ng := describeNG(t, client, "legacy", "ng1"); aws.ToInt32(ng.ScalingConfig.DesiredSize) != 3 {
		t.Fatalf("console scale: %+v", ng.ScalingConfig)
	}
	if err := srv.ConsoleCreateNodegroup("legacy", ekstest.NodegroupSpec{Name: "manual"}); err != nil {
		t.Fatal(err)
	}
	if err := srv.ConsoleDeleteNodegroup("legacy", "ng1"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * time.Minute)
	l, err := client.ListNodegroups(ctx, &eks.ListNodegroupsInput{ClusterName: aws.String("legacy")})
	if err != nil || len(l.Nodegroups) != 1 || l.Nodegroups[0] != "manual" {
		t.Fatalf("nodegroups: %v %v", err, l)
	}
	snap, ok := srv.Cluster("legacy")
	if !ok || snap.Nodegroups["manual"].Status != "ACTIVE" || len(snap.Updates) != 3 || snap.Endpoint != "https://legacy.eks.local" {
		t.Fatalf("snapshot: %+v", snap)
	}
	calls := srv.Calls()
	if calls["DescribeCluster"] != 3 || calls["DescribeNodegroup"] != 2 || calls["ListNodegroups"] != 1 {
		t.Fatalf("calls: %v", calls)
	}
}

func isAPIErr(err error, typ string) bool {
	var e *ekstest.APIError
	return errors.As(err, &e) && e.Type == typ
}

func TestWireFormat(t *testing.T) {
	srv, client, _ := setup(t)
	ctx := context.Background()

	// Errors: status code, X-Amzn-ErrorType header, {"message": ...} body.
	resp, err := http.Get(srv.URL + "/clusters/nope")
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 || resp.Header.Get("X-Amzn-ErrorType") != "ResourceNotFoundException" || body["message"] == "" {
		t.Fatalf("error wire: %d %q %v", resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"), body)
	}

	// Timestamps are epoch seconds (JSON numbers).
	if err := srv.ImportCluster(ekstest.ClusterSpec{Name: "w", Nodegroups: []ekstest.NodegroupSpec{{Name: "n"}}}); err != nil {
		t.Fatal(err)
	}
	resp, err = http.Get(srv.URL + "/clusters/w")
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Cluster map[string]any `json:"cluster"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, ok := raw.Cluster["createdAt"].(float64); !ok {
		t.Fatalf("createdAt = %#v", raw.Cluster["createdAt"])
	}

	// Error members reach the SDK's typed errors.
	_, err = client.DeleteCluster(ctx, &eks.DeleteClusterInput{Name: aws.String("w")})
	var inUse *types.ResourceInUseException
	if !errors.As(err, &inUse) || aws.ToString(inUse.ClusterName) != "w" || inUse.ErrorMessage() == "" {
		t.Fatalf("in use: %v", err)
	}
	_, err = client.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String("w"), NodegroupName: aws.String("x")})
	var nf *types.ResourceNotFoundException
	if !errors.As(err, &nf) || aws.ToString(nf.NodegroupName) != "x" {
		t.Fatalf("not found: %v", err)
	}
	// Nodegroup updates are only visible with the nodegroupName query.
	id, err := srv.ConsoleScaleNodegroup("w", "n", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: aws.String("w"), UpdateId: aws.String(id)}); !isErr[*types.ResourceNotFoundException](err) {
		t.Fatalf("nodegroup update without nodegroupName: %v", err)
	}
	// Bad parameters.
	_, err = client.UpdateNodegroupConfig(ctx, &eks.UpdateNodegroupConfigInput{ClusterName: aws.String("w"), NodegroupName: aws.String("n"),
		ScalingConfig: &types.NodegroupScalingConfig{DesiredSize: aws.Int32(9)}})
	if !isErr[*types.ResourceInUseException](err) {
		t.Fatalf("nodegroup update during update: %v", err)
	}
	_, err = client.UpdateClusterConfig(ctx, &eks.UpdateClusterConfigInput{Name: aws.String("w"),
		ResourcesVpcConfig: &types.VpcConfigRequest{EndpointPublicAccess: aws.Bool(false)},
		Logging:            &types.Logging{ClusterLogging: []types.LogSetup{{Types: []types.LogType{types.LogTypeApi}, Enabled: aws.Bool(true)}}}})
	if !isErr[*types.InvalidParameterException](err) {
		t.Fatalf("two kinds of update at once: %v", err)
	}
}

// FailUpdates: the next update ends Failed with the injected error detail,
// and the cluster keeps its old value; the one after succeeds.
func TestFailUpdates(t *testing.T) {
	srv, client, clk := setup(t)
	ctx := context.Background()
	if _, err := client.CreateCluster(ctx, createInput("prod")); err != nil {
		t.Fatal(err)
	}
	clk.Advance(11 * time.Minute)
	srv.FailUpdates(1, "InsufficientFreeAddresses", "not enough free addresses in the subnets")
	access := func() *eks.UpdateClusterConfigInput { // a new one per call: the SDK fills in its clientRequestToken
		return &eks.UpdateClusterConfigInput{Name: aws.String("prod"),
			ResourcesVpcConfig: &types.VpcConfigRequest{EndpointPrivateAccess: aws.Bool(true), EndpointPublicAccess: aws.Bool(true)}}
	}
	up, err := client.UpdateClusterConfig(ctx, access())
	if err != nil || up.Update.Status != types.UpdateStatusInProgress {
		t.Fatalf("update: %v %+v", err, up)
	}
	clk.Advance(6 * time.Minute)
	du, err := client.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: aws.String("prod"), UpdateId: up.Update.Id})
	if err != nil {
		t.Fatal(err)
	}
	if du.Update.Status != types.UpdateStatusFailed || len(du.Update.Errors) != 1 ||
		du.Update.Errors[0].ErrorCode != types.ErrorCodeInsufficientFreeAddresses || aws.ToString(du.Update.Errors[0].ErrorMessage) != "not enough free addresses in the subnets" {
		t.Fatalf("failed update = %+v", du.Update)
	}
	if c := describe(t, client, "prod"); c.Status != types.ClusterStatusActive || c.ResourcesVpcConfig.EndpointPrivateAccess {
		t.Fatalf("after the failed update: %s private=%v", c.Status, c.ResourcesVpcConfig.EndpointPrivateAccess)
	}
	if _, err = client.UpdateClusterConfig(ctx, access()); err != nil {
		t.Fatal(err)
	}
	clk.Advance(6 * time.Minute)
	if c := describe(t, client, "prod"); !c.ResourcesVpcConfig.EndpointPrivateAccess {
		t.Fatalf("the next update did not apply: %+v", c.ResourcesVpcConfig)
	}
}
