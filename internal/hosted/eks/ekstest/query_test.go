package ekstest_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go"

	"github.com/clustersync/clustersync/internal/hosted/eks/ekstest"
	"github.com/clustersync/clustersync/internal/hosted/hostedtest"
)

// queryClients are real SDK clients of all three services pointed at one
// emulator, without retries unless maxAttempts > 1.
func queryClients(t *testing.T, opts ekstest.Options, maxAttempts int) (*ekstest.Server, *cloudformation.Client, *ec2.Client, *eks.Client) {
	t.Helper()
	srv := ekstest.New(opts)
	t.Cleanup(srv.Close)
	cfg := aws.Config{
		Region:      "eu-west-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) { o.Backoff = noBackoff{}; o.MaxAttempts = maxAttempts })
		},
	}
	base := aws.String(srv.URL)
	return srv,
		cloudformation.NewFromConfig(cfg, func(o *cloudformation.Options) { o.BaseEndpoint = base }),
		ec2.NewFromConfig(cfg, func(o *ec2.Options) { o.BaseEndpoint = base }),
		eks.NewFromConfig(cfg, func(o *eks.Options) { o.BaseEndpoint = base })
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

const vpcTemplate = `{
  "AWSTemplateFormatVersion": "2010-09-09",
  "Description": "test VPC",
  "Parameters": {"Cidr": {"Type": "String", "Default": "10.0.0.0/16"}},
  "Resources": {
    "VPC": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": {"Ref": "Cidr"}}},
    "SubnetA": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "VPC"}, "AvailabilityZone": {"Fn::Select": ["0", {"Fn::GetAZs": ""}]}}},
    "SubnetB": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "VPC"}}},
    "Group": {"Type": "AWS::EC2::SecurityGroup", "Properties": {"VpcId": {"Ref": "VPC"}, "GroupDescription": {"Fn::Sub": "${AWS::StackName} nodes"}}}
  },
  "Outputs": {
    "VpcId": {"Value": {"Ref": "VPC"}},
    "SubnetIds": {"Value": {"Fn::Join": [",", [{"Ref": "SubnetA"}, {"Ref": "SubnetB"}]]}},
    "SecurityGroups": {"Value": {"Fn::GetAtt": ["Group", "GroupId"]}},
    "Where": {"Value": {"Fn::Sub": "${AWS::Region}/${Cidr}"}}
  }
}`

const roleTemplate = `{
  "Resources": {"Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {}}}},
  "Outputs": {"RoleArn": {"Value": {"Fn::GetAtt": ["Role", "Arn"]}}}
}`

