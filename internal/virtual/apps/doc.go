// Package apps installs what a platform team puts into every new virtual
// cluster, vCluster's experimental.deploy.vcluster: manifests (and a
// manifestsTemplate rendered with the virtual cluster's values) applied
// with server-side apply, and Helm charts (from an http(s) chart
// repository, an OCI registry, or a base64 bundle) installed and upgraded
// with Helm's Go SDK.
//
// The syncer runs a Deployer once the virtual API server answers. It
// retries until everything is applied (1 second, doubling to 1 minute),
// records progress where vCluster does (the virtual cluster's ConfigMap
// kube-system/vcluster-deploy, annotation vcluster.loft.sh/status, in
// vCluster's JSON shape, pkg/controllers/deploy/types.go at
// https://github.com/loft-sh/vcluster) and, when it runs in the chart's
// control plane pod, on that host pod (annotation
// clustersync.io/deploy-status and events), where `clustersync virtual
// status` reads it. Objects dropped from the manifests and releases
// dropped from the charts are deleted; a chart whose entry changed is
// upgraded (rolled back when the upgrade fails).
//
// Files: status.go (the status and where it is kept), manifests.go
// (apply and prune), helm.go (fetch, install, upgrade), deployer.go (the
// retrying loop).
package apps
