package aks

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	aksv1 "github.com/clustersync/clustersync/api/aks/v1"
	"github.com/clustersync/clustersync/internal/hosted/engine"
)

// Provider is the AKS operator's calls (engine.Provider): the engine
// (internal/hosted/engine) drives AKSClusterConfig objects with it and
// Traits, as Rancher's aks-operator does: "" (the resource group when
// missing, then one create PUT of the cluster with its pools) → creating
// → active (AKS reports Succeeded; the CA Secret is written), then one
// call per pass — tags (PATCH), the cluster's own fields (one full PUT
// built from this pass's GET, sent with If-Match), a pool created,
// changed or removed (agent-pool PUT or DELETE) — and on deletion the
// cluster, then the resource group if clustersync created it. Existing
// clusters are imported without any write. Every non-final provisioning
// state is waited for, whoever started the operation.
type Provider struct {
	// Client reads and writes the AKSClusterConfig objects and Secrets.
	Client client.Client
	// NewClients makes the Azure clients from the credential Secret
	// (NewClientsFactory); required.
	NewClients ClientsFactory
}

var _ engine.Provider[aksv1.AKSClusterConfigSpec, *aksv1.AKSClusterConfig] = (*Provider)(nil)

// Open builds the Azure clients from the credential Secret.
func (p *Provider) Open(ctx context.Context, c *aksv1.AKSClusterConfig) (engine.Session[aksv1.AKSClusterConfigSpec], error) {
	cs, err := LoadClients(ctx, p.Client, p.NewClients, c.Spec)
	if err != nil {
		return nil, err
	}
	return &conn{r: p, cs: cs, c: c}, nil
}