func describeStack(t *testing.T, cfn *cloudformation.Client, name string) cfntypes.Stack {
	t.Helper()
	out, err := cfn.DescribeStacks(context.Background(), &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if err != nil {
		t.Fatalf("describe %s: %v", name, err)
	}
	if len(out.Stacks) != 1 {
		t.Fatalf("describe %s: %d stacks", name, len(out.Stacks))
	}
	return out.Stacks[0]
}

func outputs(st cfntypes.Stack) map[string]string {
	m := map[string]string{}
	for _, o := range st.Outputs {
		m[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	return m
}

// A stack is CREATE_IN_PROGRESS, then CREATE_COMPLETE with outputs
// evaluated from its template; deleting it goes through DELETE_IN_PROGRESS,
// after which its name is unknown and its ID reports DELETE_COMPLETE.
func TestStackLifecycle(t *testing.T) {
	clk := hostedtest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	srv, cfn, _, _ := queryClients(t, ekstest.Options{Now: clk.Now, Region: "eu-west-1", StackCreateDelay: time.Minute, StackDeleteDelay: time.Minute}, 1)
	ctx := context.Background()
	created, err := cfn.CreateStack(ctx, &cloudformation.CreateStackInput{
		StackName: aws.String("net"), TemplateBody: aws.String(vpcTemplate),
		Parameters: []cfntypes.Parameter{{ParameterKey: aws.String("Cidr"), ParameterValue: aws.String("192.168.0.0/16")}},
		Tags:       []cfntypes.Tag{{Key: aws.String("owner"), Value: aws.String("me")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(aws.ToString(created.StackId), "arn:aws:cloudformation:eu-west-1:"+ekstest.DefaultAccountID+":stack/net/") {
		t.Errorf("stack ID %s", aws.ToString(created.StackId))
	}
	st := describeStack(t, cfn, "net")
	if st.StackStatus != cfntypes.StackStatusCreateInProgress || len(st.Outputs) != 0 || st.CreationTime == nil || !st.CreationTime.Equal(clk.Now()) {
		t.Fatalf("in progress: %s outputs %v created %v", st.StackStatus, st.Outputs, st.CreationTime)
	}
	if _, err := cfn.CreateStack(ctx, &cloudformation.CreateStackInput{StackName: aws.String("net"), TemplateBody: aws.String(vpcTemplate)}); apiCode(err) != "AlreadyExistsException" {
		t.Errorf("duplicate: %v", err)
	}
	clk.Advance(time.Minute)
	st = describeStack(t, cfn, "net")
	out := outputs(st)
	subnets := strings.Split(out["SubnetIds"], ",")
	if st.StackStatus != cfntypes.StackStatusCreateComplete || !strings.HasPrefix(out["VpcId"], "vpc-") || len(subnets) != 2 ||
		!strings.HasPrefix(subnets[0], "subnet-") || !strings.HasPrefix(out["SecurityGroups"], "sg-") || out["Where"] != "eu-west-1/192.168.0.0/16" {
		t.Fatalf("complete: %s %v", st.StackStatus, out)
	}
	if len(st.Tags) != 1 || aws.ToString(st.Tags[0].Key) != "owner" || len(st.Parameters) != 1 {
		t.Errorf("tags %v parameters %v", st.Tags, st.Parameters)
	}

	// IAM resources need a capability.
	if _, err := cfn.CreateStack(ctx, &cloudformation.CreateStackInput{StackName: aws.String("role"), TemplateBody: aws.String(roleTemplate)}); apiCode(err) != "InsufficientCapabilitiesException" {
		t.Errorf("no capability: %v", err)
	}
	if _, err := cfn.CreateStack(ctx, &cloudformation.CreateStackInput{StackName: aws.String("role"), TemplateBody: aws.String(roleTemplate),
		Capabilities: []cfntypes.Capability{cfntypes.CapabilityCapabilityIam}}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	if arn := outputs(describeStack(t, cfn, "role"))["RoleArn"]; !strings.HasPrefix(arn, "arn:aws:iam::"+ekstest.DefaultAccountID+":role/role-Role-") {
		t.Errorf("role ARN %q", arn)
	}

	// Malformed templates are refused at once.
	for _, bad := range []string{"Resources: {}", `{"Resources": {}}`, `{"Resources": {"A": {"Type": "AWS::EC2::VPC", "Properties": {"X": {"Ref": "Nope"}}}}}`,
		`{"Resources": {"A": {"Type": "AWS::EC2::VPC"}}, "Outputs": {"O": {"Value": {"Fn::ImportValue": "x"}}}}`} {
		if _, err := cfn.CreateStack(ctx, &cloudformation.CreateStackInput{StackName: aws.String("bad"), TemplateBody: aws.String(bad)}); apiCode(err) != "ValidationError" {
			t.Errorf("template %s: %v", bad, err)
		}
	}

	if _, err := cfn.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: aws.String("net")}); err != nil {
		t.Fatal(err)
	}
	if st := describeStack(t, cfn, "net"); st.StackStatus != cfntypes.StackStatusDeleteInProgress {
		t.Errorf("deleting: %s", st.StackStatus)
	}
	clk.Advance(time.Minute)
	if _, err := cfn.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String("net")}); apiCode(err) != "ValidationError" ||
		!strings.Contains(err.Error(), "Stack with id net does not exist") {
		t.Errorf("deleted stack by name: %v", err)
	}
	if st := describeStack(t, cfn, aws.ToString(created.StackId)); st.StackStatus != cfntypes.StackStatusDeleteComplete {
		t.Errorf("deleted stack by ID: %s", st.StackStatus)
	}
	if _, err := cfn.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: aws.String("never")}); err != nil {
		t.Errorf("deleting an unknown stack: %v", err)
	}
	if names := srv.StackNames(); len(names) != 1 || names[0] != "role" {
		t.Errorf("stacks %v", names)
	}
}

// An injected failure rolls the stack back with its reason; a VPC stack
// whose subnets an EKS cluster uses fails to delete until the cluster is
// gone; the cluster reports the stack's VPC.
func TestStackFailures(t *testing.T) {
	clk := hostedtest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	srv, cfn, _, eksc := queryClients(t, ekstest.Options{Now: clk.Now, Region: "eu-west-1", StackCreateDelay: time.Second, DeleteDelay: time.Minute}, 1)
	ctx := context.Background()
	srv.FailStackCreate("broken", "The following resource(s) failed to create: [VPC].")
	if _, err := cfn.CreateStack(ctx, &cloudformation.CreateStackInput{StackName: aws.String("broken"), TemplateBody: aws.String(vpcTemplate)}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	if st := describeStack(t, cfn, "broken"); st.StackStatus != cfntypes.StackStatusRollbackComplete || !strings.Contains(aws.ToString(st.StackStatusReason), "[VPC]") {
		t.Errorf("failed stack: %s %q", st.StackStatus, aws.ToString(st.StackStatusReason))
	}

	if _, err := cfn.CreateStack(ctx, &cloudformation.CreateStackInput{StackName: aws.String("net"), TemplateBody: aws.String(vpcTemplate)}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	out := outputs(describeStack(t, cfn, "net"))
	if _, err := eksc.CreateCluster(ctx, &eks.CreateClusterInput{Name: aws.String("c"), RoleArn: aws.String("arn:aws:iam::1:role/r"),
		ResourcesVpcConfig: &ekstypes.VpcConfigRequest{SubnetIds: strings.Split(out["SubnetIds"], ","), SecurityGroupIds: []string{out["SecurityGroups"]}}}); err != nil {
		t.Fatal(err)
	}
	if d := describe(t, eksc, "c"); aws.ToString(d.ResourcesVpcConfig.VpcId) != out["VpcId"] {
		t.Errorf("cluster VPC %s, stack VPC %s", aws.ToString(d.ResourcesVpcConfig.VpcId), out["VpcId"])
	}
	if _, err := cfn.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: aws.String("net")}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	if st := describeStack(t, cfn, "net"); st.StackStatus != cfntypes.StackStatusDeleteFailed || !strings.Contains(aws.ToString(st.StackStatusReason), "SubnetA") {
		t.Errorf("deleting a VPC in use: %s %q", st.StackStatus, aws.ToString(st.StackStatusReason))
	}
	clk.Advance(time.Minute) // cluster CREATING → ACTIVE
	if _, err := eksc.DeleteCluster(ctx, &eks.DeleteClusterInput{Name: aws.String("c")}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	if _, err := cfn.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: aws.String("net")}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	if _, ok := srv.Stack("net"); ok {
		t.Error("stack still there after its cluster is gone")
	}
}

// Launch templates: create, versions with their data, idempotent client
// tokens, deletion rules, and EKS node groups resolving them.
func TestLaunchTemplates(t *testing.T) {
	clk := hostedtest.NewClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	srv, _, ec2c, eksc := queryClients(t, ekstest.Options{Now: clk.Now, Region: "eu-west-1"}, 1)
	ctx := context.Background()
	in := &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String("lt-test"), ClientToken: aws.String("tok-1"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{UserData: aws.String(base64.StdEncoding.EncodeToString([]byte("base")))},
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate,
			Tags: []ec2types.Tag{{Key: aws.String("owner"), Value: aws.String("me")}}}},
	}
	created, err := ec2c.CreateLaunchTemplate(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	lt := created.LaunchTemplate
	id := aws.ToString(lt.LaunchTemplateId)
	if !strings.HasPrefix(id, "lt-") || aws.ToInt64(lt.LatestVersionNumber) != 1 || aws.ToInt64(lt.DefaultVersionNumber) != 1 || len(lt.Tags) != 1 || lt.CreateTime == nil {
		t.Fatalf("created %+v", lt)
	}
	if again, err := ec2c.CreateLaunchTemplate(ctx, in); err != nil || aws.ToString(again.LaunchTemplate.LaunchTemplateId) != id {
		t.Errorf("same client token: %v %v", again, err)
	}
	in.ClientToken = aws.String("tok-2")
	if _, err := ec2c.CreateLaunchTemplate(ctx, in); apiCode(err) != "InvalidLaunchTemplateName.AlreadyExistsException" {
		t.Errorf("duplicate name: %v", err)
	}
	data := &ec2types.RequestLaunchTemplateData{
		InstanceType: ec2types.InstanceTypeT3Large, KeyName: aws.String("ops"), ImageId: aws.String("ami-123"),
		UserData:            aws.String(base64.StdEncoding.EncodeToString([]byte("#!/bin/sh\necho hi"))),
		BlockDeviceMappings: []ec2types.LaunchTemplateBlockDeviceMappingRequest{{DeviceName: aws.String("/dev/xvda"), Ebs: &ec2types.LaunchTemplateEbsBlockDeviceRequest{VolumeSize: aws.Int32(40), VolumeType: ec2types.VolumeTypeGp3}}},
		TagSpecifications: []ec2types.LaunchTemplateTagSpecificationRequest{{ResourceType: ec2types.ResourceTypeInstance,
			Tags: []ec2types.Tag{{Key: aws.String("team"), Value: aws.String("a")}, {Key: aws.String("cost"), Value: aws.String("1")}}}},
	}
	v, err := ec2c.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateId: aws.String(id), LaunchTemplateData: data, ClientToken: aws.String("v2")})
	if err != nil {
		t.Fatal(err)
	}
	if n := aws.ToInt64(v.LaunchTemplateVersion.VersionNumber); n != 2 || aws.ToBool(v.LaunchTemplateVersion.DefaultVersion) {
		t.Fatalf("version %d default %v", n, aws.ToBool(v.LaunchTemplateVersion.DefaultVersion))
	}
	if v2, err := ec2c.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateId: aws.String(id), LaunchTemplateData: data, ClientToken: aws.String("v2")}); err != nil ||
		aws.ToInt64(v2.LaunchTemplateVersion.VersionNumber) != 2 {
		t.Errorf("retried version: %v %v", v2, err)
	}
	d, err := ec2c.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateName: aws.String("lt-test"), Versions: []string{"$Latest"}})
	if err != nil || len(d.LaunchTemplateVersions) != 1 {
		t.Fatalf("describe: %v %v", d, err)
	}
	got := d.LaunchTemplateVersions[0].LaunchTemplateData
	if got.InstanceType != ec2types.InstanceTypeT3Large || aws.ToString(got.KeyName) != "ops" || aws.ToString(got.ImageId) != "ami-123" ||
		aws.ToInt32(got.BlockDeviceMappings[0].Ebs.VolumeSize) != 40 || len(got.TagSpecifications[0].Tags) != 2 ||
		aws.ToString(got.TagSpecifications[0].Tags[1].Key) != "cost" || aws.ToString(got.UserData) != aws.ToString(data.UserData) {
		t.Errorf("version data %+v", got)
	}
	if _, err := ec2c.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateId: aws.String(id), Versions: []string{"7"}}); apiCode(err) != "InvalidLaunchTemplateId.VersionNotFound" {
		t.Errorf("unknown version: %v", err)
	}
	if _, err := ec2c.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{LaunchTemplateId: aws.String(id),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{UserData: aws.String("not base64!")}}); apiCode(err) != "InvalidUserData.Malformed" {
		t.Errorf("bad user data: %v", err)
	}

	// EKS resolves a node group's launch template against EC2.
	if err := srv.ImportCluster(ekstest.ClusterSpec{Name: "c", Version: "1.31"}); err != nil {
		t.Fatal(err)
	}
	ng := func(lt *ekstypes.LaunchTemplateSpecification) error {
		_, err := eksc.CreateNodegroup(ctx, &eks.CreateNodegroupInput{ClusterName: aws.String("c"), NodegroupName: aws.String("ng"),
			NodeRole: aws.String("arn:aws:iam::1:role/n"), Subnets: []string{"subnet-1"}, LaunchTemplate: lt})
		return err
	}
	if err := ng(&ekstypes.LaunchTemplateSpecification{Id: aws.String("lt-0000000000000000")}); !isErr[*ekstypes.InvalidParameterException](err) {
		t.Errorf("unknown launch template: %v", err)
	}
	if err := ng(&ekstypes.LaunchTemplateSpecification{Id: aws.String(id), Version: aws.String("2")}); err != nil {
		t.Fatal(err)
	}
	dn, err := eksc.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String("c"), NodegroupName: aws.String("ng")})
	if err != nil {
		t.Fatal(err)
	}
	if l := dn.Nodegroup.LaunchTemplate; aws.ToString(l.Name) != "lt-test" || aws.ToString(l.Version) != "2" || dn.Nodegroup.DiskSize != nil || len(dn.Nodegroup.InstanceTypes) != 0 {
		t.Errorf("node group launch template %+v disk %v types %v", l, dn.Nodegroup.DiskSize, dn.Nodegroup.InstanceTypes)
	}

	del, err := ec2c.DeleteLaunchTemplateVersions(ctx, &ec2.DeleteLaunchTemplateVersionsInput{LaunchTemplateId: aws.String(id), Versions: []string{"1", "2", "9"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(del.SuccessfullyDeletedLaunchTemplateVersions) != 1 || aws.ToInt64(del.SuccessfullyDeletedLaunchTemplateVersions[0].VersionNumber) != 2 ||
		len(del.UnsuccessfullyDeletedLaunchTemplateVersions) != 2 ||
		del.UnsuccessfullyDeletedLaunchTemplateVersions[1].ResponseError.Code != ec2types.LaunchTemplateErrorCodeLaunchTemplateVersionDoesNotExist {
		t.Errorf("delete versions: %+v %+v", del.SuccessfullyDeletedLaunchTemplateVersions, del.UnsuccessfullyDeletedLaunchTemplateVersions)
	}
	if snap, ok := srv.LaunchTemplate(id); !ok || len(snap.Versions) != 1 || snap.Versions[1].UserData != "base" {
		t.Errorf("snapshot %+v", snap)
	}
	if _, err := ec2c.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateId: aws.String(id)}); err != nil {
		t.Fatal(err)
	}
	if _, err := ec2c.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateIds: []string{id}}); apiCode(err) != "InvalidLaunchTemplateId.NotFound" {
		t.Errorf("deleted template: %v", err)
	}
	if names := srv.LaunchTemplateNames(); len(names) != 0 {
		t.Errorf("templates left: %v", names)
	}
}

