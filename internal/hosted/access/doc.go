// Package access is how clustersync reaches the Kubernetes API of a cluster
// it manages in a cloud, whatever the cloud: a REST config from the
// cluster's endpoint, CA and a bearer-token source (for EKS, IAM tokens from
// eks.IAMToken); then, as Rancher does once a hosted cluster is active
// (Rancher's EKS driver, https://github.com/rancher/eks-operator: the
// service-account token and the private-endpoint check), a
// cluster-admin service account in the cluster whose long-lived token is
// kept in a management-side Secret, so later access needs no cloud
// credentials. It also counts the cluster's nodes (Rancher refuses to wait
// for its agent on a cluster without nodes).
package access
