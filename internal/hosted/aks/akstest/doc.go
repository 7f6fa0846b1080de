// Package akstest is an in-process emulator of the Azure Resource Manager
// (ARM) REST API for Azure Kubernetes Service, for testing clustersync's
// AKS operator with the real Azure SDK for Go (armcontainerservice v6,
// api-version 2025-02-01, and armresources for resource groups): start it
// with New, and point the SDK's cloud.ResourceManager endpoint at
// Server.URL (arm.ClientOptions with InsecureAllowCredentialWithHTTP and
// DisableRPRegistration; any azcore.TokenCredential will do). It is the
// AKS twin of ekstest and is written with the standard library only.
//
// Served, under /subscriptions/{subscriptionId} (segment names match
// case-insensitively, as in ARM; resource-group and resource names too):
// resource groups (HEAD 204/404, GET, list, PUT 201/200, DELETE 202 with a
// Location header to poll); managed clusters under
// resourceGroups/{rg}/providers/Microsoft.ContainerService/managedClusters
// (GET, list by resource group and by subscription, PUT 201/200, PATCH
// updateTags 200, DELETE 202 or 204 when absent,
// POST listClusterAdminCredential and listClusterUserCredential); agent
// pools under managedClusters/{name}/agentPools (GET, list, PUT 201/200,
// DELETE 202/204); and the polling URLs of long-running operations. Every
// request needs the api-version query (any value; 400
// MissingApiVersionParameter otherwise) and an "Authorization: Bearer ..."
// header with any token (401 AuthenticationFailed otherwise). Errors are
// answered as ARM does, {"error":{"code":...,"message":...}} with the HTTP
// status, so the SDK returns an *azcore.ResponseError with StatusCode and
// ErrorCode.
//
// Resources are JSON as the SDK models them (ManagedCluster, AgentPool).
// A cluster is stored as the PUT body merged with what the server computes:
// ids, eTag, provisioningState, powerState {code: Running},
// currentKubernetesVersion (kubernetesVersion with patch LatestPatch when
// none is given), fqdn "<dnsPrefix>-<8 hex>.hcp.<location>.azmk8s.io",
// azurePortalFQDN, privateFQDN for private clusters, nodeResourceGroup
// "MC_<rg>_<name>_<location>", and defaults: kubernetesVersion
// DefaultKubernetesVersion, dnsPrefix "<name>-<rg>-<subscription[:6]>",
// enableRBAC true, sku Base/Free, networkProfile networkPlugin "kubenet"
// (podCidr 10.244.0.0/16), serviceCidr 10.0.0.0/16, dnsServiceIP
// 10.0.0.10, outboundType "loadBalancer", loadBalancerSku "standard";
// identity SystemAssigned gets a principalId and tenantId, and
// servicePrincipalProfile {clientId: msi}; a servicePrincipalProfile secret
// is never returned. Agent pools default to count 1 (minCount when
// autoscaled), vmSize DefaultVMSize, osType Linux, osSKU Ubuntu,
// osDiskSizeGB 128, osDiskType Managed, maxPods 110, type
// VirtualMachineScaleSets, mode System for the first pool of a new cluster
// and User otherwise, orchestratorVersion the control plane's,
// upgradeSettings {maxSurge: 10%}. Properties the emulator does not know
// are stored and returned as given. An agent pool is one state shown in
// both places: in the cluster's properties.agentPoolProfiles and as
// {id, name, type, properties} under agentPools/, each with its own eTag.
// Read-only members sent back after a GET (id, provisioningState, fqdn,
// currentKubernetesVersion, eTag, ...) are ignored.
//
// Long-running operations (LROs): every PUT, PATCH and DELETE of a cluster
// or agent pool answers with Azure-AsyncOperation (an absolute URL on this
// server, .../providers/Microsoft.ContainerService/locations/{location}/
// operations/{id}; DELETE also gets a Location, .../operationresults/{id})
// and Retry-After-Ms (Options.RetryAfter, 50 ms by default, so SDK polls are
// quick). The operation status is {id, name, status, startTime, endTime,
// error} with status InProgress, Succeeded, Failed or Canceled; the SDK
// then GETs the resource (PUT, PATCH). The answer body of a PUT or PATCH is
// the resource as it will be, with the running provisioningState: Creating
// for a create, Upgrading when a Kubernetes version changes, Scaling when
// only node counts change, Updating otherwise (also for a PUT that changes
// nothing: AKS reconciles); Deleting for a delete. Operations end after
// Options.CreateDelay, UpdateDelay or DeleteDelay, measured with the
// injectable clock Options.Now and evaluated lazily on every request and Go
// API call, so tests advance a fake clock instead of sleeping; with zero
// delays an operation ends at the next request. Changes are applied when
// the operation ends: meanwhile a GET shows the old values with the running
// provisioningState (a create shows the new resource at once; agent pools
// added by a cluster PUT appear at once, Creating). When it ends the
// resource is Succeeded, or Failed (unapplied) after FailOperations.
//
// Conflicts and validation follow AKS. A PUT, PATCH or DELETE while the
// cluster or any of its pools has a non-final provisioningState is 409
// OperationNotAllowed ("Another operation (Updating) is in progress ..." or
// "Another agentpool operation (<pool> - Creating) is in progress ...").
// Every change gives a fresh eTag (a UUID, unquoted in bodies, quoted in
// the ETag header of GETs); If-Match that does not match, or names an
// absent resource, and If-None-Match: * on an existing one are 412
// PreconditionFailed (tags may be sent quoted or not; * matches any existing
// resource). 400s: a kubernetesVersion lower than the current one
// (OperationNotAllowed "Downgrading Kubernetes version 1.31 to 1.30 is not
// allowed."), or more than one minor above it (OperationNotAllowed); a
// change of dnsPrefix, nodeResourceGroup, networkProfile networkPlugin,
// podCidr, serviceCidr or dnsServiceIP, or apiServerAccessProfile
// enablePrivateCluster of a cluster, or of vmSize, osType, osDiskType,
// osDiskSizeGB, maxPods, vnetSubnetID or availabilityZones of a pool
// (PropertyChangeNotAllowed, naming the property); a cluster PUT whose
// agentPoolProfiles mix given and absent orchestratorVersion, or give one
// that is neither the pool's current version nor the new kubernetesVersion
// (NotAllAgentPoolOrchestratorVersionSpecifiedAndUnchanged); a pool newer
// than the control plane (NodePoolMcVersionIncompatible); deleting the last
// System pool or making it User (OperationNotAllowed); a new cluster
// without a System pool (MustDefineAtLeastOneSystemPool) or without
// location (LocationRequired); enableAutoScaling without minCount and
// maxCount, minCount > maxCount, an invalid pool name or mode
// (InvalidParameter); JSON of the wrong shape (InvalidRequestContent).
// Creating a cluster in a missing resource group is 404
// ResourceGroupNotFound, in one being deleted 409 ResourceGroupBeingDeleted.
//
// Chosen where Azure is undocumented or varies: an update PUT is merged
// into the stored cluster (JSON merge: members it omits are kept, objects
// merge, arrays and scalars replace, null removes), except that tags,
// nodeLabels, add-on config and userAssignedIdentities are replaced whole;
// agent pools missing from a cluster PUT are kept, not deleted (delete them
// with the agent pool API), new ones are added. On a cluster version
// upgrade, pools whose orchestratorVersion the PUT does not give (or that
// it omits) move with the control plane. Agent pool operations leave the
// cluster's own provisioningState alone but block it (409) and change its
// eTag. For an autoscaled pool a PUT's count is ignored on update (the
// autoscaler owns it; it is clamped into the new bounds) and must lie within
// [minCount, maxCount] on create. Repeating a DELETE of a Deleting cluster or
// pool answers 202 with the same operation. Deleting a resource group
// deletes its clusters, canceling their running operations. Credentials
// are available in every state; the kubeconfig's server is
// Options.EndpointFor(name) (default "https://<fqdn>:443"), its
// certificate-authority-data Options.CertificateAuthorityFor(name)
// (default CACertPEM) and its user a token "clusterAdmin-<name>"
// ("clusterUser-<name>" for the user credential); listClusterAdminCredential
// on a cluster with disableLocalAccounts is 400 BadRequest, as in AKS. A
// missing agent pool is 404 NotFound; a location change of a cluster is 400
// InvalidResourceLocation.
//
// For tests, the same API with any token acts as the portal (outside
// changes through the real SDK), and the Go API adds: ImportCluster (a
// Succeeded cluster at once), Cluster and ResourceGroup (snapshots),
// Autoscale (the cluster autoscaler moving a pool's count), FailNext
// (errors such as 429 or 500 for the next n calls of an operation, before
// any state is touched), FailOperations (the next LROs end Failed),
// SetPolicyTags (an Azure Policy that adds tags on every tag write, see
// rancher/rancher#37608), Calls and ResetCalls (calls per operation name).
// Servers: New (HTTP on 127.0.0.1), NewTLS (HTTPS with a certificate signed
// by CACertPEM; Client trusts it), NewUnstarted with Start(addr) or Handler
// and TLSConfig for a server of your own (clustersync dev aks).
//
// Not emulated: Azure AD and RBAC (any bearer token is accepted; no
// authorization, no challenge), subscriptions and resource providers
// (any subscription ID exists, registration is not needed), quotas,
// regions and VM sizes (any value is accepted), the Kubernetes API itself
// (the endpoint is only a URL), real networking and node resource groups
// (no VMs, VNets or load balancers exist), operations other than those
// above (start/stop, abort, run command, upgrade profiles, available
// versions, maintenance configurations, machines, snapshots, private
// endpoints), pagination (lists come in one page), resource-group
// tags PATCH, and most properties, which are stored as given without
// validation.
package akstest
