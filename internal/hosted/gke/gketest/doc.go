// Package gketest is an in-process emulator of the Google Kubernetes Engine
// REST API (container.googleapis.com v1), for testing clustersync's GKE
// operator with the real Google client, cloud.google.com/go/container/apiv1:
// start it with New and build the client with
// container.NewClusterManagerRESTClient(ctx, option.WithEndpoint(srv.URL),
// option.WithoutAuthentication()). It is the GKE twin of akstest and is
// written with the standard library, the containerpb messages and protojson.
//
// Served, under /v1/projects/{project}/locations/{location} (location is a
// region such as us-central1 or a zone such as us-central1-a; the
// resource-name paths the client uses): clusters (POST create, GET list,
// with location "-" for every location of the project, GET, PUT update,
// DELETE, POST :setResourceLabels, :setNetworkPolicy and
// :setMaintenancePolicy); node pools under clusters/{cluster}/nodePools
// (POST create, GET list, GET, PUT update, DELETE, POST :setSize,
// :setAutoscaling and :setManagement); and operations (GET one, GET list,
// location "-" for all). Request bodies are the containerpb request
// messages in protojson (enums as numbers or names; unknown fields are
// ignored; the names and ids inside them are ignored, the path decides);
// answers are protojson of the containerpb messages (enums as names),
// status 200. The query ($alt=json;enum-encoding=int) and the
// Authorization header are ignored: any caller, with or without
// credentials, is accepted. Errors are Google's JSON,
// {"error":{"code":400,"message":"...","status":"INVALID_ARGUMENT",
// "errors":[{"message":"...","domain":"global","reason":"badRequest"}]}}
// with the HTTP status = code, which the client returns as a
// *googleapi.Error (errors.As) with Code, Message and Errors[0].Reason: 404
// NOT_FOUND notFound ("Not found: projects/p/locations/l/clusters/c.", also
// for node pools, operations and paths the emulator does not serve), 409
// ALREADY_EXISTS alreadyExists ("Already exists: projects/.../clusters/c.",
// a taken cluster or pool name), 400 INVALID_ARGUMENT badRequest
// (validation and bodies that are not JSON of the request message), 400
// FAILED_PRECONDITION failedPrecondition (busy, label fingerprint), 409
// ABORTED aborted (stale etag or maintenance policy resourceVersion), 405
// for another HTTP method on a served path.
//
// A cluster is stored as its create request's Cluster plus what GKE
// computes: selfLink "https://container.googleapis.com/v1/projects/P/
// locations/L/clusters/C" (APIBase), location and the deprecated zone
// (both L), id, createTime, status, etag (fresh random hex whenever a
// change of the cluster or of one of its pools is applied; status changes
// alone keep it), currentMasterVersion and initialClusterVersion (the
// requested version resolved, see ResolveVersion), the deprecated
// currentNodeVersion (the oldest pool version; the master's without pools)
// and currentNodeCount (sum of initialNodeCount times zones over the
// pools), endpoint (Options.EndpointFor, default a stable fake "34.x.y.z"
// hashed from project, location and name), masterAuth.clusterCaCertificate
// (base64, standard encoding, of Options.CertificateAuthorityFor, default
// CACertPEM) and labelFingerprint (the first 8 hex digits of the SHA-256
// of the labels' "key=value" pairs sorted by key and joined with ",";
// no labels have a fingerprint too, "e3b0c442"). Defaults when not given:
// locations (a zonal cluster's zone, or region-a, -b and -c), loggingService
// "logging.googleapis.com/kubernetes", monitoringService
// "monitoring.googleapis.com/kubernetes", network and subnetwork
// "default", clusterIpv4Cidr "10.4.0.0/14" (or
// ipAllocationPolicy.clusterIpv4CidrBlock), servicesIpv4Cidr "10.8.0.0/20"
// (or ipAllocationPolicy.servicesIpv4CidrBlock), ipAllocationPolicy
// {useIpAliases: true} (with the two CIDR blocks filled), each of
// addonsConfig httpLoadBalancing {disabled: false},
// horizontalPodAutoscaling {disabled: false} and networkPolicyConfig
// {disabled: true}, networkPolicy {provider: PROVIDER_UNSPECIFIED,
// enabled: false}; a maintenancePolicy gets a resourceVersion. A
// privateClusterConfig with enablePrivateNodes or enablePrivateEndpoint
// gets privateEndpoint PrivateEndpoint ("10.0.0.2") and publicEndpoint the
// endpoint; with enablePrivateEndpoint the cluster's endpoint is the
// private one. Everything else (nodeConfig and initialNodeCount of the
// cluster included) is stored and returned as given, without validation.
//
// Validation of a create (and of ImportCluster): the location must look
// like a region or zone; the name must match ^[a-z]([-a-z0-9]*[a-z0-9])?$
// and have at most 40 characters (pool names too); a taken name is 409; a
// standard cluster needs nodePools or initialNodeCount > 0 (which makes
// one pool DefaultPoolName, "default-pool", from nodeConfig), not both;
// an Autopilot cluster (autopilot {enabled: true}) gets no node pools and
// must not be given any (nodePools.create on it is 400 "Autopilot
// clusters do not support node pool operations."); locations must be
// distinct zones of the cluster's region (and include a zonal cluster's
// zone); pool names are unique in the request. Node pools get version
// (the master's when "", "-" or "latest"; never newer than the master),
// initialNodeCount DefaultNodeCount (3) when 0, config machineType
// "e2-medium", diskSizeGb 100, diskType "pd-balanced", imageType
// "COS_CONTAINERD", oauthScopes devstorage.read_only, logging.write and
// monitoring, serviceAccount "default", management {autoUpgrade: true,
// autoRepair: true} and maxPodsConstraint {maxPodsPerNode: 110, or the
// cluster's defaultMaxPodsConstraint} unless given, autoscaling as given
// (when enabled 0 <= minNodeCount <= maxNodeCount, else 400), locations
// the cluster's unless given, selfLink ".../nodePools/NP", status and
// etag. The v1 NodePool has no current-size field: the emulator reports a
// pool's size (nodes per zone) in initialNodeCount, which setSize changes,
// as Rancher's gke-operator reads it.
//
// Versions look like "1.31.5-gke.1000000". A requested version "",
// "latest" or "-" is DefaultVersion (DefaultKubernetesVersion "1.31"
// resolved); "1.31" runs as "1.31.<LatestPatch>-gke.<LatestBuild>",
// "1.31.2" as "1.31.2-gke.<LatestBuild>", and a full version as given; no
// list of supported versions is kept, so any such version is valid. A
// desiredMasterVersion ("-" and "latest" are DefaultVersion) may not lower
// the minor ("Master cannot be downgraded from X to Y.") nor raise it by
// more than one, both 400 badRequest; a patch downgrade within the minor
// is accepted. A master upgrade leaves the pools' versions alone. A node
// version ("-", "latest": the master's) may not be newer than the master
// nor lower a pool's minor (400 badRequest).
//
// Operations: every mutation answers an Operation (name
// "operation-<unix ms>-<8 hex>", selfLink ".../locations/L/operations/OP",
// targetLink the cluster's or pool's selfLink, zone and location L,
// startTime), PENDING; it is RUNNING from the next request or Go API call
// on, and DONE (endTime = startTime plus the delay) once Options.Now has
// reached startTime plus Options.CreateDelay (CREATE_CLUSTER,
// CREATE_NODE_POOL), Options.DeleteDelay (DELETE_CLUSTER, DELETE_NODE_POOL)
// or Options.UpdateDelay (all others). This is evaluated lazily on every
// request and Go API call, never with timers or goroutines, so tests
// advance a fake clock; with zero delays an operation is DONE at the next
// request. Types: clusters.update is UPGRADE_MASTER for
// desiredMasterVersion, UPGRADE_NODES for desiredNodeVersion,
// UPDATE_CLUSTER otherwise; setResourceLabels SET_LABELS,
// setNetworkPolicy SET_NETWORK_POLICY, setMaintenancePolicy
// SET_MAINTENANCE_POLICY; nodePools.update UPGRADE_NODES when nodeVersion
// changes the pool's version, UPDATE_CLUSTER otherwise; setSize
// SET_NODE_POOL_SIZE, setAutoscaling UPDATE_CLUSTER, setManagement
// SET_NODE_POOL_MANAGEMENT. Changes are applied when the operation is
// DONE; meanwhile GETs show the old values with the cluster RECONCILING
// (cluster updates, labels, network and maintenance policy) or the pool
// RECONCILING (nodePools.update, setSize, setAutoscaling, setManagement,
// and clusters.update with desiredNodeVersion, desiredImageType or
// desiredNodePoolAutoscaling; the cluster stays RUNNING); a created
// cluster (with its pools) or pool is visible at once, PROVISIONING; a
// deleted one is STOPPING, then gone (a deleted cluster's pools keep their
// status). A DONE operation leaves its cluster or pool RUNNING.
// Operations stay listed after they are DONE, also when their cluster is
// gone. FailOperations makes operations end DONE with error {code: 13,
// message} (google.rpc.Status) and statusMessage, their change not
// applied: a failed create or delete leaves the cluster or pool ERROR with
// statusMessage (a failed cluster create its pools too); a failed update
// restores the former status.
//
// One operation at a time per cluster: any mutation of a cluster or of
// one of its pools (a DELETE too) while an operation on it is not DONE is
// 400 FAILED_PRECONDITION failedPrecondition "Cluster is running
// incompatible operation <operation name>.". Requests are checked in this
// order: the body (400), the cluster or pool (404), a taken name (409),
// the request itself (400: names, counts, autoscaling bounds, zones, the
// one update field and its target pool), busy, and then the checks
// against current values: etags and maintenance resourceVersion (409),
// the label fingerprint and versions (400).
//
// clusters.update takes exactly one update field besides etag and
// desiredNodePoolId (otherwise 400 badRequest "Exactly one update can be
// applied to a cluster with each request."): desiredMasterVersion,
// desiredAddonsConfig (merged: only the add-ons it gives are replaced),
// desiredLocations (the cluster's and every pool's locations),
// desiredLoggingService, desiredMonitoringService,
// desiredMasterAuthorizedNetworksConfig (replaced), and for the pool
// desiredNodePoolId (which may be left out when the cluster has exactly
// one pool) desiredNodeVersion, desiredImageType and
// desiredNodePoolAutoscaling (replaced). desiredPrivateClusterConfig (set
// at creation only) and every other field are 400 badRequest naming the
// field. A non-empty ClusterUpdate.etag that is not the cluster's is 409
// ABORTED aborted "Cluster etag mismatch."; likewise
// UpdateNodePoolRequest.etag against the pool's ("Node pool etag
// mismatch."). nodePools.update applies nodeVersion, imageType,
// labels (config.labels replaced), taints (config.taints replaced), tags
// (config.tags), resourceLabels (config.resourceLabels), locations,
// machineType, diskType, diskSizeGb and upgradeSettings; other fields are
// 400 badRequest. setResourceLabels needs the current labelFingerprint
// (else 400 FAILED_PRECONDITION failedPrecondition "Labels could not be
// set due to fingerprint mismatch; try again with the proper fingerprint:
// incorrect fingerprint supplied was "X", the expected one is "Y".", as
// GKE says it); its labels replace the whole map, with a new fingerprint,
// when the operation is DONE. setNetworkPolicy, setAutoscaling and
// setManagement replace their object; setMaintenancePolicy too, with a
// new resourceVersion (a non-empty stale one is 409 ABORTED); setSize sets
// initialNodeCount to nodeCount (0 is sent by omitting it; negative is
// 400).
//
// For tests, the same API with any caller acts as the Cloud Console, and
// the Go API adds: ImportCluster (a cluster made outside the code under
// test, RUNNING at once), Cluster, NodePool and Operation (deep copies as
// a GET answers them), FailNext (an HTTP error for the next n calls of a
// method, before any state is touched), FailOperations (the next
// operations fail), Calls and ResetCalls (HTTP calls per method name, the
// Method* constants). Servers: New (HTTP on 127.0.0.1), NewUnstarted with
// Start(addr), or Handler for a server of one's own.
//
// Not emulated: authentication and IAM (any caller is accepted), project
// and location existence (any project ID exists; any region- or
// zone-shaped location is valid), quotas, machine types and images (any
// value is accepted), the Kubernetes API itself (the endpoint is only an
// address), real networking and VMs (no instance groups, no nodes), the
// zonal paths (/v1/projects/{p}/zones/{z}/...), the methods not listed
// above (setLogging, setMonitoring, setAddons, setLocations, updateMaster,
// setMasterAuth, setLegacyAbac, IP rotation, operations cancel, node pool
// rollback and completeUpgrade, serverConfig, JWKS, usable subnetworks,
// upgrade info), release channels and auto-upgrades (versions change only
// when asked), cluster conditions, operation progress and pagination (lists
// come in one page).
package gketest