// Retryable reports whether an Azure error is transient: throttling and
// server errors (the SDK's own retries gave up), 409 while another
// operation runs (OperationNotAllowed, "in progress"), 412 (the resource
// changed since this pass read it: the next pass reads it again and
// decides anew) and broken connections.
func Retryable(err error) bool {
	if err == nil {
		return false
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		switch {
		case re.StatusCode == http.StatusTooManyRequests, re.StatusCode >= 500, re.StatusCode == http.StatusPreconditionFailed:
			return true
		case re.StatusCode == http.StatusConflict:
			return true // another operation is in progress
		}
		return false
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// notFound reports whether err is Azure's 404.
func notFound(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusNotFound
}

// conn is one AKSClusterConfig's connection to Azure for one pass
// (engine.Session).
type conn struct {
	r  *Provider
	cs *Clients
	c  *aksv1.AKSClusterConfig
	// mc is the cluster as the last GET of this pass found it.
	mc *armcontainerservice.ManagedCluster
}

func (s *conn) get(ctx context.Context) (*armcontainerservice.ManagedCluster, error) {
	out, err := s.cs.ManagedClusters.Get(ctx, s.c.Spec.ResourceGroup, s.c.Spec.ClusterName, nil)
	if err != nil {
		return nil, err
	}
	s.mc = &out.ManagedCluster
	return s.mc, nil
}

// Create makes the resource group when it is missing (and records that
// clustersync made it) and sends one create PUT with If-None-Match "*",
// so that a cluster someone else created meanwhile is never overwritten.
// It is not waited for here (Provision).
func (s *conn) Create(ctx context.Context, claim func(context.Context) error) (bool, error) {
	c := s.c
	_, err := s.get(ctx)
	switch {
	case err == nil && c.Status.CreateRequested:
		return true, nil // created by an earlier pass whose status write was lost
	case err == nil:
		return false, engine.Fail(fmt.Errorf("an AKS cluster named %s already exists in resource group %s; set imported: true to manage it",
			c.Spec.ClusterName, c.Spec.ResourceGroup))
	case !notFound(err):
		return false, fmt.Errorf("get cluster %s: %w", c.Spec.ClusterName, err)
	}
	if err := ValidateCreate(c.Spec); err != nil {
		return false, engine.Fail(err)
	}
	if err := claim(ctx); err != nil {
		return false, err
	}
	exists, err := s.cs.ResourceGroups.CheckExistence(ctx, c.Spec.ResourceGroup, nil)
	if err != nil {
		return false, engine.Fail(fmt.Errorf("resource group %s: %w", c.Spec.ResourceGroup, err))
	}
	if !exists.Success {
		if _, err := s.cs.ResourceGroups.CreateOrUpdate(ctx, c.Spec.ResourceGroup, armresources.ResourceGroup{Location: to.Ptr(c.Spec.ResourceLocation)}, nil); err != nil {
			return false, engine.Fail(fmt.Errorf("create resource group %s: %w", c.Spec.ResourceGroup, err))
		}
		c.Status.CreatedResourceGroup = true
	}
	// Written before the PUT: a cluster found under this name later is then
	// known to be this object's.
	c.Status.CreateRequested = true
	if err := s.r.Client.Status().Update(ctx, c); err != nil {
		return false, err
	}
	secret, err := s.servicePrincipal(ctx)
	if err != nil {
		return false, engine.Fail(err)
	}
	body := createCluster(s.cs.SubscriptionID, c.Spec, secret)
	if _, err := s.cs.ManagedClusters.BeginCreateOrUpdate(ctx, c.Spec.ResourceGroup, c.Spec.ClusterName, body,
		&armcontainerservice.ManagedClustersClientBeginCreateOrUpdateOptions{IfNoneMatch: to.Ptr("*")}); err != nil {
		var re *azcore.ResponseError
		if errors.As(err, &re) {
			// Azure answered: nothing was created (a 412 means someone else's
			// cluster took the name meanwhile), so the name is not this
			// object's.
			c.Status.CreateRequested = false
			if uerr := s.r.Client.Status().Update(ctx, c); uerr != nil {
				return false, uerr
			}
		}
		return false, engine.Fail(fmt.Errorf("create cluster: %w", err))
	}
	return true, nil
}

// servicePrincipal is the credential Secret's service principal, sent
// only when the cluster is created without a managed identity.
func (s *conn) servicePrincipal(ctx context.Context) (*armcontainerservice.ManagedClusterServicePrincipalProfile, error) {
	if s.c.Spec.ManagedIdentity == nil || *s.c.Spec.ManagedIdentity {
		return nil, nil
	}
	ref, err := ParseCredentialRef(s.c.Spec.AzureCredentialSecret)
	if err != nil {
		return nil, err
	}
	var sec corev1.Secret
	if err := s.r.Client.Get(ctx, ref, &sec); err != nil {
		return nil, fmt.Errorf("credential secret %s: %w", ref, err)
	}
	return &armcontainerservice.ManagedClusterServicePrincipalProfile{ClientID: to.Ptr(string(sec.Data[ClientIDField])), Secret: to.Ptr(string(sec.Data[ClientSecretField]))}, nil
}

// Provision waits for AKS to report the cluster Succeeded, then writes the
// CA Secret.
func (s *conn) Provision(ctx context.Context) (bool, error) {
	mc, err := s.get(ctx)
	if err != nil {
		return false, fmt.Errorf("get cluster %s: %w", s.c.Spec.ClusterName, err)
	}
	switch state := ptr.Deref(mc.Properties.ProvisioningState, ""); {
	case strings.EqualFold(state, "Failed"), strings.EqualFold(state, "Canceled"):
		return false, engine.Fail(fmt.Errorf("AKS reports the cluster %s", state))
	case !strings.EqualFold(state, "Succeeded"):
		return false, nil
	}
	return true, s.becomeActive(ctx, mc)
}

// Import connects an existing cluster without changing it: it waits until
// no operation runs on it, then records how to reach it.
func (s *conn) Import(ctx context.Context) (bool, error) {
	c := s.c
	mc, err := s.get(ctx)
	switch {
	case notFound(err):
		return false, engine.Fail(fmt.Errorf("spec.clusterName: no AKS cluster named %s in resource group %s to import", c.Spec.ClusterName, c.Spec.ResourceGroup))
	case err != nil:
		return false, fmt.Errorf("get cluster %s: %w", c.Spec.ClusterName, err)
	}
	if busy, _ := Busy(mc); busy {
		return false, nil
	}
	return true, s.becomeActive(ctx, mc)
}

// becomeActive writes the CA Secret of a ready cluster and records RBAC.
func (s *conn) becomeActive(ctx context.Context, mc *armcontainerservice.ManagedCluster) error {
	endpoint, ca, err := adminAccess(ctx, s.cs, s.c.Spec)
	if err != nil {
		return err
	}
	s.c.Status.RBACEnabled = mc.Properties.EnableRBAC
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: s.c.Name, Namespace: s.c.Namespace}}
	_, err = controllerutil.CreateOrUpdate(ctx, s.r.Client, sec, func() error {
		sec.StringData = nil
		sec.Data = map[string][]byte{"endpoint": []byte(endpoint), "ca": []byte(base64.StdEncoding.EncodeToString(ca))}
		return controllerutil.SetControllerReference(s.c, sec, s.r.Client.Scheme())
	})
	if err != nil {
		return fmt.Errorf("CA secret %s/%s: %w", s.c.Namespace, s.c.Name, err)
	}
	return nil
}