// FailNext works for query operations, in each service's error format;
// unknown actions are refused.
func TestQueryFailNext(t *testing.T) {
	srv, cfn, ec2c, _ := queryClients(t, ekstest.Options{}, 2)
	ctx := context.Background()
	srv.FailNext("DescribeStacks", "Throttling", 400, 5)
	_, err := cfn.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{})
	if apiCode(err) != "Throttling" || !strings.Contains(err.Error(), "Rate exceeded") {
		t.Errorf("throttled CloudFormation call: %v", err)
	}
	srv.FailNext("DescribeLaunchTemplates", "RequestLimitExceeded", 503, 1)
	if _, err := ec2c.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{}); err != nil {
		t.Errorf("one throttled EC2 call is retried by the SDK: %v", err)
	}
	srv.FailNext("CreateLaunchTemplate", "UnauthorizedOperation", 403, 1)
	_, err = ec2c.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("abc"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{KeyName: aws.String("k")}})
	if apiCode(err) != "UnauthorizedOperation" {
		t.Errorf("injected EC2 error: %v", err)
	}
	if calls := srv.Calls(); calls["DescribeStacks"] != 2 || calls["DescribeLaunchTemplates"] != 2 || calls["CreateLaunchTemplate"] != 1 {
		t.Errorf("calls %v", calls)
	}
	if _, err := cfn.ListStacks(ctx, &cloudformation.ListStacksInput{}); apiCode(err) != "InvalidAction" {
		t.Errorf("unknown action: %v", err)
	}
}
