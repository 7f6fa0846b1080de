package eks

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/smithy-go"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
)

// The managed launch template (Rancher's eks-operator keeps one per
// cluster too): node groups without a launchTemplate of their own are
// launched from one EC2 launch template the operator creates, one version
// per node group, carrying the node group's diskSize, instanceType,
// ec2SshKey, userData, imageId and resourceTags. A change to those fields
// is a new version, rolled out with UpdateNodegroupVersion; replaced
// versions wait in status.templateVersionsToDelete until no node group
// uses them. Version 1, the template's default, is never used by a node
// group (a default version cannot be deleted).

// ManagedLaunchTemplateName is the name of the managed launch template of
// the cluster named displayName: "clustersync-managed-lt-<displayName>"
// (EC2 allows 128 characters, EKS cluster names have at most 100).
func ManagedLaunchTemplateName(displayName string) string {
	return "clustersync-managed-lt-" + displayName
}

// rootDevice is the root volume's device of the EKS-optimized AMIs; the
// node group's diskSize is its size.
const rootDevice = "/dev/xvda"

// templateFields are the node group fields kept in the managed launch
// template; nil is unset.
type templateFields struct {
	diskSize                                   *int64
	instanceType, ec2SshKey, userData, imageID *string
	// resourceTags are the tags of the instances the node group launches.
	resourceTags map[string]string
}

// isTemplateField reports whether a NodeGroup field (JSON name) lives in
// the managed launch template.
func isTemplateField(field string) bool {
	switch field {
	case "diskSize", "instanceType", "ec2SshKey", "userData", "imageId", "resourceTags":
		return true
	}
	return false
}

// over returns f with ng's non-nil template fields laid over it.
func (f templateFields) over(ng *eksv1.NodeGroup) templateFields {
	if ng.DiskSize != nil {
		f.diskSize = ng.DiskSize
	}
	if ng.InstanceType != nil {
		f.instanceType = ng.InstanceType
	}
	if ng.Ec2SshKey != nil {
		f.ec2SshKey = ng.Ec2SshKey
	}
	if ng.UserData != nil {
		f.userData = ng.UserData
	}
	if ng.ImageID != nil {
		f.imageID = ng.ImageID
	}
	if ng.ResourceTags != nil {
		f.resourceTags = *ng.ResourceTags
	}
	return f
}

// setOn writes f into the template fields of ng (upstream), an unset
// resource tag list as an empty map. Spot node groups take their instance
// types from the node group, so instanceType stays as EKS reports it.
func (f templateFields) setOn(ng *eksv1.NodeGroup) {
	ng.DiskSize, ng.Ec2SshKey, ng.UserData, ng.ImageID = f.diskSize, f.ec2SshKey, f.userData, f.imageID
	if !spot(ng) {
		ng.InstanceType = f.instanceType
	}
	ng.ResourceTags = ptr(maps.Clone(nonNilMap(f.resourceTags)))
}

func spot(ng *eksv1.NodeGroup) bool {
	return ng.RequestSpotInstances != nil && *ng.RequestSpotInstances
}

// request is the launch template data of f. Every version requires IMDSv2
// with a hop limit of 2 (AWS's recommendation for EKS nodes), so no version
// is empty. The instance type is left out for spot node groups, whose
// spotInstanceTypes go to CreateNodegroup. User data is sent base64
// encoded, as EC2 requires.
func (f templateFields) request(spotGroup bool) *ec2types.RequestLaunchTemplateData {
	d := &ec2types.RequestLaunchTemplateData{
		MetadataOptions: &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{
			HttpTokens: ec2types.LaunchTemplateHttpTokensStateRequired, HttpPutResponseHopLimit: aws.Int32(2),
		},
		ImageId: f.imageID, KeyName: f.ec2SshKey,
	}
	if f.diskSize != nil {
		d.BlockDeviceMappings = []ec2types.LaunchTemplateBlockDeviceMappingRequest{{
			DeviceName: aws.String(rootDevice),
			Ebs:        &ec2types.LaunchTemplateEbsBlockDeviceRequest{VolumeSize: aws.Int32(int32(*f.diskSize)), VolumeType: ec2types.VolumeTypeGp3},
		}}
	}
	if f.instanceType != nil && !spotGroup {
		d.InstanceType = ec2types.InstanceType(*f.instanceType)
	}
	if f.userData != nil && *f.userData != "" {
		d.UserData = aws.String(base64.StdEncoding.EncodeToString([]byte(*f.userData)))
	}
	if len(f.resourceTags) > 0 {
		ts := ec2types.LaunchTemplateTagSpecificationRequest{ResourceType: ec2types.ResourceTypeInstance}
		for _, k := range slices.Sorted(maps.Keys(f.resourceTags)) {
			ts.Tags = append(ts.Tags, ec2types.Tag{Key: aws.String(k), Value: aws.String(f.resourceTags[k])})
		}
		d.TagSpecifications = []ec2types.LaunchTemplateTagSpecificationRequest{ts}
	}
	return d
}