// adminAccess returns the API server URL and CA (PEM) of the cluster, from
// its administrator kubeconfig (listClusterAdminCredential).
func adminAccess(ctx context.Context, cs *Clients, spec aksv1.AKSClusterConfigSpec) (endpoint string, ca []byte, err error) {
	cfg, err := adminKubeconfig(ctx, cs, spec)
	if err != nil {
		return "", nil, err
	}
	return cfg.Host, cfg.CAData, nil
}

// Delete deletes the managed cluster (waiting while another operation
// runs on it) if Azure accepted this object's create call
// (status.createRequested), never a cluster of the same name someone else
// made; then the resource group if clustersync created it and it holds no
// managed cluster.
func (s *conn) Delete(ctx context.Context) (bool, error) {
	c := s.c
	mc, err := s.get(ctx)
	switch {
	case !c.Status.CreateRequested:
	case notFound(err):
	case err != nil:
		return false, fmt.Errorf("get cluster %s: %w", c.Spec.ClusterName, err)
	default:
		if busy, _ := Busy(mc); busy {
			return false, nil // deleting already, or another operation runs
		}
		if _, err := s.cs.ManagedClusters.BeginDelete(ctx, c.Spec.ResourceGroup, c.Spec.ClusterName, nil); err != nil {
			return false, engine.Fail(fmt.Errorf("delete cluster %s: %w", c.Spec.ClusterName, err))
		}
		return false, nil
	}
	if !c.Status.CreatedResourceGroup {
		return true, nil
	}
	exists, err := s.cs.ResourceGroups.CheckExistence(ctx, c.Spec.ResourceGroup, nil)
	if err != nil {
		return false, fmt.Errorf("resource group %s: %w", c.Spec.ResourceGroup, err)
	}
	if !exists.Success {
		return true, nil
	}
	pager := s.cs.ManagedClusters.NewListByResourceGroupPager(c.Spec.ResourceGroup, nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return false, fmt.Errorf("clusters of resource group %s: %w", c.Spec.ResourceGroup, err)
		}
		if len(page.Value) > 0 {
			return true, nil // someone else's cluster is in it: the group stays
		}
	}
	if _, err := s.cs.ResourceGroups.BeginDelete(ctx, c.Spec.ResourceGroup, nil); err != nil && !notFound(err) {
		return false, engine.Fail(fmt.Errorf("delete resource group %s: %w", c.Spec.ResourceGroup, err))
	}
	return false, nil
}

// adminKubeconfig returns the cluster's administrator kubeconfig
// (listClusterAdminCredential) as a client configuration.
func adminKubeconfig(ctx context.Context, cs *Clients, spec aksv1.AKSClusterConfigSpec) (*rest.Config, error) {
	out, err := cs.ManagedClusters.ListClusterAdminCredentials(ctx, spec.ResourceGroup, spec.ClusterName, nil)
	if err != nil {
		return nil, fmt.Errorf("list admin credentials of %s: %w", spec.ClusterName, err)
	}
	if len(out.Kubeconfigs) == 0 || out.Kubeconfigs[0] == nil {
		return nil, fmt.Errorf("list admin credentials of %s: AKS returned no kubeconfig", spec.ClusterName)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(out.Kubeconfigs[0].Value)
	if err != nil {
		return nil, fmt.Errorf("admin kubeconfig of %s: %w", spec.ClusterName, err)
	}
	return cfg, nil
}
