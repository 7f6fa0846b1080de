package aks

import (
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	ctrl "sigs.k8s.io/controller-runtime"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
	"github.com/clustersync/clustersync/internal/hosted/managed"
	"github.com/clustersync/clustersync/internal/hosted/management"
)

// cloudKey is AKS's Descriptor.Key.
const cloudKey = "aks"

// Traits are AKS's names and rules, and how a Cluster holds its config
// (spec.aksConfig) and status (status.aksStatus).
func Traits() management.Traits[aksv1.AKSClusterConfigSpec, *aksv1.AKSClusterConfig] {
	return management.Traits[aksv1.AKSClusterConfigSpec, *aksv1.AKSClusterConfig]{
		Traits: engine.Traits[aksv1.AKSClusterConfigSpec, *aksv1.AKSClusterConfig]{
			Name: mgmtv1.DriverAKS, Finalizer: Finalizer, Options: ManagedOptions(),
			New:      func() *aksv1.AKSClusterConfig { return &aksv1.AKSClusterConfig{} },
			Imported: func(spec aksv1.AKSClusterConfigSpec) bool { return spec.Imported },
			// The create call carries every non-nil field, pools included.
			CreatedApplied: func(spec aksv1.AKSClusterConfigSpec) aksv1.AKSClusterConfigSpec { return spec },
			Order:          OrderUpdates, CallGroup: callGroup, Vet: vet, Retryable: Retryable,
			// A PUT that succeeds may still leave a field as it was: a push
			// counts once upstream shows it.
			VerifyLanded: true,
		},
		ConfigField: "aksConfig",
		Config:      func(c *mgmtv1.Cluster) *aksv1.AKSClusterConfigSpec { return c.Spec.AKSConfig },
		SetConfig:   func(c *mgmtv1.Cluster, config aksv1.AKSClusterConfigSpec) { c.Spec.AKSConfig = &config },
		Status:      status, CopyStatus: copyStatus, NodePools: nodePools,
	}
}

// Cloud is AKS's row in the table of clouds (internal/hosted/clouds).
// CloudOptions.Credentials, when set, is a CredentialFunc; with an
// Endpoint and none, the Secret's client secret is sent as the bearer
// token (SecretAsToken: an emulator accepts any).
func Cloud() management.Descriptor {
	t := Traits()
	return management.Descriptor{
		Name: t.Name, Key: cloudKey, ConfigField: t.ConfigField, Product: "Azure AKS",
		Endpoint: "send Azure Resource Manager calls to this URL instead of Azure (an emulator, e.g. from 'clustersync dev aks'); Azure AD is not asked",
		Credentials: "the service principal comes from the Secret each cluster's spec.aksConfig.azureCredentialSecret names " +
			"(Rancher's keys azurecredentialConfig-clientId, -clientSecret, -subscriptionId, -tenantId, -environment)",
		PollWhat: "reads of an AKS cluster Azure is changing",
		Kind:     aksv1.GroupVersion.WithKind("AKSClusterConfig"),
		Import: management.ImportForm{
			Title: "Import an Azure AKS cluster",
			Inputs: []management.FormInput{
				{Name: "cloudName", Label: "AKS cluster name", Hint: "Its name in Azure (spec.aksConfig.clusterName).", Fields: []string{"clusterName"}},
				{Name: "resourceGroup", Label: "Resource group", Fields: []string{"resourceGroup"}},
				{Name: "location", Label: "Location", Placeholder: "eastus", Fields: []string{"resourceLocation"}},
			},
			CredentialField: "azureCredentialSecret", CredentialKeys: "azurecredentialConfig-clientId, -clientSecret, -subscriptionId and -tenantId",
			Config: func(c *mgmtv1.Cluster, v map[string]string, credential string) {
				c.Spec.AKSConfig = &aksv1.AKSClusterConfigSpec{ClusterName: v["cloudName"], ResourceGroup: v["resourceGroup"],
					ResourceLocation: v["location"], AzureCredentialSecret: credential, Imported: true}
			},
		},
		AddToScheme: aksv1.AddToScheme,
		Register:    register,
		View:        func(c *mgmtv1.Cluster) (management.View, bool) { return management.ViewOf(t, c) },
	}
}

// register adds the AKS management controller and operator to mgr, each
// sending its own application ID.
func register(mgr ctrl.Manager, o management.CloudOptions) error {
	credential, err := management.CredentialsAs[CredentialFunc](o, mgmtv1.DriverAKS)
	if err != nil {
		return err
	}
	if credential == nil && o.Endpoint != "" {
		credential = SecretAsToken
	}
	appID := func(id string) func(*arm.ClientOptions) {
		return func(c *arm.ClientOptions) { c.Telemetry.ApplicationID = id }
	}
	m := &Management{Client: mgr.GetClient(), NewClients: NewClientsFactory(o.Endpoint, credential, appID(management.AppID))}
	p := &Provider{Client: mgr.GetClient(), NewClients: NewClientsFactory(o.Endpoint, credential, appID(management.OperatorAppID(cloudKey)))}
	return management.Register(mgr, o, cloudKey, Traits(), m, p)
}

// Finalizer holds back the deletion of an AKSClusterConfig whose cluster
// clustersync created until the cluster (and the resource group, if
// clustersync created it) is gone.
const Finalizer = "aks.clustersync.io/cleanup"

// ManagedOptions returns the managed-field options of
// AKSClusterConfigSpec: pools are compared by name.
func ManagedOptions() managed.Options {
	return managed.Options{KeyedLists: map[string]string{"nodePools": "name"}}
}
