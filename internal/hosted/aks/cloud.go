package aks

import (
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	ctrl "sigs.k8s.io/controller-runtime"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	mgmtv1 "github.com/clustersync/clustersync/api/management/v1alpha1"
	"github.com/clustersync/clustersync/internal/hosted/management"
)

// cloudKey is AKS's Descriptor.Key.
const cloudKey = "aks"

// Cloud is AKS's row in the table of clouds (internal/hosted/clouds).
// CloudOptions.Credentials, when set, is a CredentialFunc; with an
// Endpoint and none, the Secret's client secret is sent as the bearer
// token (SecretAsToken: an emulator accepts any).
func Cloud() management.Descriptor {
	return management.Descriptor{
		Name: mgmtv1.DriverAKS, Key: cloudKey, ConfigField: "aksConfig", Product: "Azure AKS",
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
		View:        func(c *mgmtv1.Cluster) (management.View, bool) { return management.ViewOf(&Management{}, c) },
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
	op := &Reconciler{Client: mgr.GetClient(), NewClients: NewClientsFactory(o.Endpoint, credential, appID(management.OperatorAppID(cloudKey))), Poll: o.Poll}
	return management.Register(mgr, o, cloudKey, m, op)
}
