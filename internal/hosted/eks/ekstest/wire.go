package ekstest

import (
	"strconv"
	"time"
)

// This file holds the JSON shapes of the EKS REST-JSON protocol: member
// names are lowerCamel as in the Smithy model and timestamps are epoch
// seconds (a JSON number).

// epoch marshals a time as EKS does: fractional epoch seconds.
type epoch time.Time

func (e epoch) MarshalJSON() ([]byte, error) {
	t := time.Time(e)
	return []byte(strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)), nil
}

func ep(t time.Time) *epoch {
	if t.IsZero() {
		return nil
	}
	e := epoch(t)
	return &e
}

type wireVpcRequest struct {
	SubnetIDs             []string `json:"subnetIds"`
	SecurityGroupIDs      []string `json:"securityGroupIds"`
	EndpointPublicAccess  *bool    `json:"endpointPublicAccess"`
	EndpointPrivateAccess *bool    `json:"endpointPrivateAccess"`
	PublicAccessCidrs     []string `json:"publicAccessCidrs"`
}

type wireVpcResponse struct {
	SubnetIDs              []string `json:"subnetIds"`
	SecurityGroupIDs       []string `json:"securityGroupIds"`
	ClusterSecurityGroupID string   `json:"clusterSecurityGroupId,omitempty"`
	VpcID                  string   `json:"vpcId,omitempty"`
	EndpointPublicAccess   bool     `json:"endpointPublicAccess"`
	EndpointPrivateAccess  bool     `json:"endpointPrivateAccess"`
	PublicAccessCidrs      []string `json:"publicAccessCidrs"`
}

type wireLogSetup struct {
	Types   []string `json:"types"`
	Enabled *bool    `json:"enabled,omitempty"`
}

type wireLogging struct {
	ClusterLogging []wireLogSetup `json:"clusterLogging"`
}

type wireKubeNetworkRequest struct {
	ServiceIpv4Cidr string `json:"serviceIpv4Cidr"`
	IPFamily        string `json:"ipFamily"`
}

type wireKubeNetworkResponse struct {
	ServiceIpv4Cidr string `json:"serviceIpv4Cidr,omitempty"`
	ServiceIpv6Cidr string `json:"serviceIpv6Cidr,omitempty"`
	IPFamily        string `json:"ipFamily"`
}

type wireCertificate struct {
	Data string `json:"data,omitempty"`
}

type wireOIDC struct {
	Issuer string `json:"issuer"`
}

type wireIdentity struct {
	OIDC wireOIDC `json:"oidc"`
}

type wireHealth struct {
	Issues []any `json:"issues"`
}

type wireCluster struct {
	Name                    string                  `json:"name"`
	Arn                     string                  `json:"arn"`
	CreatedAt               *epoch                  `json:"createdAt,omitempty"`
	Version                 string                  `json:"version"`
	Endpoint                string                  `json:"endpoint,omitempty"`
	RoleArn                 string                  `json:"roleArn"`
	ResourcesVpcConfig      wireVpcResponse         `json:"resourcesVpcConfig"`
	KubernetesNetworkConfig wireKubeNetworkResponse `json:"kubernetesNetworkConfig"`
	Logging                 wireLogging             `json:"logging"`
	Identity                *wireIdentity           `json:"identity,omitempty"`
	Status                  string                  `json:"status"`
	CertificateAuthority    *wireCertificate        `json:"certificateAuthority,omitempty"`
	ClientRequestToken      string                  `json:"clientRequestToken,omitempty"`
	PlatformVersion         string                  `json:"platformVersion"`
	Tags                    map[string]string       `json:"tags"`
	EncryptionConfig        []map[string]any        `json:"encryptionConfig,omitempty"`
	Health                  wireHealth              `json:"health"`
	AccessConfig            map[string]any          `json:"accessConfig,omitempty"`
	UpgradePolicy           map[string]string       `json:"upgradePolicy,omitempty"`
}

type wireUpdateParam struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

type wireUpdate struct {
	ID        string            `json:"id"`
	Status    string            `json:"status"`
	Type      string            `json:"type"`
	Params    []wireUpdateParam `json:"params"`
	CreatedAt *epoch            `json:"createdAt,omitempty"`
	Errors    []any             `json:"errors"`
}

type wireScaling struct {
	MinSize     *int32 `json:"minSize,omitempty"`
	MaxSize     *int32 `json:"maxSize,omitempty"`
	DesiredSize *int32 `json:"desiredSize,omitempty"`
}

type wireRemoteAccess struct {
	Ec2SSHKey            string   `json:"ec2SshKey,omitempty"`
	SourceSecurityGroups []string `json:"sourceSecurityGroups,omitempty"`
}

type wireLaunchTemplate struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
	ID      string `json:"id,omitempty"`
}

type wireASG struct {
	Name string `json:"name"`
}

type wireNodegroupResources struct {
	AutoScalingGroups         []wireASG `json:"autoScalingGroups"`
	RemoteAccessSecurityGroup string    `json:"remoteAccessSecurityGroup,omitempty"`
}

type wireTaint struct {
	Key    string `json:"key,omitempty"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect,omitempty"`
}