// fieldsOf reads the template fields back from a version's data: the
// root device's size, the instance tags, the decoded user data.
func fieldsOf(d *ec2types.ResponseLaunchTemplateData) templateFields {
	var f templateFields
	if d == nil {
		return f
	}
	f.imageID, f.ec2SshKey = d.ImageId, d.KeyName
	if d.InstanceType != "" {
		f.instanceType = ptr(string(d.InstanceType))
	}
	for _, bd := range d.BlockDeviceMappings {
		if aws.ToString(bd.DeviceName) == rootDevice && bd.Ebs != nil && bd.Ebs.VolumeSize != nil {
			f.diskSize = ptr(int64(*bd.Ebs.VolumeSize))
		}
	}
	if u := aws.ToString(d.UserData); u != "" {
		if b, err := base64.StdEncoding.DecodeString(u); err == nil {
			u = string(b)
		}
		f.userData = &u
	}
	for _, ts := range d.TagSpecifications {
		if ts.ResourceType == ec2types.ResourceTypeInstance {
			f.resourceTags = map[string]string{}
			for _, t := range ts.Tags {
				f.resourceTags[aws.ToString(t.Key)] = aws.ToString(t.Value)
			}
		}
	}
	return f
}

// equal compares the template fields as they are stored (an empty user
// data or tag list equals an unset one).
func (f templateFields) equal(g templateFields) bool {
	str := func(p *string) string { return aws.ToString(p) }
	i64 := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	return i64(f.diskSize) == i64(g.diskSize) && str(f.instanceType) == str(g.instanceType) && str(f.ec2SshKey) == str(g.ec2SshKey) &&
		str(f.userData) == str(g.userData) && str(f.imageID) == str(g.imageID) && maps.Equal(nonNilMap(f.resourceTags), nonNilMap(g.resourceTags))
}

func ec2Code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// managedTemplate returns the ID of the managed launch template, creating
// it (version 1, unused) and recording it in status.managedLaunchTemplateID
// when there is none. The client token and the owner tag make a repeated
// creation return or find the same template.
func (r *Provider) managedTemplate(ctx context.Context, cs *Clients, c *eksv1.EKSClusterConfig) (string, error) {
	if id := c.Status.ManagedLaunchTemplateID; id != "" {
		return id, nil
	}
	if cs.EC2 == nil {
		return "", errNoServices("the managed launch template (a node group has no launchTemplate)")
	}
	name := ManagedLaunchTemplateName(c.Spec.DisplayName)
	out, err := cs.EC2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		ClientToken:        aws.String(string(c.UID) + "-lt"),
		LaunchTemplateData: templateFields{}.request(false),
		VersionDescription: aws.String("default version; node groups use later versions"),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: []ec2types.Tag{
			{Key: aws.String(OwnerUIDTag), Value: aws.String(string(c.UID))},
			{Key: aws.String(OwnerTag), Value: aws.String(c.Namespace + "/" + c.Name)},
		}}},
	})
	var id string
	switch {
	case err == nil:
		id = aws.ToString(out.LaunchTemplate.LaunchTemplateId)
	case ec2Code(err) == "InvalidLaunchTemplateName.AlreadyExistsException":
		if id, err = r.ownedTemplateID(ctx, cs.EC2, c, name); err != nil {
			return "", err
		}
		if id == "" {
			return "", &notOwnedError{what: "launch template", name: name, field: "a launchTemplate on every node group"}
		}
	default:
		return "", fmt.Errorf("create launch template %s: %w", name, err)
	}
	c.Status.ManagedLaunchTemplateID = id
	if err := r.Client.Status().Update(ctx, c); err != nil {
		return "", err
	}
	return id, nil
}

