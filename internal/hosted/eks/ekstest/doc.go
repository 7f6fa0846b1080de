// Package ekstest is an in-process emulator of the Amazon EKS control-plane
// API, for testing clustersync's EKS operator with the real aws-sdk-go-v2 eks
// client: start it with New, and point the client at Server.URL with
// eks.Options.BaseEndpoint (static credentials, any region). It speaks the
// EKS REST-JSON protocol (paths, lowerCamel JSON members, epoch-second
// timestamps, errors as X-Amzn-ErrorType header + {"message": ...} body with
// the shape's HTTP status) for clusters (create, describe, list with
// pagination, delete, update-config for endpoint access / logging / subnets,
// version upgrades of one minor at a time), updates (list, describe, with
// nodegroupName/addonName scoping), managed node groups (create, describe,
// list, delete, update-config for scaling and labels, update-version),
// add-ons (create, describe, list, delete) and tags (tag, untag, list).
// Resources move CREATING→ACTIVE, DELETING→gone and updates
// InProgress→Successful after Options.CreateDelay/DeleteDelay/UpdateDelay,
// measured with the injectable clock Options.Now and evaluated lazily on
// every request or Go API call, so tests advance a fake clock instead of
// sleeping; an update changes the resource only when it succeeds, and the
// cluster (or node group) is UPDATING meanwhile. Conflicts follow EKS: a
// second update while one is in progress and deleting a cluster that still
// has node groups fail with ResourceInUseException (409), creating a node
// group on a cluster that is not ACTIVE fails with InvalidRequestException
// (400, "Cluster '<name>' is not in ACTIVE status", as EKS answers), and
// no-op endpoint/logging updates fail with InvalidParameterException as EKS
// does (so does mixing endpoint and logging changes in one call). Chosen
// where EKS is not documented: DeleteCluster is refused with
// ResourceInUseException while the cluster is CREATING or updating, and
// repeating a delete of a DELETING resource returns it again (200). Node
// group updates and DescribeUpdate/ListUpdates for them need the
// nodegroupName query, as in EKS. Create and update calls honour clientRequestToken, so SDK retries are
// idempotent. The console API (ConsoleSetEndpointAccess, ConsoleUpgrade,
// ConsoleScaleNodegroup, ... and ImportCluster) changes state the way a human
// in the AWS console would, outside clustersync; FailNext injects errors
// such as throttling for the next n calls of an operation; Calls counts API
// calls per operation and Cluster returns a snapshot for assertions. Not
// emulated: authentication and SigV4 checks (any credentials are accepted),
// Fargate profiles, access entries, pod identity, identity providers,
// encryption association, insights, capabilities, UpdateAddon, add-on
// versions/compatibility, CancelUpdate, failed or degraded states (nothing
// ever fails unless injected), real networking (VPC and security-group IDs
// are derived hashes) and the Kubernetes API itself (the endpoint is just the
// URL chosen by Options.EndpointFor).
package ekstest
