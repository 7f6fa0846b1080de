package aks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	"github.com/clustersync/clustersync/internal/hosted/access"
)

// Keys of the credential Secret, as Rancher names them
// (https://github.com/rancher/aks-operator, pkg/aks/client.go).
const (
	ClientIDField       = "azurecredentialConfig-clientId"
	ClientSecretField   = "azurecredentialConfig-clientSecret"
	SubscriptionIDField = "azurecredentialConfig-subscriptionId"
	TenantIDField       = "azurecredentialConfig-tenantId"
	EnvironmentField    = "azurecredentialConfig-environment"
)

// Clients are the Azure Resource Manager clients of one subscription.
type Clients struct {
	// SubscriptionID is the subscription they act in.
	SubscriptionID string
	// ManagedClusters and AgentPools are armcontainerservice's
	// (api-version 2025-02-01).
	ManagedClusters *armcontainerservice.ManagedClustersClient
	AgentPools      *armcontainerservice.AgentPoolsClient
	// ResourceGroups is armresources'.
	ResourceGroups *armresources.ResourceGroupsClient
}

// ClientsFactory makes the clients from the credential Secret's data.
type ClientsFactory func(ctx context.Context, secret map[string][]byte) (*Clients, error)

// CredentialFunc returns the Azure AD credential of the credential
// Secret's data for the cloud configuration cfg.
type CredentialFunc func(secret map[string][]byte, cfg cloud.Configuration) (azcore.TokenCredential, error)

// ClientSecretCredential is the credential of Rancher's Secret: a service
// principal's client secret (azidentity), in the Secret's environment.
// Errors name the missing keys.
func ClientSecretCredential(secret map[string][]byte, cfg cloud.Configuration) (azcore.TokenCredential, error) {
	var missing []string
	for _, k := range []string{TenantIDField, ClientIDField, ClientSecretField} {
		if len(secret[k]) == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("credential secret: keys %s are required", strings.Join(missing, ", "))
	}
	return azidentity.NewClientSecretCredential(string(secret[TenantIDField]), string(secret[ClientIDField]), string(secret[ClientSecretField]),
		&azidentity.ClientSecretCredentialOptions{ClientOptions: azcore.ClientOptions{Cloud: cfg}})
}

// SecretAsToken is the credential for an emulator (`clustersync dev aks`,
// which accepts any bearer token): the Secret's client secret is sent as
// the token, and Azure AD is never asked. Never use it with Azure.
func SecretAsToken(secret map[string][]byte, _ cloud.Configuration) (azcore.TokenCredential, error) {
	return staticToken(secret[ClientSecretField]), nil
}

// staticToken is a bearer token that does not expire.
type staticToken string

// GetToken implements azcore.TokenCredential.
func (t staticToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: string(t), ExpiresOn: time.Now().Add(24 * time.Hour)}, nil
}

// Environment returns the cloud configuration of the Secret's
// environment key: AzurePublicCloud (the default when empty),
// AzureChinaCloud or AzureUSGovernment.
func Environment(secret map[string][]byte) (cloud.Configuration, error) {
	switch env := string(secret[EnvironmentField]); env {
	case "", "AzurePublicCloud":
		return cloud.AzurePublic, nil
	case "AzureChinaCloud":
		return cloud.AzureChina, nil
	case "AzureUSGovernment", "AzureUSGovernmentCloud":
		return cloud.AzureGovernment, nil
	default:
		return cloud.Configuration{}, fmt.Errorf("credential secret: %s %q: want AzurePublicCloud, AzureChinaCloud or AzureUSGovernment", EnvironmentField, env)
	}
}

// NewClientsFactory returns a ClientsFactory building the SDK's clients
// for the Secret's subscription. endpoint "" means the Resource Manager of
// the Secret's environment; otherwise every call goes to that base URL
// (an emulator such as `clustersync dev aks`; plain HTTP is allowed).
// credential nil means ClientSecretCredential. configure, if given,
// adjusts the SDK's client options (e.g. Telemetry.ApplicationID, sent in
// every request's User-Agent). The clients use the SDK's own retry policy
// and pollers.
func NewClientsFactory(endpoint string, credential CredentialFunc, configure ...func(*arm.ClientOptions)) ClientsFactory {
	if credential == nil {
		credential = ClientSecretCredential
	}
	return func(_ context.Context, secret map[string][]byte) (*Clients, error) {
		sub := string(secret[SubscriptionIDField])
		if sub == "" {
			return nil, fmt.Errorf("credential secret: key %s is required", SubscriptionIDField)
		}
		cfg, err := Environment(secret)
		if err != nil {
			return nil, err
		}
		opts := &arm.ClientOptions{}
		if endpoint != "" {
			cfg = cloud.Configuration{ActiveDirectoryAuthorityHost: cfg.ActiveDirectoryAuthorityHost, Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
				cloud.ResourceManager: {Endpoint: endpoint, Audience: "https://management.core.windows.net/"}}}
			opts.InsecureAllowCredentialWithHTTP = strings.HasPrefix(endpoint, "http://")
			opts.DisableRPRegistration = true
		}
		opts.ClientOptions = policy.ClientOptions{Cloud: cfg, InsecureAllowCredentialWithHTTP: opts.InsecureAllowCredentialWithHTTP}
		for _, c := range configure {
			c(opts)
		}
		cred, err := credential(secret, cfg)
		if err != nil {
			return nil, err
		}
		cs, err := armcontainerservice.NewClientFactory(sub, cred, opts)
		if err != nil {
			return nil, err
		}
		rg, err := armresources.NewResourceGroupsClient(sub, cred, opts)
		if err != nil {
			return nil, err
		}
		return &Clients{SubscriptionID: sub, ManagedClusters: cs.NewManagedClustersClient(), AgentPools: cs.NewAgentPoolsClient(), ResourceGroups: rg}, nil
	}
}

// ParseCredentialRef reads spec.azureCredentialSecret, "namespace:name".
func ParseCredentialRef(ref string) (types.NamespacedName, error) {
	return access.CredentialRef("spec.azureCredentialSecret", ref)
}

// LoadClients reads the credential Secret spec.azureCredentialSecret names
// with k and makes the clients with newClients. Errors name the field or
// the Secret.
func LoadClients(ctx context.Context, k client.Reader, newClients ClientsFactory, spec aksv1.AKSClusterConfigSpec) (*Clients, error) {
	if newClients == nil {
		return nil, errors.New("no Azure clients: the reconciler's NewClients is not set (aks.NewClientsFactory)")
	}
	ref, data, err := access.LoadCredential(ctx, k, "spec.azureCredentialSecret", spec.AzureCredentialSecret)
	if err != nil {
		return nil, err
	}
	cs, err := newClients(ctx, data)
	if err != nil {
		return nil, fmt.Errorf("credential secret %s: %w", ref, err)
	}
	return cs, nil
}