type wireNodegroup struct {
	NodegroupName  string                  `json:"nodegroupName"`
	NodegroupArn   string                  `json:"nodegroupArn"`
	ClusterName    string                  `json:"clusterName"`
	Version        string                  `json:"version"`
	ReleaseVersion string                  `json:"releaseVersion"`
	CreatedAt      *epoch                  `json:"createdAt,omitempty"`
	ModifiedAt     *epoch                  `json:"modifiedAt,omitempty"`
	Status         string                  `json:"status"`
	CapacityType   string                  `json:"capacityType"`
	ScalingConfig  wireScaling             `json:"scalingConfig"`
	InstanceTypes  []string                `json:"instanceTypes,omitempty"`
	Subnets        []string                `json:"subnets"`
	RemoteAccess   *wireRemoteAccess       `json:"remoteAccess,omitempty"`
	AmiType        string                  `json:"amiType"`
	NodeRole       string                  `json:"nodeRole"`
	Labels         map[string]string       `json:"labels"`
	Taints         []wireTaint             `json:"taints,omitempty"`
	Resources      *wireNodegroupResources `json:"resources,omitempty"`
	DiskSize       *int32                  `json:"diskSize,omitempty"`
	Health         wireHealth              `json:"health"`
	UpdateConfig   map[string]int32        `json:"updateConfig,omitempty"`
	LaunchTemplate *wireLaunchTemplate     `json:"launchTemplate,omitempty"`
	Tags           map[string]string       `json:"tags"`
}

type wireAddon struct {
	AddonName             string            `json:"addonName"`
	ClusterName           string            `json:"clusterName"`
	Status                string            `json:"status"`
	AddonVersion          string            `json:"addonVersion"`
	Health                wireHealth        `json:"health"`
	AddonArn              string            `json:"addonArn"`
	CreatedAt             *epoch            `json:"createdAt,omitempty"`
	ModifiedAt            *epoch            `json:"modifiedAt,omitempty"`
	ServiceAccountRoleArn string            `json:"serviceAccountRoleArn,omitempty"`
	Tags                  map[string]string `json:"tags"`
	ConfigurationValues   string            `json:"configurationValues,omitempty"`
}

// Requests.

type createClusterRequest struct {
	Name                    string                  `json:"name"`
	Version                 string                  `json:"version"`
	RoleArn                 string                  `json:"roleArn"`
	ResourcesVpcConfig      *wireVpcRequest         `json:"resourcesVpcConfig"`
	KubernetesNetworkConfig *wireKubeNetworkRequest `json:"kubernetesNetworkConfig"`
	Logging                 *wireLogging            `json:"logging"`
	ClientRequestToken      string                  `json:"clientRequestToken"`
	Tags                    map[string]string       `json:"tags"`
	EncryptionConfig        []map[string]any        `json:"encryptionConfig"`
	AccessConfig            map[string]any          `json:"accessConfig"`
}

type updateClusterConfigRequest struct {
	ResourcesVpcConfig *wireVpcRequest `json:"resourcesVpcConfig"`
	Logging            *wireLogging    `json:"logging"`
	ClientRequestToken string          `json:"clientRequestToken"`
}

type updateClusterVersionRequest struct {
	Version            string `json:"version"`
	ClientRequestToken string `json:"clientRequestToken"`
	Force              bool   `json:"force"`
}

type createNodegroupRequest struct {
	NodegroupName      string              `json:"nodegroupName"`
	ScalingConfig      *wireScaling        `json:"scalingConfig"`
	DiskSize           *int32              `json:"diskSize"`
	Subnets            []string            `json:"subnets"`
	InstanceTypes      []string            `json:"instanceTypes"`
	AmiType            string              `json:"amiType"`
	RemoteAccess       *wireRemoteAccess   `json:"remoteAccess"`
	NodeRole           string              `json:"nodeRole"`
	Labels             map[string]string   `json:"labels"`
	Taints             []wireTaint         `json:"taints"`
	Tags               map[string]string   `json:"tags"`
	ClientRequestToken string              `json:"clientRequestToken"`
	LaunchTemplate     *wireLaunchTemplate `json:"launchTemplate"`
	CapacityType       string              `json:"capacityType"`
	Version            string              `json:"version"`
	ReleaseVersion     string              `json:"releaseVersion"`
}

type updateLabels struct {
	AddOrUpdateLabels map[string]string `json:"addOrUpdateLabels"`
	RemoveLabels      []string          `json:"removeLabels"`
}

type updateNodegroupConfigRequest struct {
	Labels             *updateLabels `json:"labels"`
	ScalingConfig      *wireScaling  `json:"scalingConfig"`
	ClientRequestToken string        `json:"clientRequestToken"`
}

type updateNodegroupVersionRequest struct {
	Version            string              `json:"version"`
	ReleaseVersion     string              `json:"releaseVersion"`
	LaunchTemplate     *wireLaunchTemplate `json:"launchTemplate"`
	Force              bool                `json:"force"`
	ClientRequestToken string              `json:"clientRequestToken"`
}

type createAddonRequest struct {
	AddonName             string            `json:"addonName"`
	AddonVersion          string            `json:"addonVersion"`
	ServiceAccountRoleArn string            `json:"serviceAccountRoleArn"`
	ResolveConflicts      string            `json:"resolveConflicts"`
	ClientRequestToken    string            `json:"clientRequestToken"`
	Tags                  map[string]string `json:"tags"`
	ConfigurationValues   string            `json:"configurationValues"`
}

type tagResourceRequest struct {
	Tags map[string]string `json:"tags"`
}
