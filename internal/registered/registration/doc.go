// Package registration is the pure logic of registering an existing
// cluster, as Rancher's cluster import does
// (https://rancher.com/docs/rancher/v2.x/en/cluster-provisioning/imported-clusters/;
// its manifest,
// https://github.com/rancher/rancher/blob/main/pkg/systemtemplate/template.go):
// registration tokens with a TTL and a grace period for the previous token,
// the import URL
// /v1/import/<token>_<cluster>.yaml, the manifest `kubectl apply` installs
// (namespace, service account, cluster role and binding, credentials
// Secret, agent Deployment) and the two commands shown to the user. No
// clients and no network here.
package registration