// ownedTemplateID returns the ID of the launch template named name if it
// carries this config's owner tag, "" if it does not or does not exist.
func (r *Provider) ownedTemplateID(ctx context.Context, api EC2API, c *eksv1.EKSClusterConfig, name string) (string, error) {
	out, err := api.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}})
	if ec2Code(err) == "InvalidLaunchTemplateName.NotFoundException" {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("describe launch template %s: %w", name, err)
	}
	for _, lt := range out.LaunchTemplates {
		for _, t := range lt.Tags {
			if aws.ToString(t.Key) == OwnerUIDTag && aws.ToString(t.Value) == string(c.UID) {
				return aws.ToString(lt.LaunchTemplateId), nil
			}
		}
	}
	return "", nil
}

// templateVersion returns the managed template version node group ng
// should use: base (the fields of its current version, empty at creation)
// with ng's non-nil template fields laid over it. The version recorded in
// status.managedLaunchTemplateVersions is reused when its data matches;
// otherwise a new version is created, recorded, and the replaced one
// queued in status.templateVersionsToDelete. The client token is derived
// from the config, the node group, the data and the replaced version, so a
// retried call returns the same version.
func (r *Provider) templateVersion(ctx context.Context, cs *Clients, c *eksv1.EKSClusterConfig, ng *eksv1.NodeGroup, base templateFields) (*ekstypes.LaunchTemplateSpecification, error) {
	id, err := r.managedTemplate(ctx, cs, c)
	if err != nil {
		return nil, err
	}
	want := base.over(ng)
	cur := c.Status.ManagedLaunchTemplateVersions[ng.NodegroupName]
	if cur != "" {
		out, err := cs.EC2.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateId: aws.String(id), Versions: []string{cur}})
		switch {
		case ec2Code(err) == "InvalidLaunchTemplateId.VersionNotFound":
		case err != nil:
			return nil, fmt.Errorf("describe launch template %s version %s: %w", id, cur, err)
		case len(out.LaunchTemplateVersions) == 1 && fieldsOf(out.LaunchTemplateVersions[0].LaunchTemplateData).equal(want):
			return &ekstypes.LaunchTemplateSpecification{Id: aws.String(id), Version: aws.String(cur)}, nil
		}
	}
	data := want.request(spot(ng))
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%s\x00%+v", c.UID, ng.NodegroupName, cur, templateKey(data)))
	out, err := cs.EC2.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{
		LaunchTemplateId:   aws.String(id),
		LaunchTemplateData: data,
		ClientToken:        aws.String(hex.EncodeToString(sum[:])[:64]),
		VersionDescription: aws.String("node group " + ng.NodegroupName),
	})
	if err != nil {
		return nil, fmt.Errorf("create launch template %s version for node group %s: %w", id, ng.NodegroupName, err)
	}
	version := strconv.FormatInt(aws.ToInt64(out.LaunchTemplateVersion.VersionNumber), 10)
	if cur != "" && cur != version && !slices.Contains(c.Status.TemplateVersionsToDelete, cur) {
		c.Status.TemplateVersionsToDelete = append(c.Status.TemplateVersionsToDelete, cur)
	}
	if c.Status.ManagedLaunchTemplateVersions == nil {
		c.Status.ManagedLaunchTemplateVersions = map[string]string{}
	}
	c.Status.ManagedLaunchTemplateVersions[ng.NodegroupName] = version
	if err := r.Client.Status().Update(ctx, c); err != nil {
		return nil, err
	}
	return &ekstypes.LaunchTemplateSpecification{Id: aws.String(id), Version: aws.String(version)}, nil
}

// templateKey is a stable rendering of launch template data for the
// client token.
func templateKey(d *ec2types.RequestLaunchTemplateData) string {
	f := templateFields{imageID: d.ImageId, ec2SshKey: d.KeyName, userData: d.UserData}
	if d.InstanceType != "" {
		f.instanceType = ptr(string(d.InstanceType))
	}
	key := fmt.Sprintf("%s|%s|%s|%s|", aws.ToString(f.imageID), aws.ToString(f.ec2SshKey), aws.ToString(f.userData), aws.ToString(f.instanceType))
	for _, bd := range d.BlockDeviceMappings {
		key += fmt.Sprintf("%s=%d|", aws.ToString(bd.DeviceName), aws.ToInt32(bd.Ebs.VolumeSize))
	}
	for _, ts := range d.TagSpecifications {
		for _, t := range ts.Tags {
			key += aws.ToString(t.Key) + "=" + aws.ToString(t.Value) + ","
		}
	}
	return key
}

