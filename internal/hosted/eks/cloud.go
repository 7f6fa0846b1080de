package eks

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	ctrl "sigs.k8s.io/controller-runtime"

	eksv1 "github.com/clustersync/clustersync/api/eks/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/managed"
	"github.com/clustersync/clustersync/internal/hosted/management"
)

// cloudKey is EKS's Descriptor.Key.
const cloudKey = "eks"

// Traits are EKS's names and rules, and how a Cluster holds its config
// (spec.eksConfig) and status (status.eksStatus).
func Traits() management.Traits[eksv1.EKSClusterConfigSpec, *eksv1.EKSClusterConfig] {
	return management.Traits[eksv1.EKSClusterConfigSpec, *eksv1.EKSClusterConfig]{
		Traits: engine.Traits[eksv1.EKSClusterConfigSpec, *eksv1.EKSClusterConfig]{
			Name: mgmtv1.DriverEKS, Finalizer: Finalizer, Options: ManagedOptions(),
			New:      func() *eksv1.EKSClusterConfig { return &eksv1.EKSClusterConfig{} },
			Imported: func(spec eksv1.EKSClusterConfigSpec) bool { return spec.Imported },
			CreatedApplied: func(spec eksv1.EKSClusterConfigSpec) eksv1.EKSClusterConfigSpec {
				return *createdApplied(spec)
			},
			Order: OrderUpdates, CallGroup: callGroup, Vet: vet, Retryable: Retryable,
			// TagResource and UntagResource have set the tags once they
			// succeed; every other EKS call goes on after it returns.
			Immediate: func(group string) bool { return group == "tags" },
			// EKS reports some fields in a richer form than they are pushed
			// (a launch template by ID and name): an update EKS reports
			// Successful applied its change.
			VerifyLanded: false,
		},
		ConfigField: "eksConfig",
		Config:      func(c *mgmtv1.Cluster) *eksv1.EKSClusterConfigSpec { return c.Spec.EKSConfig },
		SetConfig:   func(c *mgmtv1.Cluster, config eksv1.EKSClusterConfigSpec) { c.Spec.EKSConfig = &config },
		Status:      status, CopyStatus: copyStatus, NodePools: nodePools,
	}
}

// Cloud is EKS's row in the table of clouds (internal/hosted/clouds).
// CloudOptions.Credentials, when set, is a TokenFunc for the clusters' API
// servers.
func Cloud() management.Descriptor {
	t := Traits()
	return management.Descriptor{
		Name: t.Name, Key: cloudKey, ConfigField: t.ConfigField, Product: "Amazon EKS",
		Endpoint: "send AWS calls to this URL instead of AWS (an emulator, e.g. from 'clustersync dev eks')",
		Credentials: "the AWS credentials come from the Secret each cluster's spec.eksConfig.amazonCredentialSecret names " +
			"(Rancher's keys amazonec2credentialConfig-accessKey and -secretKey)",
		PollWhat: "describes of an EKS cluster that is being created or updated",
		Kind:     eksv1.GroupVersion.WithKind("EKSClusterConfig"),
		Import: management.ImportForm{
			Title: "Import an Amazon EKS cluster",
			Inputs: []management.FormInput{
				{Name: "cloudName", Label: "EKS cluster name", Hint: "Its name in EKS (spec.eksConfig.displayName).", Fields: []string{"displayName"}},
				{Name: "region", Label: "Region", Placeholder: "us-west-2", Fields: []string{"region"}},
			},
			CredentialField: "amazonCredentialSecret", CredentialKeys: "amazonec2credentialConfig-accessKey and -secretKey",
			Config: func(c *mgmtv1.Cluster, v map[string]string, credential string) {
				c.Spec.EKSConfig = &eksv1.EKSClusterConfigSpec{DisplayName: v["cloudName"], Region: v["region"], AmazonCredentialSecret: credential, Imported: true}
			},
		},
		AddToScheme: eksv1.AddToScheme,
		Register:    register,
		View:        func(c *mgmtv1.Cluster) (management.View, bool) { return management.ViewOf(t, c) },
	}
}

// register adds the EKS management controller and operator to mgr, each
// with AWS clients of its own application ID.
func register(mgr ctrl.Manager, o management.CloudOptions) error {
	tokens, err := management.CredentialsAs[TokenFunc](o, mgmtv1.DriverEKS)
	if err != nil {
		return err
	}
	appID := func(id string) func(*aws.Config) { return func(c *aws.Config) { c.AppID = id } }
	m := &Management{Client: mgr.GetClient(), NewClients: NewClientsFactory(o.Endpoint, appID(management.AppID)), Tokens: tokens}
	p := &Provider{Client: mgr.GetClient(), NewClients: NewClientsFactory(o.Endpoint, appID(management.OperatorAppID(cloudKey)))}
	return management.Register(mgr, o, cloudKey, Traits(), m, p)
}

// ManagedOptions returns the managed-field options of EKSClusterConfigSpec:
// node groups are compared by nodegroupName, and the networking and role
// fields Rancher never takes from upstream (https://github.com/rancher/eks-operator)
// are never adopted.
func ManagedOptions() managed.Options {
	return managed.Options{
		KeyedLists: map[string]string{"nodeGroups": "nodegroupName"},
		NeverAdopt: []string{"subnets", "securityGroups", "serviceRole"},
	}
}

// Finalizer holds back the deletion of an EKSClusterConfig whose cluster
// clustersync created until the cluster and its node groups are gone.
const Finalizer = "eks.clustersync.io/cleanup"