// templateUpstream fills in, for the node groups of up that EKS reports on
// the managed launch template, the fields kept in the template, read from
// their versions (one DescribeLaunchTemplateVersions call), and clears
// their launchTemplate: the managed template is the operator's, not the
// user's (as Rancher reports it).
func templateUpstream(ctx context.Context, api EC2API, templateID string, ngs []*ekstypes.Nodegroup, up *eksv1.EKSClusterConfigSpec) error {
	if templateID == "" || up.NodeGroups == nil {
		return nil
	}
	versions := map[string]string{}
	for _, ng := range ngs {
		if lt := ng.LaunchTemplate; lt != nil && aws.ToString(lt.Id) == templateID {
			versions[aws.ToString(ng.NodegroupName)] = aws.ToString(lt.Version)
		}
	}
	if len(versions) == 0 {
		return nil
	}
	if api == nil {
		return errNoServices("reading the managed launch template")
	}
	wanted := slices.Compact(slices.Sorted(maps.Values(versions)))
	out, err := api.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateId: aws.String(templateID), Versions: wanted})
	if err != nil {
		return fmt.Errorf("describe launch template %s versions %v: %w", templateID, wanted, err)
	}
	byVersion := map[string]templateFields{}
	for _, v := range out.LaunchTemplateVersions {
		byVersion[strconv.FormatInt(aws.ToInt64(v.VersionNumber), 10)] = fieldsOf(v.LaunchTemplateData)
	}
	for i := range *up.NodeGroups {
		ng := &(*up.NodeGroups)[i]
		if v, ok := versions[ng.NodegroupName]; ok {
			byVersion[v].setOn(ng)
			ng.LaunchTemplate = nil
		}
	}
	return nil
}

// cleanTemplateVersions deletes the versions in
// status.templateVersionsToDelete that no node group uses any more, and
// forgets those EC2 deleted or no longer has.
func (r *Provider) cleanTemplateVersions(ctx context.Context, cs *Clients, c *eksv1.EKSClusterConfig, ngs []*ekstypes.Nodegroup) error {
	id := c.Status.ManagedLaunchTemplateID
	if len(c.Status.TemplateVersionsToDelete) == 0 || id == "" || cs.EC2 == nil {
		return nil
	}
	inUse := map[string]bool{}
	for _, ng := range ngs {
		if lt := ng.LaunchTemplate; lt != nil && aws.ToString(lt.Id) == id {
			inUse[aws.ToString(lt.Version)] = true
		}
	}
	for _, v := range c.Status.ManagedLaunchTemplateVersions {
		inUse[v] = true
	}
	var unused []string
	for _, v := range c.Status.TemplateVersionsToDelete {
		if !inUse[v] {
			unused = append(unused, v)
		}
	}
	if len(unused) == 0 {
		return nil
	}
	out, err := cs.EC2.DeleteLaunchTemplateVersions(ctx, &ec2.DeleteLaunchTemplateVersionsInput{LaunchTemplateId: aws.String(id), Versions: unused})
	if err != nil {
		return fmt.Errorf("delete launch template %s versions %v: %w", id, unused, err)
	}
	gone := map[string]bool{}
	for _, d := range out.SuccessfullyDeletedLaunchTemplateVersions {
		gone[strconv.FormatInt(aws.ToInt64(d.VersionNumber), 10)] = true
	}
	for _, d := range out.UnsuccessfullyDeletedLaunchTemplateVersions {
		if d.ResponseError != nil && d.ResponseError.Code == ec2types.LaunchTemplateErrorCodeLaunchTemplateVersionDoesNotExist {
			gone[strconv.FormatInt(aws.ToInt64(d.VersionNumber), 10)] = true
		}
	}
	if len(gone) == 0 {
		return nil
	}
	c.Status.TemplateVersionsToDelete = slices.DeleteFunc(c.Status.TemplateVersionsToDelete, func(v string) bool { return gone[v] })
	return r.Client.Status().Update(ctx, c)
}
